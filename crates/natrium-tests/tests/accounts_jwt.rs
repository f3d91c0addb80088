//! Operator mode (decentralized JWT authentication) over real sockets: keys and JWTs are made
//! here (`natrium_tests::jwt`), clients log in with `.creds` files and with JWT + signing
//! callbacks, accounts named by their keys import from each other, user permissions and limits
//! apply, and expired, early, tampered, forged, revoked and unsigned logins are refused. Where
//! the Go server is installed, the same refusals, expiry and start-up errors are checked on it.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::jwt::{self, connect_line, nonce_of, raw_login, sign_nonce, Scenario};
use natrium_tests::process::run_to_exit;
use natrium_tests::raw::http_get_json;
use natrium_tests::{go_server_path, natrium_path, RawClient, ServerProcess};
use nkeys::KeyPair;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(10);
const VIOLATION: &str = "-ERR 'Authorization Violation'\r\n";

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// Our server and, when installed, Go's, on the scenario's configuration plus `extra`.
fn servers(s: &Scenario, extra: &str) -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = write(&dir, "op.conf", &format!("{}{extra}", s.config()));
    let conf = conf.to_str().expect("path").to_owned();
    let args = ["-c", &conf, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
    let mut list = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        list.push(("go", go));
    }
    (dir, list)
}

async fn with_creds(server: &ServerProcess, creds: &str) -> async_nats::Client {
    async_nats::ConnectOptions::with_credentials(creds)
        .expect("creds")
        .connect(server.url())
        .await
        .expect("connect with creds")
}

async fn next(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("message in time")
        .expect("subscription open")
}

async fn round_trip(client: &async_nats::Client) {
    let _ = client.request("_round_trip.nobody", "".into()).await;
}

#[tokio::test]
async fn jwt_creds_login_and_imports_across_accounts() {
    let s = Scenario::new();
    let (_dir, servers) = servers(&s, "");
    for (name, server) in &servers {
        let a = with_creds(server, &s.creds_a()).await;
        let b = with_creds(server, &s.creds_b()).await;
        let mut service = a.subscribe("svc.>").await.expect("sub");
        let mut stream = b.subscribe("p.s.>").await.expect("sub");
        round_trip(&a).await;
        round_trip(&b).await;
        let responder = tokio::spawn(async move {
            let req = next(&mut service).await;
            a.publish(req.reply.expect("reply"), "from A".into())
                .await
                .expect("respond");
            a.publish("s.tick", "tick".into()).await.expect("publish");
            round_trip(&a).await;
            req.subject.to_string()
        });
        let answer = tokio::time::timeout(WAIT, b.request("local.x", "hi".into()))
            .await
            .expect("in time")
            .expect("answer");
        assert_eq!(answer.payload, "from A", "{name}");
        assert_eq!(responder.await.expect("responder"), "svc.x", "{name}");
        assert_eq!(
            next(&mut stream).await.subject.as_str(),
            "p.s.tick",
            "{name}"
        );
        let port = server.monitor_port.expect("monitor");
        let connz = http_get_json(port, &format!("/connz?auth=1&acc={}", s.b.public_key()));
        assert_eq!(connz["num_connections"], 1, "{name}");
        let row = &connz["connections"][0];
        assert_eq!(row["authorized_user"], s.user_b.public_key(), "{name}");
        assert_eq!(row["account"], s.b.public_key(), "{name}");
    }
}

#[tokio::test]
async fn jwt_callbacks_login_and_info_nonce() {
    let s = Scenario::new();
    let (_dir, servers) = servers(&s, "");
    let (_, ours) = &servers[0];
    let raw = RawClient::connect(&ours.addr());
    let info: Value =
        serde_json::from_str(raw.info.trim_start_matches("INFO ").trim()).expect("INFO json");
    assert_eq!(info["auth_required"], true);
    assert_eq!(info["nonce"].as_str().map(str::len), Some(15));
    let seed = s.user_a.seed().expect("seed");
    let signer = std::sync::Arc::new(KeyPair::from_seed(&seed).expect("key"));
    let client = async_nats::ConnectOptions::with_jwt(s.user_a_jwt.clone(), move |nonce| {
        let signer = std::sync::Arc::clone(&signer);
        async move { signer.sign(&nonce).map_err(async_nats::AuthError::new) }
    })
    .connect(ours.url())
    .await
    .expect("connect with jwt callback");
    let mut sub = client.subscribe("cb.test").await.expect("sub");
    round_trip(&client).await;
    client.publish("cb.test", "ok".into()).await.expect("pub");
    assert_eq!(next(&mut sub).await.payload, "ok");
}

