//! The reload comparison, as Go's `Server.Reload` makes it: the options in force against the
//! options just loaded, as a pure function of the two (and of the TLS files' contents, read
//! through the caller's reader). The binary applies what it returns.
//!
//! The comparison walks Go's `Options` fields in Go's order, so that the `Reloaded: …` lines
//! come out in Go's order and the first option Go refuses is the one named in
//! `config reload not supported for <Field>: old=<v>, new=<v>` (Go's field names and `%v`
//! values). Go always re-runs its authorization step and prints `Reloaded: authorization
//! users` and `Reloaded: accounts` on every reload; so does the diff.

mod jetstream;

use natrium_gofmt::go_duration;

use crate::options::{TlsOptions, WebsocketOptions};
use crate::ServerOptions;

/// What applying one change needs besides its log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    /// Close connections above the new max_connections.
    MaxConnections,
    /// Write the PID to the new file.
    PidFile,
    /// Remove the old ports file, write one in the new directory.
    PortsFileDir,
    /// Go's warning that block profiling is on (Natrium profiles nothing; the line is Go's).
    WarnBlockProfiling(i64),
    /// Turn JetStream on (`true`) or off.
    JetStream(bool),
    /// Raise JetStream's `max_memory_store` / `max_file_store` to these (0: unchanged); Go
    /// logs `Reloaded: JetStream max_mem_store = …` as it applies each.
    JetStreamMax {
        memory: i64,
        store: i64,
    },
    /// Take the new server-wide `jetstream { limits { … } }`.
    JetStreamLimits,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The `Reloaded: …` line, if Go logs one.
    pub line: Option<String>,
    pub action: Action,
}

/// The result of comparing: changes in Go's order, and whether logging must be redone.
#[derive(Debug, Default)]
pub struct Diff {
    pub changes: Vec<Change>,
    pub logging: bool,
}

/// Go's `%v` for a float64: the shortest representation, whole numbers without a fraction.
fn go_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e21 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Reads a file the options name (the TLS certificate, key and CA files); empty when missing.
pub type ReadFile<'a> = &'a dyn Fn(&str) -> Vec<u8>;

/// What of the TLS block makes Go's `TLSConfig` differ: the files' contents and the settings
/// that shape the handshake. Timeout, pinned certificates and handshake-first are separate Go
/// fields.
fn tls_fingerprint(tls: Option<&TlsOptions>, read_file: ReadFile<'_>) -> Option<String> {
    let tls = tls?;
    let read = |p: &str| {
        if p.is_empty() {
            Vec::new()
        } else {
            read_file(p)
        }
    };
    let mut digest = format!(
        "{}|{}|{}|{}|{}|{}|{:?}|{:?}|{:?}|",
        tls.cert_file,
        tls.key_file,
        tls.ca_file,
        tls.verify,
        tls.map,
        tls.insecure,
        tls.cipher_suites,
        tls.curve_preferences,
        tls.min_version
    );
    for file in [&tls.cert_file, &tls.key_file, &tls.ca_file] {
        digest.push_str(&String::from_utf8_lossy(&read(file)));
        digest.push('|');
    }
    Some(digest)
}

struct Walk<'a> {
    old: &'a ServerOptions,
    new: &'a ServerOptions,
    read_file: ReadFile<'a>,
    diff: Diff,
    /// A JetStream refusal that stands unless JetStream is turned off (see `jetstream`).
    js_deferred: Option<String>,
}

impl Walk<'_> {
    fn refuse(field: &str, old: impl std::fmt::Display, new: impl std::fmt::Display) -> String {
        format!("config reload not supported for {field}: old={old}, new={new}")
    }

    /// A field Go cannot reload: an error when it changed. A method, so that the walk reads
    /// as one list of fields.
    #[allow(clippy::unused_self)]
    fn fixed<T: PartialEq + std::fmt::Display>(
        &self,
        field: &str,
        old: T,
        new: T,
    ) -> Result<(), String> {
        if old == new {
            Ok(())
        } else {
            Err(Self::refuse(field, old, new))
        }
    }

    fn push(&mut self, line: String, action: Action) {
        self.diff.changes.push(Change {
            line: Some(line),
            action,
        });
    }

    /// A field Go reloads, logging `line` when it changed.
    fn reload<T: PartialEq>(&mut self, old: &T, new: &T, line: impl FnOnce() -> String) {
        if old != new {
            self.push(line(), Action::None);
        }
    }

    fn logging<T: PartialEq>(&mut self, old: &T, new: &T, line: impl FnOnce() -> String) {
        if old != new {
            self.diff.logging = true;
            self.push(line(), Action::None);
        }
    }
}

