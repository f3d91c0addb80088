//! Handshake decisions and reply bytes. Expected replies were captured from the Go
//! `nats-server` v2.15.2 binary (websocket on loopback, `no_tls: true`); their `Date` is the
//! capture time, which these tests pass as `now`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/// "Sun, 22 Nov 2026 11:50:20 GMT", the Date of the captured Go replies.
fn captured_now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_795_348_220)
}

fn request(extra: &str) -> String {
    format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
}

fn hs(cfg: &HandshakeConfig) -> Handshake {
    Handshake::new(cfg).unwrap()
}

fn process(h: &Handshake, req: &str) -> Outcome {
    h.process(&mut RequestParser::new(), req.as_bytes())
}

fn upgraded(h: &Handshake, req: &str) -> Upgrade {
    match process(h, req) {
        Outcome::Upgrade(u) => *u,
        other => panic!("expected an upgrade, got {other:?}"),
    }
}

fn rejected(h: &Handshake, req: &str) -> Rejection {
    match process(h, req) {
        Outcome::Reject { rejection, .. } => rejection,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

/// Go's `http.Error` reply for a status, captured, with `Connection` lines as given.
fn go_error(status_line: &str, body: &str, connection: &str) -> Vec<u8> {
    format!(
        "{status_line}\r\nContent-Type: text/plain; charset=utf-8\r\nSec-Websocket-Version: 13\r\n\
         X-Content-Type-Options: nosniff\r\nDate: Sun, 22 Nov 2026 11:50:20 GMT\r\n\
         Content-Length: {}\r\n{connection}\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn response(r: &Rejection) -> String {
    String::from_utf8(r.response(captured_now()).unwrap()).unwrap()
}

#[test]
fn ws_handshake_101_matches_go() {
    let u = upgraded(&hs(&HandshakeConfig::default()), &request(""));
    let want = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {ACCEPT}\r\n\r\n"
    );
    assert_eq!(String::from_utf8(u.response).unwrap(), want);
    assert_eq!(
        (u.kind, u.compression, u.no_masking, u.browser),
        (Kind::Client, false, false, false)
    );
}

#[test]
fn ws_handshake_101_with_extensions_headers_and_no_masking_matches_go() {
    let cfg = HandshakeConfig {
        compression: true,
        headers: vec![("X-Test".into(), "v1".into())],
        ..HandshakeConfig::default()
    };
    let req = request(
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\
         Nats-No-Masking: true\r\nUser-Agent: Mozilla/5\r\n",
    );
    let u = upgraded(&hs(&cfg), &req);
    let want = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {ACCEPT}\r\nSec-WebSocket-Extensions: permessage-deflate; \
         server_no_context_takeover; client_no_context_takeover\r\nNats-No-Masking: true\r\n\
         X-Test: v1\r\n\r\n"
    );
    assert_eq!(String::from_utf8(u.response.clone()).unwrap(), want);
    assert!(u.compression && u.no_masking && u.browser && !u.no_compressed_fragmentation);
    assert!(!u.decoder_config(0).masking_required);
    assert!(u.encoder_config().compression);
}

#[test]
fn ws_handshake_mqtt_path_matches_go() {
    let cfg = HandshakeConfig {
        mqtt_enabled: true,
        headers: vec![("X-Test".into(), "v1".into())],
        ..HandshakeConfig::default()
    };
    let u = upgraded(&hs(&cfg), &request("").replacen("GET /", "GET /mqtt", 1));
    assert_eq!(u.kind, Kind::Mqtt);
    let want = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {ACCEPT}\r\nSec-Websocket-Protocol: mqtt\r\nX-Test: v1\r\n\r\n"
    );
    assert_eq!(String::from_utf8(u.response).unwrap(), want);
    // MQTT disabled: 404, connection kept open.
    let r = rejected(
        &hs(&HandshakeConfig::default()),
        &request("").replacen("GET /", "GET /mqtt", 1),
    );
    assert_eq!(r.error, HandshakeError::MqttNotEnabled);
    assert_eq!(
        response(&r).as_bytes(),
        go_error("HTTP/1.1 404 Not Found", "Not Found\n", "")
    );
    assert!(!r.closes());
    // An absolute target's path counts too.
    let r = rejected(
        &hs(&HandshakeConfig::default()),
        &request("").replacen("GET /", "GET http://foo.com/mqtt", 1),
    );
    assert_eq!(r.error, HandshakeError::MqttNotEnabled);
    let u = upgraded(
        &hs(&HandshakeConfig::default()),
        &request("").replacen("GET /", "GET /x/leafnode", 1),
    );
    assert_eq!(u.kind, Kind::Leaf);
}

