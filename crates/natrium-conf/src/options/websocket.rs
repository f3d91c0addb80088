//! The `websocket { … }` block (alias `ws`): Go's keys, aliases, value checks and messages, and
//! the start-up checks Go makes on it (`validateWebsocketOptions`).
//!
//! Go reads this block with type assertions that panic on a wrong type; the panic becomes one
//! error at the key and ends the block, which [`parse`] reproduces by stopping at the first
//! such error. Errors Go collects without stopping (bad durations, header values, array
//! elements, unknown keys) are all reported.

use std::time::Duration;

use natrium_gofmt::{nanos_to_duration, parse_go_duration};

use super::convert::{self, loose_duration, Report};
use super::tls::parse_tls;
use super::{ServerOptions, TlsOptions};
use crate::error::ConfError;
use crate::lang::{Entry, Value};

/// The websocket listener's options, as Go's `WebsocketOpts` holds them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WebsocketOptions {
    /// Interface (`host`, `net`, `listen`); empty means Go's default host once enabled.
    pub host: String,
    /// Port (`port`, `listen`): 0 disables the listener, -1 picks a free port.
    pub port: i64,
    /// URL advertised to clients (`advertise`); reported by `/varz`.
    pub advertise: String,
    /// Serve plain `ws://` (`no_tls`); without it Go requires a `tls` block.
    pub no_tls: bool,
    /// `tls { … }`: serve `wss://`.
    pub tls: Option<TlsOptions>,
    /// `same_origin`: the `Origin` header must match the request's host.
    pub same_origin: bool,
    /// `allowed_origins` (and Go's aliases): accepted `Origin` URLs.
    pub allowed_origins: Vec<String>,
    /// `handshake_timeout`: time allowed for the HTTP upgrade; zero is none (Go's default).
    pub handshake_timeout: Duration,
    /// `compression` / `compress`: offer permessage-deflate.
    pub compression: bool,
    /// `authorization { user }`: overrides the server's authentication for websocket clients.
    pub username: String,
    /// `authorization { password }`.
    pub password: String,
    /// `authorization { token }`.
    pub token: String,
    /// `authorization { timeout }` in seconds; 0 keeps the server's `auth_timeout`.
    pub auth_timeout: f64,
    /// Cookie names whose values fill CONNECT's `jwt`, `user`, `pass` and `auth_token`.
    pub jwt_cookie: String,
    pub user_cookie: String,
    pub pass_cookie: String,
    pub token_cookie: String,
    /// `no_auth_user` for websocket clients.
    pub no_auth_user: String,
    /// `headers`: extra headers for the 101 response, in file order.
    pub headers: Vec<(String, String)>,
    /// `ping_interval` for websocket clients; zero keeps the server's.
    pub ping_interval: Duration,
}

impl WebsocketOptions {
    /// Whether the options override the server's authentication for websocket clients (Go's
    /// `authOverride`): a user, a token or a `no_auth_user` of their own.
    pub fn auth_override(&self) -> bool {
        !self.username.is_empty() || !self.token.is_empty() || !self.no_auth_user.is_empty()
    }
}

/// A problem that ends the block, as Go's recovered panic does.
struct Stop(String);

fn stop<T>(r: Result<T, String>) -> Result<T, Stop> {
    r.map_err(Stop)
}

/// Applies the block under `e` to `o.websocket`.
pub(super) fn parse(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let Value::Map(block) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "Expected websocket to be a map, got {}",
                e.node.value.go_type_name()
            ),
        );
        return;
    };
    for inner in block {
        if let Err(Stop(message)) = apply_key(&mut o.websocket, inner, report) {
            report.invalid(inner, message);
            return;
        }
    }
}

fn apply_key(ws: &mut WebsocketOptions, e: &Entry, report: &mut Report) -> Result<(), Stop> {
    let v = &e.node.value;
    match e.key.to_ascii_lowercase().as_str() {
        "listen" => match convert::host_port(v) {
            Ok((host, port)) => {
                ws.host = host.unwrap_or_default();
                ws.port = port;
            }
            Err(message) => report.invalid(e, message),
        },
        "port" => ws.port = stop(convert::int(v))?,
        "host" | "net" => ws.host = stop(convert::string(v))?,
        "advertise" => ws.advertise = stop(convert::string(v))?,
        "no_tls" => ws.no_tls = stop(convert::boolean(v))?,
        "tls" => match parse_tls(e) {
            Ok(parsed) => ws.tls = Some(parsed.options),
            Err(err) => report.errors.push(err),
        },
        "same_origin" => ws.same_origin = stop(convert::boolean(v))?,
        "allowed_origins" | "allowed_origin" | "allow_origins" | "allow_origin" | "origins"
        | "origin" => ws.allowed_origins = origins(e, report),
        "handshake_timeout" => ws.handshake_timeout = handshake_timeout(e, report),
        "compress" | "compression" => ws.compression = stop(convert::boolean(v))?,
        "authorization" | "authentication" => authorization(ws, e, report)?,
        "jwt_cookie" => ws.jwt_cookie = stop(convert::string(v))?,
        "user_cookie" => ws.user_cookie = stop(convert::string(v))?,
        "pass_cookie" => ws.pass_cookie = stop(convert::string(v))?,
        "token_cookie" => ws.token_cookie = stop(convert::string(v))?,
        "no_auth_user" => ws.no_auth_user = stop(convert::string(v))?,
        "headers" => headers(ws, e, report),
        "ping_interval" => match loose_duration("ping_interval", e, report) {
            Ok(d) => ws.ping_interval = d,
            Err(message) => report.invalid(e, message),
        },
        _ if e.node.used_as_variable() => {}
        _ => report.unknown(e),
    }
    Ok(())
}

