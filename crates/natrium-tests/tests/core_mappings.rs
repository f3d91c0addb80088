//! Core subject mappings (`mappings { src: dest }` at the top level and in accounts): a
//! publish is delivered on the mapped subject, with wildcard tokens, partitions and weighted
//! destinations; accounts map independently; a reload changes them; `/accountz` shows them.
//! Where the Go server is installed, raw exchanges and `/accountz` are compared with it.

use std::fmt::Write as _;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::raw::http_get_json;
use natrium_tests::reload::{both, connect, count, sighup, user, FAILED};
use natrium_tests::{RawClient, ServerProcess};

const WAIT: Duration = Duration::from_secs(10);

/// Messages of the weighted split test: each side gets none with probability 2^-2000.
const N: usize = 2_000;

const GLOBAL: &str = r#"listen: 127.0.0.1:-1
http: 127.0.0.1:-1
mappings {
  foo: bar
  "a.*.*": "b.$2.$1"
  "w.*": "x.{{wildcard(1)}}"
  "p.*": "part.{{partition(3,1)}}.{{wildcard(1)}}"
  "r.>": "s.>"
  all: [{destination: all.to, weight: 100%}]
  none: [{destination: never, weight: 0}]
  split: [{destination: split.zero, weight: 0%}, {destination: split.all, weight: 100%}]
  gone: [{destination: gone, weight: "0%"}]
  "c.*": [{destination: "c1.$1", weight: 100, cluster: elsewhere}]
}
"#;

/// Publishes each subject on `c` (subscribed to `>` as sid 1) and returns the `MSG` lines.
fn delivered(c: &mut RawClient, subjects: &[&str]) -> String {
    let mut pubs = String::new();
    for s in subjects {
        let _ = write!(pubs, "PUB {s} 2\r\nhi\r\n");
    }
    c.exchange(pubs.as_bytes())
}

#[test]
fn core_mappings_delivered_subjects_like_go() {
    let mut seen = Vec::new();
    for (name, _conf, server) in both(GLOBAL) {
        let mut c = connect(&server.addr(), "");
        assert_eq!(c.exchange(b"SUB > 1\r\n"), "", "{name}");
        let out = delivered(
            &mut c,
            &[
                "foo", "foo.x", "a.1.2", "w.k", "p.k1", "p.k2", "p.k3", "r.t.u", "all", "none",
                "gone", "c.z", "split", "split", "split", "other",
            ],
        );
        let expected_start = "MSG bar 1 2\r\nhi\r\nMSG foo.x 1 2\r\nhi\r\nMSG b.2.1 1 2\r\nhi\r\n\
                              MSG x.k 1 2\r\nhi\r\n";
        assert!(out.starts_with(expected_start), "{name}: {out}");
        // `gone` lists itself with weight 0: no destination takes the message.
        assert!(!out.contains("MSG gone "), "{name}: {out}");
        assert!(out.contains("MSG none 1 2"), "{name}: {out}");
        assert!(out.contains("MSG c.z 1 2"), "{name}: {out}");
        assert_eq!(out.matches("MSG split.all 1 2").count(), 3, "{name}: {out}");
        assert!(out.ends_with("MSG other 1 2\r\nhi\r\n"), "{name}: {out}");
        seen.push((name, out));
    }
    if let [(_, ours), (_, go)] = seen.as_slice() {
        assert_eq!(ours, go, "delivered subjects differ from Go's");
    }
}

#[test]
fn core_mappings_accountz_like_go() {
    let mut docs = Vec::new();
    for (name, _conf, server) in both(GLOBAL) {
        let port = server.monitor_port.expect("monitoring port");
        let doc = http_get_json(port, "/accountz?acc=%24G");
        let mappings = doc["account_detail"]["mappings"].clone();
        assert_eq!(
            mappings["gone"],
            serde_json::json!([{"subject": "gone", "weight": 0}]),
            "{name}"
        );
        assert_eq!(
            mappings["none"],
            serde_json::json!([{"subject": "never", "weight": 0}, {"subject": "none", "weight": 100}]),
            "{name}"
        );
        docs.push(mappings);
    }
    if let [ours, go] = docs.as_slice() {
        assert_eq!(ours, go, "/accountz mappings differ from Go's");
    }
}

const ACCOUNTS: &str = r#"listen: 127.0.0.1:-1
accounts {
  A { users [{user: a, password: a}], mappings { foo: bar, "q.*": "{{wildcard(1)}}.q" } }
  B { users [{user: b, password: b}], maps { foo: baz } }
  C { users [{user: c, password: c}] }
}
"#;

