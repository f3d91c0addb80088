//! A repeated CONNECT on one connection: it runs the whole login again, as Go does. A user of
//! another account moves the connection into that account (the old account's subscriptions
//! are dropped, as on any repeated CONNECT), so one identity's permissions never act in another identity's account; and the
//! new CONNECT is merged into the options in force (what it leaves out keeps its value). Each
//! exchange runs byte for byte against the Go server too, when it is installed: config users,
//! `no_auth_user`, nkeys, JWT users and WebSocket clients.

use std::path::PathBuf;

use natrium_tests::jwt::{self, nonce_of, sign_nonce, Scenario};
use natrium_tests::ws::{binary, WsClient};
use natrium_tests::{RawClient, ServerProcess};
use nkeys::KeyPair;
use serde_json::json;

/// Account A: `pa` (the `no_auth_user`) may do nothing, `a2` anything; account GUEST: `guest`.
const USERS: &str = r#"
accounts {
  A { users [
    {user: pa, password: pa, permissions: {publish: {deny: ">"}, subscribe: {deny: ">"}}}
    {user: a2, password: a2}
  ] }
  GUEST { users [ {user: guest, password: guest}, {user: guest2, password: guest2} ] }
}
no_auth_user: pa
websocket { listen: "127.0.0.1:-1", no_tls: true }
"#;

fn write_config(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("repeated.conf");
    std::fs::write(&path, text).expect("write config");
    (dir, path)
}

/// Ours and, when installed, Go's, on `config`.
fn servers(config: &str) -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let (dir, path) = write_config(config);
    let path = path.to_str().expect("utf-8 path").to_owned();
    let args = ["-c", &path, "-a", "127.0.0.1", "-p", "-1"];
    let mut list = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        list.push(("go", go));
    }
    (dir, list)
}

fn login(server: &ServerProcess, user: &str) -> RawClient {
    let mut c = RawClient::connect(&server.addr());
    let connect = format!(
        "CONNECT {{\"verbose\":false,\"echo\":false,\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\n"
    );
    assert_eq!(c.exchange(connect.as_bytes()), "");
    c
}

/// Publishes `subject` (not echoed: see [`login`]) and waits for the server to have handled it (and delivered it).
fn publish(c: &mut RawClient, subject: &str) {
    assert_eq!(
        c.exchange(format!("PUB {subject} 2\r\nhi\r\n").as_bytes()),
        ""
    );
}

/// The connection started as A's `pa` and moved to GUEST: it sees GUEST's messages only, and
/// what it publishes lands in GUEST only.
fn check_moved(name: &str, server: &ServerProcess, mover: &mut dyn FnMut(&[u8]) -> String) {
    let mut a2 = login(server, "a2");
    let mut guest2 = login(server, "guest2");
    assert_eq!(a2.exchange(b"SUB secrets.> 7\r\n"), "", "{name}");
    assert_eq!(guest2.exchange(b"SUB secrets.> 8\r\n"), "", "{name}");
    assert_eq!(mover(b"SUB secrets.> 1\r\n"), "", "{name}");
    publish(&mut a2, "secrets.payroll");
    publish(&mut guest2, "secrets.guest");
    assert_eq!(
        mover(b""),
        "MSG secrets.guest 1 2\r\nhi\r\n",
        "{name}: only GUEST's message reaches the moved connection"
    );
    assert_eq!(
        mover(b"PUB secrets.leak 2\r\nhi\r\n"),
        "MSG secrets.leak 1 2\r\nhi\r\n",
        "{name}: echoed"
    );
    assert_eq!(a2.exchange(b""), "", "{name}: nothing leaks into A");
    assert_eq!(
        guest2.exchange(b""),
        "MSG secrets.leak 8 2\r\nhi\r\n",
        "{name}: the moved connection publishes into GUEST"
    );
}

#[test]
fn connect_repeated_as_another_accounts_user_moves_the_connection() {
    let (_dir, servers) = servers(USERS);
    for (name, server) in &servers {
        let mut c = RawClient::connect(&server.addr());
        assert_eq!(c.exchange(b"CONNECT {\"verbose\":false}\r\n"), "", "{name}");
        assert_eq!(
            c.exchange(b"SUB secrets.> 9\r\n"),
            "-ERR 'Permissions Violation for Subscription to \"secrets.>\"'\r\n",
            "{name}: no_auth_user pa may not subscribe"
        );
        let again = b"CONNECT {\"user\":\"guest\",\"pass\":\"guest\"}\r\n";
        assert_eq!(c.exchange(again), "", "{name}");
        check_moved(name, server, &mut |bytes| c.exchange(bytes));
    }
}

#[test]
fn connect_repeated_drops_the_old_accounts_subscriptions() {
    let (_dir, servers) = servers(USERS);
    for (name, server) in &servers {
        let mut a2 = login(server, "a2");
        let mut guest2 = login(server, "guest2");
        let mut c = login(server, "a2");
        assert_eq!(c.exchange(b"SUB foo 1\r\nSUB bar 2\r\n"), "", "{name}");
        let again = b"CONNECT {\"user\":\"guest\",\"pass\":\"guest\"}\r\n";
        assert_eq!(c.exchange(again), "", "{name}");
        publish(&mut a2, "foo");
        publish(&mut guest2, "foo");
        assert_eq!(c.exchange(b""), "", "{name}: old subscriptions are gone");
        // The sids are free again, in the new account.
        assert_eq!(c.exchange(b"SUB foo 1\r\n"), "", "{name}");
        publish(&mut a2, "foo");
        publish(&mut guest2, "foo");
        assert_eq!(c.exchange(b""), "MSG foo 1 2\r\nhi\r\n", "{name}");
        // Go drops them on any repeated CONNECT, the same user's in the same account too.
        let same = b"CONNECT {\"user\":\"guest\",\"pass\":\"guest\"}\r\n";
        assert_eq!(c.exchange(same), "", "{name}");
        publish(&mut guest2, "foo");
        assert_eq!(c.exchange(b""), "", "{name}");
    }
}

