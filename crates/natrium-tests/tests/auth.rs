//! Authentication over real sockets: token, user/password and users lists (plain and bcrypt),
//! the command-line flags, `no_auth_user`, the exact `-ERR` and close on failure, the log line
//! (never the secret), and bad input: wrong passwords from many connections (memory bounded,
//! server healthy), garbage CONNECT bodies, forged and replayed nkey signatures. Where the Go
//! server is installed, the raw-byte scenarios run against it too.

use std::path::PathBuf;
use std::time::Duration;

use natrium_tests::raw::vm_rss_kib;
use natrium_tests::{RawClient, ServerProcess};

const VIOLATION: &str = "-ERR 'Authorization Violation'\r\n";
/// bcrypt of "s3cret" (cost 4).
const BCRYPT_S3CRET: &str = "$2a$04$/uaF/uaF/uaF/uaF/uaF/uK7.eFDTHWTk03S8wqeyk9ZLEdfjGgEC";

fn config(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("auth.conf");
    std::fs::write(&path, text).expect("write config");
    (dir, path)
}

/// Starts ours and, if installed, Go with the config file.
fn both_with(text: &str) -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let (dir, path) = config(text);
    let p = path.to_str().expect("utf-8 path");
    let args = ["-c", p, "-a", "127.0.0.1", "-p", "-1"];
    let mut servers = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        servers.push(("go", go));
    }
    (dir, servers)
}

fn connect_line(fields: &str) -> String {
    format!("CONNECT {{\"verbose\":false,\"pedantic\":false{fields}}}\r\n")
}

fn refused(addr: &str, fields: &str) -> String {
    let mut c = RawClient::connect(addr);
    c.until_closed(connect_line(fields).as_bytes())
}

fn accepted(addr: &str, fields: &str) -> bool {
    let mut c = RawClient::connect(addr);
    c.exchange(connect_line(fields).as_bytes()).is_empty()
}

#[test]
fn auth_token_raw_matches_go() {
    let (_dir, servers) = both_with("authorization { token: \"t0k3n\" }\n");
    for (name, s) in &servers {
        let c = RawClient::connect(&s.addr());
        assert!(
            c.info.contains("\"auth_required\":true"),
            "{name}: {}",
            c.info
        );
        assert!(accepted(&s.addr(), ",\"auth_token\":\"t0k3n\""), "{name}");
        assert_eq!(
            refused(&s.addr(), ",\"auth_token\":\"wrong\""),
            VIOLATION,
            "{name}"
        );
        assert_eq!(refused(&s.addr(), ""), VIOLATION, "{name}");
        // An op before CONNECT is a failed authentication too.
        let mut c = RawClient::connect(&s.addr());
        assert_eq!(c.until_closed(b"PING\r\n"), VIOLATION, "{name}");
    }
    let (_, ours) = &servers[0];
    assert!(ours.wait_for_log(
        "authentication error - Token \"[REDACTED]\"",
        Duration::from_secs(5)
    ));
    assert!(!ours.log_text().contains("wrong"), "secret logged");
}

#[test]
fn auth_users_plain_and_bcrypt_raw_matches_go() {
    let text = format!(
        "authorization {{ users = [ {{user: alice, password: pw1}}, \
         {{user: bob, password: \"{BCRYPT_S3CRET}\"}} ] }}\n"
    );
    let (_dir, servers) = both_with(&text);
    for (name, s) in &servers {
        let a = s.addr();
        assert!(
            accepted(&a, ",\"user\":\"alice\",\"pass\":\"pw1\""),
            "{name}"
        );
        assert!(
            accepted(&a, ",\"user\":\"bob\",\"pass\":\"s3cret\""),
            "{name}"
        );
        assert_eq!(
            refused(&a, ",\"user\":\"bob\",\"pass\":\"s3cre\""),
            VIOLATION,
            "{name}"
        );
        assert_eq!(
            refused(&a, ",\"user\":\"carol\",\"pass\":\"pw1\""),
            VIOLATION,
            "{name}"
        );
        assert_eq!(refused(&a, ",\"user\":\"alice\""), VIOLATION, "{name}");
    }
    let (_, ours) = &servers[0];
    assert!(ours.wait_for_log(
        "authentication error - User \"bob\"",
        Duration::from_secs(5)
    ));
    assert!(!ours.log_text().contains("s3cre\""), "secret logged");
}

