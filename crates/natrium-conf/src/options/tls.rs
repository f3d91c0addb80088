//! The top-level `tls { … }` block: Go's keys, aliases, value checks and messages, plus the
//! `--tls*` command-line override.
//!
//! Only the block's shape is checked here; reading the certificate, key and CA files (and Go's
//! errors about them) happens when the runtime builds its TLS configuration, because that needs
//! cryptography this leaf crate does not carry. [`TlsOptions::pos`] keeps where the block was
//! written so that those errors can still be reported at the `tls` key, as Go does.
//!
//! Cipher suites and curves are accepted under Go's names. Go knows more of them than rustls
//! implements (CBC suites, P-521, the post-quantum hybrids); a name Go knows but Natrium cannot
//! honour is refused with its own message rather than silently dropped.

use std::time::Duration;

use natrium_gofmt::{nanos_to_duration, parse_go_duration};

use super::convert;
use crate::error::{ConfError, Position};
use crate::lang::{format_float, Entry, Node, Value};
use crate::limits::TLS_HANDSHAKE_FIRST_FALLBACK_DEFAULT;

/// Lowest TLS version a client may negotiate (`min_version`); Go refuses anything below 1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// `"1.2"`, Go's default minimum.
    Tls12,
    /// `"1.3"`.
    Tls13,
}

/// The client TLS options, as Go's `TLSConfigOpts` holds them for the top-level block.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsOptions {
    /// Server certificate chain, PEM (`cert_file`).
    pub cert_file: String,
    /// The certificate's private key, PEM (`key_file`).
    pub key_file: String,
    /// Authorities client certificates are checked against (`ca_file`).
    pub ca_file: String,
    /// Require and verify a client certificate (`verify`, or `verify_and_map`).
    pub verify: bool,
    /// Map the verified certificate to a user (`verify_and_map`).
    pub map: bool,
    /// Go's `insecure` (skips verification of *servers* this server connects to; it has no
    /// effect on client connections, kept for completeness).
    pub insecure: bool,
    /// Do the TLS handshake before sending INFO (`handshake_first`).
    pub handshake_first: bool,
    /// With `handshake_first`, wait this long for the client's handshake and fall back to
    /// sending INFO first if nothing arrives (`handshake_first: auto` or a duration); zero waits
    /// for the handshake only.
    pub handshake_first_fallback: Duration,
    /// Allowed TLS 1.2 suites, Go's names (`cipher_suites`); `None` means the defaults. As in
    /// Go, TLS 1.3 suites are always enabled.
    pub cipher_suites: Option<Vec<&'static str>>,
    /// Key exchange groups in preference order, Go's names (`curve_preferences`).
    pub curve_preferences: Option<Vec<&'static str>>,
    /// `min_version`; `None` means TLS 1.2.
    pub min_version: Option<TlsVersion>,
    /// Hex SHA-256 digests of client certificates' SubjectPublicKeyInfo, lower case
    /// (`pinned_certs`); `None` pins nothing.
    pub pinned_certs: Option<Vec<String>>,
    /// Where the `tls` key was written; `None` when the block comes from `--tls*` flags. Errors
    /// about the files are reported here, like Go's.
    pub pos: Option<Position>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        Self {
            cert_file: String::new(),
            key_file: String::new(),
            ca_file: String::new(),
            verify: false,
            map: false,
            insecure: false,
            handshake_first: false,
            handshake_first_fallback: Duration::ZERO,
            cipher_suites: None,
            curve_preferences: None,
            min_version: None,
            pinned_certs: None,
            pos: None,
        }
    }
}

/// One of Go's cipher suite names (`tls.CipherSuites()` and `tls.InsecureCipherSuites()` of the
/// Go release `nats-server` v2.15 is built with), whether Go calls it insecure, and whether
/// Natrium (rustls) implements it.
struct CipherName {
    name: &'static str,
    insecure: bool,
    supported: bool,
}

const fn suite(name: &'static str, insecure: bool, supported: bool) -> CipherName {
    CipherName {
        name,
        insecure,
        supported,
    }
}

