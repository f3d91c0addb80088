//! The log prefix of a client after its first CONNECT, compared line for line with the Go
//! server's: `ip:port - cid:N`, then the client's description (`"v1.2:python:svc"`) and who it
//! logged in as (`"ACC/user:bob"`, `"$G/token"`, `"ACC/nkey:U…"`, `"AKEY/Name/jwt:UKEY"`).

use std::time::Duration;

use natrium_tests::jwt::{self, Scenario};
use natrium_tests::raw::wait_until;
use natrium_tests::{RawClient, ServerProcess};
use nkeys::KeyPair;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);
/// Each client publishes more than this, and the server logs the refusal with its prefix.
const MAX_PAYLOAD: &str = "max_payload: 10\n";

fn start(config: &str, go: bool) -> Option<(tempfile::TempDir, ServerProcess)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("prefix.conf");
    std::fs::write(&path, format!("{MAX_PAYLOAD}{config}")).expect("write config");
    let path = path.to_str().expect("path").to_owned();
    let args = ["-c", &path, "-a", "127.0.0.1", "-p", "-1"];
    let server = ServerProcess::start_ours_or_go(go, &args)?;
    Some((dir, server))
}

/// Logs in with `connect` (a CONNECT body made for the INFO the client got), publishes too
/// much, and returns the server's log line for it with the address and cid cut off.
fn prefix_line(server: &ServerProcess, connect: &dyn Fn(&RawClient) -> String) -> String {
    let needle = "maximum payload exceeded: 20 vs 10";
    let lines = || -> Vec<String> {
        let all = server.log_lines().into_iter();
        all.filter(|l| l.contains(needle)).collect()
    };
    let before = lines().len();
    let mut c = RawClient::connect(&server.addr());
    let body = connect(&c);
    let closed = c.until_closed(format!("CONNECT {body}\r\nPUB a 20\r\n").as_bytes());
    assert!(closed.contains("Maximum Payload"), "{closed:?}");
    let logged = wait_until(WAIT, || lines().len() > before);
    assert!(logged, "{}", server.log_text());
    let line = lines().pop().unwrap_or_default();
    // `… [ERR] 127.0.0.1:5555 - cid:7 - "…" - maximum payload …`: keep what follows the cid.
    let after_cid = line.split(" - cid:").nth(1).unwrap_or_default();
    after_cid
        .split_once(' ')
        .map_or(String::new(), |(_, rest)| rest.to_owned())
}

/// Makes a CONNECT body for the INFO a client got.
type ConnectMaker<'a> = &'a dyn Fn(&RawClient) -> String;

/// Runs `cases` (expected tag, CONNECT maker) on ours and on Go with `config`.
fn check(config: &str, cases: &[(&str, ConnectMaker<'_>)]) {
    for go in [false, true] {
        let Some((_dir, server)) = start(config, go) else {
            continue;
        };
        let name = if go { "go" } else { "ours" };
        for (want, connect) in cases {
            let got = prefix_line(&server, *connect);
            assert_eq!(
                got,
                format!("{want}- maximum payload exceeded: 20 vs 10"),
                "{name}"
            );
        }
    }
}

#[test]
fn log_prefix_users_tokens_and_descriptions_like_go() {
    let fixed = |body: &'static str| move |_: &RawClient| body.to_owned();
    let plain = fixed(r#"{"verbose":false}"#);
    let described = fixed(r#"{"verbose":false,"name":"svc","lang":"python","version":"1.2"}"#);
    let lang = fixed(r#"{"verbose":false,"lang":"go"}"#);
    let quoted = fixed(r#"{"verbose":false,"name":"a b\"c"}"#);
    let user = fixed(r#"{"verbose":false,"user":"u","pass":"u","version":"2"}"#);
    check(
        "",
        &[
            ("", &plain),
            (r#"- "v1.2:python:svc" "#, &described),
            (r#"- "go" "#, &lang),
            (r#"- "a b\"c" "#, &quoted),
            // Without authentication a user name sent is still shown.
            (r#"- "v2" - "$G/user:u" "#, &user),
        ],
    );
    let token = fixed(r#"{"verbose":false,"auth_token":"t"}"#);
    check(
        "authorization { token: t }\n",
        &[(r#"- "$G/token" "#, &token)],
    );
    let config = "accounts { A { users [ {user: u, password: u} ] } }\nno_auth_user: u\n";
    check(
        config,
        &[
            (r#"- "A/user:u" "#, &plain),
            (r#"- "v1.2:python:svc" - "A/user:u" "#, &described),
        ],
    );
}

#[test]
fn log_prefix_nkey_and_jwt_users_like_go() {
    let key = KeyPair::new_user();
    let config = format!(
        "accounts {{ A {{ users [ {{nkey: {}}} ] }} }}\n",
        key.public_key()
    );
    let nkey = |c: &RawClient| {
        let sig = jwt::sign_nonce(&key, &jwt::nonce_of(c));
        json!({"verbose": false, "nkey": key.public_key(), "sig": sig}).to_string()
    };
    let want = format!("- \"A/nkey:{}\" ", key.public_key());
    check(&config, &[(&want, &nkey)]);
    let s = Scenario::new();
    let user_b = |c: &RawClient| {
        let sig = jwt::sign_nonce(&s.user_b, &jwt::nonce_of(c));
        json!({"verbose": false, "jwt": s.user_b_jwt, "sig": sig}).to_string()
    };
    let want = format!(
        "- \"{}/B/jwt:{}\" ",
        s.b.public_key(),
        s.user_b.public_key()
    );
    check(&s.config(), &[(&want, &user_b)]);
}
