//! The websocket listener's settings, as the binary builds them from the `websocket { }` block.

use std::sync::Arc;
use std::time::Duration;

use natrium_auth::AuthConfig;
use natrium_ws::Handshake;

use crate::tls::ClientTls;

/// The websocket listener's settings, built once at start by the binary.
#[derive(Debug)]
pub struct WsConfig {
    /// Interface to listen on.
    pub host: String,
    /// Port as configured; -1 (or 0) picks a free one, values outside 0..=65535 fail at listen.
    pub port: i64,
    /// `tls { }`: serve `wss://`. `None` with `no_tls`.
    pub tls: Option<Arc<ClientTls>>,
    /// The handshake rules (origins, compression, cookies, extra headers).
    pub handshake: Handshake,
    /// `handshake_timeout` as configured; zero is none (the codec's fallback then applies).
    pub handshake_timeout: Duration,
    /// The websocket block's `authorization` / `no_auth_user`, when it overrides the server's.
    pub auth: Option<AuthConfig>,
    /// `authorization { timeout }` of the block, when set.
    pub auth_timeout: Option<Duration>,
    /// `ping_interval` of the block, when set.
    pub ping_interval: Option<Duration>,
    /// What `/varz` reports about the block, as configured.
    pub report: WsReport,
}

/// The configured values `/varz` shows in its `websocket` section.
#[derive(Debug, Clone, Default)]
pub struct WsReport {
    pub advertise: String,
    pub no_auth_user: String,
    pub jwt_cookie: String,
    /// `authorization { timeout }` in seconds, 0 when unset.
    pub auth_timeout: f64,
    pub no_tls: bool,
    pub same_origin: bool,
    pub allowed_origins: Vec<String>,
    pub compression: bool,
}

impl WsConfig {
    /// The time allowed for the TLS and HTTP handshakes.
    pub(crate) fn handshake_deadline(&self) -> Duration {
        if self.handshake_timeout.is_zero() {
            Duration::from_millis(natrium_ws::limits::HANDSHAKE_TIMEOUT_FALLBACK_MS)
        } else {
            self.handshake_timeout
        }
    }

    /// Whether INFO tells websocket clients that authentication is required even when the
    /// server's own settings do not (Go's `authOverride`).
    pub fn auth_required(&self) -> bool {
        self.auth.as_ref().is_some_and(AuthConfig::required)
    }
}