#[test]
fn ws_handshake_rejections_match_go() {
    let h = hs(&HandshakeConfig::default());
    let bad = go_error("HTTP/1.1 400 Bad Request", "Bad Request\n", "");
    let cases: Vec<(String, HandshakeError)> = vec![
        (
            request("").replace("Version: 13", "Version: 12"),
            HandshakeError::BadVersion,
        ),
        (
            request("").replace(&format!("Sec-WebSocket-Key: {KEY}\r\n"), ""),
            HandshakeError::KeyMissing,
        ),
        (request("").replace(KEY, "abc"), HandshakeError::BadKey),
        (
            request("").replace(KEY, "dGhlIHNhbXBsZSBub25jZQ"),
            HandshakeError::BadKey,
        ),
        (
            request("").replace("Upgrade: websocket\r\n", ""),
            HandshakeError::BadUpgrade,
        ),
        (
            request("").replace("Connection: Upgrade", "Connection: keep-alive"),
            HandshakeError::BadConnection,
        ),
        (
            request("").replace("Host: localhost", "Host:"),
            HandshakeError::HostMissing,
        ),
    ];
    for (req, want) in cases {
        let r = rejected(&h, &req);
        assert_eq!(r.error, want);
        assert_eq!(response(&r).as_bytes(), bad, "{want}");
        assert!(!r.closes());
    }
    let r = rejected(&h, &request("").replacen("GET", "POST", 1));
    assert_eq!(r.error, HandshakeError::MethodNotGet);
    assert_eq!(
        response(&r).as_bytes(),
        go_error(
            "HTTP/1.1 405 Method Not Allowed",
            "Method Not Allowed\n",
            ""
        )
    );
    // HEAD: same headers, no body.
    let r = rejected(&h, &request("").replacen("GET", "HEAD", 1));
    let mut head = go_error(
        "HTTP/1.1 405 Method Not Allowed",
        "Method Not Allowed\n",
        "",
    );
    head.truncate(head.len() - "Method Not Allowed\n".len());
    assert_eq!(response(&r).as_bytes(), head);
    // Method names are case-sensitive.
    assert_eq!(
        rejected(&h, &request("").replacen("GET", "get", 1)).error,
        HandshakeError::MethodNotGet
    );
}

