//! Authorization over real sockets, each scenario run against our server and, where
//! installed, Go's, with the same bytes expected from both: `allow_responses` (default, with
//! `max` and `expires`, next to a deny list), queue-group permission entries, wildcard
//! subscriptions over denied subjects (delivery filtering), Go's quoting of odd subjects in
//! violations, `/connz?auth=1` and its `user` filter, and the bound on a responder's table of
//! reply permissions.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::raw::{http_get_json, vm_rss_kib};
use natrium_tests::{RawClient, ServerProcess};

fn config(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perms.conf");
    std::fs::write(&path, text).expect("write config");
    (dir, path)
}

/// Starts ours and, if installed, Go with the config file (and `extra` flags).
fn both_with(
    text: &str,
    extra: &[&str],
) -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let (dir, path) = config(text);
    let p = path.to_str().expect("utf-8 path");
    let mut args = vec!["-c", p, "-a", "127.0.0.1", "-p", "-1"];
    args.extend_from_slice(extra);
    let mut servers = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        servers.push(("go", go));
    }
    (dir, servers)
}

/// A raw client logged in as `user` (password the same).
fn login(addr: &str, user: &str) -> RawClient {
    let mut c = RawClient::connect(addr);
    let out = c.exchange(
        format!("CONNECT {{\"verbose\":false,\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\n")
            .as_bytes(),
    );
    assert_eq!(out, "", "login {user}");
    c
}

/// What the server sent before the PONG, without its own PINGs (which depend on timing).
fn exchange(c: &mut RawClient, bytes: &[u8]) -> String {
    c.exchange(bytes).replace("PING\r\n", "")
}

fn pub_violation(subject: &str) -> String {
    format!("-ERR 'Permissions Violation for Publish to \"{subject}\"'\r\n")
}

const RESPONDERS: &str = "authorization { users = [\n  \
    {user: r, password: r, permissions: { allow_responses: true, subscribe: \">\" }}\n  \
    {user: r2, password: r2, permissions: { allow_responses: { max: 2, expires: \"500ms\" }, \
     subscribe: \">\" }}\n  \
    {user: r3, password: r3, permissions: { allow_responses: true, publish: { deny: x }, \
     subscribe: \">\" }}\n  \
    {user: q, password: q}\n]}\n";

#[test]
fn permissions_allow_responses_like_go() {
    let (_dir, servers) = both_with(RESPONDERS, &[]);
    for (name, s) in &servers {
        let a = s.addr();
        let mut r = login(&a, "r");
        let mut q = login(&a, "q");
        assert_eq!(exchange(&mut r, b"SUB svc 1\r\n"), "", "{name}");
        assert_eq!(
            exchange(&mut q, b"SUB _INBOX.a 1\r\nSUB _INBOX.b 2\r\n"),
            ""
        );
        // Only responses: anything else is refused.
        assert_eq!(
            exchange(&mut r, b"PUB other 1\r\nx\r\n"),
            pub_violation("other"),
            "{name}"
        );
        assert_eq!(exchange(&mut q, b"PUB svc _INBOX.a 1\r\nx\r\n"), "");
        assert_eq!(
            exchange(&mut r, b""),
            "MSG svc 1 _INBOX.a 1\r\nx\r\n",
            "{name}"
        );
        // One response by default, then the permission is spent.
        assert_eq!(exchange(&mut r, b"PUB _INBOX.a 2\r\nok\r\n"), "", "{name}");
        assert_eq!(
            exchange(&mut q, b""),
            "MSG _INBOX.a 1 2\r\nok\r\n",
            "{name}"
        );
        assert_eq!(
            exchange(&mut r, b"PUB _INBOX.a 2\r\nok\r\n"),
            pub_violation("_INBOX.a"),
            "{name}"
        );
        // A reply subject of a request delivered to someone else gives nothing.
        assert_eq!(exchange(&mut q, b"PUB nobody _INBOX.b 1\r\nx\r\n"), "");
        assert_eq!(
            exchange(&mut r, b"PUB _INBOX.b 2\r\nok\r\n"),
            pub_violation("_INBOX.b"),
            "{name}"
        );

        // max: 2 within 500ms.
        let mut r2 = login(&a, "r2");
        assert_eq!(exchange(&mut r2, b"SUB svc2 1\r\n"), "");
        assert_eq!(exchange(&mut q, b"PUB svc2 _INBOX.a 1\r\nx\r\n"), "");
        assert_eq!(exchange(&mut r2, b""), "MSG svc2 1 _INBOX.a 1\r\nx\r\n");
        assert_eq!(
            exchange(
                &mut r2,
                b"PUB _INBOX.a 1\r\n1\r\nPUB _INBOX.a 1\r\n2\r\nPUB _INBOX.a 1\r\n3\r\n"
            ),
            pub_violation("_INBOX.a"),
            "{name}"
        );
        assert_eq!(
            exchange(&mut q, b"PUB svc2 _INBOX.b 1\r\nx\r\n"),
            "MSG _INBOX.a 1 1\r\n1\r\nMSG _INBOX.a 1 1\r\n2\r\n",
            "{name}"
        );
        assert_eq!(exchange(&mut r2, b""), "MSG svc2 1 _INBOX.b 1\r\nx\r\n");
        // The behaviour under test is the passing of time itself.
        std::thread::sleep(Duration::from_millis(700));
        assert_eq!(
            exchange(&mut r2, b"PUB _INBOX.b 2\r\nok\r\n"),
            pub_violation("_INBOX.b"),
            "{name}: expired"
        );

        // allow_responses next to a deny-only publish block: nothing else may be published.
        let mut r3 = login(&a, "r3");
        assert_eq!(
            exchange(&mut r3, b"PUB anything 1\r\nx\r\nPUB x 1\r\nx\r\n"),
            pub_violation("anything") + &pub_violation("x"),
            "{name}"
        );
    }
}

