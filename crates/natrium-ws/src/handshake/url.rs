//! The parts of URL handling the handshake needs, with Go's rules: parsing a request URI (the
//! request target, an `Origin` header, an `allowed_origins` entry) as `url.ParseRequestURI`
//! does, and splitting `host:port` as `net.SplitHostPort` does.
//!
//! Not reproduced: IPv6 zone identifiers (`[fe80::1%25eth0]`) are rejected rather than
//! decoded, and userinfo is checked for allowed bytes but not decoded (it is never used).

/// A parsed absolute URL or absolute path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Url {
    /// Scheme, lower-cased; empty for a bare path.
    pub scheme: String,
    /// Host with optional `:port`, percent-decoded; empty when there is no authority.
    pub host: String,
    /// Path as sent (still escaped), without the query.
    pub path: String,
}

/// Parses `raw` as Go's `url.ParseRequestURI`. Errors carry Go's wording (for logs).
pub(crate) fn parse_request_uri(raw: &[u8]) -> Result<Url, String> {
    if raw.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let raw = std::str::from_utf8(raw).map_err(|_| "invalid UTF-8 in URL".to_string())?;
    if raw.is_empty() {
        return Err("empty url".into());
    }
    if raw == "*" {
        return Ok(Url {
            path: "*".into(),
            ..Url::default()
        });
    }
    let (scheme, rest) = split_scheme(raw)?;
    let scheme = scheme.to_ascii_lowercase();
    let rest = match rest.strip_suffix('?') {
        Some(r) if !r.contains('?') => r,
        _ => rest.split_once('?').map_or(rest, |(r, _)| r),
    };
    if !rest.starts_with('/') {
        if scheme.is_empty() {
            return Err("invalid URI for request".into());
        }
        // An opaque URL such as `http:foo`: no host, no path.
        return Ok(Url {
            scheme,
            ..Url::default()
        });
    }
    let mut url = Url {
        scheme,
        ..Url::default()
    };
    let mut path = rest;
    if !url.scheme.is_empty() {
        if let Some(after) = rest.strip_prefix("//") {
            let (authority, p) = after.find('/').map_or((after, ""), |i| after.split_at(i));
            url.host = parse_authority(authority)?;
            path = p;
        }
    }
    check_escapes(path)?;
    url.path = path.to_string();
    Ok(url)
}

/// Splits a leading `scheme:` off as Go's `getScheme`.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((raw.get(..i).unwrap_or(""), raw.get(i + 1..).unwrap_or(""))),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `[userinfo@]host[:port]` to the decoded `host[:port]`.
fn parse_authority(authority: &str) -> Result<String, String> {
    let host = match authority.rfind('@') {
        Some(i) => {
            let user = authority.get(..i).unwrap_or("");
            if !user.bytes().all(valid_userinfo_byte) {
                return Err("net/url: invalid userinfo".into());
            }
            authority.get(i + 1..).unwrap_or("")
        }
        None => authority,
    };
    parse_host(host)
}

fn valid_userinfo_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b)
}

/// Go's `parseHost` (without zone support).
fn parse_host(host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(0) => {
            let close = host
                .rfind(']')
                .ok_or_else(|| "missing ']' in host".to_string())?;
            let colon_port = host.get(close + 1..).unwrap_or("");
            if !valid_optional_port(colon_port) {
                return Err(format!("invalid port {colon_port:?} after host"));
            }
            let literal = host.get(1..close).unwrap_or("");
            let literal = unescape_host(literal)?;
            // Only IPv6 addresses may be bracketed (IPv4-mapped ones included).
            if literal.contains('%') || literal.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(format!(
                    "invalid host: ParseAddr({literal:?}): unable to parse IP"
                ));
            }
            Ok(format!("[{literal}]{colon_port}"))
        }
        Some(_) => Err("invalid IP-literal".into()),
        None => {
            // Go 1.25 semantics (nats-server's go.mod): the port starts at the last colon
            // whatever the scheme; `net.SplitHostPort` later rejects extra colons.
            if let Some(at) = host.rfind(':') {
                let colon_port = host.get(at..).unwrap_or("");
                if !valid_optional_port(colon_port) {
                    return Err(format!("invalid port {colon_port:?} after host"));
                }
            }
            unescape_host(host)
        }
    }
}

/// `""`, `":"` or `":digits"`.
fn valid_optional_port(p: &str) -> bool {
    match p.strip_prefix(':') {
        None => p.is_empty(),
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// Percent-decodes a host as Go's `unescape(s, encodeHost)`: only `%25` and escapes of
/// non-ASCII bytes are allowed, and only host-safe ASCII may appear unescaped.
fn unescape_host(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .ok_or_else(|| invalid_escape(s, i))?;
            let v = decode_hex_pair(hex).ok_or_else(|| invalid_escape(s, i))?;
            if v < 0x80 && v != b'%' {
                return Err(invalid_escape(s, i));
            }
            out.push(v);
            i += 3;
            continue;
        }
        if b < 0x80 && !host_safe(b) {
            return Err(format!(
                "invalid character {:?} in host name",
                char::from(b)
            ));
        }
        out.push(b);
        i += 1;
    }
    String::from_utf8(out).map_err(|_| "invalid UTF-8 in host name".to_string())
}

