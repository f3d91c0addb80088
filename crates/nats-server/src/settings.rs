//! Loads the configuration file (if any), lays the command-line flags over it as Go does, and
//! turns the result into the runtime's, the monitor's and the logger's settings.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use natrium_auth::{AuthConfig, NkeyUser, User};
use natrium_conf::cli::Flags;
use natrium_conf::options::{TlsOptions, TlsVersion, WebsocketOptions};
use natrium_conf::{merge, ConfError, ServerOptions};
use natrium_core::tls::{ClientTls, TlsSpec};
use natrium_core::ws::{WsConfig, WsReport};
use natrium_core::CoreConfig;
use natrium_gofmt::go_duration;
use natrium_monitor::MonitorSettings;
use natrium_ws::handshake::{CookieNames, HandshakeConfig};

use crate::logging::LogSettings;

pub struct Settings {
    /// The merged options everything below was built from; a reload diffs against them.
    pub options: ServerOptions,
    pub core: CoreConfig,
    pub http: Option<MonitorSettings>,
    /// Why monitoring cannot start (Go reports it when starting monitoring, after the PID
    /// file): both ports given, or HTTPS without a certificate.
    pub monitor_error: Option<String>,
    pub log: LogSettings,
    pub pid_file: Option<PathBuf>,
    pub ports_file_dir: Option<PathBuf>,
    pub config_file: Option<String>,
    /// `sha256:<hex>` of the configuration file, logged at start as Go does.
    pub config_digest: Option<String>,
}

pub fn non_empty_path(path: &str) -> Option<PathBuf> {
    (!path.is_empty()).then(|| PathBuf::from(path))
}

fn to_usize(value: i64) -> usize {
    usize::try_from(value.max(0)).unwrap_or(usize::MAX)
}

/// Reads the file named by `-c` (printing Go's warnings) and merges the flags over it. Returns
/// the options and the file's digest.
pub fn load_options(flags: &Flags) -> Result<(ServerOptions, Option<String>), ConfError> {
    let (file, digest) = match &flags.config_file {
        Some(path) => {
            let loaded = ServerOptions::load(path)?;
            for warning in &loaded.warnings {
                crate::logging::to_stderr(&format!("{warning}\n"));
            }
            (loaded.options, Some(loaded.digest))
        }
        None => (ServerOptions::default(), None),
    };
    let options = merge(file, flags);
    options.validate()?;
    validate_lame_duck(&options)?;
    Ok((options, digest))
}

/// Go refuses at start (not in `-t`) a grace period that leaves no time to close clients.
fn validate_lame_duck(o: &ServerOptions) -> Result<(), ConfError> {
    if !o.lame_duck_duration.is_zero() && o.lame_duck_grace_period >= o.lame_duck_duration {
        return Err(ConfError::Validation {
            message: format!(
                "lame duck grace period ({}) should be strictly lower than lame duck duration ({})",
                go_duration(o.lame_duck_grace_period),
                go_duration(o.lame_duck_duration)
            ),
        });
    }
    Ok(())
}

/// Seconds as Go's `secondsToDuration` reads them; negative or absurd values time out at once.
fn seconds(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::ZERO)
}

/// Reads the TLS files and builds the runtime's TLS configuration. Errors are reported as Go
/// reports them: at the `tls` key for a block from the file, bare for the `--tls*` flags.
pub fn client_tls(o: &ServerOptions) -> Result<Option<Arc<ClientTls>>, ConfError> {
    let Some(tls) = &o.tls else {
        return Ok(None);
    };
    build_tls(tls, &tls_spec(tls, o))
}

/// The websocket block's `tls`, built the same way (Go reads its files while parsing, so `-t`
/// reports them too).
pub fn websocket_tls(o: &ServerOptions) -> Result<Option<Arc<ClientTls>>, ConfError> {
    let Some(tls) = &o.websocket.tls else {
        return Ok(None);
    };
    let mut spec = tls_spec(tls, o);
    // The websocket listener has no TLS-first or plain-text fallback modes.
    spec.handshake_first = false;
    spec.allow_non_tls = false;
    build_tls(tls, &spec)
}