/// A raw CONNECT with `jwt` and the nonce signed by `signer` (or `sig` as given).
#[test]
fn jwt_refusals_like_go() {
    let s = Scenario::new();
    let now = jwt::now();
    let user = KeyPair::new_user();
    let pk = user.public_key();
    let a = s.a.public_key();
    let stranger = KeyPair::new_account();
    let good = jwt::user(&pk, &s.a_signer, Some(&a), json!({}));
    let tampered = {
        let other = jwt::user(&pk, &s.a_signer, Some(&a), json!({"pub": {"allow": [">"]}}));
        let parts: Vec<&str> = good.split('.').collect();
        let body = other.split('.').nth(1).expect("claims");
        format!("{}.{body}.{}", parts[0], parts[2])
    };
    let cases: Vec<(&str, String, Option<&KeyPair>)> = vec![
        ("good", good.clone(), Some(&user)),
        (
            "expired",
            jwt::user_with(
                &pk,
                &s.a_signer,
                Some(&a),
                json!({}),
                json!({"exp": now - 5}),
            ),
            Some(&user),
        ),
        (
            "not yet valid",
            jwt::user_with(
                &pk,
                &s.a_signer,
                Some(&a),
                json!({}),
                json!({"nbf": now + 3600}),
            ),
            Some(&user),
        ),
        ("tampered", tampered, Some(&user)),
        (
            "forged issuer",
            jwt::user(&pk, &stranger, Some(&a), json!({})),
            Some(&user),
        ),
        (
            "unknown account",
            jwt::user(&pk, &stranger, None, json!({})),
            Some(&user),
        ),
        ("no signature", good.clone(), None),
        ("wrong key signs nonce", good, Some(&s.user_b)),
        (
            "bearer",
            jwt::user(&pk, &s.a_signer, Some(&a), json!({"bearer_token": true})),
            None,
        ),
    ];
    let (_dir, servers) = servers(&s, "");
    for (name, server) in &servers {
        for (case, token, key) in &cases {
            let (ok, got) = raw_login(server, token, *key);
            let want_ok = matches!(*case, "good" | "bearer");
            assert_eq!(ok, want_ok, "{name} {case}: {got}");
            if !want_ok {
                assert_eq!(got, VIOLATION, "{name} {case}");
            }
        }
    }
    let (_, ours) = &servers[0];
    assert!(ours.wait_for_log("- authentication error", WAIT));
}

#[test]
fn jwt_user_permissions_and_revocation() {
    let mut s = Scenario::new();
    let revoked = KeyPair::new_user();
    let b = s.b.public_key();
    s.b_jwt = jwt::account(
        &b,
        &s.operator,
        "B",
        json!({"revocations": {revoked.public_key(): jwt::now() + 60}}),
    );
    let limited = KeyPair::new_user();
    let limited_jwt = jwt::user(
        &limited.public_key(),
        &s.b,
        None,
        json!({"pub": {"allow": ["ok.>"]}, "sub": {"deny": ["secret"]}}),
    );
    let revoked_jwt = jwt::user(&revoked.public_key(), &s.b, None, json!({}));
    let (_dir, servers) = servers(&s, "");
    for (name, server) in &servers {
        let (ok, got) = raw_login(server, &revoked_jwt, Some(&revoked));
        assert!(!ok, "{name}: revoked user admitted: {got}");
        let mut c = RawClient::connect(&server.addr());
        let sig = sign_nonce(&limited, &nonce_of(&c));
        c.send(connect_line(&limited_jwt, Some(&sig)).as_bytes());
        assert!(c.read_until(b"PONG\r\n").ends_with("PONG\r\n"), "{name}");
        let got = c.exchange(b"PUB ok.x 1\r\nx\r\nPUB no 1\r\nx\r\nSUB secret 1\r\n");
        assert_eq!(
            got.replace("INFO", "\nINFO")
                .lines()
                .filter(|l| l.starts_with("-ERR"))
                .collect::<Vec<_>>(),
            [
                "-ERR 'Permissions Violation for Publish to \"no\"'",
                "-ERR 'Permissions Violation for Subscription to \"secret\"'"
            ],
            "{name}: {got}"
        );
    }
}

