//! Accounts over real sockets: users land in their account, accounts are isolated both ways,
//! stream imports (prefix and `to`), service imports with request/reply across accounts
//! (singleton, streamed, no responders, `Nats-Request-Info`), account limits, the system
//! account, refusals at start, and monitoring. Where the Go server is installed, raw exchanges,
//! start-up refusals and `/accountz` are compared with it.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::process::run_to_exit;
use natrium_tests::raw::{http_get_json, wait_until};
use natrium_tests::{go_server_path, natrium_path, RawClient, ServerProcess};
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(10);

/// Accounts A (exports), B (imports), C (unrelated), and a user in `$G`.
const CONF: &str = r#"
accounts {
  A {
    users = [ {user: a, password: a} ]
    exports = [
      {stream: "s.>"}
      {service: "svc.>"}
      {service: "st.>", response_type: stream}
      {service: "only.b", accounts: [B]}
    ]
  }
  B {
    users = [ {user: b, password: b} ]
    imports = [
      {stream: {account: A, subject: "s.>"}, prefix: "p"}
      {stream: {account: A, subject: "s.x"}, to: "mapped.x"}
      {service: {account: A, subject: "svc.x"}, to: "local.x"}
      {service: {account: A, subject: "st.x"}}
      {service: {account: A, subject: "only.b"}}
    ]
  }
  C {
    users = [ {user: c, password: c} ]
    limits { max_connections: 1 }
  }
}
authorization { users = [ {user: g, password: g} ] }
"#;

fn write_config(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("accounts.conf");
    std::fs::write(&path, text).expect("write config");
    (dir, path)
}

fn args(path: &std::path::Path) -> Vec<String> {
    let p = path.to_str().expect("utf-8 path").to_owned();
    ["-c", &p, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// Our server with `text`, plus Go's when installed.
fn servers(text: &str) -> (tempfile::TempDir, Vec<(&'static str, ServerProcess)>) {
    let (dir, path) = write_config(text);
    let args = args(&path);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut list = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        list.push(("go", go));
    }
    (dir, list)
}

fn ours(text: &str) -> (tempfile::TempDir, ServerProcess) {
    let (dir, path) = write_config(text);
    let args = args(&path);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (dir, ServerProcess::start(&args))
}

async fn user(s: &ServerProcess, name: &str) -> async_nats::Client {
    async_nats::ConnectOptions::with_user_and_password(name.into(), name.into())
        .connect(s.url())
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Receives the next message or fails after [`WAIT`].
async fn next(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("message in time")
        .expect("subscription open")
}

/// A server round trip on `client`'s connection: everything it sent before has been processed
/// once the no-responders answer comes back (`flush` only empties the client's buffer).
async fn round_trip(client: &async_nats::Client) {
    let _ = client.request("_round_trip.nobody", "".into()).await;
}

/// Whether `sub` stays quiet: after a round trip on `client`, anything it published before
/// would already be queued for delivery.
async fn quiet(client: &async_nats::Client, sub: &mut async_nats::Subscriber) -> bool {
    round_trip(client).await;
    tokio::time::timeout(Duration::from_millis(200), sub.next())
        .await
        .is_err()
}

#[tokio::test]
async fn accounts_login_lands_in_the_right_account() {
    let (_dir, server) = ours(CONF);
    let _a = user(&server, "a").await;
    let _b = user(&server, "b").await;
    let _g = user(&server, "g").await;
    let port = server.monitor_port.expect("monitor");
    let connz = http_get_json(port, "/connz?auth=1");
    let mut seen: Vec<(String, String, String)> = connz["connections"]
        .as_array()
        .expect("connections")
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("authorized_user"), s("account"), s("name_tag"))
        })
        .collect();
    seen.sort();
    let want = [("a", "A", "A"), ("b", "B", "B"), ("g", "", "$G")];
    let want: Vec<_> = want
        .iter()
        .map(|(u, a, t)| ((*u).to_owned(), (*a).to_owned(), (*t).to_owned()))
        .collect();
    assert_eq!(seen, want);
    let only_a = http_get_json(port, "/connz?acc=A&auth=1");
    assert_eq!(only_a["total"], 1);
    assert_eq!(only_a["connections"][0]["authorized_user"], "a");
    let unknown = http_get_json(port, "/connz?acc=Z");
    assert_eq!(unknown["connections"], Value::Null);
    assert_eq!(unknown["server_id"], "");
}