#[test]
fn auth_no_auth_user_matches_go() {
    let (_dir, servers) =
        both_with("authorization { users = [ {user: a, password: p} ] }\nno_auth_user: a\n");
    for (name, s) in &servers {
        assert!(accepted(&s.addr(), ""), "{name}");
        assert_eq!(
            refused(&s.addr(), ",\"user\":\"a\",\"pass\":\"x\""),
            VIOLATION,
            "{name}"
        );
    }
}

#[test]
fn auth_flags_user_pass_and_token() {
    let s = ServerProcess::start(&["--user", "u", "--pass", "p"]);
    assert!(accepted(&s.addr(), ",\"user\":\"u\",\"pass\":\"p\""));
    assert_eq!(
        refused(&s.addr(), ",\"user\":\"u\",\"pass\":\"q\""),
        VIOLATION
    );
    let s = ServerProcess::start(&["--auth", "tok"]);
    assert!(accepted(&s.addr(), ",\"auth_token\":\"tok\""));
    assert_eq!(refused(&s.addr(), ",\"auth_token\":\"tak\""), VIOLATION);
}

#[test]
fn auth_timeout_closes_silent_client() {
    let (_dir, servers) = both_with("authorization { token: t, timeout: 0.5 }\n");
    for (name, s) in &servers {
        let mut c = RawClient::connect(&s.addr());
        let (text, closed) = c.wait_closed(Duration::from_secs(5));
        assert!(closed, "{name}");
        assert_eq!(text, "-ERR 'Authentication Timeout'\r\n", "{name}");
    }
}

#[test]
fn auth_wrong_password_loop_keeps_server_healthy() {
    let s = ServerProcess::start(&["--user", "u", "--pass", "p"]);
    for i in 0..200 {
        let out = refused(&s.addr(), &format!(",\"user\":\"u\",\"pass\":\"p{i}\""));
        assert_eq!(out, VIOLATION);
    }
    assert!(accepted(&s.addr(), ",\"user\":\"u\",\"pass\":\"p\""));
}

#[tokio::test]
async fn auth_async_nats_token_user_bcrypt() {
    let text = format!(
        "authorization {{ users = [ {{user: alice, password: pw1}}, \
         {{user: bob, password: \"{BCRYPT_S3CRET}\"}} ] }}\n"
    );
    let (_dir, path) = config(&text);
    let p = path.to_str().expect("utf-8 path");
    let s = ServerProcess::start(&["-c", p, "-a", "127.0.0.1", "-p", "-1"]);
    for (user, pass) in [("alice", "pw1"), ("bob", "s3cret")] {
        let client = async_nats::ConnectOptions::with_user_and_password(user.into(), pass.into())
            .connect(s.url())
            .await
            .expect("connect");
        let mut sub = client.subscribe("auth.x").await.expect("sub");
        client.publish("auth.x", "hi".into()).await.expect("pub");
        let msg = futures::StreamExt::next(&mut sub).await.expect("msg");
        assert_eq!(&msg.payload[..], b"hi");
    }
    let bad = async_nats::ConnectOptions::with_user_and_password("bob".into(), "nope".into())
        .connect(s.url())
        .await;
    assert!(bad.is_err());

    let t = ServerProcess::start(&["--auth", "tok"]);
    let client = async_nats::ConnectOptions::with_token("tok".into())
        .connect(t.url())
        .await
        .expect("token connect");
    client.flush().await.expect("flush");
    let bad = async_nats::ConnectOptions::with_token("tak".into())
        .connect(t.url())
        .await;
    assert!(bad.is_err());
}

