//! Configuration reload (SIGHUP and `--signal reload`) and log file reopening, compared with
//! the Go server where it is installed: users and permissions changed in the file apply to
//! new and existing clients (invalidated ones closed, now-forbidden subscriptions removed with
//! Go's `-ERR`), options Go refuses are refused with Go's log line and the old configuration
//! stays in force, a file that does not parse changes nothing, limits and logging settings
//! apply live, and `--signal reopen` makes a renamed log file be replaced by a new one.

use std::path::Path;
use std::time::Duration;

use natrium_tests::process::run_to_exit;
use natrium_tests::raw::{http_get_json, wait_until};
use natrium_tests::reload::{
    both, connect, count, last_line_from, sighup, user, Conf, FAILED, RELOADED, VIOLATION, WAIT,
};
use natrium_tests::{natrium_path, RawClient, ServerProcess};

const USERS_BEFORE: &str = "authorization { users = [ \
    {user: alice, password: a, permissions: {subscribe: {allow: [\"foo\", \"bar.>\"]}}}, \
    {user: bob, password: b}, {user: carol, password: c} ] }\n";
const USERS_AFTER: &str = "authorization { users = [ \
    {user: alice, password: a, permissions: {subscribe: {allow: [\"bar.>\"], deny: [\"bar.x\"]}, \
     publish: {deny: [\"x\"]}}}, \
    {user: bob, password: b2} ] }\n";

#[test]
fn reload_users_and_permissions_like_go() {
    for (name, conf, server) in both(&format!("listen: 127.0.0.1:-1\n{USERS_BEFORE}")) {
        let addr = server.addr();
        let mut alice = connect(&addr, &user("alice", "a"));
        assert_eq!(
            alice.exchange(b"SUB foo 1\r\nSUB bar.x q 2\r\nSUB bar.y 3\r\n"),
            ""
        );
        let mut bob = connect(&addr, &user("bob", "b"));
        let mut carol = connect(&addr, &user("carol", "c"));
        conf.write(&format!("listen: 127.0.0.1:-1\n{USERS_AFTER}"));
        sighup(&server, 1);
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());

        // Go removes the subscriptions the new permissions forbid, each with an -ERR.
        let removed = [
            "-ERR 'Permissions Violation for Subscription to \"foo\" (sid \"1\")'\r\n",
            "-ERR 'Permissions Violation for Subscription to \"bar.x\" using queue \"q\" \
             (sid \"2\")'\r\n",
        ];
        let got = alice.exchange(b"");
        for line in removed {
            assert!(got.contains(line), "{name}: {got:?}");
        }
        assert_eq!(
            got.len(),
            removed.iter().map(|l| l.len()).sum::<usize>(),
            "{name}"
        );
        // The invalidated client is told; the one whose user is gone is closed quietly.
        assert_eq!(bob.until_closed(b""), VIOLATION, "{name}");
        assert_eq!(carol.until_closed(b""), "", "{name}");

        // Alice keeps bar.y and gets the new publish rule; new clients see the new users.
        assert_eq!(
            alice.exchange(b"PUB x 0\r\n\r\n"),
            "-ERR 'Permissions Violation for Publish to \"x\"'\r\n",
            "{name}"
        );
        assert_eq!(
            alice.exchange(b"PUB bar.y 2\r\nhi\r\n"),
            "MSG bar.y 3 2\r\nhi\r\n",
            "{name}"
        );
        drop(connect(&addr, &user("bob", "b2")));
        let mut old_bob = RawClient::connect(&addr);
        let refused = old_bob.until_closed(
            format!(
                "CONNECT {{\"verbose\":false{}}}\r\nPING\r\n",
                user("bob", "b")
            )
            .as_bytes(),
        );
        assert_eq!(refused, VIOLATION, "{name}");
        for needle in [
            "Removed sub \"foo\" (sid \"1\") for User \"alice\" - not authorized",
            "Removed sub \"bar.x\" using queue \"q\" (sid \"2\") for User \"alice\" - not authorized",
            "Reloaded: authorization users",
        ] {
            assert_eq!(count(&server, needle), 1, "{name}: {needle}");
        }
        // Once at the reload, once for the refused CONNECT with the old password (the log line
        // may land just after the -ERR went out, so wait for it).
        let bob_refusals = || count(&server, "authentication error - User \"bob\"");
        wait_until(WAIT, || bob_refusals() >= 2);
        assert_eq!(bob_refusals(), 2, "{name}");
        assert!(
            last_line_from(&server, RELOADED).starts_with(&format!("{RELOADED} (sha256:")),
            "{name}"
        );
    }
}