#[tokio::test]
async fn accounts_are_isolated_both_ways() {
    let (_dir, server) = ours(CONF);
    let a = user(&server, "a").await;
    let a2 = user(&server, "a").await;
    let c = user(&server, "g").await;
    let mut in_a = a2.subscribe("iso.>").await.expect("sub");
    let mut in_g = c.subscribe("iso.>").await.expect("sub");
    round_trip(&a2).await;
    round_trip(&c).await;
    a.publish("iso.one", "from A".into()).await.expect("pub");
    assert_eq!(next(&mut in_a).await.payload, "from A");
    assert!(quiet(&a, &mut in_g).await, "$G saw A's message");
    c.publish("iso.two", "from G".into()).await.expect("pub");
    assert_eq!(next(&mut in_g).await.payload, "from G");
    assert!(quiet(&c, &mut in_a).await, "A saw $G's message");
}

#[tokio::test]
async fn accounts_stream_import_with_prefix_and_to() {
    let (_dir, server) = ours(CONF);
    let a = user(&server, "a").await;
    let b = user(&server, "b").await;
    let mut prefixed = b.subscribe("p.s.>").await.expect("sub");
    let mut mapped = b.subscribe("mapped.x").await.expect("sub");
    let mut plain = b.subscribe("s.>").await.expect("sub");
    round_trip(&b).await;
    a.publish("s.x", "one".into()).await.expect("pub");
    a.publish("s.y.z", "two".into()).await.expect("pub");
    let m = next(&mut prefixed).await;
    assert_eq!((m.subject.as_str(), &m.payload[..]), ("p.s.x", &b"one"[..]));
    let m = next(&mut prefixed).await;
    assert_eq!(
        (m.subject.as_str(), &m.payload[..]),
        ("p.s.y.z", &b"two"[..])
    );
    let m = next(&mut mapped).await;
    assert_eq!(
        (m.subject.as_str(), &m.payload[..]),
        ("mapped.x", &b"one"[..])
    );
    assert!(quiet(&a, &mut plain).await, "B saw A's subject unmapped");
    assert!(quiet(&a, &mut mapped).await, "s.y.z reached mapped.x");
    // Nothing flows back: B's publishes stay in B.
    let mut back = a.subscribe("p.>").await.expect("sub");
    round_trip(&a).await;
    b.publish("p.s.x", "back".into()).await.expect("pub");
    assert!(quiet(&b, &mut back).await, "A saw B's publish");
}

#[tokio::test]
async fn accounts_service_import_request_reply() {
    let (_dir, server) = ours(CONF);
    let a = user(&server, "a").await;
    let b = user(&server, "b").await;
    let mut service = a.subscribe("svc.>").await.expect("sub");
    round_trip(&a).await;
    let responder = tokio::spawn(async move {
        let req = next(&mut service).await;
        let reply = req.reply.clone().expect("reply subject");
        let info = req
            .headers
            .as_ref()
            .and_then(|h| h.get("Nats-Request-Info"))
            .map(|v| v.as_str().to_owned())
            .unwrap_or_default();
        a.publish(reply.clone(), "pong".into())
            .await
            .expect("respond");
        // A singleton response mapping takes one answer only.
        a.publish(reply.clone(), "late".into())
            .await
            .expect("respond");
        round_trip(&a).await;
        (req.subject.to_string(), reply.to_string(), info)
    });
    let answer = tokio::time::timeout(WAIT, b.request("local.x", "ping".into()))
        .await
        .expect("in time")
        .expect("answer");
    assert_eq!(answer.payload, "pong");
    let (subject, reply, info) = responder.await.expect("responder");
    assert_eq!(subject, "svc.x");
    assert!(reply.starts_with("_R_.") && reply.len() == 17, "{reply}");
    let info: Value = serde_json::from_str(&info).expect("request info JSON");
    assert_eq!(info["acc"], "B");
}