/// Compares the options in force with the new ones. `bound_port` is the client port the
/// server listens on (what Go compares a configured port with; `-1` in the file keeps it);
/// `read_file` reads the TLS files both option sets name. The error is Go's message.
pub fn diff(
    old: &ServerOptions,
    new: &ServerOptions,
    bound_port: u16,
    read_file: ReadFile<'_>,
) -> Result<Diff, String> {
    let mut w = Walk {
        old,
        new,
        read_file,
        diff: Diff::default(),
        js_deferred: None,
    };
    w.fixed("ServerName", &old.server_name, &new.server_name)?;
    w.fixed("Host", &old.host, &new.host)?;
    if new.port != -1 && new.port != i64::from(bound_port) {
        return Err(Walk::refuse("Port", bound_port, new.port));
    }
    w.reload(&old.client_advertise, &new.client_advertise, || {
        format!("Reload: client_advertise = {}", new.client_advertise)
    });
    w.logging(&old.trace, &new.trace, || {
        format!("Reloaded: trace = {}", new.trace)
    });
    w.logging(&old.debug, &new.debug, || {
        format!("Reloaded: debug = {}", new.debug)
    });
    w.logging(&old.trace_verbose, &new.trace_verbose, || {
        format!("Reloaded: trace_verbose = {}", new.trace_verbose)
    });
    w.logging(&old.trace_headers, &new.trace_headers, || {
        format!("Reloaded: trace_headers = {}", new.trace_headers)
    });
    w.fixed(
        "NoSublistCache",
        old.disable_sublist_cache,
        new.disable_sublist_cache,
    )?;
    w.fixed(
        "NoHeaderSupport",
        old.no_header_support,
        new.no_header_support,
    )?;
    w.logging(&old.logtime, &new.logtime, || {
        format!("Reloaded: logtime = {}", new.logtime)
    });
    w.logging(&old.logtime_utc, &new.logtime_utc, || {
        format!("Reloaded: logtime_utc = {}", new.logtime_utc)
    });
    if old.max_connections != new.max_connections {
        w.push(
            format!("Reloaded: max_connections = {}", new.max_connections),
            Action::MaxConnections,
        );
    }
    w.fixed("MaxSubs", old.max_subscriptions, new.max_subscriptions)?;
    auth_fields(&mut w)?;
    limits(&mut w)?;
    files_and_logging(&mut w)?;
    tls_fields(&mut w)?;
    tail(&mut w)?;
    jetstream::finish(&w)?;
    Ok(w.diff)
}

/// Go's `PingInterval` … `MaxPending`.
fn limits(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    w.reload(&old.ping_interval, &new.ping_interval, || {
        format!(
            "Reloaded: ping_interval = {}",
            go_duration(new.ping_interval)
        )
    });
    w.reload(&old.ping_max, &new.ping_max, || {
        format!("Reloaded: ping_max = {}", new.ping_max)
    });
    w.fixed("HTTPHost", &old.http_host, &new.http_host)?;
    w.fixed("HTTPPort", old.http_port, new.http_port)?;
    w.fixed("HTTPBasePath", &old.http_base_path, &new.http_base_path)?;
    w.fixed("HTTPSPort", old.https_port, new.https_port)?;
    w.reload(
        &old.auth_timeout.to_bits(),
        &new.auth_timeout.to_bits(),
        || {
            format!(
                "Reloaded: authorization timeout = {}",
                go_float(new.auth_timeout)
            )
        },
    );
    w.reload(&old.max_control_line, &new.max_control_line, || {
        format!("Reloaded: max_control_line = {}", new.max_control_line)
    });
    w.reload(&old.max_payload, &new.max_payload, || {
        format!("Reloaded: max_payload = {}", new.max_payload)
    });
    w.fixed("MaxPending", old.max_pending, new.max_pending)?;
    jetstream::fields(w)?;
    jetstream::store_and_sync(w)
}

