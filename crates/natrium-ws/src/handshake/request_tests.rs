//! Unit tests of the request head parser.

use super::*;

const GOOD: &[u8] = b"GET /path?q=1 HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\n\
Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

fn parse(buf: &[u8]) -> Result<Parsed<'_>, HttpError> {
    RequestParser::new().parse(buf)
}

fn complete(buf: &[u8]) -> (Request<'_>, usize) {
    match parse(buf) {
        Ok(Parsed::Complete { request, consumed }) => (request, consumed),
        other => panic!("expected a request, got {other:?}"),
    }
}

#[test]
fn ws_request_parses_fields() {
    let (r, consumed) = complete(GOOD);
    assert_eq!(consumed, GOOD.len());
    assert_eq!(r.method, b"GET");
    assert_eq!(r.target, b"/path?q=1");
    assert_eq!(r.version, (1, 1));
    assert_eq!(r.path(), "/path");
    assert_eq!(&*r.host(), b"localhost:8080");
    assert_eq!(
        r.first("sec-websocket-key").as_deref(),
        Some(&b"dGhlIHNhbXBsZSBub25jZQ=="[..])
    );
    assert_eq!(r.headers().count(), 5);
}

#[test]
fn ws_request_incomplete_until_blank_line_at_every_cut() {
    let mut p = RequestParser::new();
    for cut in 0..GOOD.len() {
        assert!(
            matches!(p.parse(&GOOD[..cut]), Ok(Parsed::Incomplete)),
            "cut {cut}"
        );
    }
    assert!(
        matches!(p.parse(GOOD), Ok(Parsed::Complete { consumed, .. }) if consumed == GOOD.len())
    );
}

