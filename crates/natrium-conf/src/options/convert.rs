//! Typed reads of configuration values, failing with the messages Go prints for the same
//! mistakes (Go's type assertions panic and the panic text becomes the error), and the
//! [`Report`] every options module fills.
//!
//! This module depends on no other options module, so any of them (the top-level keys in
//! `apply`, and the `tls` and `websocket` blocks) can use it without an import cycle.

use std::time::Duration;

use natrium_gofmt::{go_duration_nanos, go_quote, nanos_to_duration, parse_go_duration};

use crate::error::ConfError;
use crate::lang::{Entry, Map, Value};

/// Go's `interface conversion: interface {} is string, not int64`.
pub(crate) fn conversion(actual: &Value, expected: &str) -> String {
    format!(
        "interface conversion: interface {{}} is {}, not {expected}",
        actual.go_type_name()
    )
}

/// Go's `%+v` of a scalar configuration value (what its "got …" messages print).
pub(crate) fn go_plus_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(f) => crate::lang::format_float(*f),
        Value::Str(s) => s.clone(),
        other => other.go_type_name().to_owned(),
    }
}

/// Go's `%q` of a configuration value: a string quoted, an integer as the character it codes
/// for (`'é'`), anything else as Go's bad-verb text (`%!q(bool=true)`).
pub(crate) fn go_q(v: &Value) -> String {
    match v {
        Value::Str(s) => go_quote(s),
        Value::Int(n) => natrium_gofmt::go_quote_rune(*n),
        other => format!("%!q({}={})", other.go_type_name(), go_plus_v(other)),
    }
}

pub(crate) fn int(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(n) => Ok(*n),
        other => Err(conversion(other, "int64")),
    }
}

pub(crate) fn boolean(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(conversion(other, "bool")),
    }
}

pub(crate) fn string(v: &Value) -> Result<String, String> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        other => Err(conversion(other, "string")),
    }
}

pub(crate) fn map(v: &Value) -> Result<&Map, String> {
    match v {
        Value::Map(m) => Ok(m),
        other => Err(conversion(other, "map[string]interface {}")),
    }
}

/// A duration written as a Go duration string; `name` prefixes parse errors as Go does.
pub(crate) fn duration_string(name: &str, v: &Value) -> Result<i64, String> {
    let text = string(v)?;
    parse_go_duration(&text).map_err(|e| format!("error parsing {name}: {e}"))
}

/// Splits `host:port` like Go's `net.SplitHostPort` and `strconv.Atoi`, with the option
/// parser's messages. A bare integer is a port alone.
pub(crate) fn host_port(v: &Value) -> Result<(Option<String>, i64), String> {
    let text = match v {
        Value::Int(port) => return Ok((None, *port)),
        Value::Str(s) => s,
        other => {
            return Err(format!(
                "expected port or host:port, got {}",
                other.go_type_name()
            ))
        }
    };
    let bad_address = || format!("could not parse address string {}", go_quote(text));
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad_address)?;
        let port = after.strip_prefix(':').ok_or_else(bad_address)?;
        if host.contains(']') || port.contains(['[', ']']) {
            return Err(bad_address());
        }
        (host, port)
    } else {
        let (host, port) = text.rsplit_once(':').ok_or_else(bad_address)?;
        if host.contains(':') || host.contains(['[', ']']) || port.contains(['[', ']']) {
            return Err(bad_address());
        }
        (host, port)
    };
    let port = go_atoi(port).ok_or_else(|| format!("could not parse port {}", go_quote(port)))?;
    Ok((Some(host.to_owned()), port))
}

/// Go's `strconv.Atoi`: optional sign, decimal digits, 64-bit range.
pub(crate) fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convert_host_port_like_go() {
        let hp = |s: &str| host_port(&Value::Str(s.to_owned()));
        assert_eq!(hp("127.0.0.1:4333"), Ok((Some("127.0.0.1".into()), 4333)));
        assert_eq!(hp(":4333"), Ok((Some(String::new()), 4333)));
        assert_eq!(hp("[::1]:4333"), Ok((Some("::1".into()), 4333)));
        assert_eq!(hp("localhost:-1"), Ok((Some("localhost".into()), -1)));
        assert_eq!(
            hp("127.0.0.1"),
            Err("could not parse address string \"127.0.0.1\"".into())
        );
        assert_eq!(
            hp("a:b:c"),
            Err("could not parse address string \"a:b:c\"".into())
        );
        assert_eq!(hp("host:abc"), Err("could not parse port \"abc\"".into()));
        assert_eq!(host_port(&Value::Int(5)), Ok((None, 5)));
        assert_eq!(
            host_port(&Value::Bool(true)),
            Err("expected port or host:port, got bool".into())
        );
    }

    #[test]
    fn convert_messages_like_go() {
        assert_eq!(
            int(&Value::Str("x".into())),
            Err("interface conversion: interface {} is string, not int64".into())
        );
        assert_eq!(
            map(&Value::Int(5)),
            Err("interface conversion: interface {} is int64, not map[string]interface {}".into())
        );
    }
}

/// The warnings and errors found while applying options, in the order found (Go prints
/// warnings first). Lives here, beside the typed reads, so that every options module can take
/// one without importing the module that applies the top-level keys.
#[derive(Default)]
pub(super) struct Report {
    pub(super) warnings: Vec<ConfError>,
    pub(super) errors: Vec<ConfError>,
}

impl Report {
    pub(super) fn invalid(&mut self, entry: &Entry, message: String) {
        self.errors.push(ConfError::Invalid {
            pos: entry.key_pos.clone(),
            message,
        });
    }

    pub(super) fn warn(&mut self, entry: &Entry, message: String) {
        self.warnings.push(ConfError::Invalid {
            pos: entry.key_pos.clone(),
            message,
        });
    }

    pub(super) fn unknown(&mut self, entry: &Entry) {
        self.errors.push(ConfError::UnknownField {
            pos: entry.key_pos.clone(),
            field: entry.key.clone(),
        });
    }

    pub(super) fn not_supported(&mut self, entry: &Entry, option: String) {
        self.errors.push(ConfError::NotSupportedYet {
            file: entry.key_pos.file.clone(),
            line: entry.key_pos.line,
            column: entry.key_pos.column,
            option,
        });
    }
}

/// `ping_interval` and `write_deadline`: a duration string, or (with a warning) seconds.
/// Negative durations are refused; Go accepts them and then misbehaves (its ping ticker panics).
pub(super) fn loose_duration(
    name: &str,
    e: &Entry,
    report: &mut Report,
) -> Result<Duration, String> {
    let nanos = match &e.node.value {
        Value::Str(text) => {
            parse_go_duration(text).map_err(|err| format!("error parsing {name}: {err}"))?
        }
        other => {
            report.warn(
                e,
                format!(
                    "invalid use of field \"{name}\": {name} should be converted to a duration"
                ),
            );
            int(other)?.wrapping_mul(1_000_000_000)
        }
    };
    nanos_to_duration(nanos).ok_or_else(|| {
        format!(
            "invalid {name} of {}, cannot be negative",
            go_duration_nanos(nanos)
        )
    })
}

pub(super) fn string_into(slot: &mut String, entry: &Entry, report: &mut Report) {
    match string(&entry.node.value) {
        Ok(s) => *slot = s,
        Err(message) => report.invalid(entry, message),
    }
}