/// Go's suites, the supported ones first in rustls' preference order.
const CIPHER_SUITES: &[CipherName] = &[
    suite("TLS_AES_128_GCM_SHA256", false, true),
    suite("TLS_AES_256_GCM_SHA384", false, true),
    suite("TLS_CHACHA20_POLY1305_SHA256", false, true),
    suite("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", false, true),
    suite("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", false, true),
    suite("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false, true),
    suite("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", false, true),
    suite("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", false, true),
    suite("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, true),
    suite("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", false, false),
    suite("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", false, false),
    suite("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", false, false),
    suite("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", false, false),
    suite("TLS_RSA_WITH_RC4_128_SHA", true, false),
    suite("TLS_RSA_WITH_3DES_EDE_CBC_SHA", true, false),
    suite("TLS_RSA_WITH_AES_128_CBC_SHA", true, false),
    suite("TLS_RSA_WITH_AES_256_CBC_SHA", true, false),
    suite("TLS_RSA_WITH_AES_128_CBC_SHA256", true, false),
    suite("TLS_RSA_WITH_AES_128_GCM_SHA256", true, false),
    suite("TLS_RSA_WITH_AES_256_GCM_SHA384", true, false),
    suite("TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", true, false),
    suite("TLS_ECDHE_RSA_WITH_RC4_128_SHA", true, false),
    suite("TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", true, false),
    suite("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", true, false),
    suite("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", true, false),
];

/// Go's curve names and whether Natrium implements them, supported ones in preference order.
const CURVES: &[(&str, bool)] = &[
    ("X25519", true),
    ("CurveP256", true),
    ("CurveP384", true),
    ("CurveP521", false),
    ("X25519MLKEM768", false),
    ("SecP256r1MLKEM768", false),
    ("SecP384r1MLKEM1024", false),
];

/// The cipher suite names Natrium implements, in preference order.
pub fn supported_cipher_suites() -> impl Iterator<Item = &'static str> {
    CIPHER_SUITES.iter().filter(|c| c.supported).map(|c| c.name)
}

/// The curve names Natrium implements, in preference order.
pub fn supported_curves() -> impl Iterator<Item = &'static str> {
    CURVES.iter().filter(|c| c.1).map(|c| c.0)
}

fn join_supported(names: impl Iterator<Item = &'static str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// An error at a position, as Go's `configErr` prints it.
fn at(pos: &Position, message: impl Into<String>) -> ConfError {
    ConfError::Invalid {
        pos: pos.clone(),
        message: message.into(),
    }
}

/// What the top-level `tls` key yields: the options and the handshake timeout in seconds
/// (Go keeps that one outside the TLS configuration, 0 meaning the default).
pub(super) struct ParsedTls {
    pub options: TlsOptions,
    pub timeout: f64,
}

/// Keys Go accepts in a `tls` block that configure what Natrium does not implement yet.
const TLS_NOT_SUPPORTED_YET: &[&str] = &[
    "connection_rate_limit",
    "cert_store",
    "cert_match_by",
    "cert_match",
    "cert_match_skip_invalid",
    "ca_certs_match",
    "ocsp_peer",
    "certs",
    "certificates",
];

/// Parses the block under `entry` (the `tls` key). The first problem ends parsing, as in Go.
pub(super) fn parse_tls(entry: &Entry) -> Result<ParsedTls, ConfError> {
    let key_pos = &entry.key_pos;
    let block = convert::map(&entry.node.value).map_err(|m| at(key_pos, m))?;
    let mut parsed = ParsedTls {
        options: TlsOptions {
            pos: Some(key_pos.clone()),
            ..TlsOptions::default()
        },
        timeout: 0.0,
    };
    let mut lists = Lists::default();
    for inner in block {
        apply_key(&mut parsed, &mut lists, inner)?;
    }
    let o = &mut parsed.options;
    if !lists.insecure.is_empty() && !lists.allow_insecure {
        return Err(at(
            key_pos,
            format!(
                "insecure cipher suites configured without 'allow_insecure_cipher_suites' option \
                 set: {}",
                lists.insecure.join(", ")
            ),
        ));
    }
    if let Some((name, pos)) = lists.unsupported_cipher {
        return Err(at(
            &pos,
            format!(
                "cipher suite {name} is not supported by Natrium (supported: {})",
                join_supported(supported_cipher_suites())
            ),
        ));
    }
    if let Some((name, pos)) = lists.unsupported_curve {
        return Err(at(
            &pos,
            format!(
                "curve preference {name} is not supported by Natrium (supported: {})",
                join_supported(supported_curves())
            ),
        ));
    }
    // Go's GenTLSConfig checks these before touching any file.
    if !o.cert_file.is_empty() && o.key_file.is_empty() {
        return Err(at(key_pos, "missing 'key_file' in TLS configuration"));
    }
    if o.cert_file.is_empty() && !o.key_file.is_empty() {
        return Err(at(key_pos, "missing 'cert_file' in TLS configuration"));
    }
    Ok(parsed)
}

/// What the list-valued keys found that is only judged once the whole block is read.
#[derive(Default)]
struct Lists {
    allow_insecure: bool,
    insecure: Vec<&'static str>,
    unsupported_cipher: Option<(&'static str, Position)>,
    unsupported_curve: Option<(&'static str, Position)>,
}

fn expect_bool(v: &Value, key_pos: &Position, what: &str) -> Result<bool, ConfError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(at(
            key_pos,
            format!("error parsing tls config, expected '{what}' to be a boolean"),
        )),
    }
}

fn expect_file(v: &Value, key_pos: &Position, what: &str) -> Result<String, ConfError> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        _ => Err(at(
            key_pos,
            format!("error parsing tls config, expected '{what}' to be filename"),
        )),
    }
}