/// Go's `WriteDeadline` … `ReconnectErrorReports`.
fn tail(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    w.reload(&old.write_deadline, &new.write_deadline, || {
        format!(
            "Reloaded: write_deadline = {}",
            go_duration(new.write_deadline)
        )
    });
    w.fixed(
        "MaxClosedClients",
        old.max_closed_clients,
        new.max_closed_clients,
    )?;
    w.fixed(
        "LameDuckDuration",
        go_duration(old.lame_duck_duration),
        go_duration(new.lame_duck_duration),
    )?;
    w.fixed(
        "LameDuckGracePeriod",
        go_duration(old.lame_duck_grace_period),
        go_duration(new.lame_duck_grace_period),
    )?;
    w.reload(&old.max_traced_msg_len, &new.max_traced_msg_len, || {
        format!("Reloaded: max_traced_msg_len = {}", new.max_traced_msg_len)
    });
    operator_fields(w)?;
    w.reload(
        &old.connect_error_reports,
        &new.connect_error_reports,
        || {
            format!(
                "Reloaded: connect_error_reports = {}",
                new.connect_error_reports
            )
        },
    );
    w.reload(
        &old.reconnect_error_reports,
        &new.reconnect_error_reports,
        || {
            format!(
                "Reloaded: reconnect_error_reports = {}",
                new.reconnect_error_reports
            )
        },
    );
    w.reload(&old.server_tags, &new.server_tags, || {
        "Reloaded: tags".to_owned()
    });
    w.reload(&old.server_metadata, &new.server_metadata, || {
        "Reloaded: metadata".to_owned()
    });
    // Go's `%v` of a map: `map[a:true b:false]`, keys sorted.
    let flags = |o: &ServerOptions| {
        let pairs: Vec<String> = o
            .feature_flags
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect();
        format!("map[{}]", pairs.join(" "))
    };
    w.fixed("FeatureFlags", flags(old), flags(new))?;
    Ok(())
}

/// Go's `TrustedOperators` and `AccountResolver`: the operators stay for the server's life
/// and a resolver can be neither added nor removed; a changed `resolver_preload` is applied
/// (accounts updated, added, or removed with Go's `Reloaded: deleting account` line).
fn operator_fields(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    if old.operators != new.operators {
        // Go prints its pointers here; the count says as much.
        let count = |o: &ServerOptions| format!("[{} operator(s)]", o.operators.len());
        return Err(Walk::refuse("TrustedOperators", count(old), count(new)));
    }
    if old.resolver_memory != new.resolver_memory {
        return Err(
            "config reload does not support moving to or from an account resolver".to_owned(),
        );
    }
    Ok(())
}

/// Go's `Nkeys`, `Users`, `Accounts`, `NoAuthUser`, `SystemAccount`, `NoSystemAccount`,
/// `Username`, `Password`, `Authorization`. A changed accounts block is applied: accounts are
/// rebuilt live, as Go rebuilds them (see `natrium_core::reload`).
fn auth_fields(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    let nkeys = |o: &ServerOptions| {
        o.users
            .iter()
            .filter(|u| !u.nkey.is_empty())
            .cloned()
            .collect::<Vec<_>>()
    };
    w.reload(&nkeys(old), &nkeys(new), || {
        "Reloaded: authorization nkey users".to_owned()
    });
    // Go never finds these two equal (they hold internal state), so it always says so.
    w.push("Reloaded: authorization users".to_owned(), Action::None);
    w.push("Reloaded: accounts".to_owned(), Action::None);
    if old.no_auth_user != new.no_auth_user {
        // Go allows only dropping no_auth_user together with the user it named.
        let dropped_with_user = !old.no_auth_user.is_empty()
            && new.no_auth_user.is_empty()
            && !new
                .users
                .iter()
                .any(|u| u.username == old.no_auth_user || u.nkey == old.no_auth_user);
        if !dropped_with_user {
            return Err(Walk::refuse(
                "NoAuthUser",
                &old.no_auth_user,
                &new.no_auth_user,
            ));
        }
    }
    // Go keeps the system account for the server's life; only naming the `$SYS` it already
    // uses is not a change.
    if old.system_account != new.system_account
        && !(old.system_account == "$SYS" && new.system_account.is_empty())
    {
        return Err(Walk::refuse(
            "SystemAccount",
            &old.system_account,
            &new.system_account,
        ));
    }
    w.fixed(
        "NoSystemAccount",
        old.no_system_account,
        new.no_system_account,
    )?;
    w.reload(&old.username, &new.username, || {
        "Reloaded: authorization username".to_owned()
    });
    w.reload(&old.password, &new.password, || {
        "Reloaded: authorization password".to_owned()
    });
    w.reload(&old.authorization, &new.authorization, || {
        "Reloaded: authorization token".to_owned()
    });
    Ok(())
}