fn build_tls(tls: &TlsOptions, spec: &TlsSpec) -> Result<Option<Arc<ClientTls>>, ConfError> {
    ClientTls::build(spec)
        .map(|t| Some(Arc::new(t)))
        .map_err(|err| {
            let message = err.to_string();
            match &tls.pos {
                Some(pos) => ConfError::Invalid {
                    pos: pos.clone(),
                    message,
                },
                None => ConfError::Validation { message },
            }
        })
}

fn tls_spec(tls: &TlsOptions, o: &ServerOptions) -> TlsSpec {
    let names = |list: &Option<Vec<&'static str>>| {
        list.as_ref()
            .map(|l| l.iter().map(|n| (*n).to_owned()).collect())
    };
    TlsSpec {
        cert_file: tls.cert_file.clone(),
        key_file: tls.key_file.clone(),
        ca_file: tls.ca_file.clone(),
        verify: tls.verify,
        map: tls.map,
        timeout: seconds(o.tls_timeout),
        handshake_first: tls.handshake_first,
        handshake_first_fallback: tls.handshake_first_fallback,
        allow_non_tls: o.allow_non_tls,
        cipher_suites: names(&tls.cipher_suites),
        curve_preferences: names(&tls.curve_preferences),
        tls13_only: tls.min_version == Some(TlsVersion::Tls13),
        pinned_certs: tls.pinned_certs.clone(),
    }
}

/// The account a configured user logs into; `None` for the global account.
fn account_of(u: &natrium_conf::options::UserOption) -> Option<String> {
    (!u.account.is_empty()).then(|| u.account.clone())
}

/// The authentication the options ask for, as Go chooses it: a users list, else a single
/// user, else a token.
fn auth_config(o: &ServerOptions) -> AuthConfig {
    let no_auth_user = (!o.no_auth_user.is_empty()).then(|| o.no_auth_user.clone());
    if !o.users.is_empty() {
        let (with_nkey, with_name): (Vec<_>, Vec<_>) =
            o.users.iter().partition(|u| !u.nkey.is_empty());
        let users = with_name
            .iter()
            .map(|u| User {
                name: u.username.clone(),
                password: u.password.clone(),
                permissions: u.permissions.clone(),
                account: account_of(u),
            })
            .collect();
        let nkeys = with_nkey
            .iter()
            .map(|u| NkeyUser {
                nkey: u.nkey.clone(),
                permissions: u.permissions.clone(),
                account: account_of(u),
            })
            .collect();
        AuthConfig::Users {
            users,
            nkeys,
            no_auth_user,
            default_permissions: o.default_permissions.clone(),
        }
    } else if !o.username.is_empty() {
        let user = User {
            name: o.username.clone(),
            password: o.password.clone(),
            permissions: None,
            account: None,
        };
        AuthConfig::Users {
            users: vec![user],
            nkeys: Vec::new(),
            no_auth_user,
            default_permissions: o.default_permissions.clone(),
        }
    } else if !o.authorization.is_empty() {
        AuthConfig::Token(o.authorization.clone())
    } else {
        AuthConfig::None
    }
}

