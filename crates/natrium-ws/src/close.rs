//! Close frames: status codes, the status Go sends for each reason a connection ends, and the
//! close payload (status plus reason text, truncated as Go truncates it).

use crate::limits::CONTROL_PAYLOAD_BYTES_MAX;

/// RFC 6455 §7.4.1 status codes the server sends or checks.
pub mod status {
    /// 1000: normal closure (the client closed).
    pub const NORMAL_CLOSURE: u16 = 1000;
    /// 1001: going away (read/write errors, stale connection, shutdown).
    pub const GOING_AWAY: u16 = 1001;
    /// 1002: protocol error (bad frames, NATS parse errors).
    pub const PROTOCOL_ERROR: u16 = 1002;
    /// 1005: no status received. Reserved: never sent on the wire.
    pub const NO_STATUS_RECEIVED: u16 = 1005;
    /// 1007: invalid payload data (a close reason that is not UTF-8).
    pub const INVALID_PAYLOAD_DATA: u16 = 1007;
    /// 1008: policy violation (auth failures, limits, slow consumers).
    pub const POLICY_VIOLATION: u16 = 1008;
    /// 1009: message too big (max payload exceeded).
    pub const MESSAGE_TOO_BIG: u16 = 1009;
    /// 1011: internal server error (every other reason).
    pub const INTERNAL_ERROR: u16 = 1011;
    /// 1015: TLS handshake failure. Reserved, yet Go sends it for TLS handshake errors.
    pub const TLS_HANDSHAKE: u16 = 1015;
}

/// Whether a peer may send `code` in a close frame (Go's `wsIsValidCloseStatus`): 1000-4999
/// except 1004-1006, 1015 and the reserved 1016-2999.
pub const fn is_valid_close_status(code: u16) -> bool {
    !matches!(code, 1004..=1006 | 1015 | 1016..=2999) && code >= 1000 && code < 5000
}

/// Why the server closes a connection: Go's `ClosedState` values, with Go's text (which is the
/// close frame's reason) and the close status Go maps each to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CloseCause {
    ClientClosed,
    AuthenticationTimeout,
    AuthenticationViolation,
    TlsHandshakeError,
    SlowConsumerPendingBytes,
    SlowConsumerWriteDeadline,
    WriteError,
    ReadError,
    ParseError,
    StaleConnection,
    ProtocolViolation,
    BadClientProtocolVersion,
    WrongPort,
    MaxConnectionsExceeded,
    MaxAccountConnectionsExceeded,
    MaxPayloadExceeded,
    MaxControlLineExceeded,
    MaxSubscriptionsExceeded,
    DuplicateRoute,
    RouteRemoved,
    ServerShutdown,
    AuthenticationExpired,
    WrongGateway,
    MissingAccount,
    Revocation,
    InternalClient,
    MsgHeaderViolation,
    NoRespondersRequiresHeaders,
    ClusterNameConflict,
    DuplicateRemoteLeafnodeConnection,
    DuplicateClientId,
    DuplicateServerName,
    MinimumVersionRequired,
    ClusterNamesIdentical,
    Kicked,
    ProxyNotTrusted,
    ProxyRequired,
}