#[test]
fn jwt_expiry_closes_the_connection_like_go() {
    let s = Scenario::new();
    let user = KeyPair::new_user();
    let (_dir, servers) = servers(&s, "");
    for (name, server) in &servers {
        // Issued per server, just before it is used: starting both servers on a loaded
        // machine can take longer than the JWT lives.
        let short = jwt::user_with(
            &user.public_key(),
            &s.b,
            None,
            json!({}),
            json!({"exp": jwt::now() + 2}),
        );
        let mut c = RawClient::connect(&server.addr());
        let sig = sign_nonce(&user, &nonce_of(&c));
        c.send(connect_line(&short, Some(&sig)).as_bytes());
        let (text, closed) = c.wait_closed(WAIT);
        assert!(closed, "{name}: still open: {text}");
        assert!(
            text.contains("-ERR 'User Authentication Expired'\r\n"),
            "{name}: {text}"
        );
    }
}

#[test]
fn jwt_account_limits_and_lazy_registration() {
    let mut s = Scenario::new();
    let b = s.b.public_key();
    let imports = json!([{"subject": "s.>", "account": s.a.public_key(), "type": "stream"}]);
    s.b_jwt = jwt::account(
        &b,
        &s.operator,
        "B",
        json!({"limits": {"conn": 1, "imports": -1, "exports": -1, "subs": -1, "payload": -1},
               "imports": imports}),
    );
    let (_dir, servers) = servers(&s, "");
    for (name, server) in &servers {
        let port = server.monitor_port.expect("monitor");
        let listed = |doc: &Value| -> Vec<String> {
            doc["accounts"]
                .as_array()
                .map(|l| {
                    l.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let before = listed(&http_get_json(port, "/accountz"));
        assert!(!before.contains(&b), "{name}: {before:?}");
        let (ok, got) = raw_login(server, &s.user_b_jwt, Some(&s.user_b));
        assert!(ok, "{name}: {got}");
        let mut first = RawClient::connect(&server.addr());
        let sig = sign_nonce(&s.user_b, &nonce_of(&first));
        first.send(connect_line(&s.user_b_jwt, Some(&sig)).as_bytes());
        first.read_until(b"PONG\r\n");
        let mut second = RawClient::connect(&server.addr());
        let sig = sign_nonce(&s.user_b, &nonce_of(&second));
        let got = second.until_closed(connect_line(&s.user_b_jwt, Some(&sig)).as_bytes());
        assert_eq!(
            got, "-ERR 'maximum account active connections exceeded'\r\n",
            "{name}"
        );
        let after = listed(&http_get_json(port, "/accountz"));
        assert!(after.contains(&b), "{name}: {after:?}");
        // B imports from A: A is in use too.
        assert!(after.contains(&s.a.public_key()), "{name}: {after:?}");
    }
}

/// Operator mode's start-up refusals, as Go words them (and `-t` errors on a bad preload).
#[test]
fn jwt_configuration_refusals_like_go() {
    let s = Scenario::new();
    let base = s.config();
    let stranger = KeyPair::new_account().public_key();
    let cases = [
        (
            format!("{base}accounts {{ X {{}} }}\n"),
            "operators do not allow Accounts to be configured directly",
        ),
        (
            format!("{base}authorization {{ users = [{{user: u, password: p}}] }}\n"),
            "operators do not allow users to be configured directly",
        ),
        (
            format!("{base}system_account: {stranger}\n"),
            "system_account in config and operator JWT must be identical",
        ),
        (
            format!("operator: {}\nresolver: MEMORY\n", s.operator_jwt),
            "error resolving system account: account missing",
        ),
        (
            format!("{base}resolver_preload {{ {stranger}: notajwt }}\n"),
            "invalid account JWT",
        ),
        (
            format!("{base}no_auth_user: u\n"),
            "no_auth_user not compatible with Trusted Operator",
        ),
        (
            "operator: /nonexistent/op.jwt\n".to_owned(),
            "error parsing operator JWT: open /nonexistent/op.jwt: no such file or directory",
        ),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    for (conf, message) in &cases {
        let path = write(&dir, "bad.conf", conf);
        let p = path.to_str().expect("path");
        let ours = run_to_exit(&natrium_path(), &["-c", p, "-p", "-1"], None, &[], WAIT);
        assert_eq!(ours.code, Some(1), "{message}");
        assert!(ours.stderr.contains(message), "{message}: {}", ours.stderr);
        if let Some(go) = go_server_path() {
            let go = run_to_exit(&go, &["-c", p, "-p", "-1"], None, &[], WAIT);
            assert!(go.stderr.contains(message), "go {message}: {}", go.stderr);
        }
    }
}

/// An account JWT with more imports than its own limits allow is preloaded (with a warning)
/// but its users are refused, as Go refuses them.
#[test]
fn jwt_invalid_account_refuses_its_users_like_go() {
    let mut s = Scenario::new();
    let b = s.b.public_key();
    let imports = json!([{"subject": "s.>", "account": s.a.public_key(), "type": "stream"}]);
    s.b_jwt = jwt::account(
        &b,
        &s.operator,
        "B",
        json!({"limits": {"imports": 0}, "imports": imports}),
    );
    let (_dir, servers) = servers(&s, "");
    for (name, server) in &servers {
        let (ok, got) = raw_login(server, &s.user_b_jwt, Some(&s.user_b));
        assert!(!ok, "{name}: {got}");
        assert_eq!(got, VIOLATION, "{name}");
        assert!(
            server.wait_for_log("has validation issues:", WAIT),
            "{name}: {}",
            server.log_text()
        );
    }
}

/// A user JWT's limits as Go reads them: `-1` is unlimited, a missing or zero `subs` allows no
/// subscription (the connection is closed with `maximum subscriptions exceeded` right after
/// login), a missing or zero `payload` allows only empty messages; a SUB over a non-zero limit
/// is refused and the connection stays open.
#[test]
fn jwt_user_missing_limits_are_zero_like_go() {
    let s = Scenario::new();
    let login = |server: &ServerProcess, extra: &Value| {
        let user = KeyPair::new_user();
        let mut nats = json!({"type": "user", "version": 2});
        if let (Value::Object(into), Value::Object(extra)) = (&mut nats, extra.clone()) {
            into.extend(extra);
        }
        let token = jwt::sign(&jwt::claims(&user.public_key(), &s.b, "user", nats), &s.b);
        let mut c = RawClient::connect(&server.addr());
        let sig = sign_nonce(&user, &nonce_of(&c));
        c.send(connect_line(&token, Some(&sig)).as_bytes());
        assert!(c.read_until(b"PONG\r\n").ends_with("PONG\r\n"), "{extra}");
        c
    };
    let closing = [
        (json!({}), ""),
        (json!({"subs": 0, "payload": -1}), ""),
        (json!({"subs": -1}), "PUB x 1\r\na\r\n"),
    ];
    let staying = [
        (json!({"subs": 1, "payload": -1}), "SUB x 1\r\nSUB y 2\r\n"),
        (
            json!({"subs": -1, "payload": -1}),
            "SUB x 1\r\nSUB y 2\r\nPUB x 1\r\na\r\n",
        ),
        (json!({"subs": -1}), "PUB x 0\r\n\r\n"),
    ];
    let (_dir, servers) = servers(&s, "");
    let mut seen = Vec::new();
    for (name, server) in &servers {
        let mut out = Vec::new();
        for (extra, ops) in &closing {
            let mut c = login(server, extra);
            c.send(ops.as_bytes());
            let (text, closed) = c.wait_closed(WAIT);
            assert!(closed, "{name}: {extra}: still open: {text}");
            out.push(split_infos(&text));
        }
        for (extra, ops) in &staying {
            let mut c = login(server, extra);
            out.push(split_infos(&c.exchange(ops.as_bytes())));
        }
        seen.push((*name, out));
    }
    let (_, ours) = &seen[0];
    let rest: Vec<&str> = ours.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(
        rest,
        [
            "-ERR 'maximum subscriptions exceeded'\r\n",
            "-ERR 'maximum subscriptions exceeded'\r\n",
            "-ERR 'Maximum Payload Violation'\r\n",
            "-ERR 'maximum subscriptions exceeded'\r\n",
            "MSG x 1 1\r\na\r\n",
            "",
        ]
    );
    // The `connect_info` INFO after login carries the user's payload limit, as Go's does.
    let payloads: Vec<&[i64]> = ours.iter().map(|(i, _)| i.as_slice()).collect();
    assert_eq!(payloads[0], [0]);
    if let Some((_, go)) = seen.get(1) {
        for (i, (mine, theirs)) in ours.iter().zip(go).enumerate() {
            // Go writes the -ERR and closes from different goroutines, so on a closing case its
            // socket sometimes ends before the -ERR was flushed; ours always sends it.
            let go_lost_the_err = i < closing.len() && theirs.1.is_empty();
            if go_lost_the_err {
                assert_eq!(
                    mine.0, theirs.0,
                    "case {i}: INFO payload limits, ours vs go"
                );
            } else {
                assert_eq!(mine, theirs, "case {i}: ours vs go");
            }
        }
    }
}

/// Takes the INFO lines out of `text`, returning their `max_payload` values and the rest.
fn split_infos(text: &str) -> (Vec<i64>, String) {
    let mut infos = Vec::new();
    let mut rest = String::new();
    for line in text.split_inclusive("\r\n") {
        if let Some(body) = line.strip_prefix("INFO ") {
            let info: Value = serde_json::from_str(body.trim()).expect("info JSON");
            infos.push(info["max_payload"].as_i64().unwrap_or(i64::MIN));
        } else {
            rest.push_str(line);
        }
    }
    (infos, rest)
}

/// `websocket { jwt_cookie }` in operator mode: a bearer user JWT in the cookie logs in without
/// a nonce signature; a JWT that is not a bearer token is refused, on both servers.
#[test]
fn jwt_websocket_cookie_bearer_login_like_go() {
    use natrium_tests::ws::WsClient;
    let s = Scenario::new();
    let a = s.a.public_key();
    let bearer_user = KeyPair::new_user();
    let bearer = jwt::user(
        &bearer_user.public_key(),
        &s.a_signer,
        Some(&a),
        json!({"bearer_token": true, "subs": -1, "payload": -1, "data": -1}),
    );
    let signed_user = KeyPair::new_user();
    let not_bearer = jwt::user(
        &signed_user.public_key(),
        &s.a_signer,
        Some(&a),
        json!({"subs": -1, "payload": -1, "data": -1}),
    );
    let extra = "websocket { listen: \"127.0.0.1:-1\", no_tls: true, jwt_cookie: \"jwt\" }\n";
    let (_dir, servers) = servers(&s, extra);
    for (name, server) in &servers {
        let port = server.ws_port.expect("websocket port");
        let cookie = format!("Cookie: jwt={bearer}\r\n");
        // `handshake` asserts the PONG that follows an accepted CONNECT.
        let _ok = WsClient::handshake(port, &cookie, "CONNECT {\"verbose\":false}");
        let cookie = format!("Cookie: jwt={not_bearer}\r\n");
        let mut refused = WsClient::connect(port, &cookie);
        let _info = refused.read_data_until("\r\n");
        refused.send(&natrium_tests::ws::binary(
            b"CONNECT {\"verbose\":false}\r\nPING\r\n",
        ));
        let answer = refused.read_data_until("\r\n");
        assert_eq!(answer, VIOLATION, "{name}");
    }
}

/// When an account's JWT expires, its connected clients are told
/// `-ERR 'Account Authentication Expired'` and closed (other accounts' clients stay), and new
/// logins into it are refused.
#[test]
fn jwt_account_expiry_closes_its_clients() {
    for go in [false, true] {
        let mut s = Scenario::new();
        // B's JWT expires two seconds from now (claims count whole seconds); made afresh for
        // each server, which runs one after the other.
        let nats = json!({
            "type": "account", "version": 2,
            "limits": {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                       "wildcards": true, "conn": -1, "leaf": -1},
        });
        let mut claims = jwt::claims(&s.b.public_key(), &s.operator, "B", nats);
        claims["exp"] = json!(jwt::now() + 2);
        s.b_jwt = jwt::sign(&claims, &s.operator);
        let dir = tempfile::tempdir().expect("tempdir");
        let conf = write(&dir, "op.conf", &s.config());
        let conf = conf.to_str().expect("path");
        let args = ["-c", conf, "-a", "127.0.0.1", "-p", "-1"];
        let (name, server) = if go {
            match ServerProcess::start_go(&args) {
                Some(server) => ("go", server),
                None => return,
            }
        } else {
            ("ours", ServerProcess::start(&args))
        };
        let (mut in_b, got) = jwt::raw_login_client(&server, &s.user_b_jwt, Some(&s.user_b));
        assert_eq!(got, "PONG\r\n", "{name}");
        let (mut in_a, got) = jwt::raw_login_client(&server, &s.user_a_jwt, Some(&s.user_a));
        assert_eq!(got, "PONG\r\n", "{name}");
        let (text, closed) = in_b.wait_closed(WAIT);
        assert!(closed, "{name}: {text:?}");
        assert!(
            text.ends_with("-ERR 'Account Authentication Expired'\r\n"),
            "{name}: {text:?}"
        );
        // A's client is unaffected (it may have the INFO that followed its first PONG, and the
        // server's first PING).
        let rest = in_a.exchange(b"PONG\r\n");
        let other = |l: &str| !l.starts_with("INFO ") && l != "PING";
        assert!(!rest.lines().any(other), "{name}: {rest:?}");
        let (admitted, _) = raw_login(&server, &s.user_b_jwt, Some(&s.user_b));
        assert!(!admitted, "{name}: B is expired");
    }
}
