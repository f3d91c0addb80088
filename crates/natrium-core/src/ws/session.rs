//! What a WebSocket upgrade adds to a client connection, and the close frame it ends with.

use std::sync::Arc;

use natrium_ws::handshake::Cookies;
use natrium_ws::CloseCause;

use super::config::WsConfig;
use crate::client::{ClosedReason, ConnectOptions};

/// What a WebSocket upgrade adds to a client connection.
pub(crate) struct WsSession {
    pub config: Arc<WsConfig>,
    pub cookies: Cookies,
}

impl WsSession {
    /// Go's cookie rule: each configured cookie fills its CONNECT field when the client left
    /// that field empty. A JWT from a cookie comes without a nonce signature, so only a
    /// bearer user JWT passes authentication (the JWT check decides, as for CONNECT's `jwt`).
    pub fn fill_credentials(&self, opts: &mut ConnectOptions) {
        let fill = |slot: &mut Option<String>, cookie: &Option<String>| {
            if slot.as_deref().unwrap_or("").is_empty() {
                if let Some(value) = cookie {
                    *slot = Some(value.clone());
                }
            }
        };
        fill(&mut opts.user, &self.cookies.user);
        fill(&mut opts.pass, &self.cookies.pass);
        fill(&mut opts.auth_token, &self.cookies.token);
        fill(&mut opts.jwt, &self.cookies.jwt);
    }
}

/// The close frame Go sends when a websocket client's connection ends for `reason`.
pub(crate) fn close_cause(reason: ClosedReason) -> CloseCause {
    match reason {
        ClosedReason::ClientClosed => CloseCause::ClientClosed,
        ClosedReason::WriteError => CloseCause::WriteError,
        ClosedReason::ReadError => CloseCause::ReadError,
        ClosedReason::SlowConsumerPendingBytes => CloseCause::SlowConsumerPendingBytes,
        ClosedReason::SlowConsumerWriteDeadline => CloseCause::SlowConsumerWriteDeadline,
        ClosedReason::ProtocolViolation => CloseCause::ProtocolViolation,
        ClosedReason::ParseError => CloseCause::ParseError,
        ClosedReason::MaxPayloadExceeded => CloseCause::MaxPayloadExceeded,
        ClosedReason::MaxControlLineExceeded => CloseCause::MaxControlLineExceeded,
        ClosedReason::MaxConnectionsExceeded => CloseCause::MaxConnectionsExceeded,
        ClosedReason::MaxAccountConnectionsExceeded => CloseCause::MaxAccountConnectionsExceeded,
        ClosedReason::MaxSubscriptionsExceeded => CloseCause::MaxSubscriptionsExceeded,
        ClosedReason::StaleConnection => CloseCause::StaleConnection,
        ClosedReason::AuthenticationTimeout => CloseCause::AuthenticationTimeout,
        ClosedReason::AuthenticationViolation => CloseCause::AuthenticationViolation,
        ClosedReason::AuthenticationExpired => CloseCause::AuthenticationExpired,
        // Go records lame-duck closes as server shutdown too.
        ClosedReason::ServerShutdown | ClosedReason::LameDuckMode => CloseCause::ServerShutdown,
        ClosedReason::TlsHandshakeError => CloseCause::TlsHandshakeError,
    }
}
