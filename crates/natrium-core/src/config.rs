//! The runtime's settings. The binary fills this from the configuration file and flags, so the
//! runtime never parses configuration itself.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use natrium_gofmt::defaults;

use crate::tls::ClientTls;
use crate::ws::WsConfig;

/// Everything the runtime needs to run a server, with Go's defaults (from
/// [`natrium_gofmt::defaults`], where the configuration takes them too).
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// Interface to listen on for clients (Go's `host`, `net`, `-a`).
    pub host: String,
    /// Client port as configured (Go's `int`); 0 or -1 picks a free one, values outside
    /// 0..=65535 fail at listen time as in Go.
    pub port: i64,
    /// Advertised name; the server ID when empty.
    pub server_name: String,
    pub max_payload: usize,
    pub max_control_line: usize,
    pub max_connections: usize,
    /// 0 means unlimited.
    pub max_subscriptions: usize,
    pub max_pending: usize,
    pub ping_interval: Duration,
    pub ping_max: u32,
    pub write_deadline: Duration,
    /// A client must send CONNECT within this long.
    pub auth_timeout: Duration,
    /// How clients authenticate; `AuthConfig::None` lets everyone in.
    pub auth: natrium_auth::AuthConfig,
    pub no_header_support: bool,
    pub disable_sublist_cache: bool,
    pub lame_duck_duration: Duration,
    pub lame_duck_grace_period: Duration,
    /// Directory for the `<exe>_<pid>.ports` file, when set.
    pub ports_file_dir: Option<PathBuf>,
    /// Monitoring URLs to list in the ports file (filled by the binary once HTTP is bound).
    pub trace: bool,
    pub debug: bool,
    pub max_traced_msg_len: usize,
    /// Client TLS; `None` serves plain TCP only.
    pub tls: Option<Arc<ClientTls>>,
    /// Go's `tls_timeout` as `/varz` reports it, configured or not.
    pub tls_timeout: Duration,
    /// Go's `max_closed_clients`: closed connections kept for `/connz?state=closed`.
    pub max_closed_clients: usize,
    /// The websocket listener; `None` when not configured.
    pub websocket: Option<Arc<WsConfig>>,
    /// Configured accounts besides `$G` (and besides a default `$SYS`).
    pub accounts: Vec<natrium_auth::account::AccountSpec>,
    /// `system_account`; empty means `$SYS`.
    pub system_account: String,
    /// `no_system_account`: run without a system account.
    pub no_system_account: bool,
    /// Operator mode: accounts come from the resolver and are registered on first use.
    pub accounts_on_demand: bool,
    /// `server_tags`, as Go's `TagList` keeps them (monitoring and system events report them).
    pub tags: Vec<String>,
    /// Go's JetStream feature flags in force: its defaults, with the configured known flags
    /// over them (`/varz` reports these; unknown configured names are left out, as Go does).
    pub feature_flags: std::collections::BTreeMap<String, bool>,
    /// `server_metadata` (monitoring and system events report it).
    pub metadata: BTreeMap<String, String>,
    /// JetStream runs: INFO says so, with its API level and domain.
    pub jetstream: Option<JetStreamInfo>,
}

/// What INFO tells clients about JetStream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JetStreamInfo {
    pub api_level: u32,
    /// `jetstream { domain }`; empty for none.
    pub domain: String,
}

impl Default for CoreConfig {
    fn default() -> Self {
        Self {
            host: defaults::HOST_DEFAULT.to_owned(),
            port: defaults::PORT_DEFAULT,
            server_name: String::new(),
            max_payload: defaults::MAX_PAYLOAD_BYTES_DEFAULT as usize,
            max_control_line: defaults::MAX_CONTROL_LINE_BYTES_DEFAULT as usize,
            max_connections: defaults::MAX_CONNECTIONS_DEFAULT as usize,
            max_subscriptions: defaults::MAX_SUBSCRIPTIONS_DEFAULT as usize,
            max_pending: defaults::MAX_PENDING_BYTES_DEFAULT as usize,
            ping_interval: defaults::PING_INTERVAL_DEFAULT,
            ping_max: defaults::PING_MAX_DEFAULT as u32,
            write_deadline: defaults::WRITE_DEADLINE_DEFAULT,
            auth_timeout: Duration::from_secs_f64(defaults::AUTH_TIMEOUT_SECS_DEFAULT),
            auth: natrium_auth::AuthConfig::None,
            no_header_support: false,
            disable_sublist_cache: false,
            lame_duck_duration: defaults::LAME_DUCK_DURATION_DEFAULT,
            lame_duck_grace_period: defaults::LAME_DUCK_GRACE_PERIOD_DEFAULT,
            ports_file_dir: None,
            trace: false,
            debug: false,
            max_traced_msg_len: 0,
            tls: None,
            tls_timeout: Duration::from_secs_f64(defaults::TLS_TIMEOUT_SECS_DEFAULT),
            max_closed_clients: defaults::MAX_CLOSED_CLIENTS_DEFAULT as usize,
            websocket: None,
            accounts: Vec::new(),
            system_account: String::new(),
            no_system_account: false,
            accounts_on_demand: false,
            tags: Vec::new(),
            feature_flags: std::collections::BTreeMap::new(),
            jetstream: None,
            metadata: BTreeMap::new(),
        }
    }
}

impl CoreConfig {
    /// The host as an IP address; `localhost` and an empty host are understood as Go does.
    pub fn listen_ip(&self) -> Option<IpAddr> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        match host {
            "" => Some(IpAddr::from([0, 0, 0, 0])),
            "localhost" => Some(IpAddr::from([127, 0, 0, 1])),
            other => other.parse().ok(),
        }
    }
}
