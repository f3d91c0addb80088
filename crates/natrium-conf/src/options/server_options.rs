//! The option set itself: every option core NATS uses under Go's names, Go's defaults, and
//! the start-up baseline that replaces Go's "use the default" zero values.

use std::collections::BTreeMap;
use std::time::Duration;

use super::tls::TlsOptions;
use super::websocket::WebsocketOptions;
use crate::error::ConfError;
use crate::limits;

/// One entry of `authorization { users = [...] }`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserOption {
    pub username: String,
    /// Plain text or a bcrypt hash.
    pub password: String,
    /// Public user nkey (`U…`), for users that authenticate by signing the INFO nonce.
    pub nkey: String,
    /// The user's own `permissions` block (for an account's user without one: the account's
    /// `default_permissions`).
    pub permissions: Option<natrium_auth::Permissions>,
    /// The account the user logs into (`accounts { A { users … } }`); empty for the global
    /// account.
    pub account: String,
}

/// Every option core NATS uses, under Go's names, with Go's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerOptions {
    /// The configuration file these options were read from (`-c`), if any.
    pub config_file: Option<String>,
    /// Client listener interface (`host`, `net`, `listen`, `-a`). Empty means all interfaces.
    pub host: String,
    /// Client port (`port`, `listen`, `-p`): 0 means [`limits::PORT_DEFAULT`], -1 a free port.
    pub port: i64,
    /// Server name (`server_name`, `-n`); empty means the server ID.
    pub server_name: String,
    /// URL advertised to clients instead of the listen address (`client_advertise`).
    pub client_advertise: String,
    /// Monitoring interface (`http: host:port`); empty means the client `host`.
    pub http_host: String,
    /// Monitoring port (`http_port`, `monitor_port`, `http`, `-m`); 0 disables, -1 picks one.
    pub http_port: i64,
    /// Prefix for monitoring endpoints (`http_base_path`).
    pub http_base_path: String,
    /// Monitoring over TLS with the `tls` block's certificate (`https_port`, `https`,
    /// `--https_port`); 0 disables, -1 picks a free port.
    pub https_port: i64,
    /// Largest payload a client may publish (`max_payload`), Go's `int32`.
    pub max_payload: i32,
    /// Longest protocol line (`max_control_line`), Go's `int32`.
    pub max_control_line: i32,
    /// Most client connections (`max_connections`, `max_conn`). Written as 0 in the file it
    /// means "accept none", which Go stores as -1; negative values accept none.
    pub max_connections: i64,
    /// Most subscriptions per connection (`max_subscriptions`, `max_subs`); 0 is unlimited.
    pub max_subscriptions: i64,
    /// Most bytes pending for one client before it is a slow consumer (`max_pending`).
    pub max_pending: i64,
    /// Interval between server PINGs (`ping_interval`).
    pub ping_interval: Duration,
    /// Unanswered PINGs before a connection is stale (`ping_max`).
    pub ping_max: i64,
    /// How long a write to a client may block (`write_deadline`).
    pub write_deadline: Duration,
    /// Seconds a client has to authenticate (`authorization { timeout }`), Go's `float64`.
    pub auth_timeout: f64,
    /// Whether the file set a non-zero `authorization { timeout }`. Without one, Go's default
    /// becomes the TLS handshake timeout plus a second when TLS is configured.
    pub auth_timeout_set: bool,
    /// Client TLS (`tls { … }`, or the `--tls*` flags); `None` serves plain TCP only.
    pub tls: Option<TlsOptions>,
    /// Seconds a client has to complete the TLS handshake (`tls { timeout }`); 0 means Go's
    /// default, filled in by the baseline.
    pub tls_timeout: f64,
    /// With TLS configured, also accept clients that do not upgrade (`allow_non_tls`).
    pub allow_non_tls: bool,
    /// Single user (`authorization { user }`, `--user`).
    pub username: String,
    /// Single user's password, plain or bcrypt (`authorization { password }`, `--pass`).
    pub password: String,
    /// Required token, plain or bcrypt (`authorization { token }`, `--auth`).
    pub authorization: String,
    /// `authorization { users = [...] }`, then the users of `accounts { … }` (with their
    /// account), in the order the file gives them.
    pub users: Vec<UserOption>,
    /// `accounts { … }`: the accounts besides `$G` and the system account, in file order.
    pub accounts: Vec<natrium_auth::account::AccountSpec>,
    /// `system_account` (alias `system`): the account the server's own traffic lives in; empty
    /// means `$SYS`, created when no account of that name is configured.
    pub system_account: String,
    /// `no_system_account` (aliases `no_system`, `no_sys_acc`).
    pub no_system_account: bool,
    /// `operator` (aliases `operators`, `root`, …): trusted operator JWTs as read, inline or
    /// from their files. Non-empty means operator (JWT) mode.
    pub operators: Vec<String>,
    /// `resolver: MEMORY` (the only account resolver implemented).
    pub resolver_memory: bool,
    /// `resolver_preload`: account public key and account JWT, in file order.
    pub resolver_preload: Vec<(String, String)>,
    /// `authorization { default_permissions }`.
    pub default_permissions: Option<natrium_auth::Permissions>,
    /// User assumed for clients that send no credentials (`no_auth_user`).
    pub no_auth_user: String,
    /// Do not offer message headers to clients (`no_header_support`).
    pub no_header_support: bool,
    /// Disable the subscription match cache (`disable_sublist_cache`, `no_sublist_cache`).
    pub disable_sublist_cache: bool,
    /// Longest message body printed in traces (`max_traced_msg_len`); 0 is unlimited.
    pub max_traced_msg_len: i64,
    /// Closed connections kept for monitoring (`max_closed_clients`).
    pub max_closed_clients: i64,
    /// Log file (`logfile`, `log_file`, `-l`); empty logs to standard error.
    pub logfile: String,
    /// Rotate the log file at this size (`log_size_limit`, `logfile_size_limit`); 0 never.
    pub log_size_limit: i64,
    /// Rotated log files to keep (`log_max_num`, `logfile_max_num`); 0 keeps all.
    pub log_max_num: i64,
    /// Debug logging (`debug`, `-D`).
    pub debug: bool,
    /// Protocol tracing (`trace`, `-V`).
    pub trace: bool,
    /// Tracing including the system account (`trace_verbose`, `-VV`); setting it sets `trace`.
    pub trace_verbose: bool,
    /// Timestamps in log lines (`logtime`, `-T`).
    pub logtime: bool,
    /// Timestamps in UTC (`logtime_utc`).
    pub logtime_utc: bool,
    /// Log to syslog (`syslog`, `-s`).
    pub syslog: bool,
    /// Remote syslog address (`remote_syslog`, `-r`).
    pub remote_syslog: String,
    /// PID file (`pidfile`, `pid_file`, `-P`).
    pub pidfile: String,
    /// Directory for the `<exe>_<pid>.ports` file (`ports_file_dir`).
    pub ports_file_dir: String,
    /// Lame-duck mode spreads closes over this long (`lame_duck_duration`, at least 30s).
    pub lame_duck_duration: Duration,
    /// Wait before lame-duck mode starts closing (`lame_duck_grace_period`).
    pub lame_duck_grace_period: Duration,
    /// Report every Nth failed connect attempt (`connect_error_reports`).
    pub connect_error_reports: i64,
    /// Report every Nth failed reconnect attempt (`reconnect_error_reports`).
    pub reconnect_error_reports: i64,
    /// The websocket listener (`websocket { … }`, alias `ws`); port 0 disables it.
    pub websocket: WebsocketOptions,
    /// Go traces only message headers (`trace_headers`); setting it sets `trace`.
    pub trace_headers: bool,
    /// Server tags (`server_tags`), as Go's `TagList` keeps them: trimmed, lower case, unique.
    pub server_tags: Vec<String>,
    /// Server metadata (`server_metadata`), reported in `/varz` and system events.
    pub server_metadata: BTreeMap<String, String>,
    /// JetStream's storage directory (`store_dir`, `jetstream { store_dir }`, `-sd`); accepted
    /// and unused while JetStream is off.
    pub store_dir: String,
    /// `jetstream { domain }`; checked at start as Go checks it.
    pub jetstream_domain: String,
    /// The rest of `jetstream`: whether it is on, its limits, sync policy and keys.
    pub jetstream: super::JetStreamOptions,
    /// Go's block profiling rate (`prof_block_rate`); nothing is profiled, Go's warning is
    /// logged.
    pub prof_block_rate: i64,
    /// `feature_flags` (JetStream behaviours), announced in the banner as Go does.
    pub feature_flags: BTreeMap<String, bool>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            config_file: None,
            host: limits::HOST_DEFAULT.to_owned(),
            port: limits::PORT_DEFAULT,
            server_name: String::new(),
            client_advertise: String::new(),
            http_host: String::new(),
            http_port: 0,
            http_base_path: String::new(),
            https_port: 0,
            max_payload: limits::MAX_PAYLOAD_BYTES_DEFAULT,
            max_control_line: limits::MAX_CONTROL_LINE_BYTES_DEFAULT,
            max_connections: limits::MAX_CONNECTIONS_DEFAULT,
            max_subscriptions: limits::MAX_SUBSCRIPTIONS_DEFAULT,
            max_pending: limits::MAX_PENDING_BYTES_DEFAULT,
            ping_interval: limits::PING_INTERVAL_DEFAULT,
            ping_max: limits::PING_MAX_DEFAULT,
            write_deadline: limits::WRITE_DEADLINE_DEFAULT,
            auth_timeout: limits::AUTH_TIMEOUT_SECS_DEFAULT,
            auth_timeout_set: false,
            tls: None,
            tls_timeout: 0.0,
            allow_non_tls: false,
            username: String::new(),
            password: String::new(),
            authorization: String::new(),
            users: Vec::new(),
            accounts: Vec::new(),
            system_account: String::new(),
            no_system_account: false,
            operators: Vec::new(),
            resolver_memory: false,
            resolver_preload: Vec::new(),
            default_permissions: None,
            no_auth_user: String::new(),
            no_header_support: false,
            disable_sublist_cache: false,
            max_traced_msg_len: 0,
            max_closed_clients: limits::MAX_CLOSED_CLIENTS_DEFAULT,
            logfile: String::new(),
            log_size_limit: 0,
            log_max_num: 0,
            debug: false,
            trace: false,
            trace_verbose: false,
            logtime: true,
            logtime_utc: false,
            syslog: false,
            remote_syslog: String::new(),
            pidfile: String::new(),
            ports_file_dir: String::new(),
            lame_duck_duration: limits::LAME_DUCK_DURATION_DEFAULT,
            lame_duck_grace_period: limits::LAME_DUCK_GRACE_PERIOD_DEFAULT,
            connect_error_reports: limits::CONNECT_ERROR_REPORTS_DEFAULT,
            reconnect_error_reports: limits::RECONNECT_ERROR_REPORTS_DEFAULT,
            websocket: WebsocketOptions::default(),
            trace_headers: false,
            server_tags: Vec::new(),
            server_metadata: BTreeMap::new(),
            store_dir: String::new(),
            jetstream_domain: String::new(),
            jetstream: super::JetStreamOptions::default(),
            prof_block_rate: 0,
            feature_flags: BTreeMap::new(),
        }
    }
}