/// Go's `PidFile` … `RemoteSyslog`.
fn files_and_logging(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    // Go refuses any websocket change but its TLS files, naming the whole block with `%v`
    // (secrets included); we name the listen address only.
    let mut ws_old = old.websocket.clone();
    let mut ws_new = new.websocket.clone();
    ws_old.tls = None;
    ws_new.tls = None;
    if ws_old != ws_new {
        let show = |w: &WebsocketOptions| format!("{{{} {}}}", w.host, w.port);
        return Err(Walk::refuse("Websocket", show(&ws_old), show(&ws_new)));
    }
    if old.prof_block_rate != new.prof_block_rate {
        // Go warns first when the new rate turns block profiling on.
        if new.prof_block_rate > 0 {
            w.diff.changes.push(Change {
                line: None,
                action: Action::WarnBlockProfiling(new.prof_block_rate),
            });
        }
        w.push(
            format!("Reloaded: prof_block_rate = {}", new.prof_block_rate),
            Action::None,
        );
    }
    // Go writes the new PID file but logs (and writes) nothing when the option is removed.
    if old.pidfile != new.pidfile && !new.pidfile.is_empty() {
        w.push(
            format!("Reloaded: pid_file = {}", new.pidfile),
            Action::PidFile,
        );
    }
    if old.ports_file_dir != new.ports_file_dir {
        w.push(
            format!("Reloaded: ports_file_dir = {}", new.ports_file_dir),
            Action::PortsFileDir,
        );
    }
    w.logging(&old.logfile, &new.logfile, || {
        format!("Reloaded: log_file = {}", new.logfile)
    });
    w.fixed("LogSizeLimit", old.log_size_limit, new.log_size_limit)?;
    w.fixed("LogMaxFiles", old.log_max_num, new.log_max_num)?;
    w.logging(&old.syslog, &new.syslog, || {
        format!("Reloaded: syslog = {}", new.syslog)
    });
    w.logging(&old.remote_syslog, &new.remote_syslog, || {
        format!("Reloaded: remote_syslog = {}", new.remote_syslog)
    });
    Ok(())
}