#[test]
fn core_mappings_per_account_isolation_like_go() {
    let mut seen = Vec::new();
    for (name, _conf, server) in both(ACCOUNTS) {
        let mut out = Vec::new();
        for who in ["a", "b", "c"] {
            let mut client = connect(&server.addr(), &user(who, who));
            assert_eq!(client.exchange(b"SUB > 1\r\n"), "", "{name}");
            out.push(delivered(&mut client, &["foo", "q.z"]));
        }
        assert_eq!(
            out,
            [
                "MSG bar 1 2\r\nhi\r\nMSG z.q 1 2\r\nhi\r\n",
                "MSG baz 1 2\r\nhi\r\nMSG q.z 1 2\r\nhi\r\n",
                "MSG foo 1 2\r\nhi\r\nMSG q.z 1 2\r\nhi\r\n",
            ],
            "{name}"
        );
        seen.push(out);
    }
    if let [ours, go] = seen.as_slice() {
        assert_eq!(ours, go);
    }
}

#[test]
fn core_mappings_reload_changes_them_like_go() {
    let before = "listen: 127.0.0.1:-1\nmappings { foo: bar }\n";
    let after = "listen: 127.0.0.1:-1\nmappings { foo: baz, new: \"new.to\" }\n";
    for (name, conf, server) in both(before) {
        let mut c = connect(&server.addr(), "");
        assert_eq!(c.exchange(b"SUB > 1\r\n"), "", "{name}");
        assert_eq!(
            delivered(&mut c, &["foo", "new"]),
            "MSG bar 1 2\r\nhi\r\nMSG new 1 2\r\nhi\r\n",
            "{name}"
        );
        conf.write(after);
        sighup(&server, 1);
        assert_eq!(count(&server, FAILED), 0, "{name}: {}", server.log_text());
        // The connection that published before sees the new mappings at once.
        assert_eq!(
            delivered(&mut c, &["foo", "new"]),
            "MSG baz 1 2\r\nhi\r\nMSG new.to 1 2\r\nhi\r\n",
            "{name}"
        );
        // Go updates the global account only from a file that has `mappings`: removing the
        // block leaves them in force.
        conf.write("listen: 127.0.0.1:-1\n");
        sighup(&server, 2);
        assert_eq!(
            delivered(&mut c, &["foo"]),
            "MSG baz 1 2\r\nhi\r\n",
            "{name}"
        );
        conf.write("listen: 127.0.0.1:-1\nmappings {}\n");
        sighup(&server, 3);
        assert_eq!(
            delivered(&mut c, &["foo"]),
            "MSG foo 1 2\r\nhi\r\n",
            "{name}"
        );
    }
}

#[test]
fn core_mappings_service_import_mapped_in_the_exporter_like_go() {
    let conf = r#"listen: 127.0.0.1:-1
accounts {
  A { users [{user: a, password: a}], exports [{service: "svc.>"}], mappings { "svc.in": "svc.out" } }
  B { users [{user: b, password: b}], imports [{service: {account: A, subject: "svc.>"}}] }
}
"#;
    for (name, _conf, server) in both(conf) {
        let mut a = connect(&server.addr(), &user("a", "a"));
        assert_eq!(a.exchange(b"SUB svc.> 1\r\n"), "", "{name}");
        let mut b = connect(&server.addr(), &user("b", "b"));
        assert_eq!(b.exchange(b"PUB svc.in 2\r\nhi\r\n"), "", "{name}");
        let got = a.exchange(b"");
        assert!(got.starts_with("MSG svc.out 1 "), "{name}: {got}");
    }
}

#[test]
fn core_mappings_publish_permission_checks_the_mapped_subject_like_go() {
    let conf = r#"listen: 127.0.0.1:-1
authorization { users [
  {user: p, password: p, permissions: {publish: "foo"}}
  {user: s, password: s}
] }
mappings { foo: bar, other: foo }
"#;
    let mut seen = Vec::new();
    for (name, _conf, server) in both(conf) {
        let mut s = connect(&server.addr(), &user("s", "s"));
        assert_eq!(s.exchange(b"SUB > 1\r\n"), "", "{name}");
        let mut p = connect(&server.addr(), &user("p", "p"));
        let refused = p.exchange(b"PUB foo 2\r\nhi\r\nPUB other 2\r\nhi\r\n");
        let got = s.exchange(b"");
        seen.push((refused.clone(), got.clone()));
        assert_eq!(
            refused, "-ERR 'Permissions Violation for Publish to \"bar\"'\r\n",
            "{name}"
        );
        assert_eq!(got, "MSG foo 1 2\r\nhi\r\n", "{name}");
    }
    if let [ours, go] = seen.as_slice() {
        assert_eq!(ours, go);
    }
}