/// Go's `parseStringArray("allowed origins", …)`: a string or an array of strings; other
/// elements are reported and skipped.
fn origins(e: &Entry, report: &mut Report) -> Vec<String> {
    match &e.node.value {
        Value::Str(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(|n| match &n.value {
                Value::Str(s) => Some(s.clone()),
                other => {
                    report.errors.push(ConfError::Invalid {
                        pos: n.pos.clone(),
                        message: format!(
                            "error parsing allowed origins: unsupported type in array {}",
                            other.go_type_name()
                        ),
                    });
                    None
                }
            })
            .collect(),
        other => {
            report.invalid(
                e,
                format!(
                    "error parsing allowed origins: unsupported type {}",
                    other.go_type_name()
                ),
            );
            Vec::new()
        }
    }
}

/// Seconds as an integer, or a Go duration string. Go keeps zero after a bad type.
fn handshake_timeout(e: &Entry, report: &mut Report) -> Duration {
    match &e.node.value {
        Value::Int(secs) => Duration::from_secs(u64::try_from(*secs).unwrap_or(0)),
        Value::Str(text) => match parse_go_duration(text) {
            Ok(nanos) => nanos_to_duration(nanos).unwrap_or(Duration::ZERO),
            Err(err) => {
                report.invalid(e, err);
                Duration::ZERO
            }
        },
        other => {
            report.invalid(
                e,
                format!(
                    "error parsing handshake timeout: unsupported type {}",
                    other.go_type_name()
                ),
            );
            Duration::ZERO
        }
    }
}

/// The block's own `authorization` (Go's `parseSimpleAuth`): `user`, `password`, `token`,
/// `timeout`. A wrong type ends it with Go's two errors (the conversion, then the nil block
/// Go goes on with), and ends the websocket block too.
fn authorization(ws: &mut WebsocketOptions, e: &Entry, report: &mut Report) -> Result<(), Stop> {
    const NIL_BLOCK: &str = "runtime error: invalid memory address or nil pointer dereference";
    let block = match convert::map(&e.node.value) {
        Ok(block) => block,
        Err(message) => {
            report.invalid(e, message);
            return Err(Stop(NIL_BLOCK.to_owned()));
        }
    };
    let (mut user, mut pass, mut token) = (String::new(), String::new(), String::new());
    let mut timeout = 0.0;
    for inner in block {
        let v = &inner.node.value;
        let slot = match inner.key.to_ascii_lowercase().as_str() {
            "user" | "username" => &mut user,
            "pass" | "password" => &mut pass,
            "token" => &mut token,
            "timeout" => {
                // Go reads an integer or a float; anything else counts as one second.
                timeout = match v {
                    Value::Int(n) => *n as f64,
                    Value::Float(f) => *f,
                    _ => 1.0,
                };
                continue;
            }
            _ => {
                if !inner.node.used_as_variable() {
                    report.unknown(inner);
                }
                continue;
            }
        };
        match convert::string(v) {
            Ok(s) => *slot = s,
            Err(message) => {
                report.invalid(inner, message);
                return Err(Stop(NIL_BLOCK.to_owned()));
            }
        }
    }
    ws.username = user;
    ws.password = pass;
    ws.token = token;
    ws.auth_timeout = timeout;
    Ok(())
}

/// `headers { Name: "value" }`: string values only.
fn headers(ws: &mut WebsocketOptions, e: &Entry, report: &mut Report) {
    let Value::Map(map) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "error parsing headers: unsupported type {}",
                e.node.value.go_type_name()
            ),
        );
        return;
    };
    ws.headers.clear();
    for inner in map {
        match &inner.node.value {
            Value::Str(s) => ws.headers.push((inner.key.clone(), s.clone())),
            other => report.invalid(
                inner,
                format!(
                    "error parsing header key {}: unsupported type {}",
                    inner.key,
                    other.go_type_name()
                ),
            ),
        }
    }
}

/// Go's `validateWebsocketOptions`, run at start-up (not by `-t`), in Go's order.
pub(super) fn validate(o: &ServerOptions) -> Result<(), ConfError> {
    let ws = &o.websocket;
    if ws.port == 0 {
        return Ok(());
    }
    let fail = |message: String| Err(ConfError::Validation { message });
    if ws.tls.is_none() && !ws.no_tls {
        return fail("websocket requires TLS configuration".to_owned());
    }
    for origin in &ws.allowed_origins {
        if let Err(message) = natrium_ws::handshake::AllowedOrigin::parse(origin) {
            return fail(message);
        }
    }
    if !ws.no_auth_user.is_empty() {
        super::server_options::validate_no_auth_user_named(o, &ws.no_auth_user)?;
    }
    if !o.users.is_empty() {
        if !ws.username.is_empty() {
            return fail(
                "websocket authentication username not compatible with presence of users/nkeys"
                    .to_owned(),
            );
        }
        if !ws.token.is_empty() {
            return fail(
                "websocket authentication token not compatible with presence of users/nkeys"
                    .to_owned(),
            );
        }
    }
    if !ws.jwt_cookie.is_empty() && o.operators.is_empty() {
        return fail(format!(
            "trusted operators or trusted keys configuration is required for JWT \
             authentication via cookie {}",
            natrium_gofmt::go_quote(&ws.jwt_cookie)
        ));
    }
    for (name, value) in &ws.headers {
        natrium_ws::handshake::check_header(name, value).map_err(|e| ConfError::Validation {
            message: e.to_string(),
        })?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "websocket_tests.rs"]
mod tests;