/// The websocket listener's runtime settings; `None` when the block has no port.
fn websocket(o: &ServerOptions) -> Result<Option<Arc<WsConfig>>, ConfError> {
    let ws = &o.websocket;
    if ws.port == 0 {
        return Ok(None);
    }
    let tls = websocket_tls(o)?;
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let handshake = natrium_ws::Handshake::new(&HandshakeConfig {
        compression: ws.compression,
        same_origin: ws.same_origin,
        allowed_origins: ws.allowed_origins.clone(),
        cookies: CookieNames {
            jwt: non_empty(&ws.jwt_cookie),
            user: non_empty(&ws.user_cookie),
            pass: non_empty(&ws.pass_cookie),
            token: non_empty(&ws.token_cookie),
        },
        headers: ws.headers.clone(),
        mqtt_enabled: false,
        tls: tls.is_some(),
    })
    .map_err(|e| ConfError::Validation {
        message: e.to_string(),
    })?;
    Ok(Some(Arc::new(WsConfig {
        host: ws.host.clone(),
        port: ws.port,
        tls,
        handshake,
        handshake_timeout: ws.handshake_timeout,
        auth: websocket_auth(ws, o),
        auth_timeout: (ws.auth_timeout != 0.0).then(|| seconds(ws.auth_timeout)),
        ping_interval: (!ws.ping_interval.is_zero()).then_some(ws.ping_interval),
        report: WsReport {
            advertise: ws.advertise.clone(),
            no_auth_user: ws.no_auth_user.clone(),
            jwt_cookie: ws.jwt_cookie.clone(),
            auth_timeout: ws.auth_timeout,
            no_tls: ws.no_tls,
            same_origin: ws.same_origin,
            allowed_origins: ws.allowed_origins.clone(),
            compression: ws.compression,
        },
    })))
}

/// The authentication websocket clients get when the block overrides the server's (Go's
/// `authOverride`), as Go's check orders it: the server's users with the block's
/// `no_auth_user`, else the block's token, else its user and password.
fn websocket_auth(ws: &WebsocketOptions, o: &ServerOptions) -> Option<AuthConfig> {
    if !ws.auth_override() {
        return None;
    }
    if !o.users.is_empty() {
        let mut server = auth_config(o);
        if let AuthConfig::Users { no_auth_user, .. } = &mut server {
            *no_auth_user = (!ws.no_auth_user.is_empty()).then(|| ws.no_auth_user.clone());
        }
        return Some(server);
    }
    if !ws.token.is_empty() {
        return Some(AuthConfig::Token(ws.token.clone()));
    }
    Some(AuthConfig::Users {
        users: vec![User {
            name: ws.username.clone(),
            password: ws.password.clone(),
            permissions: None,
            account: None,
        }],
        nkeys: Vec::new(),
        no_auth_user: None,
        default_permissions: o.default_permissions.clone(),
    })
}

/// Operator mode: the trusted operators and preloaded accounts, the accounts to create
/// (named by public key) and the system account, which must be among them, as Go requires.
struct OperatorMode {
    auth: AuthConfig,
    accounts: Vec<natrium_auth::account::AccountSpec>,
    system_account: String,
}

fn operator_mode(o: &ServerOptions) -> Result<Option<OperatorMode>, ConfError> {
    if o.operators.is_empty() {
        return Ok(None);
    }
    let invalid = |message: String| ConfError::Validation { message };
    let jwt = natrium_auth::jwt::JwtAuth::new(&o.operators, &o.resolver_preload)
        .map_err(|e| invalid(e.to_string()))?;
    let system = if o.system_account.is_empty() {
        jwt.operator_system_account().unwrap_or_default().to_owned()
    } else {
        o.system_account.clone()
    };
    let accounts = jwt.account_specs();
    if !system.is_empty() && !accounts.iter().any(|a| a.name == system) {
        return Err(invalid(
            "error resolving system account: account missing".to_owned(),
        ));
    }
    Ok(Some(OperatorMode {
        auth: AuthConfig::Jwt(Arc::new(jwt)),
        accounts,
        system_account: system,
    }))
}

pub fn load(flags: &Flags) -> Result<Settings, ConfError> {
    let (o, config_digest) = load_options(flags)?;
    build(o, config_digest)
}