#[test]
fn ws_request_bare_lf_and_trailing_bytes() {
    let req = b"GET / HTTP/1.1\nHost: h\nX: y\n\nEXTRA";
    let (r, consumed) = complete(req);
    assert_eq!(consumed, req.len() - 5);
    assert_eq!(r.first("x").as_deref(), Some(&b"y"[..]));
    let (r, _) = complete(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_eq!(r.headers().count(), 1);
}

#[test]
fn ws_request_values_trimmed_and_folded() {
    let (r, _) = complete(b"GET / HTTP/1.1\r\nHost: h\r\nX-A:   b  \t\r\nX-F: one\r\n  two \r\n\tthree\r\nX-E:\r\n  late\r\n\r\n");
    assert_eq!(r.first("X-A").as_deref(), Some(&b"b"[..]));
    assert_eq!(r.first("x-f").as_deref(), Some(&b"one two three"[..]));
    assert_eq!(r.first("x-e").as_deref(), Some(&b"late"[..]));
    let (r, _) = complete(b"GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\na: 2\r\n\r\n");
    let all: Vec<_> = r.values("A").map(std::borrow::Cow::into_owned).collect();
    assert_eq!(all, vec![b"1".to_vec(), b"2".to_vec()]);
}

#[test]
fn ws_request_absolute_target_sets_host() {
    let (r, _) = complete(b"GET http://Foo.com:81/mqtt HTTP/1.1\r\nHost: other\r\n\r\n");
    assert_eq!(&*r.host(), b"Foo.com:81");
    assert_eq!(r.path(), "/mqtt");
}

#[test]
fn ws_request_http10_needs_no_host() {
    let (r, _) = complete(b"GET / HTTP/1.0\r\n\r\n");
    assert_eq!(r.version, (1, 0));
    assert!(r.host().is_empty());
}

#[test]
fn ws_request_line_errors_are_immediate() {
    for bad in [
        &b"\r\n"[..],
        b"GET /\r\n",
        b"G(T / HTTP/1.1\r\n",
        b"GET / FOO/1.1\r\n",
        b"GET / HTTP/1\r\n",
        b"GET x HTTP/1.1\r\n",
        b"GET  / HTTP/1.1\r\n",
    ] {
        assert!(
            matches!(parse(bad), Err(HttpError::Malformed(_))),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    // HTTP/1.2 is a valid version (Go's handler then sees it).
    assert!(matches!(
        parse(b"GET / HTTP/1.2\r\nHost: x\r\n\r\n"),
        Ok(Parsed::Complete { .. })
    ));
}

#[test]
fn ws_request_header_errors() {
    let with = |h: &str| format!("GET / HTTP/1.1\r\nHost: x\r\n{h}\r\n\r\n");
    let err = |h: &str| parse(with(h).as_bytes()).err();
    assert_eq!(err("X-A : b"), Some(HttpError::InvalidHeaderName));
    assert!(matches!(err("no colon"), Some(HttpError::Malformed(_))));
    assert!(matches!(err(": empty name"), Some(HttpError::Malformed(_))));
    assert!(matches!(err("X(A: b"), Some(HttpError::Malformed(_))));
    assert!(matches!(err("X-A: b\x01c"), Some(HttpError::Malformed(_))));
    assert!(matches!(err("X-A: b\x7fc"), Some(HttpError::Malformed(_))));
    assert_eq!(err("X-A: caf\u{e9}"), None, "bytes >= 0x80 are allowed");
    assert!(matches!(
        err("Host: y"),
        Some(HttpError::Malformed("too many Host headers"))
    ));
    assert!(matches!(
        parse(b"GET / HTTP/1.1\r\n X: folded first\r\nHost: x\r\n\r\n"),
        Err(HttpError::Malformed(_))
    ));
    assert_eq!(
        parse(b"GET / HTTP/1.1\r\nX: y\r\n\r\n").err(),
        Some(HttpError::MissingHost)
    );
    assert_eq!(
        parse(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n").err(),
        Some(HttpError::MalformedHost)
    );
    assert_eq!(
        parse(b"GET / HTTP/2.0\r\nHost: x\r\n\r\n").err(),
        Some(HttpError::UnsupportedVersion)
    );
}

#[test]
fn ws_request_head_limit_is_gos() {
    let limit = crate::limits::HANDSHAKE_HEAD_BYTES_MAX;
    let prefix = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ";
    let build = |total: usize| {
        let mut v = prefix.to_vec();
        v.resize(total - 4, b'a');
        v.extend_from_slice(b"\r\n\r\n");
        v
    };
    assert!(matches!(parse(&build(limit)), Ok(Parsed::Complete { .. })));
    assert_eq!(
        parse(&build(limit + 1)).err(),
        Some(HttpError::HeadTooLarge)
    );
    // Without an end in sight, the limit applies as soon as it is passed.
    let open = vec![b'a'; limit + 1];
    let mut v = b"GET / HTTP/1.1\r\n".to_vec();
    v.extend_from_slice(&open);
    assert_eq!(parse(&v).err(), Some(HttpError::HeadTooLarge));
    assert!(matches!(parse(&v[..limit]), Ok(Parsed::Incomplete)));
}

#[test]
fn ws_request_http_error_bytes_match_go() {
    assert_eq!(
        HttpError::MissingHost.response(),
        b"HTTP/1.1 400 Bad Request: missing required Host header\r\nContent-Type: text/plain; \
charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request: missing required Host header"
    );
    assert_eq!(
        HttpError::Malformed("x").response(),
        b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
    );
    assert_eq!(
        HttpError::InvalidHeaderName.response(),
        b"HTTP/1.1 400 Bad Request: invalid header name\r\nContent-Type: text/plain; charset=utf-8\r\n\
Connection: close\r\n\r\n400 Bad Request: invalid header name"
    );
    assert_eq!(
        HttpError::UnsupportedVersion.response(),
        b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\nContent-Type: \
text/plain; charset=utf-8\r\nConnection: close\r\n\r\n505 HTTP Version Not Supported: unsupported protocol version"
    );
    assert_eq!(
        HttpError::HeadTooLarge.response(),
        b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n\
Connection: close\r\n\r\n431 Request Header Fields Too Large"
    );
}
