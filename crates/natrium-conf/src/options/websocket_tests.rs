//! `websocket { }` tests: values, aliases and every message checked against the Go binary
//! (`nats-server -t -c`, and a start for the start-up checks).

use std::time::Duration;

use crate::lang::parse_str_with_env;
use crate::options::{LoadedConfig, ServerOptions};
use crate::ConfError;

fn load(src: &str) -> Result<LoadedConfig, ConfError> {
    let map = parse_str_with_env(src, "c.conf", &|_: &str| None)?;
    ServerOptions::from_map(&map, "c.conf")
}

fn opts(src: &str) -> ServerOptions {
    load(src).unwrap_or_else(|e| panic!("{src:?}: {e}")).options
}

fn report(src: &str) -> String {
    match load(src) {
        Ok(l) => panic!("{src:?} loaded: {:?}", l.options.websocket),
        Err(e) => e.go_report(),
    }
}

fn start_error(src: &str) -> String {
    let mut o = opts(src);
    o.apply_baseline();
    o.validate()
        .map_or_else(|e| e.to_string(), |()| "ok".to_owned())
}

#[test]
fn websocket_options_read_every_key() {
    let o = opts(
        r#"ws {
            listen: "127.0.0.1:8080", advertise: "ws.example:80", no_tls: true,
            same_origin: true, origins: ["http://a.example", "https://b.example:8443"],
            handshake_timeout: "3s", compress: true,
            authentication { user: u, password: p, timeout: 5 },
            jwt_cookie: j, user_cookie: uc, pass_cookie: pc, token_cookie: tc,
            headers { X-Custom: "1", Y: "two" }, ping_interval: "30s"
        }"#,
    );
    let ws = &o.websocket;
    assert_eq!((ws.host.as_str(), ws.port), ("127.0.0.1", 8080));
    assert_eq!(ws.advertise, "ws.example:80");
    assert!(ws.no_tls && ws.same_origin && ws.compression);
    assert_eq!(
        ws.allowed_origins,
        ["http://a.example", "https://b.example:8443"]
    );
    assert_eq!(ws.handshake_timeout, Duration::from_secs(3));
    assert_eq!((ws.username.as_str(), ws.password.as_str()), ("u", "p"));
    assert!((ws.auth_timeout - 5.0).abs() < f64::EPSILON);
    assert_eq!(
        [
            &ws.jwt_cookie,
            &ws.user_cookie,
            &ws.pass_cookie,
            &ws.token_cookie
        ],
        ["j", "uc", "pc", "tc"]
    );
    assert_eq!(
        ws.headers,
        [("X-Custom".into(), "1".into()), ("Y".into(), "two".into())]
    );
    assert_eq!(ws.ping_interval, Duration::from_secs(30));
    assert!(ws.auth_override());
    let o = opts(
        "websocket { port: -1, host: h, handshake_timeout: 2, allowed_origins: \"http://x\" }",
    );
    assert_eq!((o.websocket.host.as_str(), o.websocket.port), ("h", -1));
    assert_eq!(o.websocket.handshake_timeout, Duration::from_secs(2));
    assert_eq!(o.websocket.allowed_origins, ["http://x"]);
    // Go's simple auth reads a timeout of another type as one second.
    let o = opts("websocket { authorization { token: t, timeout: \"2s\" } }");
    assert!((o.websocket.auth_timeout - 1.0).abs() < f64::EPSILON);
}

#[test]
fn websocket_options_baseline_host() {
    let mut o = opts("websocket { port: -1, no_tls: true }");
    o.apply_baseline();
    assert_eq!(o.websocket.host, "0.0.0.0");
    let mut off = opts("websocket { no_tls: true }");
    off.apply_baseline();
    assert_eq!(off.websocket.host, "");
}