fn ours(text: &str) -> (natrium_tests::reload::Conf, ServerProcess) {
    let conf = natrium_tests::reload::Conf::new(text);
    let server = ServerProcess::start(&["-c", conf.arg()]);
    (conf, server)
}

async fn next(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("message in time")
        .expect("subscription open")
}

#[tokio::test]
async fn core_mappings_through_the_client() {
    let (_conf, server) = ours(GLOBAL);
    let client = async_nats::connect(server.url()).await.expect("connect");
    let mut sub = client.subscribe(">").await.expect("subscribe");
    client.flush().await.expect("flush");
    for (from, to) in [("foo", "bar"), ("w.tok", "x.tok"), ("a.1.2", "b.2.1")] {
        client.publish(from, "x".into()).await.expect("publish");
        assert_eq!(next(&mut sub).await.subject.as_str(), to, "{from}");
    }
    // A request on a mapped subject reaches the responder on the destination.
    let mut responder = client.subscribe("bar").await.expect("subscribe");
    client.flush().await.expect("flush");
    let c2 = client.clone();
    let answer = tokio::spawn(async move {
        let req = next(&mut responder).await;
        c2.publish(req.reply.expect("reply"), "pong".into())
            .await
            .expect("reply");
    });
    let reply = tokio::time::timeout(WAIT, client.request("foo", "ping".into()))
        .await
        .expect("in time")
        .expect("answered");
    assert_eq!(&reply.payload[..], b"pong");
    answer.await.expect("responder");
}

#[tokio::test]
async fn core_mappings_weighted_split_reaches_both_sides() {
    let conf = "listen: 127.0.0.1:-1\nmappings { \"split.*\": [\
                {destination: \"left.$1\", weight: 50%}, {destination: \"right.$1\", weight: 50%}] }\n";
    let (_conf, server) = ours(conf);
    let client = async_nats::connect(server.url()).await.expect("connect");
    let mut sub = client.subscribe(">").await.expect("subscribe");
    client.flush().await.expect("flush");
    for _ in 0..N {
        client
            .publish("split.k", "x".into())
            .await
            .expect("publish");
    }
    client.flush().await.expect("flush");
    let (mut left, mut right) = (0, 0);
    for _ in 0..N {
        match next(&mut sub).await.subject.as_str() {
            "left.k" => left += 1,
            "right.k" => right += 1,
            other => panic!("unexpected {other}"),
        }
    }
    assert!(left > 0 && right > 0, "left {left}, right {right}");
    assert_eq!(left + right, N);
}

/// The trace event a message on a mapped subject produces: arrival on the published subject,
/// then the mapping, then the delivery on the new one (timestamps and ids left out).
#[test]
fn core_mappings_message_trace_records_the_mapping_like_go() {
    let conf = "listen: 127.0.0.1:-1\nmappings { foo: bar }\n";
    let mut seen = Vec::new();
    for (name, _conf, server) in both(conf) {
        let mut tracer = connect(&server.addr(), "");
        assert_eq!(tracer.exchange(b"SUB tr 1\r\n"), "", "{name}");
        let mut s = connect(&server.addr(), "");
        assert_eq!(s.exchange(b"SUB bar 1\r\n"), "", "{name}");
        let mut p = connect(&server.addr(), ",\"headers\":true");
        let block = "NATS/1.0\r\nNats-Trace-Dest: tr\r\n\r\n";
        let op = format!(
            "HPUB foo {} {}\r\n{block}hi\r\n",
            block.len(),
            block.len() + 2
        );
        assert_eq!(p.exchange(op.as_bytes()), "", "{name}");
        let event: serde_json::Value = loop {
            let line = tracer.read_line().expect("line");
            if line.starts_with("MSG ") {
                let body = tracer.read_line().expect("payload");
                break serde_json::from_str(&body).expect("trace event JSON");
            }
        };
        let steps: Vec<String> = event["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| {
                let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                format!(
                    "{} {}{}{}",
                    field("type"),
                    field("subj"),
                    field("to"),
                    field("sub")
                )
            })
            .collect();
        assert_eq!(steps, ["in foo", "sm bar", "eg bar"], "{name}: {event}");
        seen.push(steps);
    }
    if let [ours, go] = seen.as_slice() {
        assert_eq!(ours, go);
    }
}