fn invalid_escape(s: &str, i: usize) -> String {
    let end = (i + 3).min(s.len());
    format!("invalid URL escape {:?}", s.get(i..end).unwrap_or(""))
}

fn decode_hex_pair(hex: &[u8]) -> Option<u8> {
    let [h, l] = hex else { return None };
    let h = char::from(*h).to_digit(16)?;
    let l = char::from(*l).to_digit(16)?;
    u8::try_from(h * 16 + l).ok()
}

/// ASCII bytes Go leaves unescaped in a host.
fn host_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&b)
}

/// Rejects malformed `%` escapes in a path, as Go's `setPath` does.
fn check_escapes(path: &str) -> Result<(), String> {
    let bytes = path.as_bytes();
    for (i, _) in bytes.iter().enumerate().filter(|(_, &b)| b == b'%') {
        let ok = bytes.get(i + 1..i + 3).and_then(decode_hex_pair).is_some();
        if !ok {
            return Err(invalid_escape(path, i));
        }
    }
    Ok(())
}

/// Splits `host:port` as Go's `net.SplitHostPort`; `Ok(None)` is its "missing port" error,
/// which callers turn into a default port. Other errors carry Go's text.
pub(crate) fn split_host_port(hostport: &str) -> Result<Option<(&str, &str)>, String> {
    let err = |why: &str| Err(format!("address {hostport}: {why}"));
    let Some(last_colon) = hostport.rfind(':') else {
        return Ok(None);
    };
    let (host, j, k) = if hostport.starts_with('[') {
        let Some(end) = hostport.find(']') else {
            return err("missing ']' in address");
        };
        if end + 1 == hostport.len() {
            return Ok(None);
        }
        if end + 1 != last_colon {
            if hostport.as_bytes().get(end + 1) == Some(&b':') {
                return err("too many colons in address");
            }
            return Ok(None);
        }
        (hostport.get(1..end).unwrap_or(""), 1, end + 1)
    } else {
        let host = hostport.get(..last_colon).unwrap_or("");
        if host.contains(':') {
            return err("too many colons in address");
        }
        (host, 0, 0)
    };
    if hostport.get(j..).is_some_and(|s| s.contains('[')) {
        return err("unexpected '[' in address");
    }
    if hostport.get(k..).is_some_and(|s| s.contains(']')) {
        return err("unexpected ']' in address");
    }
    Ok(Some((host, hostport.get(last_colon + 1..).unwrap_or(""))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_of(raw: &str) -> Result<String, String> {
        parse_request_uri(raw.as_bytes()).map(|u| u.host)
    }

    #[test]
    fn ws_url_parses_origins_like_go() {
        let u = parse_request_uri(b"HTTP://Host1.com:80/some/path?q=1").unwrap();
        assert_eq!(
            (u.scheme.as_str(), u.host.as_str(), u.path.as_str()),
            ("http", "Host1.com:80", "/some/path")
        );
        assert_eq!(host_of("http://u:p@host1.com").unwrap(), "host1.com");
        assert_eq!(host_of("https://[::1]:443").unwrap(), "[::1]:443");
        assert_eq!(host_of("http:opaque").unwrap(), "");
        assert_eq!(parse_request_uri(b"/mqtt?x").unwrap().path, "/mqtt");
        assert_eq!(parse_request_uri(b"*").unwrap().path, "*");
    }

    #[test]
    fn ws_url_rejects_what_go_rejects() {
        for bad in [
            "null",
            "@@@://invalid:url:1234",
            "://x",
            "",
            "http://host:8x",
            "http://[::1",
            "http://a[::1]",
            "http://[1.2.3.4]",
            "http://ho st",
            "http://h%41",
            "http://x/%zz",
            "http://a\x01b",
        ] {
            assert!(
                parse_request_uri(bad.as_bytes()).is_err(),
                "{bad:?} should fail"
            );
        }
        // Extra colons pass the URL parser (Go 1.25 rules) and fail in split_host_port.
        assert_eq!(host_of("ws://a:b:80").unwrap(), "a:b:80");
        assert_eq!(
            host_of("http://invalid:url:1234").unwrap(),
            "invalid:url:1234"
        );
    }

    #[test]
    fn ws_split_host_port_like_go() {
        assert_eq!(
            split_host_port("host.com:80").unwrap(),
            Some(("host.com", "80"))
        );
        assert_eq!(
            split_host_port("[::1]:4222").unwrap(),
            Some(("::1", "4222"))
        );
        assert_eq!(split_host_port("host.com").unwrap(), None);
        assert_eq!(split_host_port("[::1]").unwrap(), None);
        assert_eq!(split_host_port("").unwrap(), None);
        assert_eq!(split_host_port("h:").unwrap(), Some(("h", "")));
        assert!(split_host_port("invalid:url:1234")
            .unwrap_err()
            .contains("too many colons"));
        assert_eq!(split_host_port("[::1]x:80").unwrap(), None);
        assert!(split_host_port("[::1:80")
            .unwrap_err()
            .contains("missing ']'"));
        assert!(split_host_port("a]:80")
            .unwrap_err()
            .contains("unexpected ']'"));
    }
}