#[test]
fn websocket_options_parse_errors_like_go() {
    let cases = [
        (
            "websocket { port: -1, no_tls: true, allowed_origins: 5 }",
            "c.conf:1:36: error parsing allowed origins: unsupported type int64\n",
        ),
        (
            "websocket { port: -1, no_tls: true, handshake_timeout: \"abc\" }",
            "c.conf:1:36: time: invalid duration \"abc\"\n",
        ),
        (
            "websocket { port: -1, no_tls: true, handshake_timeout: 1.5 }",
            "c.conf:1:36: error parsing handshake timeout: unsupported type float64\n",
        ),
        (
            "websocket { port: -1, no_tls: true, headers: 5 }",
            "c.conf:1:36: error parsing headers: unsupported type int64\n",
        ),
        (
            "websocket { port: -1, no_tls: true, headers: { a: 5 } }",
            "c.conf:1:47: error parsing header key a: unsupported type int64\n",
        ),
        (
            "websocket { port: -1, no_tls: true, foo: 1 }",
            "c.conf:1:36: unknown field \"foo\"\n",
        ),
        (
            "websocket { port: -1, no_tls: true, authorization: { user: 5 } }",
            "c.conf:1:53: interface conversion: interface {} is int64, not string\n\
             c.conf:1:36: runtime error: invalid memory address or nil pointer dereference\n",
        ),
        (
            "websocket { port: -1, no_tls: true, authorization: { foo: 5 } }",
            "c.conf:1:53: unknown field \"foo\"\n",
        ),
        (
            "websocket { port: -1, no_tls: true, authorization: 5 }",
            "c.conf:1:36: interface conversion: interface {} is int64, not map[string]interface {}\n\
             c.conf:1:36: runtime error: invalid memory address or nil pointer dereference\n",
        ),
        (
            "websocket: 5",
            "c.conf:1:0: Expected websocket to be a map, got int64\n",
        ),
        (
            "websocket { listen: \"abc\", no_tls: true }",
            "c.conf:1:12: could not parse address string \"abc\"\n",
        ),
        (
            "websocket { port: -1, no_tls: \"yes\" }",
            "c.conf:1:22: interface conversion: interface {} is string, not bool\n",
        ),
        (
            "websocket { port: \"abc\"\n  host: 5\n}",
            "c.conf:1:12: interface conversion: interface {} is string, not int64\n",
        ),
        (
            "websocket { port: -1, tls: { foo: 1 } }",
            "c.conf:1:29: error parsing tls config, unknown field \"foo\"\n",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(report(src), format!("nats-server: {want}\n"), "{src}");
    }
    // An integer ping_interval is only a warning, as at the top level.
    let loaded = load("websocket { port: -1, no_tls: true, ping_interval: 5 }").unwrap();
    assert_eq!(
        loaded.options.websocket.ping_interval,
        Duration::from_secs(5)
    );
    assert_eq!(
        loaded.warnings[0].to_string(),
        "c.conf:1:36: invalid use of field \"ping_interval\": ping_interval should be converted \
         to a duration"
    );
}

#[test]
fn websocket_options_start_checks_like_go() {
    let cases = [
        (
            "websocket { port: 8080 }",
            "websocket requires TLS configuration",
        ),
        (
            "websocket { port: -1, no_tls: true, allowed_origins: [\"ftp://x\"] }",
            "unable to parse allowed origin \"ftp://x\": allowed origins must be absolute URLs \
             with http or https scheme",
        ),
        (
            "websocket { port: -1, no_tls: true, allowed_origins: \"http:/x\" }",
            "unable to parse allowed origin \"http:/x\": host is required",
        ),
        (
            "websocket { port: -1, no_tls: true, headers: { Host: \"x\" } }",
            "websocket: invalid header \"Host\" not allowed",
        ),
        (
            "websocket { port: -1, no_tls: true, headers: { sec-websocket-x: \"x\" } }",
            "websocket: invalid header \"sec-websocket-x\", \"Sec-WebSocket-\" prefix not allowed",
        ),
        (
            "websocket { port: -1, no_tls: true, no_auth_user: \"bob\" }",
            "no_auth_user: \"bob\" present, but users/nkeys are not defined",
        ),
        (
            "websocket { port: -1, no_tls: true, jwt_cookie: \"jwt\" }",
            "trusted operators or trusted keys configuration is required for JWT authentication \
             via cookie \"jwt\"",
        ),
        (
            "authorization { users: [{user: a, password: b}] }\n\
             websocket { port: -1, no_tls: true, authorization: { user: x, password: y } }",
            "websocket authentication username not compatible with presence of users/nkeys",
        ),
        (
            "authorization { users: [{user: a, password: b}] }\n\
             websocket { port: -1, no_tls: true, authorization: { token: x } }",
            "websocket authentication token not compatible with presence of users/nkeys",
        ),
        // Port 0: the block is not checked at all.
        ("websocket { jwt_cookie: \"jwt\" }", "ok"),
        ("websocket { port: -1, no_tls: true }", "ok"),
    ];
    for (src, want) in cases {
        assert_eq!(start_error(src), want, "{src}");
    }
}