fn apply_key(parsed: &mut ParsedTls, lists: &mut Lists, e: &Entry) -> Result<(), ConfError> {
    let (v, pos) = (&e.node.value, &e.key_pos);
    let o = &mut parsed.options;
    let key = e.key.to_ascii_lowercase();
    match key.as_str() {
        "cert_file" => o.cert_file = expect_file(v, pos, "cert_file")?,
        "key_file" => o.key_file = expect_file(v, pos, "key_file")?,
        "ca_file" => o.ca_file = expect_file(v, pos, "ca_file")?,
        "insecure" => o.insecure = expect_bool(v, pos, "insecure")?,
        "verify" => o.verify = expect_bool(v, pos, "verify")?,
        "verify_and_map" => {
            let on = expect_bool(v, pos, "verify_and_map")?;
            o.verify |= on;
            o.map = on;
        }
        "verify_cert_and_check_known_urls" => {
            if expect_bool(v, pos, "verify_cert_and_check_known_urls")? {
                return Err(at(
                    pos,
                    "verify_cert_and_check_known_urls not supported in this context",
                ));
            }
        }
        "allow_insecure_cipher_suites" => {
            lists.allow_insecure = expect_bool(v, pos, "allow_insecure_cipher_suites")?;
        }
        "cipher_suites" => o.cipher_suites = Some(cipher_suites(e, lists)?),
        "curve_preferences" => o.curve_preferences = Some(curves(e, lists)?),
        "timeout" => parsed.timeout = timeout(v, pos)?,
        "pinned_certs" => o.pinned_certs = pinned_certs(e)?,
        "handshake_first" | "first" | "immediate" => handshake_first(o, e)?,
        "min_version" => o.min_version = Some(min_version(v, pos)?),
        // Their "off" values (Go's defaults) ask for nothing Natrium lacks.
        "ocsp_peer" if matches!(v, Value::Bool(false)) => {}
        "connection_rate_limit" if matches!(v, Value::Int(0)) => {}
        other if TLS_NOT_SUPPORTED_YET.contains(&other) => {
            return Err(ConfError::NotSupportedYet {
                file: pos.file.clone(),
                line: pos.line,
                column: pos.column,
                option: format!("tls.{}", e.key),
            });
        }
        _ => {
            return Err(at(
                pos,
                format!(
                    "error parsing tls config, unknown field {}",
                    natrium_gofmt::go_quote(&e.key)
                ),
            ))
        }
    }
    Ok(())
}

/// The elements of a list-valued key, each a string (Go's type assertion panics otherwise).
fn string_list<'a>(e: &'a Entry, what: &str) -> Result<Vec<(&'a str, &'a Node)>, ConfError> {
    let Value::Array(items) = &e.node.value else {
        return Err(at(
            &e.key_pos,
            convert::conversion(&e.node.value, "[]interface {}"),
        ));
    };
    if items.is_empty() {
        return Err(at(
            &e.key_pos,
            format!("error parsing tls config, '{what}' cannot be empty"),
        ));
    }
    items
        .iter()
        .map(|node| match &node.value {
            Value::Str(s) => Ok((s.as_str(), node)),
            other => Err(at(&node.pos, convert::conversion(other, "string"))),
        })
        .collect()
}

fn cipher_suites(e: &Entry, lists: &mut Lists) -> Result<Vec<&'static str>, ConfError> {
    let mut out = Vec::new();
    for (name, node) in string_list(e, "cipher_suites")? {
        let Some(known) = CIPHER_SUITES.iter().find(|c| c.name == name) else {
            return Err(at(&node.pos, format!("unrecognized cipher {name}")));
        };
        if known.insecure {
            lists.insecure.push(known.name);
        }
        if !known.supported && lists.unsupported_cipher.is_none() {
            lists.unsupported_cipher = Some((known.name, node.pos.clone()));
        }
        out.push(known.name);
    }
    Ok(out)
}

fn curves(e: &Entry, lists: &mut Lists) -> Result<Vec<&'static str>, ConfError> {
    let mut out = Vec::new();
    for (name, node) in string_list(e, "curve_preferences")? {
        let Some(&(known, supported)) = CURVES.iter().find(|c| c.0 == name) else {
            return Err(at(
                &node.pos,
                format!("unrecognized curve preference {name}"),
            ));
        };
        if !supported && lists.unsupported_curve.is_none() {
            lists.unsupported_curve = Some((known, node.pos.clone()));
        }
        out.push(known);
    }
    Ok(out)
}