#[tokio::test]
async fn accounts_service_import_streamed_responses_and_no_responders() {
    let (_dir, server) = ours(CONF);
    let a = user(&server, "a").await;
    let b = user(&server, "b").await;
    let mut service = a.subscribe("st.>").await.expect("sub");
    round_trip(&a).await;
    let inbox = b.new_inbox();
    let mut replies = b.subscribe(inbox.clone()).await.expect("sub");
    b.publish_with_reply("st.x", inbox, "go".into())
        .await
        .expect("pub");
    let req = next(&mut service).await;
    let reply = req.reply.expect("reply");
    for part in ["1", "2", "3"] {
        a.publish(reply.clone(), part.to_owned().into())
            .await
            .expect("respond");
    }
    for part in ["1", "2", "3"] {
        assert_eq!(next(&mut replies).await.payload, part);
    }
    // A request through an import with nobody listening in the exporting account.
    no_responders(&b).await;
}

/// A request into A's `svc.>` export with no subscriber in A gets a no-responders answer.
async fn no_responders(b: &async_nats::Client) {
    let err = tokio::time::timeout(WAIT, b.request("local.x", "x".into()))
        .await
        .expect("in time")
        .expect_err("no responders");
    assert_eq!(
        err.kind(),
        async_nats::client::RequestErrorKind::NoResponders
    );
}

#[tokio::test]
async fn accounts_connection_limit() {
    let (_dir, server) = ours(CONF);
    let _c = user(&server, "c").await;
    let mut raw = RawClient::connect(&server.addr());
    let got = raw.until_closed(
        b"CONNECT {\"verbose\":false,\"user\":\"c\",\"pass\":\"c\",\"protocol\":1}\r\nPING\r\n",
    );
    assert_eq!(
        got,
        "-ERR 'maximum account active connections exceeded'\r\n"
    );
}

/// A raw exchange through both kinds of imports, byte for byte against Go with the random
/// parts of the reply subject and the round-trip time masked.
#[test]
fn accounts_raw_imports_match_go() {
    let (_dir, servers) = servers(CONF);
    let mut outputs = Vec::new();
    for (name, s) in &servers {
        let connect = |u: &str| {
            let mut c = RawClient::connect(&s.addr());
            let line = format!(
                "CONNECT {{\"verbose\":false,\"pedantic\":false,\"user\":\"{u}\",\"pass\":\"{u}\",\
                 \"headers\":true,\"no_responders\":true}}\r\n"
            );
            assert_eq!(c.exchange(line.as_bytes()), "", "{name}");
            c
        };
        let mut a = connect("a");
        let mut b = connect("b");
        let mut out = Vec::new();
        b.exchange(b"SUB p.> 1\r\nSUB mapped.> 2\r\nSUB s.> 3\r\nSUB _INBOX.> 4\r\n");
        a.exchange(b"SUB svc.> 10\r\nSUB s.> 12\r\n");
        out.push(a.exchange(b"PUB s.x 2\r\nhi\r\n"));
        out.push(b.exchange(b""));
        b.send(b"PUB local.x _INBOX.r1 3\r\nreq\r\n");
        let request = a.read_until(b"req\r\n");
        let reply = request
            .split_whitespace()
            .nth(3)
            .expect("reply subject")
            .to_owned();
        out.push(mask(&request));
        a.exchange(format!("PUB {reply} 3\r\nrsp\r\nPUB {reply} 4\r\nrsp2\r\n").as_bytes());
        out.push(b.exchange(b""));
        out.push(b.exchange(b"PUB local.y _INBOX.r2 0\r\n\r\nPUB svc.x _INBOX.r3 0\r\n\r\n"));
        outputs.push((name, out));
    }
    let (_, ours) = &outputs[0];
    assert_eq!(ours[0], "MSG s.x 12 2\r\nhi\r\n");
    assert_eq!(ours[1], "MSG p.s.x 1 2\r\nhi\r\nMSG mapped.x 2 2\r\nhi\r\n");
    assert_eq!(ours[3], "MSG _INBOX.r1 4 3\r\nrsp\r\n");
    if let Some((_, go)) = outputs.get(1) {
        assert_eq!(ours, go, "ours vs go");
    }
}

