//! Applies each top-level key to [`ServerOptions`], in file order, collecting Go's warnings and
//! errors. Option names are matched case-insensitively, as Go lower-cases them.

use natrium_gofmt::{go_duration_nanos, nanos_to_duration, parse_go_duration};

use super::convert::{self, loose_duration, string_into, Report};
use super::{ServerOptions, UserOption};
use crate::error::ConfError;
use crate::lang::{format_float, Entry, Map, Value};
use crate::limits::LAME_DUCK_DURATION_MIN;

mod account_items;
mod account_links;
mod accounts;
mod import_mapping;
mod inert;
mod jetstream;
mod mappings;
mod msg_trace;
mod operator;
mod perms;
mod users;

pub use inert::add_tag;
use perms::permissions;
use users::users;

/// Top-level options the Go server knows (v2.15) for features Natrium does not implement yet.
/// A file using one is refused rather than half-honoured. Options that only describe or tune
/// a missing feature, and so change nothing a client sees, are accepted instead (see
/// `inert.rs` and `jetstream.rs`; `jetstream`, `ocsp`, `prof_port` and
/// `no_fast_producer_stall` are refused only for the values that switch something on).
pub const NOT_SUPPORTED_YET: &[&str] = &[
    "cluster",
    "default_js_domain",
    "default_sentinel",
    "gateway",
    "leaf",
    "leafnodes",
    "mqtt",
    "proxies",
    "resolver_pinned_accounts",
    "resolver_tls",
    "trusted",
    "trusted_keys",
    "write_timeout",
];

/// Keys of the `authorization` block Go knows, other than `timeout`, not implemented yet.
pub const AUTHORIZATION_NOT_SUPPORTED_YET: &[&str] = &["auth_callout", "proxy_required"];

/// Applies `map` to `o`; returns `(warnings, errors)`.
pub(super) fn apply(o: &mut ServerOptions, map: &Map) -> (Vec<ConfError>, Vec<ConfError>) {
    let mut report = Report::default();
    for entry in map {
        if let Err(message) = apply_entry(o, entry, &mut report) {
            report.invalid(entry, message);
        }
    }
    (report.warnings, report.errors)
}

fn set<T>(slot: &mut T, value: Result<T, String>) -> Result<(), String> {
    *slot = value?;
    Ok(())
}

/// `http: host:port` / `https: host:port`: sets the monitoring host, returns the port.
fn monitor_listen(o: &mut ServerOptions, v: &Value) -> Result<i64, String> {
    let (host, port) = convert::host_port(v)?;
    if let Some(host) = host {
        o.http_host = host;
    }
    Ok(port)
}