impl CloseCause {
    /// Go's text for the reason (`ClosedState.String()`), sent as the close frame's reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ClientClosed => "Client Closed",
            Self::AuthenticationTimeout => "Authentication Timeout",
            Self::AuthenticationViolation => "Authentication Failure",
            Self::TlsHandshakeError => "TLS Handshake Failure",
            Self::SlowConsumerPendingBytes => "Slow Consumer (Pending Bytes)",
            Self::SlowConsumerWriteDeadline => "Slow Consumer (Write Deadline)",
            Self::WriteError => "Write Error",
            Self::ReadError => "Read Error",
            Self::ParseError => "Parse Error",
            Self::StaleConnection => "Stale Connection",
            Self::ProtocolViolation => "Protocol Violation",
            Self::BadClientProtocolVersion => "Bad Client Protocol Version",
            Self::WrongPort => "Incorrect Port",
            Self::MaxConnectionsExceeded => "Maximum Connections Exceeded",
            Self::MaxAccountConnectionsExceeded => "Maximum Account Connections Exceeded",
            Self::MaxPayloadExceeded => "Maximum Message Payload Exceeded",
            Self::MaxControlLineExceeded => "Maximum Control Line Exceeded",
            Self::MaxSubscriptionsExceeded => "Maximum Subscriptions Exceeded",
            Self::DuplicateRoute => "Duplicate Route",
            Self::RouteRemoved => "Route Removed",
            Self::ServerShutdown => "Server Shutdown",
            Self::AuthenticationExpired => "Authentication Expired",
            Self::WrongGateway => "Wrong Gateway",
            Self::MissingAccount => "Missing Account",
            Self::Revocation => "Credentials Revoked",
            Self::InternalClient => "Internal Client",
            Self::MsgHeaderViolation => "Message Header Violation",
            Self::NoRespondersRequiresHeaders => "No Responders Requires Headers",
            Self::ClusterNameConflict => "Cluster Name Conflict",
            Self::DuplicateRemoteLeafnodeConnection => "Duplicate Remote LeafNode Connection",
            Self::DuplicateClientId => "Duplicate Client ID",
            Self::DuplicateServerName => "Duplicate Server Name",
            Self::MinimumVersionRequired => "Minimum Version Required",
            Self::ClusterNamesIdentical => "Cluster Names Identical",
            Self::Kicked => "Kicked",
            Self::ProxyNotTrusted => "Proxy Not Trusted",
            Self::ProxyRequired => "Proxy Required",
        }
    }

    /// The close status Go sends for this reason (`wsEnqueueCloseMessage`).
    pub const fn status(self) -> u16 {
        match self {
            Self::ClientClosed => status::NORMAL_CLOSURE,
            Self::AuthenticationTimeout
            | Self::AuthenticationViolation
            | Self::SlowConsumerPendingBytes
            | Self::SlowConsumerWriteDeadline
            | Self::MaxAccountConnectionsExceeded
            | Self::MaxConnectionsExceeded
            | Self::MaxControlLineExceeded
            | Self::MaxSubscriptionsExceeded
            | Self::MissingAccount
            | Self::AuthenticationExpired
            | Self::Revocation => status::POLICY_VIOLATION,
            Self::TlsHandshakeError => status::TLS_HANDSHAKE,
            Self::ParseError | Self::ProtocolViolation | Self::BadClientProtocolVersion => {
                status::PROTOCOL_ERROR
            }
            Self::MaxPayloadExceeded => status::MESSAGE_TOO_BIG,
            Self::WriteError | Self::ReadError | Self::StaleConnection | Self::ServerShutdown => {
                status::GOING_AWAY
            }
            _ => status::INTERNAL_ERROR,
        }
    }

    /// Whether Go sends a close frame at all when closing for this reason. Go skips the final
    /// flush, and with it the close frame, for read and write errors, slow consumers and TLS
    /// handshake errors (`markConnAsClosed`).
    pub const fn sends_close_frame(self) -> bool {
        !matches!(
            self,
            Self::ReadError
                | Self::WriteError
                | Self::SlowConsumerPendingBytes
                | Self::SlowConsumerWriteDeadline
                | Self::TlsHandshakeError
        )
    }
}

/// A close frame payload: a 2-byte status then the reason, at most 125 bytes, on the stack.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClosePayload {
    bytes: [u8; CONTROL_PAYLOAD_BYTES_MAX],
    len: u8,
}