/// A streamed or chunked response ends at an empty message: it is delivered, and a response
/// sent after it is dropped (as Go does: the response mapping is gone).
#[test]
fn accounts_streamed_response_ends_at_empty_message_like_go() {
    let conf = CONF.replace(
        "{service: \"only.b\", accounts: [B]}",
        "{service: \"only.b\", accounts: [B]}\n      {service: \"ch.>\", response_type: chunked}",
    )
    .replace(
        "{service: {account: A, subject: \"only.b\"}}",
        "{service: {account: A, subject: \"only.b\"}}\n      {service: {account: A, subject: \"ch.x\"}}",
    );
    let (_dir, servers) = servers(&conf);
    for (name, s) in &servers {
        let connect = |u: &str| {
            let mut c = RawClient::connect(&s.addr());
            let line = format!(
                "CONNECT {{\"verbose\":false,\"user\":\"{u}\",\"pass\":\"{u}\",\"headers\":true}}\r\n"
            );
            assert_eq!(c.exchange(line.as_bytes()), "", "{name}");
            c
        };
        let mut a = connect("a");
        let mut b = connect("b");
        a.exchange(b"SUB st.> 1\r\nSUB ch.> 2\r\n");
        b.exchange(b"SUB _INBOX.> 9\r\n");
        for subject in ["st.x", "ch.x"] {
            b.send(format!("PUB {subject} _INBOX.r 3\r\nreq\r\n").as_bytes());
            let request = a.read_until(b"req\r\n");
            let reply = request.split_whitespace().nth(3).expect("reply subject");
            a.exchange(
                format!("PUB {reply} 1\r\n1\r\nPUB {reply} 0\r\n\r\nPUB {reply} 1\r\n2\r\n")
                    .as_bytes(),
            );
            assert_eq!(
                b.exchange(b""),
                "MSG _INBOX.r 9 1\r\n1\r\nMSG _INBOX.r 9 0\r\n\r\n",
                "{name}: {subject}"
            );
        }
    }
}

/// Masks what differs by nature: the random parts of `_R_.abcdef.ghijkl`, the round-trip
/// time in `Nats-Request-Info`, and so the sizes on the `HMSG` line.
fn mask(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("_R_.") {
        out.push_str(&rest[..at]);
        out.push_str("_R_.xxxxxx.xxxxxx");
        rest = rest.get(at + 17..).unwrap_or_default();
    }
    out.push_str(rest);
    let out = match (out.find("\"rtt\":"), out.find('}')) {
        (Some(start), Some(end)) if start < end => {
            format!("{}\"rtt\":0{}", &out[..start], &out[end..])
        }
        _ => out,
    };
    let Some((first, rest)) = out.split_once("\r\n") else {
        return out;
    };
    let kept: Vec<&str> = first.split(' ').take(4).collect();
    format!("{} <sizes>\r\n{rest}", kept.join(" "))
}