#[test]
fn ws_handshake_connection_persistence_matches_go() {
    let h = hs(&HandshakeConfig::default());
    let r = rejected(
        &h,
        &request("").replace("Connection: Upgrade", "Connection: close"),
    );
    assert!(r.closes());
    assert_eq!(
        response(&r).as_bytes(),
        go_error(
            "HTTP/1.1 400 Bad Request",
            "Bad Request\n",
            "Connection: close\r\n"
        )
    );
    let r = rejected(&h, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert!(!r.closes());
    assert_eq!(
        response(&r).as_bytes(),
        go_error(
            "HTTP/1.0 400 Bad Request",
            "Bad Request\n",
            "Connection: keep-alive\r\n"
        )
    );
    let r = rejected(&h, &format!("GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"));
    assert_eq!(r.error, HandshakeError::HostMissing);
    assert!(r.closes());
    assert_eq!(
        response(&r).as_bytes(),
        go_error("HTTP/1.0 400 Bad Request", "Bad Request\n", "")
    );
    // HTTP/1.0 with a host upgrades like 1.1.
    upgraded(&h, &request("").replace("HTTP/1.1", "HTTP/1.0"));
}

#[test]
fn ws_handshake_lenient_forms_go_accepts() {
    let h = hs(&HandshakeConfig::default());
    let req = format!(
        "GET / HTTP/1.1\r\nhost: localhost\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\n\
         sec-websocket-key:   {KEY}  \r\nsec-websocket-version: 8, 13\r\n\r\n"
    );
    assert_eq!(
        upgraded(&h, &req).response,
        upgraded(&h, &request("")).response
    );
    // Version offered in a second header line.
    upgraded(
        &h,
        &request("Sec-WebSocket-Version: 13\r\n").replacen("Version: 13", "Version: 12", 1),
    );
    // Stray trailing bits in the key's last character are accepted, as Go's decoder does.
    let u = upgraded(&h, &request("").replace(KEY, "dGhlIHNhbXBsZSBub25jZR=="));
    assert!(String::from_utf8(u.response)
        .unwrap()
        .contains("Sec-WebSocket-Accept: Zgw8jYXtqX5qJr7MJ1Q/MqzeSRI=\r\n"));
    upgraded(
        &h,
        &request("").replace("Connection: Upgrade", "Connection: close, Upgrade"),
    );
    upgraded(&h, &request("X-A: b\r\n c\r\n"));
}

#[test]
fn ws_handshake_data_before_completion_closes_silently() {
    let h = hs(&HandshakeConfig::default());
    let mut req = request("");
    req.push('\u{82}');
    let r = rejected(&h, &req);
    assert_eq!(r.error, HandshakeError::DataBeforeHandshake);
    assert_eq!(r.response(captured_now()), None);
    assert!(r.closes());
}

#[test]
fn ws_handshake_http_layer_errors_close() {
    let h = hs(&HandshakeConfig::default());
    let r = rejected(&h, "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n");
    assert_eq!(r.error, HandshakeError::Http(HttpError::MissingHost));
    assert!(r.closes());
    assert_eq!(
        r.response(captured_now()).unwrap(),
        HttpError::MissingHost.response()
    );
    let r = rejected(&h, &request("").replacen("GET /", "GET *", 1));
    assert_eq!(
        response(&r),
        "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nDate: Sun, 22 Nov 2026 11:50:20 GMT\r\nContent-Length: 0\r\n\r\n"
    );
}

#[test]
fn ws_handshake_origin_rejections_match_go() {
    let same = hs(&HandshakeConfig {
        same_origin: true,
        ..HandshakeConfig::default()
    });
    let r = rejected(&same, &request("Origin: http://other\r\n"));
    assert_eq!(
        r.error,
        HandshakeError::OriginNotAllowed("not same origin".into())
    );
    assert_eq!(
        response(&r).as_bytes(),
        go_error("HTTP/1.1 403 Forbidden", "Forbidden\n", "")
    );
    assert_eq!(r.error.to_string(), "origin not allowed: not same origin");
    upgraded(
        &same,
        &request("Origin: http://LOCALHOST\r\n").replace("Host: localhost", "Host: localhost:80"),
    );
    rejected(&same, &request("Origin: https://localhost:80\r\n"));
    rejected(&same, &request("Sec-WebSocket-Origin: http://nope\r\n"));
    rejected(&same, &request("Origin: null\r\n"));
    upgraded(&same, &request(""));

    let list = hs(&HandshakeConfig {
        allowed_origins: vec!["http://host1.com".into(), "https://host2.com:1234".into()],
        ..HandshakeConfig::default()
    });
    upgraded(&list, &request("Origin: http://host1.com/x\r\n"));
    upgraded(&list, &request("Origin: HTTPS://Host2.com:1234\r\n"));
    upgraded(&list, &request("Origin: http://u@host1.com\r\n"));
    rejected(&list, &request("Origin: http://host1.com:81\r\n"));
}

#[test]
fn ws_handshake_compression_negotiation_like_go() {
    let on = hs(&HandshakeConfig {
        compression: true,
        ..HandshakeConfig::default()
    });
    let off = hs(&HandshakeConfig::default());
    let offer = |v: &str| request(&format!("Sec-WebSocket-Extensions: {v}\r\n"));
    assert!(upgraded(&on, &offer("permessage-deflate")).compression);
    assert!(upgraded(&on, &offer("foo; permessage-deflate")).compression);
    assert!(upgraded(&on, &offer("x-webkit, PerMessage-Deflate")).compression);
    assert!(!upgraded(&on, &offer("deflate-frame")).compression);
    assert!(!upgraded(&on, &request("")).compression);
    let u = upgraded(&off, &offer("permessage-deflate"));
    assert!(!u.compression);
    assert!(!String::from_utf8(u.response)
        .unwrap()
        .contains("permessage-deflate"));
}

#[test]
fn ws_handshake_browser_safari_cookies_forwarded_for() {
    let cfg = HandshakeConfig {
        compression: true,
        cookies: CookieNames {
            jwt: Some("jwt".into()),
            token: Some("tok".into()),
            ..CookieNames::default()
        },
        ..HandshakeConfig::default()
    };
    let h = hs(&cfg);
    let safari = "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
    let u = upgraded(
        &h,
        &request(&format!(
            "User-Agent: {safari}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\
             Cookie: jwt=eyJ; other=1\r\nCookie: tok=\"t0k\"\r\nX-Forwarded-For: 1.2.3.4\r\n\
             X-Forwarded-For: 5.6.7.8\r\n"
        )),
    );
    assert!(u.browser && u.no_compressed_fragmentation);
    assert_eq!(u.cookies.jwt.as_deref(), Some("eyJ"));
    assert_eq!(u.cookies.token.as_deref(), Some("t0k"));
    assert_eq!(u.client_ip, Some("1.2.3.4".parse().unwrap()));
    assert!(u.encoder_config().no_compressed_fragmentation);
    let ip = |v: &str| upgraded(&h, &request(&format!("X-Forwarded-For: {v}\r\n"))).client_ip;
    assert_eq!(ip("::1"), Some("::1".parse().unwrap()));
    assert_eq!(ip("1.2.3.4, 5.6.7.8"), None, "a list is not an IP");
    assert_eq!(ip("not an ip"), None);
    assert_eq!(
        ip("01.2.3.4"),
        None,
        "leading zeros are refused, as Go's ParseIP does"
    );
    // Leafnodes get no cookies and no browser treatment.
    let leaf = upgraded(
        &h,
        &request("User-Agent: Mozilla/5\r\nCookie: jwt=x\r\n").replacen(
            "GET /",
            "GET /leafnode",
            1,
        ),
    );
    assert!(!leaf.browser && leaf.cookies.jwt.is_none());
}

#[test]
fn ws_handshake_config_validation_like_go() {
    let bad_header = |name: &str| {
        Handshake::new(&HandshakeConfig {
            headers: vec![(name.into(), "v".into())],
            ..HandshakeConfig::default()
        })
        .unwrap_err()
        .0
    };
    assert_eq!(
        bad_header("Host"),
        "websocket: invalid header \"Host\" not allowed"
    );
    assert_eq!(
        bad_header("nats-no-masking"),
        "websocket: invalid header \"nats-no-masking\" not allowed"
    );
    assert_eq!(
        bad_header("Sec-WebSocket-Accept"),
        "websocket: invalid header \"Sec-WebSocket-Accept\", \"Sec-WebSocket-\" prefix not allowed"
    );
    assert!(bad_header("Bad Name").contains("malformed"));
    let err = Handshake::new(&HandshakeConfig {
        allowed_origins: vec!["ftp://x".into()],
        ..HandshakeConfig::default()
    });
    assert!(err.unwrap_err().0.contains("http or https scheme"));
}

#[test]
fn ws_handshake_keep_alive_allows_next_request() {
    let h = hs(&HandshakeConfig::default());
    let first = request("").replace("Version: 13", "Version: 12");
    let both = format!("{first}{}", request(""));
    let mut parser = RequestParser::new();
    let Outcome::Reject {
        rejection,
        consumed,
    } = h.process(&mut parser, both.as_bytes())
    else {
        panic!("expected a rejection");
    };
    assert!(!rejection.closes());
    assert_eq!(consumed, first.len());
    let rest = &both.as_bytes()[consumed..];
    assert!(matches!(
        h.process(&mut RequestParser::new(), rest),
        Outcome::Upgrade(_)
    ));
}