impl ClosePayload {
    /// Builds the payload Go builds (`wsCreateCloseMessage`): the status in network order, then
    /// the reason; a reason longer than 123 bytes is cut to its first 120 bytes followed by
    /// `...`.
    pub fn new(status: u16, reason: &[u8]) -> Self {
        const ROOM: usize = CONTROL_PAYLOAD_BYTES_MAX - 2;
        const ELLIPSIS: &[u8] = b"...";
        let mut bytes = [0u8; CONTROL_PAYLOAD_BYTES_MAX];
        let [hi, lo] = status.to_be_bytes();
        let (head, body) = bytes.split_at_mut(2);
        head.copy_from_slice(&[hi, lo]);
        let written = if reason.len() > ROOM {
            let keep = ROOM - ELLIPSIS.len();
            let (kept, dots) = body.split_at_mut(keep);
            kept.copy_from_slice(reason.get(..keep).unwrap_or_default());
            if let Some(d) = dots.get_mut(..ELLIPSIS.len()) {
                d.copy_from_slice(ELLIPSIS);
            }
            ROOM
        } else {
            if let Some(dst) = body.get_mut(..reason.len()) {
                dst.copy_from_slice(reason);
            }
            reason.len()
        };
        Self {
            bytes,
            len: (2 + written) as u8,
        }
    }

    /// An empty payload: the reply to a close frame that carried no status.
    pub const fn empty() -> Self {
        Self {
            bytes: [0; CONTROL_PAYLOAD_BYTES_MAX],
            len: 0,
        }
    }

    /// The payload bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl std::fmt::Debug for ClosePayload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ClosePayload")
            .field(&String::from_utf8_lossy(self.as_bytes()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ws_close_status_validity_matches_go() {
        for ok in [
            1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
        ] {
            assert!(is_valid_close_status(ok), "{ok}");
        }
        for ok in [3000, 4000, 4999] {
            assert!(is_valid_close_status(ok), "{ok}");
        }
        for bad in [
            0,
            999,
            1004,
            1005,
            1006,
            1015,
            1016,
            2000,
            2999,
            5000,
            u16::MAX,
        ] {
            assert!(!is_valid_close_status(bad), "{bad}");
        }
    }

    #[test]
    fn ws_close_payload_status_and_reason() {
        let p = ClosePayload::new(1002, b"mask bit missing");
        assert_eq!(p.as_bytes(), b"\x03\xeamask bit missing");
        assert_eq!(ClosePayload::new(1000, b"").as_bytes(), b"\x03\xe8");
        assert_eq!(ClosePayload::empty().as_bytes(), b"");
    }

    #[test]
    fn ws_close_payload_truncates_like_go() {
        // 123 bytes fit exactly; 124 are cut to 120 plus "...".
        let fits = vec![b'a'; 123];
        assert_eq!(ClosePayload::new(1000, &fits).as_bytes().len(), 125);
        assert_eq!(&ClosePayload::new(1000, &fits).as_bytes()[2..], &fits[..]);
        let long: Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
        let p = ClosePayload::new(1011, &long);
        assert_eq!(p.as_bytes().len(), 125);
        assert_eq!(&p.as_bytes()[2..122], &long[..120]);
        assert_eq!(&p.as_bytes()[122..], b"...");
    }

    #[test]
    fn ws_close_cause_status_map_matches_go() {
        use CloseCause as C;
        assert_eq!(C::ClientClosed.status(), 1000);
        assert_eq!(C::AuthenticationViolation.status(), 1008);
        assert_eq!(C::SlowConsumerPendingBytes.status(), 1008);
        assert_eq!(C::MaxControlLineExceeded.status(), 1008);
        assert_eq!(C::Revocation.status(), 1008);
        assert_eq!(C::TlsHandshakeError.status(), 1015);
        assert_eq!(C::ParseError.status(), 1002);
        assert_eq!(C::ProtocolViolation.status(), 1002);
        assert_eq!(C::MaxPayloadExceeded.status(), 1009);
        assert_eq!(C::StaleConnection.status(), 1001);
        assert_eq!(C::ServerShutdown.status(), 1001);
        assert_eq!(C::Kicked.status(), 1011);
        assert_eq!(C::DuplicateRoute.status(), 1011);
        assert_eq!(
            C::MaxPayloadExceeded.as_str(),
            "Maximum Message Payload Exceeded"
        );
        assert!(!C::ReadError.sends_close_frame());
        assert!(C::StaleConnection.sends_close_frame());
    }
}