impl ServerOptions {
    /// Replaces the zero values Go treats as "use the default" when the server starts, and
    /// resolves the monitoring host to the client host when unset.
    pub fn apply_baseline(&mut self) {
        let d = Self::default();
        if self.port == 0 {
            self.port = limits::PORT_DEFAULT;
        }
        if self.host.is_empty() {
            self.host.clone_from(&d.host);
        }
        if self.http_host.is_empty() {
            self.http_host = self.host.clone();
        }
        if self.max_payload == 0 {
            self.max_payload = d.max_payload;
        }
        if self.max_control_line == 0 {
            self.max_control_line = d.max_control_line;
        }
        if self.max_pending == 0 {
            self.max_pending = d.max_pending;
        }
        if self.ping_interval.is_zero() {
            self.ping_interval = d.ping_interval;
        }
        if self.ping_max == 0 {
            self.ping_max = d.ping_max;
        }
        if self.write_deadline.is_zero() {
            self.write_deadline = d.write_deadline;
        }
        if self.tls_timeout == 0.0 {
            self.tls_timeout = limits::TLS_TIMEOUT_SECS_DEFAULT;
        }
        // Go's default authentication timeout leaves a second after a TLS handshake.
        if self.auth_timeout == 0.0 || (!self.auth_timeout_set && self.tls.is_some()) {
            self.auth_timeout = if self.tls.is_some() {
                self.tls_timeout + 1.0
            } else {
                d.auth_timeout
            };
        }
        if self.max_closed_clients == 0 {
            self.max_closed_clients = d.max_closed_clients;
        }
        if self.lame_duck_duration.is_zero() {
            self.lame_duck_duration = d.lame_duck_duration;
        }
        if self.lame_duck_grace_period.is_zero() {
            self.lame_duck_grace_period = d.lame_duck_grace_period;
        }
        if self.connect_error_reports == 0 {
            self.connect_error_reports = d.connect_error_reports;
        }
        if self.reconnect_error_reports == 0 {
            self.reconnect_error_reports = d.reconnect_error_reports;
        }
        if self.websocket.port != 0 && self.websocket.host.is_empty() {
            limits::HOST_DEFAULT.clone_into(&mut self.websocket.host);
        }
    }
}

/// Go refuses a `no_auth_user` that names no configured user.
pub(super) fn validate_no_auth_user_named(o: &ServerOptions, name: &str) -> Result<(), ConfError> {
    if o.users.is_empty() {
        return Err(ConfError::Validation {
            message: format!("no_auth_user: \"{name}\" present, but users/nkeys are not defined"),
        });
    }
    if !o.users.iter().any(|u| u.username == name || u.nkey == name) {
        return Err(ConfError::Validation {
            message: format!(
                "no_auth_user: \"{name}\" not present as user or nkey in authorization block or \
                 account configuration"
            ),
        });
    }
    Ok(())
}