/// Go's messages for restricted exports, missing accounts and cycles, at start (ours and Go's
/// `-t`, which says the same).
#[test]
fn accounts_refused_at_start_like_go() {
    let cases = [
        (
            "accounts { A { exports = [ {service: \"svc.>\", accounts: [B]} ] }, B {}, \
             C { imports = [ {service: {account: A, subject: \"svc.x\"}} ] } }",
            "Error adding service import \"svc.x\": service import not authorized",
        ),
        (
            "accounts { A { exports = [ {stream: \"s.>\", accounts: [B]} ] }, B {}, \
             C { imports = [ {stream: {account: A, subject: \"s.x\"}} ] } }",
            "Error adding stream import \"s.x\": stream import not authorized",
        ),
        (
            "accounts { A { exports = [ {service: \"x\"} ], \
             imports = [ {service: {account: B, subject: \"x\"}} ] }, \
             B { exports = [ {service: \"x\"} ], \
             imports = [ {service: {account: A, subject: \"x\"}} ] } }",
            "Error adding service import \"x\": import forms a cycle",
        ),
        (
            "accounts { A { exports = [ {service: \"s.*\"} ] }, \
             B { imports = [ {service: {account: A, subject: \"s.*\"}, to: \"y.*.*\"} ] } }",
            "Error adding service import \"s.*\": failed to create mapping transform for service \
             import subject from \"y.*.*\" to \"s.*\": invalid mapping destination: wildcard \
             index out of range in $2: [2]",
        ),
        (
            "accounts { A { exports = [ {service: \"s.*.*\"} ] }, \
             B { imports = [ {service: {account: A, subject: \"s.*.*\"}, to: \"y.*\"} ] } }",
            "failed to create mapping transform for service import subject from \"y.*\" to \
             \"s.*.*\": invalid mapping destination: not using all of the token wildcard(s) in y.$1",
        ),
        (
            "accounts { A { } }\nsystem_account: Z",
            "error resolving system account: account missing",
        ),
    ];
    for (conf, message) in cases {
        let (_dir, path) = write_config(conf);
        let p = path.to_str().expect("path");
        let ours = run_to_exit(&natrium_path(), &["-c", p, "-p", "-1"], None, &[], WAIT);
        assert_eq!(ours.code, Some(1), "{conf}");
        assert!(ours.stderr.contains(message), "{conf}: {}", ours.stderr);
        if let Some(go) = go_server_path() {
            let go = run_to_exit(&go, &["-c", p, "-p", "-1"], None, &[], WAIT);
            assert_eq!(go.code, Some(1), "go: {conf}");
            assert!(go.stderr.contains(message), "go: {conf}: {}", go.stderr);
        }
    }
}

#[test]
fn accounts_system_account_like_go() {
    let variants = [
        ("accounts { A {} }", Some("$SYS"), vec!["$G", "$SYS", "A"]),
        (
            "accounts { A {} }\nsystem_account: A",
            Some("A"),
            vec!["$G", "A"],
        ),
        (
            "accounts { A {} }\nno_system_account: true",
            None,
            vec!["$G", "A"],
        ),
    ];
    for (conf, system, accounts) in variants {
        let (_dir, servers) = servers(conf);
        for (name, s) in &servers {
            let doc = http_get_json(s.monitor_port.expect("monitor"), "/accountz");
            assert_eq!(doc["system_account"].as_str(), system, "{name}: {conf}");
            let mut listed: Vec<&str> = doc["accounts"]
                .as_array()
                .expect("accounts")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            listed.sort_unstable();
            assert_eq!(listed, accounts, "{name}: {conf}");
        }
    }
}

/// `/accountz?acc=` and `/accstatz` against Go: same keys and types, same exports and
/// imports (ignoring the system account's request services Go adds to every account).
#[test]
fn accounts_monitoring_shape_matches_go() {
    let (_dir, servers) = servers(CONF);
    let mut docs = Vec::new();
    for (_, s) in &servers {
        let mut a = RawClient::connect(&s.addr());
        a.exchange(b"CONNECT {\"verbose\":false,\"user\":\"a\",\"pass\":\"a\"}\r\nSUB s.> 1\r\n");
        let port = s.monitor_port.expect("monitor");
        let mut b_doc = http_get_json(port, "/accountz?acc=B");
        let mut a_doc = http_get_json(port, "/accountz?acc=A");
        for doc in [&mut a_doc, &mut b_doc] {
            strip_system_imports(doc);
        }
        assert!(wait_until(WAIT, || {
            http_get_json(port, "/accstatz")["account_statz"]
                .as_array()
                .is_some_and(|l| l.len() == 1)
        }));
        let statz = http_get_json(port, "/accstatz");
        docs.push((a_doc, b_doc, statz));
    }
    let (a, b, statz) = &docs[0];
    assert_eq!(
        a["account_detail"]["exports"].as_array().map(Vec::len),
        Some(4)
    );
    assert_eq!(
        b["account_detail"]["imports"].as_array().map(Vec::len),
        Some(5)
    );
    assert_eq!(statz["account_statz"][0]["acc"], "A");
    assert_eq!(statz["account_statz"][0]["conns"], 1);
    if let Some((ga, gb, gstatz)) = docs.get(1) {
        for (path, ours, go) in [
            (
                "exports",
                &a["account_detail"]["exports"],
                &ga["account_detail"]["exports"],
            ),
            (
                "imports",
                &b["account_detail"]["imports"],
                &gb["account_detail"]["imports"],
            ),
        ] {
            assert_eq!(sorted(ours), sorted(go), "{path}");
        }
        assert_eq!(keys(a), keys(ga));
        assert_eq!(keys(&a["account_detail"]), keys(&ga["account_detail"]));
        assert_eq!(
            keys(&statz["account_statz"][0]),
            keys(&gstatz["account_statz"][0])
        );
    }
}