#[tokio::test]
async fn auth_nkey_user_signs_nonce() {
    let kp = nkeys::KeyPair::new_user();
    let seed = kp.seed().expect("seed");
    let (_dir, servers) = both_with(&format!(
        "authorization {{ users = [ {{nkey: {}}} ] }}\n",
        kp.public_key()
    ));
    for (name, s) in &servers {
        let c = RawClient::connect(&s.addr());
        assert!(c.info.contains("\"nonce\":\""), "{name}: {}", c.info);
        // A signature of something else, and one by another key, are refused.
        let other = nkeys::KeyPair::new_user();
        let forged = format!(
            ",\"nkey\":\"{}\",\"sig\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"",
            kp.public_key()
        );
        assert_eq!(refused(&s.addr(), &forged), VIOLATION, "{name}");
        let unknown = format!(",\"nkey\":\"{}\",\"sig\":\"AAAA\"", other.public_key());
        assert_eq!(refused(&s.addr(), &unknown), VIOLATION, "{name}");
        let client = async_nats::ConnectOptions::with_nkey(seed.clone())
            .connect(s.url())
            .await
            .expect("nkey connect");
        client.flush().await.expect("flush");
        let wrong = async_nats::ConnectOptions::with_nkey(other.seed().expect("seed"))
            .connect(s.url())
            .await;
        assert!(wrong.is_err(), "{name}");
    }
    // No nonce when no nkey users are configured, as Go.
    let t = ServerProcess::start(&["--auth", "tok"]);
    assert!(!RawClient::connect(&t.addr()).info.contains("nonce"));
}

#[test]
fn auth_permissions_violations_match_go() {
    let (_dir, servers) = both_with(
        "authorization {\n  default_permissions { publish: \"pub.>\" }\n  users = [\n    \
         {user: a, password: a, permissions: { publish: { allow: [\"foo.>\", \"bar\"], deny: \
         \"foo.secret\" }, subscribe: { deny: [\"admin.>\"] } }}\n    {user: d, password: d}\n  \
         ]\n}\n",
    );
    for (name, s) in &servers {
        let mut c = RawClient::connect(&s.addr());
        let conn = connect_line(",\"user\":\"a\",\"pass\":\"a\"");
        assert_eq!(c.exchange(conn.as_bytes()), "", "{name}");
        assert_eq!(
            c.exchange(b"SUB foo.x 1\r\nPUB foo.x 2\r\nhi\r\n"),
            "MSG foo.x 1 2\r\nhi\r\n"
        );
        assert_eq!(
            c.exchange(b"PUB foo.secret 2\r\nhi\r\n"),
            "-ERR 'Permissions Violation for Publish to \"foo.secret\"'\r\n",
            "{name}"
        );
        assert_eq!(
            c.exchange(b"PUB baz 0\r\n\r\nPUB baz 0\r\n\r\n"),
            "-ERR 'Permissions Violation for Publish to \"baz\"'\r\n\
             -ERR 'Permissions Violation for Publish to \"baz\"'\r\n",
            "{name}"
        );
        assert_eq!(
            c.exchange(b"SUB admin.x 2\r\n"),
            "-ERR 'Permissions Violation for Subscription to \"admin.x\"'\r\n",
            "{name}"
        );
        assert_eq!(
            c.exchange(b"SUB admin.y q 3\r\n"),
            "-ERR 'Permissions Violation for Subscription to \"admin.y\" using queue \"q\"'\r\n",
            "{name}"
        );
        // Still open and working after violations.
        assert_eq!(c.exchange(b"PUB bar 0\r\n\r\n"), "", "{name}");
        // The user without its own permissions gets the defaults.
        let mut d = RawClient::connect(&s.addr());
        let conn = connect_line(",\"user\":\"d\",\"pass\":\"d\"");
        assert_eq!(d.exchange(conn.as_bytes()), "", "{name}");
        assert_eq!(d.exchange(b"PUB pub.x 0\r\n\r\n"), "", "{name}");
        assert_eq!(
            d.exchange(b"PUB foo.x 0\r\n\r\n"),
            "-ERR 'Permissions Violation for Publish to \"foo.x\"'\r\n",
            "{name}"
        );
    }
    let (_, ours) = &servers[0];
    assert!(ours.wait_for_log(
        "Publish Violation - Subject \"foo.secret\"",
        Duration::from_secs(5)
    ));
}

