//! Origin checks (`same_origin`, `allowed_origins`), as Go's `checkOrigin`.
//!
//! With neither option set, or without an `Origin` (or `Sec-WebSocket-Origin`) header, any
//! request passes: non-browser clients can send whatever origin they like. Otherwise the origin
//! is parsed as a request URI and split into lower-cased host and port, the port defaulting to
//! 80, or 443 for `https`:
//! - `same_origin`: host and port must equal the request's `Host` (default port from whether
//!   the listener is TLS) and the scheme must be `http`, or `https` on a TLS listener.
//! - `allowed_origins`: some entry must have the same host, scheme and port.
//!
//! Both apply when both are set.

use super::url::{parse_request_uri, split_host_port};

/// One `allowed_origins` entry, parsed and validated as Go does at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedOrigin {
    scheme: String,
    host: String,
    port: String,
}

impl AllowedOrigin {
    /// Parses an entry such as `https://example.com:8443`. Errors carry Go's startup message.
    pub fn parse(entry: &str) -> Result<Self, String> {
        let u = parse_request_uri(entry.as_bytes())
            .map_err(|e| format!("unable to parse allowed origin: parse {entry:?}: {e}"))?;
        if u.scheme != "http" && u.scheme != "https" {
            return Err(format!(
                "unable to parse allowed origin {entry:?}: allowed origins must be absolute URLs \
                 with http or https scheme"
            ));
        }
        if u.host.is_empty() {
            return Err(format!(
                "unable to parse allowed origin {entry:?}: host is required"
            ));
        }
        let (host, port) = host_and_port(u.scheme == "https", &u.host)
            .map_err(|e| format!("unable to parse allowed origin: {e}"))?;
        Ok(Self {
            scheme: u.scheme,
            host,
            port,
        })
    }
}

/// Go's `wsGetHostAndPort`: lower-cased host and port, with the scheme's default port when the
/// port is missing (the host is then the whole input, brackets included).
fn host_and_port(tls: bool, hostport: &str) -> Result<(String, String), String> {
    if let Some((host, port)) = split_host_port(hostport)? {
        return Ok((host.to_ascii_lowercase(), port.to_string()));
    }
    let port = if tls { "443" } else { "80" };
    Ok((hostport.to_ascii_lowercase(), port.to_string()))
}

/// Checks `origin` (the first `Origin` value, else the first `Sec-WebSocket-Origin` value)
/// against the options. `request_host` is the request's host, `tls` whether the listener is
/// TLS. The error text is what Go logs after `origin not allowed: `.
pub(crate) fn check_origin(
    same_origin: bool,
    allowed: &[AllowedOrigin],
    origin: Option<&[u8]>,
    request_host: &[u8],
    tls: bool,
) -> Result<(), String> {
    if !same_origin && allowed.is_empty() {
        return Ok(());
    }
    let Some(origin) = origin.filter(|o| !o.is_empty()) else {
        return Ok(());
    };
    let u = parse_request_uri(origin)
        .map_err(|e| format!("parse {:?}: {e}", String::from_utf8_lossy(origin)))?;
    let (oh, op) = host_and_port(u.scheme == "https", &u.host)?;
    if same_origin {
        let rh =
            std::str::from_utf8(request_host).map_err(|_| "invalid request host".to_string())?;
        let (rh, rp) = host_and_port(tls, rh)?;
        let rs = if tls { "https" } else { "http" };
        if oh != rh || op != rp || !u.scheme.eq_ignore_ascii_case(rs) {
            return Err("not same origin".into());
        }
    }
    if !allowed.is_empty()
        && !allowed
            .iter()
            .any(|a| a.host == oh && a.scheme == u.scheme && a.port == op)
    {
        return Err("not in the allowed list".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case<'a> = (
        &'a str,
        bool,
        &'a [AllowedOrigin],
        &'a str,
        bool,
        &'a str,
        &'a str,
    );

    /// The table of Go's `TestWSCheckOrigin`.
    #[test]
    fn ws_origin_table_from_go() {
        let list = |v: &[&str]| {
            v.iter()
                .map(|s| AllowedOrigin::parse(s).unwrap())
                .collect::<Vec<_>>()
        };
        let empty = list(&[]);
        let some = list(&["http://host1.com", "http://host2.com:1234"]);
        let multi = list(&["http://host3.com", "https://host3.com"]);
        #[rustfmt::skip]
        let cases: &[Case<'_>] = &[
            ("any", false, &empty, "", false, "http://any.host.com", ""),
            ("same origin ok", true, &empty, "host.com", false, "http://host.com:80", ""),
            ("same origin bad host", true, &empty, "host.com", false, "http://other.host.com", "not same origin"),
            ("same origin bad port", true, &empty, "host.com", false, "http://host.com:81", "not same origin"),
            ("same origin bad scheme explicit port", true, &empty, "host.com:443", true, "http://host.com:443", "not same origin"),
            ("same origin bad scheme", true, &empty, "host.com", true, "http://host.com", "not same origin"),
            ("same origin bad uri", true, &empty, "host.com", false, "@@@://invalid:url:1234", "invalid URI"),
            ("same origin bad url", true, &empty, "host.com", false, "http://invalid:url:1234", "too many colons"),
            ("same origin bad req host", true, &empty, "invalid:url:1234", false, "http://host.com", "too many colons"),
            ("no origin same origin ignored", true, &empty, "", false, "", ""),
            ("no origin list ignored", true, &some, "", false, "", ""),
            ("allowed from list", false, &some, "", false, "http://host2.com:1234", ""),
            ("allowed with different path", false, &some, "", false, "http://host1.com/some/path", ""),
            ("allowed from list same host http", false, &multi, "", false, "http://host3.com", ""),
            ("allowed from list same host https", false, &multi, "", false, "https://host3.com", ""),
            ("list bad port", false, &some, "", false, "http://host1.com:1234", "not in the allowed list"),
            ("list bad scheme", false, &some, "", false, "https://host2.com:1234", "not in the allowed list"),
            ("same origin tls ok", true, &empty, "host.com", true, "https://HOST.com:443", ""),
        ];
        for (name, same, allowed, host, tls, origin, want) in cases {
            let origin = (!origin.is_empty()).then_some(origin.as_bytes());
            let got = check_origin(*same, allowed, origin, host.as_bytes(), *tls);
            match (got, want.is_empty()) {
                (Ok(()), true) => {}
                (Err(e), false) => assert!(e.contains(want), "{name}: {e:?} lacks {want:?}"),
                (got, _) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn ws_allowed_origin_validation_like_go() {
        assert!(AllowedOrigin::parse("ftp://x.com")
            .unwrap_err()
            .contains("http or https"));
        assert!(AllowedOrigin::parse("http:opaque")
            .unwrap_err()
            .contains("host is required"));
        assert!(AllowedOrigin::parse("x.com")
            .unwrap_err()
            .contains("unable to parse"));
        assert!(AllowedOrigin::parse("http://[::1]:x").is_err());
        let a = AllowedOrigin::parse("HTTPS://Example.COM").unwrap();
        assert_eq!(
            (a.scheme.as_str(), a.host.as_str(), a.port.as_str()),
            ("https", "example.com", "443")
        );
    }
}