#[tokio::test]
async fn permissions_allow_responses_with_async_nats() {
    let (_dir, servers) = both_with(RESPONDERS, &[]);
    for (name, s) in &servers {
        let responder = async_nats::ConnectOptions::with_user_and_password("r".into(), "r".into())
            .connect(s.url())
            .await
            .expect("responder");
        let mut requests = responder.subscribe("svc.>").await.expect("sub");
        responder.flush().await.expect("flush");
        let serve = tokio::spawn(async move {
            for _ in 0..3 {
                let Some(msg) = requests.next().await else {
                    return;
                };
                if let Some(reply) = msg.reply {
                    let answer = format!("re:{}", String::from_utf8_lossy(&msg.payload));
                    let _ = responder.publish(reply, answer.into()).await;
                }
            }
            let _ = responder.flush().await;
        });
        let requester = async_nats::ConnectOptions::with_user_and_password("q".into(), "q".into())
            .connect(s.url())
            .await
            .expect("requester");
        for i in 0..3 {
            let reply = tokio::time::timeout(
                Duration::from_secs(5),
                requester.request(format!("svc.{i}"), format!("{i}").into()),
            )
            .await
            .unwrap_or_else(|_| panic!("{name}: request {i} timed out"))
            .unwrap_or_else(|e| panic!("{name}: request {i}: {e}"));
            assert_eq!(&reply.payload[..], format!("re:{i}").as_bytes(), "{name}");
        }
        serve.await.expect("responder task");
    }
}

#[test]
fn permissions_queue_entries_like_go() {
    let (_dir, servers) = both_with(
        "authorization { users = [\n  \
         {user: a, password: a, permissions: { subscribe: { allow: [\"foo q1\", \"bar\", \
         \"bar q2\", \"baz.*\", \"wq v1.*\"] } }}\n  \
         {user: d, password: d, permissions: { subscribe: { deny: [\"foo q1\", \"bar\", \
         \"wq v1.*\", \"den.x\"] } }}\n]}\n",
        &[],
    );
    // (user, SUB arguments, allowed) as observed on Go v2.15.2.
    let cases: &[(&str, &str, bool)] = &[
        ("a", "foo", false),
        ("a", "foo q1", true),
        ("a", "foo q2", false),
        ("a", "bar", true),
        ("a", "bar q2", true),
        ("a", "bar q3", false),
        ("a", "baz.x q", true),
        ("a", "baz.>", true),
        ("a", "wq", false),
        ("a", "wq v1.a", true),
        ("a", "wq v1.*", true),
        ("a", "wq v1.>", false),
        ("a", "wq v2", false),
        ("d", "foo", true),
        ("d", "foo q1", false),
        ("d", "foo q2", true),
        ("d", "bar q", false),
        ("d", "wq v1.a", false),
        ("d", "wq v1", true),
        ("d", "den.x", false),
        ("d", "den.*", true),
        ("d", ">", true),
        ("d", "den.x q", false),
    ];
    for (name, s) in &servers {
        for (i, (user, args, allowed)) in cases.iter().enumerate() {
            let mut c = login(&s.addr(), user);
            let out = exchange(&mut c, format!("SUB {args} {i}\r\n").as_bytes());
            let expected = if *allowed {
                String::new()
            } else {
                let mut parts = args.split(' ');
                let subject = parts.next().unwrap_or_default();
                match parts.next() {
                    Some(q) => format!(
                        "-ERR 'Permissions Violation for Subscription to \"{subject}\" using \
                         queue \"{q}\"'\r\n"
                    ),
                    None => format!(
                        "-ERR 'Permissions Violation for Subscription to \"{subject}\"'\r\n"
                    ),
                }
            };
            assert_eq!(out, expected, "{name}: {user} SUB {args}");
        }
    }
    let (_, ours) = &servers[0];
    assert!(ours.wait_for_log(
        "Subscription Violation - Subject \"foo\", Queue: \"q2\", SID 2",
        Duration::from_secs(5)
    ));
}