/// Seconds: an integer, a float, or a duration string.
fn timeout(v: &Value, pos: &Position) -> Result<f64, ConfError> {
    match v {
        Value::Int(n) => Ok(*n as f64),
        Value::Float(f) => Ok(*f),
        Value::Str(text) => parse_go_duration(text)
            .map(|nanos| nanos as f64 / 1e9)
            .map_err(|err| at(pos, format!("error parsing tls config, 'timeout' {err}"))),
        _ => Err(at(pos, "error parsing tls config, 'timeout' wrong type")),
    }
}

fn pinned_certs(e: &Entry) -> Result<Option<Vec<String>>, ConfError> {
    let Value::Array(items) = &e.node.value else {
        return Err(at(
            &e.key_pos,
            "error parsing tls config, expected 'pinned_certs' to be a list of hex-encoded \
             sha256 of DER encoded SubjectPublicKeyInfo",
        ));
    };
    if items.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(items.len());
    for node in items {
        let Value::Str(text) = &node.value else {
            return Err(at(&node.pos, convert::conversion(&node.value, "string")));
        };
        let entry = text.to_ascii_lowercase();
        if entry.len() != 64 || !entry.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(at(
                &node.pos,
                format!(
                    "error parsing tls config, 'pinned_certs' key {entry} does not look like \
                     hex-encoded sha256 of DER encoded SubjectPublicKeyInfo"
                ),
            ));
        }
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    Ok(Some(out))
}

/// `handshake_first`: a boolean, `on`/`off`, `auto` (fall back after Go's default delay), or a
/// duration (fall back after it).
fn handshake_first(o: &mut TlsOptions, e: &Entry) -> Result<(), ConfError> {
    let pos = &e.key_pos;
    match &e.node.value {
        Value::Bool(b) => o.handshake_first = *b,
        Value::Str(text) => match text.to_ascii_lowercase().as_str() {
            "true" | "on" => o.handshake_first = true,
            "false" | "off" => o.handshake_first = false,
            "auto" | "auto_fallback" => {
                o.handshake_first = true;
                o.handshake_first_fallback = TLS_HANDSHAKE_FIRST_FALLBACK_DEFAULT;
            }
            _ => {
                let invalid = || {
                    at(
                        pos,
                        format!(
                            "field {}'s value {} is invalid",
                            natrium_gofmt::go_quote(&e.key),
                            natrium_gofmt::go_quote(text)
                        ),
                    )
                };
                let nanos = parse_go_duration(text).map_err(|_| invalid())?;
                o.handshake_first = true;
                // Go takes a negative delay as "no fallback".
                o.handshake_first_fallback = nanos_to_duration(nanos).unwrap_or(Duration::ZERO);
            }
        },
        other => {
            return Err(at(
                pos,
                format!(
                    "field {} should be a boolean or a string, got {}",
                    natrium_gofmt::go_quote(&e.key),
                    other.go_type_name()
                ),
            ))
        }
    }
    Ok(())
}

fn min_version(v: &Value, pos: &Position) -> Result<TlsVersion, ConfError> {
    let fail = |m: String| at(pos, format!("error parsing tls config: {m}"));
    let text = match v {
        Value::Str(s) => s,
        other => {
            return Err(fail(format!(
                "'min_version' wrong type: {}",
                go_print(other)
            )))
        }
    };
    match text.as_str() {
        "1.0" | "1.1" => Err(fail(format!("unsupported TLS version: TLS {text}"))),
        "1.2" => Ok(TlsVersion::Tls12),
        "1.3" => Ok(TlsVersion::Tls13),
        _ => Err(fail(format!("unknown version: {text}"))),
    }
}

/// A scalar as Go's `%v` prints it.
fn go_print(v: &Value) -> String {
    match v {
        Value::Int(n) => n.to_string(),
        Value::Float(f) => format_float(*f),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.clone(),
        Value::Datetime(d) => d.to_string(),
        Value::Null => "<nil>".to_owned(),
        Value::Array(_) | Value::Map(_) => v.go_type_name().to_owned(),
    }
}

/// The TLS options the `--tls*` flags describe, laid over the file's block as Go's
/// `overrideTLS` does: the files and `verify` come from the flags alone, cipher suites, curves
/// and the minimum version go back to the defaults, the rest (`handshake_first`,
/// `verify_and_map`, pinned certificates) stays as the file set it.
pub(crate) fn override_from_flags(
    file: Option<&TlsOptions>,
    cert: &str,
    key: &str,
    ca: &str,
    verify: bool,
) -> TlsOptions {
    let kept = file.cloned().unwrap_or_default();
    TlsOptions {
        cert_file: cert.to_owned(),
        key_file: key.to_owned(),
        ca_file: ca.to_owned(),
        verify,
        insecure: false,
        cipher_suites: None,
        curve_preferences: None,
        min_version: None,
        pos: None,
        ..kept
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