// A flat match over Go's option names: splitting it would only scatter the table.
#[allow(clippy::too_many_lines)]
fn apply_entry(o: &mut ServerOptions, e: &Entry, report: &mut Report) -> Result<(), String> {
    let v = &e.node.value;
    match e.key.to_ascii_lowercase().as_str() {
        "listen" => {
            let (host, port) = convert::host_port(v)?;
            if let Some(host) = host {
                o.host = host;
            }
            o.port = port;
        }
        "http" => o.http_port = monitor_listen(o, v)?,
        "port" => set(&mut o.port, convert::int(v))?,
        "host" | "net" => set(&mut o.host, convert::string(v))?,
        "server_name" => {
            let name = convert::string(v)?;
            if name.contains(' ') {
                return Err("server name cannot contain spaces".to_owned());
            }
            o.server_name = name;
        }
        "client_advertise" => set(&mut o.client_advertise, convert::string(v))?,
        "http_port" | "monitor_port" => set(&mut o.http_port, convert::int(v))?,
        "https" => o.https_port = monitor_listen(o, v)?,
        "https_port" => set(&mut o.https_port, convert::int(v))?,
        "http_base_path" => set(&mut o.http_base_path, convert::string(v))?,
        "max_payload" => set(&mut o.max_payload, int32("max_payload", v))?,
        "max_control_line" => set(&mut o.max_control_line, int32("max_control_line", v))?,
        // An explicit 0 would read as "unset" at startup; Go stores it as -1 (accept none).
        "max_connections" | "max_conn" => {
            let n = convert::int(v)?;
            o.max_connections = if n == 0 { -1 } else { n };
        }
        "max_subscriptions" | "max_subs" => set(&mut o.max_subscriptions, convert::int(v))?,
        "max_pending" => set(&mut o.max_pending, convert::int(v))?,
        "ping_interval" => set(
            &mut o.ping_interval,
            loose_duration("ping_interval", e, report),
        )?,
        "write_deadline" => {
            set(
                &mut o.write_deadline,
                loose_duration("write_deadline", e, report),
            )?;
        }
        "ping_max" => set(&mut o.ping_max, convert::int(v))?,
        "no_header_support" => set(&mut o.no_header_support, convert::boolean(v))?,
        "disable_sublist_cache" | "no_sublist_cache" => {
            set(&mut o.disable_sublist_cache, convert::boolean(v))?;
        }
        "max_traced_msg_len" => set(&mut o.max_traced_msg_len, convert::int(v))?,
        "max_closed_clients" => set(&mut o.max_closed_clients, convert::int(v))?,
        "logfile" | "log_file" => set(&mut o.logfile, convert::string(v))?,
        "log_size_limit" | "logfile_size_limit" => set(&mut o.log_size_limit, convert::int(v))?,
        "log_max_num" | "logfile_max_num" => set(&mut o.log_max_num, convert::int(v))?,
        "debug" => set(&mut o.debug, convert::boolean(v))?,
        "trace" => set(&mut o.trace, convert::boolean(v))?,
        "trace_verbose" => {
            let on = convert::boolean(v)?;
            o.trace_verbose = on;
            o.trace = on;
        }
        // Go traces only the headers of messages; Natrium does not trace payloads at all.
        "trace_headers" => {
            let on = convert::boolean(v)?;
            o.trace_headers = on;
            o.trace = on;
        }
        "logtime" => set(&mut o.logtime, convert::boolean(v))?,
        "logtime_utc" => set(&mut o.logtime_utc, convert::boolean(v))?,
        "syslog" => set(&mut o.syslog, convert::boolean(v))?,
        "remote_syslog" => set(&mut o.remote_syslog, convert::string(v))?,
        "pidfile" | "pid_file" => set(&mut o.pidfile, convert::string(v))?,
        "ports_file_dir" => set(&mut o.ports_file_dir, convert::string(v))?,
        "lame_duck_duration" => {
            let nanos = convert::duration_string("lame_duck_duration", v)?;
            o.lame_duck_duration = match nanos_to_duration(nanos) {
                Some(d) if d >= LAME_DUCK_DURATION_MIN => d,
                _ => {
                    return Err(format!(
                        "invalid lame_duck_duration of {}, minimum is 30 seconds",
                        go_duration_nanos(nanos)
                    ));
                }
            };
        }
        "lame_duck_grace_period" => {
            let nanos = convert::duration_string("lame_duck_grace_period", v)?;
            o.lame_duck_grace_period = nanos_to_duration(nanos)
                .ok_or_else(|| "invalid lame_duck_grace_period, needs to be positive".to_owned())?;
        }
        "connect_error_reports" => set(&mut o.connect_error_reports, convert::int(v))?,
        "reconnect_error_reports" => set(&mut o.reconnect_error_reports, convert::int(v))?,
        "authorization" => authorization(o, e, report)?,
        "tls" => tls_block(o, e, report),
        "allow_non_tls" => set(&mut o.allow_non_tls, convert::boolean(v))?,
        "no_auth_user" => o.no_auth_user = convert::string(v)?,
        "websocket" | "ws" => super::websocket::parse(o, e, report),
        "accounts" => accounts::parse(o, e, report),
        "mappings" | "maps" => mappings::global(o, e, report),
        "system_account" | "system" => accounts::system_account(o, e, report),
        "operator" | "operators" | "roots" | "root" | "root_operators" | "root_operator" => {
            operator::operators(o, e, report);
        }
        "resolver" | "account_resolver" | "accounts_resolver" => operator::resolver(o, e, report),
        "resolver_preload" => operator::preload(o, e, report),
        "no_system_account" | "no_system" | "no_sys_acc" => {
            set(&mut o.no_system_account, convert::boolean(v))?;
        }
        "jetstream" => jetstream::server(o, e, report),
        "store_dir" | "storedir" => inert::store_dir(o, e)?,
        "server_tags" => inert::server_tags(o, e)?,
        "server_metadata" => inert::server_metadata(o, e, report),
        "feature_flags" => inert::feature_flags(o, e, report),
        "ocsp" => inert::ocsp(e, report),
        "ocsp_cache" => inert::ocsp_cache(e, report),
        "prof_port" => inert::prof_port(e, report)?,
        "prof_block_rate" => set(&mut o.prof_block_rate, convert::int(v))?,
        "no_fast_producer_stall" => inert::no_fast_producer_stall(e, report)?,
        key if NOT_SUPPORTED_YET.contains(&key) => report.not_supported(e, e.key.clone()),
        // Go forgives unknown keys that served as variables (`size = 1MB` then `$size`).
        _ if e.node.used_as_variable() => {}
        _ => report.unknown(e),
    }
    Ok(())
}

/// The client `tls` block; its first problem is the one reported, as in Go.
fn tls_block(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    match super::tls::parse_tls(e) {
        Ok(parsed) => {
            o.tls = Some(parsed.options);
            o.tls_timeout = parsed.timeout;
        }
        Err(err) => report.errors.push(err),
    }
}

