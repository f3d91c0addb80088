//! Reloading a changed `accounts` block, against the Go server where it is installed: accounts
//! still configured keep their clients and subscriptions and take their new exports and
//! imports at once; clients whose user moved to another account or is gone are closed without
//! a word; new accounts can be logged into; a changed system account is refused with Go's line.

use natrium_tests::jwt;
use natrium_tests::raw::http_get_json;
use natrium_tests::reload::{
    both, connect, count, last_line_from, sighup, user, FAILED, VIOLATION, WAIT,
};
use natrium_tests::{RawClient, ServerProcess};

const BEFORE: &str = "listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\naccounts {
  A { users [{user: a, password: a}], exports [{stream: \"s.>\"}] }
  B { users [{user: b, password: b}] }
  C { users [{user: c, password: c}, {user: e, password: e}] }
}\n";

const AFTER: &str = "listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\naccounts {
  A { users [{user: a, password: a}, {user: c, password: c}, {user: e, password: e2}],
      exports [{stream: \"s.>\"}, {service: \"svc\"}] }
  B { users [{user: b, password: b}],
      imports [{stream: {account: A, subject: \"s.>\"}}, {service: {account: A, subject: svc}}] }
  D { users [{user: d, password: d}] }
}\n";

/// The account a fresh login as `name` lands in, from the INFO after its first PONG.
fn login_account(server: &ServerProcess, name: &str) -> String {
    let mut c = RawClient::connect(&server.addr());
    let line = format!(
        "CONNECT {{\"verbose\":false,\"protocol\":1{}}}\r\nPING\r\n",
        user(name, name)
    );
    c.send(line.as_bytes());
    let info = c.read_until(b"}");
    let info = info.split("\"remote_account\":\"").nth(1).unwrap_or("");
    info.split('"').next().unwrap_or_default().to_owned()
}

fn listed_accounts(server: &ServerProcess) -> Vec<String> {
    let port = server.monitor_port.expect("monitoring port");
    let doc = http_get_json(port, "/accountz");
    let mut names: Vec<String> = doc["accounts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[test]
fn reload_accounts_rebuilt_live_like_go() {
    for (name, conf, server) in both(BEFORE) {
        let addr = server.addr();
        let mut a = connect(&addr, &format!("{},\"headers\":true", user("a", "a")));
        let mut b = connect(&addr, &user("b", "b"));
        let mut c = connect(&addr, &user("c", "c"));
        let mut e = connect(&addr, &user("e", "e"));
        assert_eq!(a.exchange(b"SUB svc 1\r\nSUB s.> 2\r\n"), "", "{name}");
        assert_eq!(b.exchange(b"SUB s.> 1\r\nSUB _INBOX.> 9\r\n"), "", "{name}");
        assert_eq!(c.exchange(b"SUB x 1\r\n"), "", "{name}");
        // Before: B imports nothing.
        assert_eq!(a.exchange(b"PUB s.x 2\r\nhi\r\n"), "MSG s.x 2 2\r\nhi\r\n");
        assert_eq!(b.exchange(b""), "", "{name}");

        conf.write(AFTER);
        sighup(&server, 1);
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());
        for line in ["Reloaded: authorization users", "Reloaded: accounts"] {
            assert_eq!(count(&server, line), 1, "{name}: {line}");
        }

        // c's user moved to A: closed without a word. a and b stay, subscriptions and all.
        assert_eq!(c.until_closed(b""), "", "{name}");
        // Moved with a new password: still closed quietly (the move is checked first).
        assert_eq!(e.until_closed(b""), "", "{name}");
        assert_eq!(
            a.exchange(b"PUB s.x 2\r\nhi\r\n"),
            "MSG s.x 2 2\r\nhi\r\n",
            "{name}"
        );
        // The new stream import reaches b's old subscription.
        assert_eq!(b.exchange(b""), "MSG s.x 1 2\r\nhi\r\n", "{name}");
        // The new service import: b's request reaches a on a mapped reply, a's answer comes back.
        b.send(b"PUB svc _INBOX.1 3\r\nreq\r\n");
        let head = a.read_until(b"\r\n");
        assert!(head.starts_with("HMSG svc 1 _R_."), "{name}: {head}");
        let reply = head.split(' ').nth(3).unwrap_or_default().to_owned();
        let rest = a.read_until(b"req\r\n");
        assert!(
            rest.contains("Nats-Request-Info: {\"acc\":\"B\""),
            "{name}: {rest}"
        );
        a.send(format!("PUB {reply} 4\r\nresp\r\n").as_bytes());
        assert_eq!(
            b.read_until(b"resp\r\n"),
            "MSG _INBOX.1 9 4\r\nresp\r\n",
            "{name}"
        );

        assert_eq!(login_account(&server, "d"), "D", "{name}");
        assert_eq!(login_account(&server, "c"), "A", "{name}");
        assert_eq!(
            listed_accounts(&server),
            ["$G", "$SYS", "A", "B", "D"],
            "{name}"
        );
    }
}

#[test]
fn reload_accounts_removed_import_and_account_like_go() {
    for (name, conf, server) in both(AFTER) {
        let addr = server.addr();
        let mut a = connect(&addr, &user("a", "a"));
        let mut b = connect(&addr, &user("b", "b"));
        let mut d = connect(&addr, &user("d", "d"));
        assert_eq!(b.exchange(b"SUB s.> 1\r\nSUB svc 2\r\n"), "", "{name}");
        assert_eq!(a.exchange(b"PUB s.x 0\r\n\r\n"), "", "{name}");
        assert_eq!(b.exchange(b""), "MSG s.x 1 0\r\n\r\n", "{name}");

        // B loses its imports, D is gone.
        conf.write(BEFORE);
        sighup(&server, 1);
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());
        assert_eq!(d.until_closed(b""), "", "{name}");
        assert_eq!(a.exchange(b"PUB s.x 0\r\n\r\n"), "", "{name}");
        // A request into B's own `svc` stays in B now.
        assert_eq!(
            b.exchange(b"PUB svc 1\r\nx\r\n"),
            "MSG svc 2 1\r\nx\r\n",
            "{name}"
        );
        assert_eq!(b.exchange(b""), "", "{name}: no stream import any more");
        let mut refused = RawClient::connect(&addr);
        let text = refused.until_closed(
            format!(
                "CONNECT {{\"verbose\":false{}}}\r\nPING\r\n",
                user("d", "d")
            )
            .as_bytes(),
        );
        assert_eq!(text, "-ERR 'Authorization Violation'\r\n", "{name}");
        assert_eq!(
            listed_accounts(&server),
            ["$G", "$SYS", "A", "B", "C"],
            "{name}"
        );
    }
}

#[test]
fn reload_accounts_system_account_change_refused_like_go() {
    let base = "listen: 127.0.0.1:-1\naccounts { A { users [{user: a, password: a}] }, B {} }\n";
    let cases = [
        ("system_account: A\n", "SystemAccount: old=, new=A"),
        (
            "no_system_account: true\n",
            "NoSystemAccount: old=false, new=true",
        ),
    ];
    for (change, refusal) in cases {
        for (name, conf, server) in both(base) {
            let mut a = connect(&server.addr(), &user("a", "a"));
            conf.write(&format!("{base}{change}"));
            sighup(&server, 1);
            assert_eq!(
                last_line_from(&server, FAILED),
                format!("{FAILED}config reload not supported for {refusal}"),
                "{name}"
            );
            assert_eq!(a.exchange(b""), "", "{name}: still connected");
        }
    }
}

/// A reload that changes something else keeps a client's account payload limit (the limit
/// used to fall back to the server's); a changed account limit applies to connected clients
/// too (Go applies it to new logins only).
#[test]
fn reload_accounts_limits_stay_and_follow_the_file() {
    let text = |debug: bool, max: u32| {
        format!(
            "listen: 127.0.0.1:-1\ndebug: {debug}\naccounts {{ A {{ users [{{user: a, password: a}}], \
             limits {{max_payload: {max}}} }} }}\n"
        )
    };
    let conf = natrium_tests::reload::Conf::new(&text(false, 10));
    let server = ServerProcess::start(&["-c", conf.arg()]);
    let mut a = connect(&server.addr(), &user("a", "a"));
    let violation = "-ERR 'Maximum Payload Violation'\r\n";
    conf.write(&text(true, 10));
    sighup(&server, 1);
    assert_eq!(a.until_closed(b"PUB x 11\r\n01234567890\r\n"), violation);

    let mut a = connect(&server.addr(), &user("a", "a"));
    conf.write(&text(true, 20));
    sighup(&server, 2);
    assert_eq!(a.exchange(b"PUB x 11\r\n01234567890\r\n"), "");
}

/// Operator mode with the memory resolver: accounts follow `resolver_preload` on reload. A new
/// account's users log in at once; a removed account is logged as Go logs it and its connected
/// users fail the re-check (`Authorization Violation`); others stay. The operator is fixed.
#[test]
fn reload_accounts_resolver_preload_like_go() {
    let s = jwt::Scenario::new();
    let preload = |accounts: &[(&nkeys::KeyPair, &str)]| {
        let lines: Vec<String> = accounts
            .iter()
            .map(|(key, jwt)| format!("  {}: {jwt}\n", key.public_key()))
            .collect();
        format!(
            "listen: 127.0.0.1:-1\noperator: {}\nresolver: MEMORY\nresolver_preload {{\n{}}}\n",
            s.operator_jwt,
            lines.concat()
        )
    };
    let sys = (&s.system, s.system_jwt.as_str());
    let a = (&s.a, s.a_jwt.as_str());
    let b = (&s.b, s.b_jwt.as_str());
    for (name, conf, server) in both(&preload(&[sys, a])) {
        let (mut user_a, got) = jwt::raw_login_client(&server, &s.user_a_jwt, Some(&s.user_a));
        assert!(got.starts_with("PONG"), "{name}: {got}");
        let refused = jwt::raw_login(&server, &s.user_b_jwt, Some(&s.user_b));
        assert!(!refused.0, "{name}: {refused:?}");

        conf.write(&preload(&[sys, a, b]));
        sighup(&server, 1);
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());
        let (mut user_b, got) = jwt::raw_login_client(&server, &s.user_b_jwt, Some(&s.user_b));
        assert!(got.starts_with("PONG"), "{name}: {got}");
        user_a.read_until(b"\r\n"); // the INFO after the first PONG
        assert_eq!(user_a.exchange(b""), "", "{name}: a stays");

        conf.write(&preload(&[sys, a]));
        sighup(&server, 2);
        let removed = format!(
            "Reloaded: deleting account [removed]: \"{}\"",
            s.b.public_key()
        );
        assert_eq!(count(&server, &removed), 1, "{name}: {}", server.log_text());
        let (text, closed) = user_b.wait_closed(WAIT);
        assert!(closed, "{name}: {text}");
        assert!(text.ends_with(VIOLATION), "{name}: {text:?}");
        assert_eq!(user_a.exchange(b""), "", "{name}: a stays");

        // Another operator is refused.
        let other = jwt::operator(
            &nkeys::KeyPair::new_operator(),
            &[],
            Some(&s.system.public_key()),
        );
        conf.write(&preload(&[sys, a]).replace(&s.operator_jwt, &other));
        sighup(&server, 3);
        let line = last_line_from(&server, FAILED);
        assert!(
            line.starts_with(&format!(
                "{FAILED}config reload not supported for TrustedOperators"
            )),
            "{name}: {line}"
        );
    }
}

/// Reloads that change the accounts while messages flow through an import lose none of them.
#[test]
fn reload_accounts_under_traffic_lose_nothing() {
    const ROUNDS: usize = 8;
    const PER_ROUND: usize = 2000;
    let batch = "PUB s.x 2\r\nhi\r\n".repeat(PER_ROUND);
    for (name, conf, server) in both(AFTER) {
        let addr = server.addr();
        let mut a = connect(&addr, &user("a", "a"));
        let mut b = connect(&addr, &user("b", "b"));
        assert_eq!(b.exchange(b"SUB s.> 1\r\n"), "", "{name}");
        let mut received = 0;
        for round in 0..ROUNDS {
            // Sent without waiting: the reload lands while the batch is being routed.
            a.send(batch.as_bytes());
            // Every other file drops account D (and adds an account E): A and B are kept.
            let text = if round % 2 == 0 {
                AFTER.replace("D { users [{user: d, password: d}] }", "E {}")
            } else {
                AFTER.to_owned()
            };
            conf.write(&text);
            sighup(&server, round + 1);
            assert_eq!(a.exchange(b""), "", "{name}");
            received += b.exchange(b"").matches("MSG s.x 1 2\r\n").count();
        }
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());
        assert_eq!(received, ROUNDS * PER_ROUND, "{name}");
    }
}

/// A reload lowering an account's connection limit closes its newest clients beyond it with
/// Go's error, as Go does when an account's claims change; the oldest stay.
#[test]
fn reload_accounts_lowered_connection_limit_like_go() {
    let s = jwt::Scenario::new();
    let b_with = |conn: i64| {
        jwt::account(
            &s.b.public_key(),
            &s.operator,
            "B",
            serde_json::json!({"limits": {"conn": conn, "imports": -1, "exports": -1,
                "subs": -1, "payload": -1, "data": -1, "leaf": -1}}),
        )
    };
    let text = |b_jwt: &str| {
        format!(
            "listen: 127.0.0.1:-1\noperator: {}\nresolver: MEMORY\nresolver_preload {{\n  {}: {}\n  {}: {}\n}}\n",
            s.operator_jwt,
            s.system.public_key(),
            s.system_jwt,
            s.b.public_key(),
            b_jwt
        )
    };
    for (name, conf, server) in both(&text(&b_with(-1))) {
        let mut clients: Vec<_> = (0..3)
            .map(|_| {
                let (mut c, got) = jwt::raw_login_client(&server, &s.user_b_jwt, Some(&s.user_b));
                assert!(got.starts_with("PONG"), "{name}: {got}");
                c.read_until(b"\r\n"); // the INFO after the first PONG
                c
            })
            .collect();
        conf.write(&text(&b_with(1)));
        sighup(&server, 1);
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());
        let newest: Vec<_> = clients.drain(1..).collect();
        for mut c in newest {
            let (text, closed) = c.wait_closed(WAIT);
            assert!(closed, "{name}: {text}");
            assert!(
                text.ends_with("-ERR 'maximum account active connections exceeded'\r\n"),
                "{name}: {text:?}"
            );
        }
        assert_eq!(clients[0].exchange(b""), "", "{name}: the oldest stays");
    }
}