/// 500 wrong passwords from 10 clients at once: every one refused with the same bytes, no
/// memory kept per attempt, and a right password still gets in afterwards.
#[test]
fn auth_wrong_passwords_from_many_connections_bounded() {
    let (_dir, servers) = both_with("authorization { users = [ {user: u, password: p} ] }\n");
    for (name, s) in &servers {
        let addr = s.addr();
        let rss_before = vm_rss_kib(s.pid());
        let threads: Vec<_> = (0..10)
            .map(|t| {
                let addr = addr.clone();
                std::thread::spawn(move || {
                    (0..50)
                        .map(|i| refused(&addr, &format!(",\"user\":\"u\",\"pass\":\"w{t}-{i}\"")))
                        .filter(|out| out != VIOLATION)
                        .count()
                })
            })
            .collect();
        let unexpected: usize = threads.into_iter().map(|t| t.join().expect("thread")).sum();
        assert_eq!(unexpected, 0, "{name}");
        assert!(accepted(&addr, ",\"user\":\"u\",\"pass\":\"p\""), "{name}");
        if *name == "ours" {
            let rss_after = vm_rss_kib(s.pid());
            eprintln!("RSS {rss_before} KiB -> {rss_after} KiB after 500 refusals");
            assert!(
                rss_after < rss_before + 16 * 1024,
                "RSS grew from {rss_before} to {rss_after} KiB"
            );
        }
    }
}

/// CONNECT bodies that are not what they should be, answered as Go answers them: a decoder
/// error closes silently, `null` is an empty CONNECT, the last of repeated keys counts.
#[test]
fn auth_garbage_connect_like_go() {
    let (_dir, servers) = both_with("authorization { users = [ {user: a, password: a} ] }\n");
    let long_user = format!("{{\"user\":\"{}\"}}", "x".repeat(3000));
    let cases: Vec<(String, &str)> = vec![
        ("{bad json".into(), ""),
        ("{\"user\":5}".into(), ""),
        ("\u{0}\u{7f}".into(), ""),
        ("{\"user\":\"a\",\"pass\":\"a\"} trailing".into(), ""),
        ("[]".into(), ""),
        ("[1]".into(), ""),
        ("\"s\"".into(), ""),
        (
            "{\"user\":\"a\",\"pass\":\"a\",\"verbose\":\"yes\"}".into(),
            "",
        ),
        ("null".into(), VIOLATION),
        (
            "{\"user\":\"a\",\"pass\":\"a\",\"user\":\"b\"}".into(),
            VIOLATION,
        ),
        (long_user, VIOLATION),
        (
            "{\"user\":\"a\",\"pass\":\"a\",\"protocol\":99}".into(),
            "-ERR 'invalid client protocol'\r\n",
        ),
    ];
    for (name, s) in &servers {
        for (body, expected) in &cases {
            let mut c = RawClient::connect(&s.addr());
            let out = c.until_closed(format!("CONNECT {body}\r\n").as_bytes());
            assert_eq!(&out, expected, "{name}: CONNECT {body:.40}");
        }
        assert!(
            accepted(&s.addr(), ",\"user\":\"a\",\"pass\":\"a\""),
            "{name}"
        );
    }
}

/// A valid signature of another connection's nonce (a replay) is refused.
#[test]
fn auth_nkey_replayed_signature_refused_like_go() {
    use base64::Engine as _;
    let kp = nkeys::KeyPair::new_user();
    let (_dir, servers) = both_with(&format!(
        "authorization {{ users = [ {{nkey: {}}} ] }}\n",
        kp.public_key()
    ));
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let nonce_of = |info: &str| -> String {
        let json: serde_json::Value = serde_json::from_str(&info[5..]).expect("INFO json");
        json["nonce"].as_str().expect("nonce").to_owned()
    };
    for (name, s) in &servers {
        let first = RawClient::connect(&s.addr());
        let sig = b64.encode(kp.sign(nonce_of(&first.info).as_bytes()).expect("sign"));
        let fields = format!(",\"nkey\":\"{}\",\"sig\":\"{sig}\"", kp.public_key());
        assert_eq!(refused(&s.addr(), &fields), VIOLATION, "{name}: replay");
        // The same signature on its own connection is fine.
        let mut first = first;
        assert_eq!(
            first.exchange(connect_line(&fields).as_bytes()),
            "",
            "{name}"
        );
        assert_eq!(
            refused(&s.addr(), ",\"nkey\":\"\",\"sig\":\"\""),
            VIOLATION,
            "{name}"
        );
    }
}