/// Go's `TLSTimeout`, `TLSConfig`, `TLSPinnedCerts`, `TLSHandshakeFirst`,
/// `TLSHandshakeFirstFallback`, `AllowNonTLS`.
fn tls_fields(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    w.reload(
        &old.tls_timeout.to_bits(),
        &new.tls_timeout.to_bits(),
        || format!("Reloaded: tls timeout = {}", go_float(new.tls_timeout)),
    );
    let (old_tls, new_tls) = (old.tls.as_ref(), new.tls.as_ref());
    if tls_fingerprint(old_tls, w.read_file) != tls_fingerprint(new_tls, w.read_file) {
        let state = if new_tls.is_some() {
            "enabled"
        } else {
            "disabled"
        };
        w.push(format!("Reloaded: tls = {state}"), Action::None);
    }
    let pinned = |t: Option<&TlsOptions>| t.and_then(|t| t.pinned_certs.clone());
    if pinned(old_tls) != pinned(new_tls) {
        let count = pinned(new_tls).map_or(0, |p| p.len());
        w.push(format!("Reloaded: {count} pinned_certs"), Action::None);
    }
    let first = |t: Option<&TlsOptions>| t.is_some_and(|t| t.handshake_first);
    w.reload(&first(old_tls), &first(new_tls), || {
        format!("Reloaded: Client TLS handshake first: {}", first(new_tls))
    });
    let fallback =
        |t: Option<&TlsOptions>| t.map(|t| t.handshake_first_fallback).unwrap_or_default();
    w.reload(&fallback(old_tls), &fallback(new_tls), || {
        format!(
            "Reloaded: Client TLS handshake first fallback delay: {}",
            go_duration(fallback(new_tls))
        )
    });
    w.fixed("AllowNonTLS", old.allow_non_tls, new.allow_non_tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ServerOptions {
        let mut o = ServerOptions {
            port: -1,
            ..ServerOptions::default()
        };
        o.apply_baseline();
        o
    }

    fn no_files(_: &str) -> Vec<u8> {
        Vec::new()
    }

    fn lines(d: &Diff) -> Vec<String> {
        d.changes.iter().filter_map(|c| c.line.clone()).collect()
    }

    #[test]
    fn reload_diff_nothing_changed_like_go() {
        let d = diff(&base(), &base(), 4222, &no_files).unwrap_or_default();
        assert_eq!(
            lines(&d),
            ["Reloaded: authorization users", "Reloaded: accounts"]
        );
        assert!(!d.logging);
    }

    #[test]
    fn reload_diff_order_and_texts_like_go() {
        let mut new = base();
        new.trace = true;
        new.debug = true;
        new.logtime = false;
        new.max_connections = 10;
        new.ping_interval = std::time::Duration::from_secs(30);
        new.max_payload = 5000;
        new.write_deadline = std::time::Duration::from_secs(3);
        new.authorization = "tok".into();
        let d = diff(&base(), &new, 4222, &no_files).unwrap_or_default();
        assert_eq!(
            lines(&d),
            [
                "Reloaded: trace = true",
                "Reloaded: debug = true",
                "Reloaded: logtime = false",
                "Reloaded: max_connections = 10",
                "Reloaded: authorization users",
                "Reloaded: accounts",
                "Reloaded: authorization token",
                "Reloaded: ping_interval = 30s",
                "Reloaded: max_payload = 5000",
                "Reloaded: write_deadline = 3s",
            ]
        );
        assert!(d.logging);
    }

    #[test]
    fn reload_diff_refusals_like_go() {
        let refused = |f: &dyn Fn(&mut ServerOptions)| {
            let mut new = base();
            f(&mut new);
            diff(&base(), &new, 4222, &no_files)
                .err()
                .unwrap_or_default()
        };
        assert_eq!(
            refused(&|o| o.server_name = "foo".into()),
            "config reload not supported for ServerName: old=, new=foo"
        );
        assert_eq!(
            refused(&|o| o.port = 4333),
            "config reload not supported for Port: old=4222, new=4333"
        );
        assert_eq!(
            refused(&|o| o.host = "127.0.0.1".into()),
            "config reload not supported for Host: old=0.0.0.0, new=127.0.0.1"
        );
        assert_eq!(
            refused(&|o| o.max_subscriptions = 5),
            "config reload not supported for MaxSubs: old=0, new=5"
        );
        assert_eq!(
            refused(&|o| o.lame_duck_duration = std::time::Duration::from_secs(40)),
            "config reload not supported for LameDuckDuration: old=2m0s, new=40s"
        );
        assert_eq!(
            refused(&|o| o.no_auth_user = "a".into()),
            "config reload not supported for NoAuthUser: old=, new=a"
        );
        assert_eq!(
            refused(&|o| o.allow_non_tls = true),
            "config reload not supported for AllowNonTLS: old=false, new=true"
        );
        assert_eq!(
            refused(&|o| o.log_size_limit = 1000),
            "config reload not supported for LogSizeLimit: old=0, new=1000"
        );
    }

    #[test]
    fn reload_diff_tls_files_read_through_the_reader() {
        let tls = |cert: &str| TlsOptions {
            cert_file: cert.into(),
            key_file: "key.pem".into(),
            ..TlsOptions::default()
        };
        let with = |cert: &str| ServerOptions {
            tls: Some(tls(cert)),
            ..base()
        };
        let tls_lines = |old: &ServerOptions, new: &ServerOptions, read: ReadFile<'_>| {
            let d = diff(old, new, 4222, read).unwrap_or_default();
            lines(&d)
                .into_iter()
                .filter(|l| l.contains("tls"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            tls_lines(&base(), &with("a.pem"), &no_files),
            ["Reloaded: tls = enabled"]
        );
        assert_eq!(
            tls_lines(&with("a.pem"), &base(), &no_files),
            ["Reloaded: tls = disabled"]
        );
        assert!(tls_lines(&with("a.pem"), &with("a.pem"), &no_files).is_empty());
        // Same paths, contents differing between the two reads: the files changed.
        let calls = std::cell::Cell::new(0u8);
        let changing = |_: &str| {
            calls.set(calls.get() + 1);
            vec![calls.get() / 3]
        };
        assert_eq!(
            tls_lines(&with("a.pem"), &with("a.pem"), &changing),
            ["Reloaded: tls = enabled"]
        );
    }

    #[test]
    fn reload_diff_go_float_format() {
        assert_eq!(go_float(3.0), "3");
        assert_eq!(go_float(0.5), "0.5");
    }
}