/// The runtime's settings for merged options; reads the TLS files.
pub fn core_config(o: &ServerOptions) -> Result<CoreConfig, ConfError> {
    let core = CoreConfig {
        host: o.host.clone(),
        port: o.port,
        server_name: o.server_name.clone(),
        max_payload: usize::try_from(o.max_payload.max(0)).unwrap_or(0),
        max_control_line: usize::try_from(o.max_control_line.max(0)).unwrap_or(0),
        max_connections: to_usize(o.max_connections),
        max_subscriptions: to_usize(o.max_subscriptions),
        max_pending: to_usize(o.max_pending),
        ping_interval: o.ping_interval,
        ping_max: u32::try_from(o.ping_max.max(1)).unwrap_or(u32::MAX),
        write_deadline: o.write_deadline,
        auth_timeout: Duration::try_from_secs_f64(o.auth_timeout).unwrap_or(
            Duration::from_secs_f64(natrium_gofmt::defaults::AUTH_TIMEOUT_SECS_DEFAULT),
        ),
        auth: auth_config(o),
        no_header_support: o.no_header_support,
        disable_sublist_cache: o.disable_sublist_cache,
        lame_duck_duration: o.lame_duck_duration,
        lame_duck_grace_period: o.lame_duck_grace_period,
        ports_file_dir: non_empty_path(&o.ports_file_dir),
        trace: o.trace,
        debug: o.debug,
        max_traced_msg_len: to_usize(o.max_traced_msg_len),
        tls: client_tls(o)?,
        tls_timeout: seconds(o.tls_timeout),
        max_closed_clients: to_usize(o.max_closed_clients),
        websocket: websocket(o)?,
        accounts: o.accounts.clone(),
        system_account: o.system_account.clone(),
        no_system_account: o.no_system_account,
        accounts_on_demand: false,
        tags: o.server_tags.clone(),
        feature_flags: natrium_conf::options::feature_flags_in_force(&o.feature_flags),
        jetstream: o
            .jetstream
            .enabled
            .then(|| natrium_core::config::JetStreamInfo {
                api_level: natrium_jetstream::API_LEVEL,
                domain: o.jetstream_domain.clone(),
            }),
        metadata: o.server_metadata.clone(),
    };
    Ok(match operator_mode(o)? {
        Some(op) => CoreConfig {
            auth: op.auth,
            accounts: op.accounts,
            system_account: op.system_account,
            accounts_on_demand: true,
            ..core
        },
        None => core,
    })
}

/// The logger's settings for merged options.
pub fn log_settings(o: &ServerOptions) -> LogSettings {
    LogSettings {
        timestamps: o.logtime,
        utc: o.logtime_utc,
        debug: o.debug,
        trace: o.trace,
        file: non_empty_path(&o.logfile),
        size_limit: u64::try_from(o.log_size_limit.max(0)).unwrap_or(0),
        max_files: u64::try_from(o.log_max_num.max(0)).unwrap_or(0),
        syslog: o.syslog,
        remote_syslog: o.remote_syslog.clone(),
    }
}

/// The monitoring listener the options ask for, or Go's reason to refuse it.
fn monitor_settings(o: &ServerOptions, has_tls: bool) -> (Option<MonitorSettings>, Option<String>) {
    let settings = |port: i64, tls: bool| MonitorSettings {
        host: o.http_host.clone(),
        port,
        base_path: o.http_base_path.clone(),
        tls,
        req_stats: natrium_monitor::http::HttpReqStats::default(),
    };
    match (o.http_port, o.https_port) {
        (0, 0) => (None, None),
        (http, 0) => (Some(settings(http, false)), None),
        (0, _) if !has_tls => (None, Some("TLS cert and key required for HTTPS".to_owned())),
        (0, https) => (Some(settings(https, true)), None),
        (http, https) => (
            None,
            Some(format!(
                "can't specify both HTTP ({http}) and HTTPs ({https}) ports"
            )),
        ),
    }
}

/// Everything the binary needs, from merged options and the file's digest.
pub fn build(o: ServerOptions, config_digest: Option<String>) -> Result<Settings, ConfError> {
    let core = core_config(&o)?;
    let (http, monitor_error) = monitor_settings(&o, core.tls.is_some());
    Ok(Settings {
        core,
        http,
        monitor_error,
        log: log_settings(&o),
        pid_file: non_empty_path(&o.pidfile),
        ports_file_dir: non_empty_path(&o.ports_file_dir),
        config_file: o.config_file.clone(),
        config_digest,
        options: o,
    })
}