/// Go's `%q` in the -ERR text escapes what is not printable: C1 controls and format
/// characters as `\uNNNN`, characters past U+FFFF as `\UNNNNNNNN`, bad UTF-8 byte by byte.
#[test]
fn permissions_violation_quotes_subject_like_go() {
    let (_dir, servers) = both_with(
        "authorization { users = [ {user: a, password: a, permissions: { publish: { deny: \">\" \
         } }} ] }\n",
        &[],
    );
    let mut subject = "a.\u{200b}\u{85}x\u{e0001}.\u{e9}".as_bytes().to_vec();
    subject.push(0xff);
    let mut bytes = b"PUB ".to_vec();
    bytes.extend_from_slice(&subject);
    bytes.extend_from_slice(b" 0\r\n\r\n");
    for (name, s) in &servers {
        let mut c = login(&s.addr(), "a");
        assert_eq!(
            exchange(&mut c, &bytes),
            pub_violation("a.\\u200b\\u0085x\\U000e0001.\u{e9}\\xff"),
            "{name}"
        );
    }
}

#[test]
fn permissions_wildcard_subscription_filters_denied_deliveries_like_go() {
    let (_dir, servers) = both_with(
        "authorization { users = [\n  \
         {user: d, password: d, permissions: { subscribe: { deny: [\"foo q1\", \"bar\", \
         \"den.x\"] } }}\n  {user: p, password: p}\n]}\n",
        &[],
    );
    for (name, s) in &servers {
        let mut d = login(&s.addr(), "d");
        let mut p = login(&s.addr(), "p");
        // Wildcards over denied subjects are allowed to subscribe...
        assert_eq!(
            exchange(&mut d, b"SUB den.* 1\r\nSUB * q1 2\r\nSUB > 3\r\n"),
            ""
        );
        assert_eq!(
            exchange(
                &mut p,
                b"PUB den.x 1\r\nx\r\nPUB den.y 1\r\ny\r\nPUB foo 1\r\nf\r\nPUB bar 1\r\nb\r\n\
                  PUB zz 1\r\nz\r\n"
            ),
            ""
        );
        // ...but get nothing on them: not den.x or bar, and not foo for the q1 member.
        let got = exchange(&mut d, b"");
        let mut lines: Vec<&str> = got.split("\r\n").filter(|l| !l.is_empty()).collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "MSG den.y 1 1",
                "MSG den.y 3 1",
                "MSG foo 3 1",
                "MSG zz 2 1",
                "MSG zz 3 1",
                "f",
                "y",
                "y",
                "z",
                "z"
            ],
            "{name}: {got:?}"
        );
    }
}