#[test]
fn connect_repeated_with_bad_credentials_is_refused() {
    let (_dir, servers) = servers(USERS);
    for (name, server) in &servers {
        let mut c = login(server, "a2");
        let bad = b"CONNECT {\"user\":\"a2\",\"pass\":\"nope\"}\r\nPING\r\n";
        assert_eq!(
            c.until_closed(bad),
            "-ERR 'Authorization Violation'\r\n",
            "{name}"
        );
    }
}

/// Omitted fields keep their values: no `+OK`, no echo, after `CONNECT {}`.
#[test]
fn connect_repeated_merges_options() {
    let mut servers = vec![("ours", ServerProcess::start(&[]))];
    if let Some(go) = ServerProcess::start_go(&[]) {
        servers.push(("go", go));
    }
    for (name, server) in &servers {
        let mut c = RawClient::connect(&server.addr());
        let first = b"CONNECT {\"verbose\":false,\"echo\":false}\r\nSUB x 1\r\n";
        assert_eq!(c.exchange(first), "", "{name}");
        assert_eq!(c.exchange(b"CONNECT {}\r\nPUB x 1\r\na\r\n"), "", "{name}");
        let verbose = b"CONNECT {\"verbose\":true,\"echo\":null}\r\nPUB x 1\r\na\r\n";
        assert_eq!(c.exchange(verbose), "+OK\r\n+OK\r\n", "{name}");
    }
}

#[test]
fn connect_repeated_over_websocket_moves_the_connection() {
    let (_dir, servers) = servers(USERS);
    for (name, server) in &servers {
        let port = server.ws_port.expect("websocket port");
        let mut ws = WsClient::handshake(port, "", "CONNECT {\"verbose\":false}");
        let again = "CONNECT {\"user\":\"guest\",\"pass\":\"guest\"}\r\n";
        let mut exchange = |bytes: &[u8]| {
            let mut frame = bytes.to_vec();
            frame.extend_from_slice(b"PING\r\n");
            ws.send(&binary(&frame));
            let text = ws.read_data_until("PONG\r\n");
            text.trim_end_matches("PONG\r\n").to_owned()
        };
        assert_eq!(exchange(again.as_bytes()), "", "{name}");
        check_moved(name, server, &mut exchange);
    }
}

/// nkey users: `UA…` in A may do nothing, `UG…` is in GUEST; each CONNECT signs the nonce.
#[test]
fn connect_repeated_nkey_user_of_another_account() {
    let restricted = KeyPair::new_user();
    let guest = KeyPair::new_user();
    let config = format!(
        r#"
accounts {{
  A {{ users [
    {{user: a2, password: a2}}
    {{nkey: {}, permissions: {{publish: {{deny: ">"}}, subscribe: {{deny: ">"}}}}}}
  ] }}
  GUEST {{ users [ {{user: guest2, password: guest2}}, {{nkey: {}}} ] }}
}}
"#,
        restricted.public_key(),
        guest.public_key()
    );
    let (_dir, servers) = servers(&config);
    let connect = |key: &KeyPair, nonce: &str| {
        let body =
            json!({"verbose": false, "nkey": key.public_key(), "sig": sign_nonce(key, nonce)});
        format!("CONNECT {body}\r\n")
    };
    for (name, server) in &servers {
        let mut c = RawClient::connect(&server.addr());
        let nonce = nonce_of(&c);
        assert_eq!(
            c.exchange(connect(&restricted, &nonce).as_bytes()),
            "",
            "{name}"
        );
        assert_eq!(c.exchange(connect(&guest, &nonce).as_bytes()), "", "{name}");
        check_moved(name, server, &mut |bytes| c.exchange(bytes));
    }
}

/// JWT users: a user of account A with no permissions re-CONNECTs with a user JWT of B.
#[test]
fn connect_repeated_jwt_user_of_another_account() {
    let s = Scenario::new();
    let locked = KeyPair::new_user();
    let locked_jwt = jwt::user(
        &locked.public_key(),
        &s.a,
        None,
        json!({"pub": {"deny": [">"]}, "sub": {"deny": [">"]}}),
    );
    let (_dir, servers) = servers(&s.config());
    let connect = |jwt: &str, key: &KeyPair, nonce: &str| {
        let body = json!({"verbose": false, "jwt": jwt, "sig": sign_nonce(key, nonce)});
        format!("CONNECT {body}\r\n")
    };
    for (name, server) in &servers {
        let log_in = |jwt: &str, key: &KeyPair| {
            let mut c = RawClient::connect(&server.addr());
            let nonce = nonce_of(&c);
            assert_eq!(
                c.exchange(connect(jwt, key, &nonce).as_bytes()),
                "",
                "{name}"
            );
            c
        };
        let mut in_a = log_in(&s.user_a_jwt, &s.user_a);
        let mut in_b = log_in(&s.user_b_jwt, &s.user_b);
        let mut c = log_in(&locked_jwt, &locked);
        let nonce = nonce_of(&c);
        let again = connect(&s.user_b_jwt, &s.user_b, &nonce);
        assert_eq!(c.exchange(again.as_bytes()), "", "{name}");
        assert_eq!(c.exchange(b"SUB secrets.> 1\r\n"), "", "{name}");
        publish(&mut in_a, "secrets.a");
        publish(&mut in_b, "secrets.b");
        assert_eq!(c.exchange(b""), "MSG secrets.b 1 2\r\nhi\r\n", "{name}");
    }
}