#[test]
fn reload_signal_command_reloads_token() {
    let conf = Conf::new("listen: 127.0.0.1:-1\nauthorization { token: one }\n");
    let server = ServerProcess::start(&["-c", conf.arg()]);
    let addr = server.addr();
    let mut old = connect(&addr, ",\"auth_token\":\"one\"");
    conf.write("listen: 127.0.0.1:-1\nauthorization { token: two }\n");
    let target = format!("reload={}", server.pid());
    let out = run_to_exit(&natrium_path(), &["--signal", &target], None, &[], WAIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(server.wait_for_log(RELOADED, WAIT), "{}", server.log_text());
    assert!(server.log_text().contains("Reloaded: authorization token"));
    assert_eq!(old.until_closed(b""), VIOLATION);
    drop(connect(&addr, ",\"auth_token\":\"two\""));
    assert!(server
        .log_text()
        .contains("authentication error - Token \"[REDACTED]\""));
}

#[test]
fn reload_refused_option_keeps_old_config_like_go() {
    let before = format!("listen: 127.0.0.1:-1\nmax_payload: 2000\n{USERS_BEFORE}");
    for (name, conf, server) in both(&before) {
        let addr = server.addr();
        let mut bob = connect(&addr, &user("bob", "b"));
        conf.write(&format!(
            "listen: 127.0.0.1:-1\nmax_payload: 1000\nserver_name: renamed\n\
             max_subscriptions: 5\n{USERS_AFTER}"
        ));
        sighup(&server, 1);
        assert_eq!(
            last_line_from(&server, FAILED),
            format!("{FAILED}config reload not supported for ServerName: old=, new=renamed"),
            "{name}"
        );
        assert_eq!(count(&server, "Reloaded:"), 0, "{name}: nothing applied");
        // Everything old stays: users, limits, the connected client.
        assert_eq!(bob.exchange(b""), "", "{name}");
        drop(connect(&addr, &user("carol", "c")));
        let c = RawClient::connect(&addr);
        assert!(
            c.info.contains("\"max_payload\":2000"),
            "{name}: {}",
            c.info
        );

        // A file changing only a refused limit names that field, with Go's values.
        conf.write(&format!(
            "listen: 127.0.0.1:-1\nmax_payload: 2000\nmax_pending: 5MB\n{USERS_BEFORE}"
        ));
        sighup(&server, 2);
        assert_eq!(
            last_line_from(&server, FAILED),
            format!(
                "{FAILED}config reload not supported for MaxPending: old=67108864, new=5242880"
            ),
            "{name}"
        );
    }
}

#[test]
fn reload_bad_file_keeps_old_config_like_go() {
    let mut texts = Vec::new();
    for (name, conf, server) in both("listen: 127.0.0.1:-1\nauthorization { token: one }\n") {
        let addr = server.addr();
        let mut old = connect(&addr, ",\"auth_token\":\"one\"");
        conf.write("listen: 127.0.0.1:-1\nauthorization { token: two\n");
        sighup(&server, 1);
        let parse = last_line_from(&server, FAILED);
        conf.write("listen: 127.0.0.1:-1\nauthorization { token: two }\nbogus_option: 1\n");
        sighup(&server, 2);
        let unknown = last_line_from(&server, FAILED);
        assert_eq!(count(&server, RELOADED), 0, "{name}");
        assert_eq!(old.exchange(b""), "", "{name}");
        drop(connect(&addr, ",\"auth_token\":\"one\""));
        // Go names the file by the path it was given.
        let unknown = unknown.replace(conf.arg(), "<conf>");
        texts.push((name, parse, unknown));
    }
    let (_, parse, unknown) = &texts[0];
    assert_eq!(
        parse,
        &format!("{FAILED}Parse error on line 3: 'Unexpected EOF processing map.'")
    );
    assert_eq!(
        unknown,
        &format!("{FAILED}<conf>:3:1: unknown field \"bogus_option\"")
    );
    if let Some((_, go_parse, go_unknown)) = texts.get(1) {
        assert_eq!((parse, unknown), (go_parse, go_unknown));
    }
}

#[test]
fn reload_limits_apply_to_new_and_existing_clients_like_go() {
    for (name, conf, server) in both("listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\n") {
        let addr = server.addr();
        let port = server.monitor_port.expect("monitor port");
        let before = http_get_json(port, "/varz");
        let mut old = connect(&addr, "");
        conf.write("listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\nmax_payload: 100\nping_max: 4\n");
        sighup(&server, 1);
        for line in ["Reloaded: ping_max = 4", "Reloaded: max_payload = 100"] {
            assert_eq!(count(&server, line), 1, "{name}: {}", server.log_text());
        }
        let fresh = RawClient::connect(&addr);
        assert!(fresh.info.contains("\"max_payload\":100"), "{name}");
        // The existing client is held to the new limit too (Go updates every client).
        let big = format!("PUB foo 101\r\n{}\r\n", "x".repeat(101));
        assert_eq!(
            old.until_closed(big.as_bytes()),
            "-ERR 'Maximum Payload Violation'\r\n",
            "{name}"
        );
        let after = http_get_json(port, "/varz");
        assert_eq!(after["max_payload"], 100, "{name}");
        assert_ne!(
            after["config_load_time"], before["config_load_time"],
            "{name}"
        );
        assert_eq!(after["start"], before["start"], "{name}");
        let digest = after["config_digest"].as_str().unwrap_or_default();
        assert!(digest.starts_with("sha256:"), "{name}: {digest}");
        assert_ne!(after["config_digest"], before["config_digest"], "{name}");
    }
}

#[test]
fn reload_max_connections_closes_extra_clients_like_go() {
    for (name, conf, server) in both("listen: 127.0.0.1:-1\n") {
        let addr = server.addr();
        let mut clients: Vec<RawClient> = (0..3).map(|_| connect(&addr, "")).collect();
        conf.write("listen: 127.0.0.1:-1\nmax_connections: 1\n");
        sighup(&server, 1);
        assert_eq!(
            count(
                &server,
                "Closed 2 connections to fall within max_connections"
            ),
            1,
            "{name}: {}",
            server.log_text()
        );
        let mut told = 0;
        for c in &mut clients {
            let (text, closed) = c.wait_closed(Duration::from_millis(300));
            if closed {
                assert_eq!(text, "-ERR 'maximum connections exceeded'\r\n", "{name}");
                told += 1;
            }
        }
        assert_eq!(told, 2, "{name}");
    }
}

#[test]
fn reload_logging_debug_and_logtime_like_go() {
    for (name, conf, server) in both("listen: 127.0.0.1:-1\n") {
        conf.write("listen: 127.0.0.1:-1\ndebug: true\nlogtime: false\n");
        sighup(&server, 1);
        for line in ["Reloaded: debug = true", "Reloaded: logtime = false"] {
            assert_eq!(count(&server, line), 1, "{name}: {}", server.log_text());
        }
        // The final line already goes through the new logger: no time stamp.
        let last = server
            .log_lines()
            .into_iter()
            .find(|l| l.contains(RELOADED))
            .unwrap_or_default();
        assert!(last.starts_with('['), "{name}: {last}");
        assert!(last.split(' ').nth(1) == Some("[INF]"), "{name}: {last}");
        drop(connect(&server.addr(), ""));
        assert!(
            server.wait_for_log("[DBG]", WAIT),
            "{name}: debug not on: {}",
            server.log_text()
        );
    }
}

#[tokio::test]
async fn reload_tls_settings_apply_to_new_handshakes_like_go() {
    let certs = natrium_tests::TestCerts::generate();
    let plain_tls = certs.config("reload.conf", &certs.tls_block(""));
    let mut servers = vec![(
        "ours",
        ServerProcess::start_binary(natrium_path(), &["-c", &plain_tls]),
    )];
    if let Some(go) = ServerProcess::start_go(&["-c", &plain_tls]) {
        servers.push(("go", go));
    }
    let options = |client: Option<&str>| {
        let mut opts = async_nats::ConnectOptions::new()
            .add_root_certificates(certs.path("ca.pem"))
            .require_tls(true)
            .connection_timeout(Duration::from_secs(3));
        if let Some(name) = client {
            opts = opts.add_client_certificate(
                certs.path(&format!("{name}.pem")),
                certs.path(&format!("{name}-key.pem")),
            );
        }
        opts
    };
    let mut olds = Vec::new();
    for (_, server) in &servers {
        olds.push(
            options(None)
                .connect(server.url())
                .await
                .expect("TLS client"),
        );
    }
    let verify = format!("verify: true\nca_file: \"{}\"", certs.file("ca.pem"));
    certs.config("reload.conf", &certs.tls_block(&verify));
    for ((name, server), old) in servers.iter().zip(&olds) {
        sighup(server, 1);
        assert_eq!(count(server, "Reloaded: tls = enabled"), 1, "{name}");
        // New handshakes need a client certificate now; the client connected before stays.
        assert!(options(None).connect(server.url()).await.is_err(), "{name}");
        let with_cert = options(Some("client")).connect(server.url()).await;
        assert!(with_cert.is_ok(), "{name}: {with_cert:?}");
        old.flush().await.expect("old TLS client still served");
    }
}

#[test]
fn reload_reopen_rotates_log_file() {
    let conf = Conf::new("");
    let log = conf.dir().join("server.log");
    conf.write(&format!(
        "listen: 127.0.0.1:-1\nlogfile: \"{}\"\n",
        log.display()
    ));
    let args = vec!["-c".to_owned(), conf.arg().to_owned()];
    let mut server = ServerProcess::spawn(&natrium_path(), &args, None).expect("spawn");
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    assert!(wait_until(WAIT, || read(&log).contains("Server is ready")));
    let rotated = conf.dir().join("server.log.1");
    std::fs::rename(&log, &rotated).expect("rename log");
    let target = format!("reopen={}", server.pid());
    let out = run_to_exit(&natrium_path(), &["--signal", &target], None, &[], WAIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        wait_until(WAIT, || read(&log).contains("File log re-opened")),
        "new file: {:?}",
        read(&log)
    );
    // The signal was trapped while the old file was still open: that line went there.
    let old = read(&rotated);
    assert!(old.contains("Server is ready"), "{old}");
    assert!(
        old.contains("Trapped \"user defined signal 1\" signal"),
        "{old}"
    );
    assert!(!read(&log).contains("Server is ready"));
    // A reload to a new log file moves the logger there.
    let moved = conf.dir().join("moved.log");
    conf.write(&format!(
        "listen: 127.0.0.1:-1\nlogfile: \"{}\"\n",
        moved.display()
    ));
    server.signal("HUP");
    assert!(wait_until(WAIT, || read(&moved).contains(RELOADED)));
    assert!(read(&log).contains(&format!("Reloaded: log_file = {}", moved.display())));
    server.kill();
}

#[test]
fn reload_without_config_file_like_go() {
    let server = ServerProcess::start(&[]);
    server.signal("HUP");
    assert!(server.wait_for_log(FAILED, WAIT));
    assert_eq!(
        last_line_from(&server, FAILED),
        format!("{FAILED}can only reload config when a file is provided using -c or --config")
    );
}

/// A wildcard subscription kept across a reload is filtered by the new deny list: messages on
/// newly denied subjects stop reaching it, and a lifted deny lets them through again.
#[test]
fn reload_deny_filter_follows_permissions_like_go() {
    let text = |deny: &str| {
        format!(
            "listen: 127.0.0.1:-1\nauthorization {{ users = [ \
             {{user: alice, password: a, permissions: {{subscribe: {{deny: [{deny}]}}}}}}, \
             {{user: bob, password: b}} ] }}\n"
        )
    };
    for (name, conf, server) in both(&text("\"other\"")) {
        let addr = server.addr();
        let mut alice = connect(&addr, &user("alice", "a"));
        let mut bob = connect(&addr, &user("bob", "b"));
        assert_eq!(alice.exchange(b"SUB > 1\r\nUNSUB 1 100\r\n"), "", "{name}");
        let publish = b"PUB secret.x 1\r\n1\r\nPUB open.x 1\r\n2\r\n";
        assert_eq!(bob.exchange(publish), "", "{name}");
        assert_eq!(
            alice.exchange(b""),
            "MSG secret.x 1 1\r\n1\r\nMSG open.x 1 1\r\n2\r\n",
            "{name}"
        );
        conf.write(&text("\"secret.>\""));
        sighup(&server, 1);
        assert_eq!(bob.exchange(publish), "", "{name}");
        assert_eq!(alice.exchange(b""), "MSG open.x 1 1\r\n2\r\n", "{name}");
        conf.write(&text("\"other\""));
        sighup(&server, 2);
        assert_eq!(bob.exchange(publish), "", "{name}");
        assert_eq!(
            alice.exchange(b""),
            "MSG secret.x 1 1\r\n1\r\nMSG open.x 1 1\r\n2\r\n",
            "{name}"
        );
        assert_eq!(count(&server, FAILED), 0, "{name}");
    }
}

/// `allow_responses` granted, taken away and granted again by reloads applies to a connected
/// responder at once.
#[test]
fn reload_allow_responses_follows_permissions_like_go() {
    let text = |responses: &str| {
        format!(
            "listen: 127.0.0.1:-1\nauthorization {{ users = [ \
             {{user: svc, password: s, permissions: {{publish: {{allow: [\"svc.out\"]}}{responses}}}}}, \
             {{user: req, password: r}} ] }}\n"
        )
    };
    let granted = text(", allow_responses: true");
    for (name, conf, server) in both(&granted) {
        let addr = server.addr();
        let mut svc = connect(&addr, &user("svc", "s"));
        let mut req = connect(&addr, &user("req", "r"));
        assert_eq!(svc.exchange(b"SUB q 1\r\n"), "", "{name}");
        assert_eq!(req.exchange(b"SUB _INBOX.r 1\r\n"), "", "{name}");
        let round = |svc: &mut RawClient, req: &mut RawClient| {
            assert_eq!(req.exchange(b"PUB q _INBOX.r 2\r\nhi\r\n"), "", "{name}");
            assert_eq!(svc.exchange(b""), "MSG q 1 _INBOX.r 2\r\nhi\r\n", "{name}");
            let answer = svc.exchange(b"PUB _INBOX.r 2\r\nok\r\n");
            (answer, req.exchange(b""))
        };
        let delivered = (String::new(), "MSG _INBOX.r 1 2\r\nok\r\n".to_owned());
        assert_eq!(round(&mut svc, &mut req), delivered, "{name}");

        conf.write(&text(""));
        sighup(&server, 1);
        let refused = (
            "-ERR 'Permissions Violation for Publish to \"_INBOX.r\"'\r\n".to_owned(),
            String::new(),
        );
        assert_eq!(round(&mut svc, &mut req), refused, "{name}");

        conf.write(&granted);
        sighup(&server, 2);
        assert_eq!(round(&mut svc, &mut req), delivered, "{name}");
        assert_eq!(count(&server, FAILED), 0, "{name}");
    }
}