#[test]
fn permissions_connz_authorized_user_and_filter_like_go() {
    let (_dir, servers) = both_with(
        "authorization { users = [ {user: alice, password: a}, {user: bob, password: b} ] }\n\
         no_auth_user: bob\n",
        &["-m", "-1"],
    );
    let mut views = Vec::new();
    for (name, s) in &servers {
        let port = s.monitor_port.expect("monitor port");
        let _alice = login_pass(&s.addr(), "alice", "a");
        let mut anon = RawClient::connect(&s.addr());
        assert_eq!(exchange(&mut anon, b"CONNECT {\"verbose\":false}\r\n"), "");
        let mut bad = RawClient::connect(&s.addr());
        let _ =
            bad.until_closed(b"CONNECT {\"verbose\":false,\"user\":\"carol\",\"pass\":\"x\"}\r\n");
        let view = |query: &str| {
            let connz = http_get_json(port, &format!("/connz?{query}"));
            let rows: Vec<_> = connz["connections"]
                .as_array()
                .expect("connections")
                .iter()
                .map(|c| {
                    (
                        c.get("authorized_user").cloned(),
                        c.get("name_tag").cloned(),
                        c.get("reason").cloned(),
                    )
                })
                .collect();
            (connz["total"].clone(), rows)
        };
        // The refused client reaches the closed list asynchronously.
        assert!(natrium_tests::raw::wait_until(
            Duration::from_secs(5),
            || { view("state=closed").1.len() == 1 }
        ));
        let seen = (
            view(""),
            view("auth=1"),
            view("auth=1&state=all"),
            view("auth=1&user=bob"),
            view("user=alice"),
            view("auth=1&state=closed&user=carol"),
            view("auth=1&user=nobody"),
        );
        eprintln!("{name}: {seen:?}");
        views.push(seen);
    }
    let ours = &views[0];
    let s = |v: &str| Some(serde_json::Value::String(v.to_owned()));
    assert_eq!(ours.1 .1[0], (s("alice"), s("$G"), None));
    assert_eq!(ours.1 .1[1], (s("bob"), s("$G"), None));
    assert_eq!(
        ours.2 .1[2],
        (s("carol"), None, s("Authentication Failure"))
    );
    assert_eq!(ours.0 .1[0], (None, None, None));
    if let [ours, go] = views.as_slice() {
        assert_eq!(ours, go);
    }
}

fn login_pass(addr: &str, user: &str, pass: &str) -> RawClient {
    let mut c = RawClient::connect(addr);
    let out = c.exchange(
        format!("CONNECT {{\"verbose\":false,\"user\":\"{user}\",\"pass\":\"{pass}\"}}\r\n")
            .as_bytes(),
    );
    assert_eq!(out, "", "login {user}");
    c
}

/// Natrium bounds a responder's reply permissions (Go does not): past 16Ki outstanding
/// requests the oldest permission is evicted, so answering it is refused while the newest are
/// still allowed, and the server's memory stays flat.
#[test]
fn permissions_reply_table_is_bounded() {
    let (_dir, path) = config(
        "authorization { users = [\n  \
         {user: r, password: r, permissions: { allow_responses: { max: -1, expires: \"-1s\" }, \
         subscribe: \">\" }}\n  {user: q, password: q}\n]}\n",
    );
    let p = path.to_str().expect("utf-8 path");
    let s = ServerProcess::start(&["-c", p, "-a", "127.0.0.1", "-p", "-1"]);
    let mut r = login(&s.addr(), "r");
    let mut q = login(&s.addr(), "q");
    assert_eq!(exchange(&mut r, b"SUB svc 1\r\n"), "");
    let requests = 20_000;
    let mut batch = Vec::new();
    for i in 0..requests {
        batch.extend_from_slice(format!("PUB svc _INBOX.{i} 0\r\n\r\n").as_bytes());
    }
    let rss_before = vm_rss_kib(s.pid());
    assert_eq!(exchange(&mut q, &batch), "");
    // Drain the deliveries (the responder reads them all before answering).
    let last = format!("MSG svc 1 _INBOX.{} 0\r\n\r\n", requests - 1);
    r.read_until(last.as_bytes());
    assert_eq!(
        exchange(&mut r, b"PUB _INBOX.0 0\r\n\r\n"),
        pub_violation("_INBOX.0")
    );
    let newest = format!("PUB _INBOX.{} 0\r\n\r\n", requests - 1);
    assert_eq!(exchange(&mut r, newest.as_bytes()), "");
    assert_eq!(
        exchange(&mut r, newest.as_bytes()),
        "",
        "unlimited responses"
    );
    let first_kept = format!("PUB _INBOX.{} 0\r\n\r\n", requests - 16_384);
    assert_eq!(exchange(&mut r, first_kept.as_bytes()), "");
    let rss_after = vm_rss_kib(s.pid());
    eprintln!("RSS {rss_before} KiB -> {rss_after} KiB for {requests} requests");
    assert!(
        rss_after < rss_before + 32 * 1024,
        "RSS grew from {rss_before} to {rss_after} KiB"
    );
}