/// An account JWT's `mappings` claim (operator mode): a weight left out counts as 100.
#[tokio::test]
async fn core_mappings_from_an_account_jwt_like_go() {
    use natrium_tests::jwt::{self, Scenario};
    let mut s = Scenario::new();
    s.b_jwt = jwt::account(
        &s.b.public_key(),
        &s.operator,
        "B",
        serde_json::json!({
            "mappings": {
                "foo": [{"subject": "bar"}],
                "w.*": [{"subject": "x.{{wildcard(1)}}", "weight": 100}],
            },
        }),
    );
    let conf = format!("listen: 127.0.0.1:-1\n{}", s.config());
    for (name, _conf, server) in both(&conf) {
        let b = async_nats::ConnectOptions::with_credentials(&s.creds_b())
            .expect("creds")
            .connect(server.url())
            .await
            .expect("connect");
        let mut sub = b.subscribe(">").await.expect("subscribe");
        b.flush().await.expect("flush");
        for (from, to) in [("foo", "bar"), ("w.k", "x.k"), ("other", "other")] {
            b.publish(from, "x".into()).await.expect("publish");
            assert_eq!(next(&mut sub).await.subject.as_str(), to, "{name}: {from}");
        }
    }
}

/// A JWT mapping Go cannot build is logged and left out; the account's others still apply.
#[tokio::test]
async fn core_mappings_bad_jwt_mapping_logged_like_go() {
    use natrium_tests::jwt::{self, Scenario};
    let mut s = Scenario::new();
    s.b_jwt = jwt::account(
        &s.b.public_key(),
        &s.operator,
        "B",
        serde_json::json!({
            "mappings": {"foo": [{"subject": "bar.$1"}], "good": [{"subject": "fine"}]},
        }),
    );
    let conf = format!("listen: 127.0.0.1:-1\n{}", s.config());
    let line = format!(
        "Error adding subject mapping \"foo\" for account [{}/B]: invalid mapping destination: \
         wildcard index out of range in $1",
        s.b.public_key()
    );
    for (name, _conf, server) in both(&conf) {
        let b = async_nats::ConnectOptions::with_credentials(&s.creds_b())
            .expect("creds")
            .connect(server.url())
            .await
            .expect("connect");
        let mut sub = b.subscribe(">").await.expect("subscribe");
        b.flush().await.expect("flush");
        for (from, to) in [("foo", "foo"), ("good", "fine")] {
            b.publish(from, "x".into()).await.expect("publish");
            assert_eq!(next(&mut sub).await.subject.as_str(), to, "{name}: {from}");
        }
        assert!(count(&server, &line) >= 1, "{name}: {}", server.log_text());
    }
}

/// The share no destination takes goes on with an empty subject, as in Go: a publish allow
/// list refuses it, otherwise it is acknowledged and reaches nobody; the pedantic check saw
/// the subject as published.
#[test]
fn core_mappings_dropped_share_like_go() {
    let conf = r#"listen: 127.0.0.1:-1
authorization { users [
  {user: p, password: p, permissions: {publish: "gone"}}
  {user: s, password: s}
] }
mappings { gone: [{destination: gone, weight: 0}], "w.*": "w.$1.x" }
"#;
    let mut seen = Vec::new();
    for (name, _conf, server) in both(conf) {
        let mut p = connect(&server.addr(), &user("p", "p"));
        let mut s = RawClient::connect(&server.addr());
        let connect =
            "CONNECT {\"verbose\":true,\"pedantic\":true,\"user\":\"s\",\"pass\":\"s\"}\r\n";
        assert_eq!(s.exchange(connect.as_bytes()), "+OK\r\n", "{name}");
        assert_eq!(s.exchange(b"SUB > 1\r\n"), "+OK\r\n", "{name}");
        let refused = p.exchange(b"PUB gone 2\r\nhi\r\n");
        assert_eq!(
            refused, "-ERR 'Permissions Violation for Publish to \"\"'\r\n",
            "{name}"
        );
        let own = s.exchange(b"PUB gone 2\r\nhi\r\nPUB w.* 2\r\nhi\r\n");
        assert_eq!(
            own, "+OK\r\n-ERR 'Invalid Publish Subject'\r\n+OK\r\nMSG w.*.x 1 2\r\nhi\r\n",
            "{name}"
        );
        seen.push((refused, own));
    }
    if let [ours, go] = seen.as_slice() {
        assert_eq!(ours, go);
    }
}