/// Go keeps `max_payload` and `max_control_line` in an `int32`: larger values are refused,
/// smaller ones wrap as Go's conversion does.
fn int32(name: &str, v: &Value) -> Result<i32, String> {
    let n = convert::int(v)?;
    if n > i64::from(i32::MAX) {
        return Err(format!("{name} value is too big"));
    }
    Ok(n as i32)
}

fn authorization(o: &mut ServerOptions, e: &Entry, report: &mut Report) -> Result<(), String> {
    let block = match convert::map(&e.node.value) {
        Ok(block) => block,
        Err(message) => {
            // Go goes on with a nil block and crashes on it; its recovered panic is a second
            // error line, which we print too so that the output matches.
            report.invalid(e, message);
            return Err("runtime error: invalid memory address or nil pointer dereference".into());
        }
    };
    let mut users_seen = false;
    let mut block_users = Vec::new();
    for inner in block {
        let key = inner.key.to_ascii_lowercase();
        if matches!(inner.node.value, Value::Null) {
            // A value-less key: Go's type switches fall through to "unknown field".
            report.unknown(inner);
        } else if key == "timeout" {
            match auth_timeout(&inner.node.value) {
                Ok(secs) => {
                    if secs > AUTH_TIMEOUT_WARN_SECS {
                        report.warn(inner, auth_timeout_warning(&inner.node.value, secs));
                    }
                    o.auth_timeout = secs;
                    o.auth_timeout_set = secs != 0.0;
                }
                Err(message) => report.invalid(inner, message),
            }
        } else if matches!(key.as_str(), "user" | "username") {
            string_into(&mut o.username, inner, report);
        } else if matches!(key.as_str(), "pass" | "password") {
            string_into(&mut o.password, inner, report);
        } else if key == "token" {
            string_into(&mut o.authorization, inner, report);
        } else if matches!(key.as_str(), "default_permission" | "default_permissions") {
            o.default_permissions = permissions(inner, report);
        } else if key == "users" {
            users_seen = true;
            block_users = users(inner, report);
        } else if AUTHORIZATION_NOT_SUPPORTED_YET.contains(&key.as_str()) {
            report.not_supported(inner, format!("{}.{}", e.key, inner.key));
        } else if !inner.node.used_as_variable() {
            report.unknown(inner);
        }
    }
    // Users of accounts read earlier count as a users array too.
    if users_seen || !o.users.is_empty() {
        if !o.username.is_empty() {
            report.invalid(
                e,
                "Can not have a single user/pass and a users array".to_owned(),
            );
            return Ok(());
        } else if !o.authorization.is_empty() {
            report.invalid(e, "Can not have a token and a users array".to_owned());
            return Ok(());
        }
    }
    add_block_users(o, e, block_users, report);
    Ok(())
}

/// Appends the `authorization` block's users to those of accounts read earlier; names and
/// nkeys must be unique across both (named users are checked first, as in Go).
fn add_block_users(
    o: &mut ServerOptions,
    e: &Entry,
    mut block_users: Vec<UserOption>,
    report: &mut Report,
) {
    let id = |u: &UserOption| {
        if u.nkey.is_empty() {
            u.username.clone()
        } else {
            u.nkey.clone()
        }
    };
    let mut seen: std::collections::HashSet<String> = o.users.iter().map(id).collect();
    block_users.sort_by_key(|u| !u.nkey.is_empty());
    for user in &block_users {
        if !seen.insert(id(user)) {
            let what = if user.nkey.is_empty() { "user" } else { "nkey" };
            report.invalid(
                e,
                format!(
                    "Duplicate {what} {} detected",
                    natrium_gofmt::go_quote(&id(user))
                ),
            );
            return;
        }
    }
    o.users.extend(block_users);
}

/// Go warns about authentication timeouts above this many seconds.
const AUTH_TIMEOUT_WARN_SECS: f64 = 60.0;

fn auth_timeout_warning(v: &Value, secs: f64) -> String {
    let written = match v {
        Value::Int(n) => n.to_string(),
        Value::Float(f) => format_float(*f),
        Value::Str(s) => s.clone(),
        other => other.go_type_name().to_owned(),
    };
    format!(
        "invalid use of field \"timeout\": timeout of {written} ({secs:.6} seconds) is high, \
         consider keeping it under 60 seconds. possibly caused by unquoted duration; use '1m' \
         instead of 1m, for example"
    )
}

/// Seconds, as an integer, a float, or a duration string.
fn auth_timeout(v: &Value) -> Result<f64, String> {
    let secs = match v {
        Value::Int(n) => *n as f64,
        Value::Float(f) => *f,
        Value::Str(text) => {
            let nanos = parse_go_duration(text)
                .map_err(|err| format!("error parsing authorization config, 'timeout' {err}"))?;
            nanos as f64 / 1e9
        }
        _ => return Err("error parsing authorization config, 'timeout' wrong type".to_owned()),
    };
    if secs < 0.0 {
        return Err(format!(
            "invalid authorization timeout of {secs} seconds, cannot be negative"
        ));
    }
    Ok(secs)
}