/// Go's every account imports `$SYS.REQ.…` services from the system account; we have none.
fn strip_system_imports(doc: &mut Value) {
    let Some(detail) = doc.get_mut("account_detail").and_then(Value::as_object_mut) else {
        return;
    };
    let empty = match detail.get_mut("imports").and_then(Value::as_array_mut) {
        Some(list) => {
            list.retain(|i| i["account"] != "$SYS");
            list.is_empty()
        }
        None => false,
    };
    if empty {
        detail.remove("imports");
    }
}

fn sorted(v: &Value) -> Vec<String> {
    let mut items: Vec<String> = v
        .as_array()
        .map(|l| l.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    items.sort();
    items
}

fn keys(v: &Value) -> Vec<String> {
    let mut keys: Vec<String> = v
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[tokio::test]
async fn accounts_no_auth_user_in_an_account() {
    let conf = format!("{CONF}\nno_auth_user: b\n");
    let (_dir, server) = ours(&conf);
    let anonymous = async_nats::connect(server.url()).await.expect("connect");
    let a = user(&server, "a").await;
    let mut sub = anonymous.subscribe("p.s.>").await.expect("sub");
    round_trip(&anonymous).await;
    a.publish("s.q", "to b".into()).await.expect("pub");
    assert_eq!(next(&mut sub).await.subject.as_str(), "p.s.q");
}

/// Subscriptions that come and go in an importing account are seen by a publisher that has
/// already forwarded there (its match cache for the other account follows the changes).
#[test]
fn accounts_import_follows_subscription_changes() {
    let conf = "listen: 127.0.0.1:-1\naccounts {
  A { users [{user: a, password: a}], exports [{stream: \"s.>\"}] }
  B { users [{user: b, password: b}], imports [{stream: {account: A, subject: \"s.>\"}}] }
}\n";
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("import.conf");
    std::fs::write(&path, conf).expect("write");
    let server = ServerProcess::start(&["-c", path.to_str().expect("path")]);
    let login = |user: &str| {
        let mut c = RawClient::connect(&server.addr());
        let line =
            format!("CONNECT {{\"verbose\":false,\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\n");
        assert_eq!(c.exchange(line.as_bytes()), "");
        c
    };
    let (mut a, mut b1, mut b2) = (login("a"), login("b"), login("b"));
    let publish = |a: &mut RawClient| assert_eq!(a.exchange(b"PUB s.x 1\r\n1\r\n"), "");
    assert_eq!(b1.exchange(b"SUB s.> 1\r\n"), "");
    publish(&mut a);
    assert_eq!(b1.exchange(b""), "MSG s.x 1 1\r\n1\r\n");
    assert_eq!(b2.exchange(b"SUB s.x 7\r\n"), "");
    publish(&mut a);
    assert_eq!(b1.exchange(b""), "MSG s.x 1 1\r\n1\r\n");
    assert_eq!(b2.exchange(b""), "MSG s.x 7 1\r\n1\r\n");
    assert_eq!(b1.exchange(b"UNSUB 1\r\n"), "");
    publish(&mut a);
    assert_eq!(b1.exchange(b""), "");
    assert_eq!(b2.exchange(b""), "MSG s.x 7 1\r\n1\r\n");
}
