//! The system account over real sockets, against the Go server: a system user subscribed to
//! `$SYS.>` sees a client's CONNECT and DISCONNECT events and the account connection counts,
//! the server's STATSZ heartbeat, and gets answers to `$SYS.REQ.SERVER.PING.*` and
//! `$SYS.REQ.SERVER.<id>.*` requests with the documents of the HTTP endpoints. Payloads are
//! compared with Go's for shape (keys and types) and for the values both must agree on.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::json::{shape_of, without_go_only};
use natrium_tests::ServerProcess;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(10);

const CONFIG: &str = "server_name: sysev\n\
accounts {\n\
  SYS { users [ {user: sys, password: sys} ] }\n\
  A { users [ {user: a, password: a} ] }\n\
}\n\
system_account: SYS\n";

fn config() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("sys.conf");
    std::fs::write(&path, CONFIG).expect("write config");
    (dir, path)
}

fn servers(path: &std::path::Path) -> Vec<(&'static str, ServerProcess)> {
    let p = path.to_str().expect("utf-8 path");
    let args = ["-c", p, "-a", "127.0.0.1", "-p", "-1", "-m", "-1"];
    let mut out = vec![("ours", ServerProcess::start(&args))];
    if let Some(go) = ServerProcess::start_go(&args) {
        out.push(("go", go));
    }
    out
}

fn login(user: &str) -> async_nats::ConnectOptions {
    async_nats::ConnectOptions::with_user_and_password(user.into(), user.into())
}

async fn next_json(sub: &mut async_nats::Subscriber, subject: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let msg = tokio::time::timeout_at(deadline, sub.next())
            .await
            .unwrap_or_else(|_| panic!("no message on {subject}"))
            .expect("subscription open");
        if msg.subject.as_str() == subject {
            return serde_json::from_slice(&msg.payload).expect("JSON payload");
        }
    }
}

/// The next message on each of `subjects`, whatever their order.
async fn next_each<const N: usize>(
    sub: &mut async_nats::Subscriber,
    subjects: [&str; N],
) -> [Value; N] {
    let mut found: [Option<Value>; N] = std::array::from_fn(|_| None);
    let deadline = tokio::time::Instant::now() + WAIT;
    while found.iter().any(Option::is_none) {
        let msg = tokio::time::timeout_at(deadline, sub.next())
            .await
            .unwrap_or_else(|_| panic!("no message on one of {subjects:?}"))
            .expect("subscription open");
        let at = subjects.iter().position(|s| *s == msg.subject.as_str());
        if let Some(slot) = at.and_then(|i| found.get_mut(i)).filter(|s| s.is_none()) {
            *slot = Some(serde_json::from_slice(&msg.payload).expect("JSON payload"));
        }
    }
    found.map(Option::unwrap_or_default)
}

#[tokio::test]
async fn system_events_connect_disconnect_and_statsz_match_go() {
    let (_dir, path) = config();
    let mut seen: Vec<(&str, Value, Value, Value)> = Vec::new();
    for (name, server) in servers(&path) {
        let sys = login("sys").connect(server.url()).await.expect("sys");
        let mut events = sys.subscribe("$SYS.>").await.expect("sub");
        sys.flush().await.expect("flush");
        let a = login("a")
            .name("cli-a")
            .connect(server.url())
            .await
            .expect("a");
        let connect = next_json(&mut events, "$SYS.ACCOUNT.A.CONNECT").await;
        assert_eq!(
            connect["type"], "io.nats.server.advisory.v1.client_connect",
            "{name}"
        );
        assert_eq!(connect["client"]["acc"], "A", "{name}");
        assert_eq!(connect["client"]["user"], "a", "{name}");
        assert_eq!(connect["client"]["name"], "cli-a", "{name}");
        assert_eq!(connect["client"]["kind"], "Client", "{name}");
        assert_eq!(connect["server"]["name"], "sysev", "{name}");
        drop(a);
        let disconnect = next_json(&mut events, "$SYS.ACCOUNT.A.DISCONNECT").await;
        assert_eq!(disconnect["reason"], "Client Closed", "{name}");
        let statsz = next_json(
            &mut events,
            &format!(
                "$SYS.SERVER.{}.STATSZ",
                connect["server"]["id"].as_str().expect("server id")
            ),
        )
        .await;
        seen.push((name, connect, disconnect, statsz));
    }
    if let [(_, c1, d1, s1), (_, c2, d2, s2)] = seen.as_slice() {
        // rtt is measured only on a disconnect after a PING round trip; compare the rest.
        let strip = |v: &Value| {
            let mut keys = without_go_only(shape_of(v));
            keys.retain(|k| !k.ends_with(".client.rtt:number"));
            keys
        };
        assert_eq!(strip(c1), strip(c2), "connect event shape");
        assert_eq!(strip(d1), strip(d2), "disconnect event shape");
        assert_eq!(strip(s1), strip(s2), "statsz shape");
    }
}

#[tokio::test]
async fn system_requests_answer_like_go() {
    let (_dir, path) = config();
    let mut replies: Vec<Vec<(String, Value)>> = Vec::new();
    for (name, server) in servers(&path) {
        let sys = login("sys").connect(server.url()).await.expect("sys");
        let id = sys.server_info().server_id;
        let mut got = Vec::new();
        for (subject, body) in [
            ("$SYS.REQ.SERVER.PING".to_owned(), ""),
            ("$SYS.REQ.SERVER.PING.STATSZ".to_owned(), ""),
            ("$SYS.REQ.SERVER.PING.VARZ".to_owned(), ""),
            ("$SYS.REQ.SERVER.PING.HEALTHZ".to_owned(), ""),
            (
                format!("$SYS.REQ.SERVER.{id}.CONNZ"),
                r#"{"subscriptions":true}"#,
            ),
            (format!("$SYS.REQ.SERVER.{id}.SUBSZ"), ""),
            ("$SYS.REQ.SERVER.PING.IDZ".to_owned(), ""),
        ] {
            let reply = tokio::time::timeout(WAIT, sys.request(subject.clone(), body.into()))
                .await
                .unwrap_or_else(|_| panic!("{name}: {subject} timed out"))
                .unwrap_or_else(|e| panic!("{name}: {subject}: {e}"));
            let doc: Value = serde_json::from_slice(&reply.payload).expect("JSON reply");
            let from = if subject.ends_with("IDZ") {
                &doc["id"]
            } else {
                &doc["server"]["id"]
            };
            assert_eq!(*from, id.as_str(), "{name} {subject}");
            got.push((subject.replace(&id, "ID"), doc));
        }
        let health = &got[3].1;
        assert_eq!(health["data"]["status"], "ok", "{name}");
        assert_eq!(health["data"]["status_code"], 200, "{name}");
        let connz = &got[4].1["data"];
        assert_eq!(connz["num_connections"], 1, "{name}: the system user");
        // A body that is not JSON is a 400 without data; options the endpoint refuses, a 500
        // with `"data": null`.
        for (body, code, has_data) in [("{nope", 400, false), (r#"{"sort":"bogus"}"#, 500, true)] {
            let reply = sys
                .request("$SYS.REQ.SERVER.PING.CONNZ", body.into())
                .await
                .expect("reply");
            let doc: Value = serde_json::from_slice(&reply.payload).expect("JSON reply");
            assert_eq!(doc["error"]["code"], code, "{name} {body}");
            let map = doc.as_object().expect("object");
            assert_eq!(map.contains_key("data"), has_data, "{name} {body}");
        }
        let bogus = sys
            .request("$SYS.REQ.SERVER.PING.CONNZ", r#"{"sort":"bogus"}"#.into())
            .await
            .expect("reply");
        let doc: Value = serde_json::from_slice(&bogus.payload).expect("JSON reply");
        assert_eq!(
            doc["error"]["description"], "invalid sorting option: bogus",
            "{name}"
        );
        // A filter naming another server: nobody answers.
        let filtered = sys.request(
            "$SYS.REQ.SERVER.PING.VARZ",
            r#"{"server_name":"nobody","exact_match":true}"#.into(),
        );
        let quiet = tokio::time::timeout(Duration::from_millis(300), filtered).await;
        assert!(
            !matches!(quiet, Ok(Ok(_))),
            "{name}: filtered request answered"
        );
        replies.push(got);
    }
    if let [ours, go] = replies.as_slice() {
        for ((subject, a), (_, b)) in ours.iter().zip(go) {
            // Compare the envelope and the document's top level: lists and counters differ.
            let top = |v: &Value| {
                let mut keys = without_go_only(shape_of(v));
                keys.retain(|k| k.matches('.').count() <= 2 && !k.contains("[]"));
                keys
            };
            assert_eq!(top(a), top(b), "{subject}");
        }
    }
}

#[tokio::test]
async fn system_events_auth_errors_match_go() {
    let (_dir, path) = config();
    let mut seen: Vec<(Value, Value, Value)> = Vec::new();
    for (name, server) in servers(&path) {
        let sys = login("sys").connect(server.url()).await.expect("sys");
        let id = sys.server_info().server_id;
        let mut events = sys.subscribe("$SYS.>").await.expect("sub");
        sys.flush().await.expect("flush");
        let mut bad = natrium_tests::RawClient::connect(&server.addr());
        bad.send(
            b"CONNECT {\"verbose\":false,\"user\":\"a\",\"pass\":\"nope\",\"name\":\"bad\"}\r\n",
        );
        let (text, closed) = bad.wait_closed(WAIT);
        assert!(
            closed && text.contains("Authorization Violation"),
            "{name}: {text}"
        );
        // Go sends the two in either order.
        let auth_subject = format!("$SYS.SERVER.{id}.CLIENT.AUTH.ERR");
        let [auth, refused] =
            next_each(&mut events, [&auth_subject, "$SYS.ACCOUNT.$G.DISCONNECT"]).await;
        assert_eq!(auth["type"], "io.nats.server.advisory.v1.client_disconnect");
        assert_eq!(auth["reason"], "Authentication Failure", "{name}");
        assert_eq!(auth["client"]["user"], "a", "{name}");
        assert_eq!(auth["client"]["name"], "bad", "{name}");
        assert_eq!(auth["client"]["acc"], "$G", "{name}");
        // The refused client's close is reported too, in `$G`, as any client's that never
        // logged into an account (here one that never sent CONNECT).
        assert_eq!(refused["client"]["id"], auth["client"]["id"], "{name}");
        drop(natrium_tests::RawClient::connect(&server.addr()));
        let silent = next_json(&mut events, "$SYS.ACCOUNT.$G.DISCONNECT").await;
        assert_eq!(silent["reason"], "Client Closed", "{name}");
        seen.push((auth, refused, silent));
    }
    if let [(a1, r1, s1), (a2, r2, s2)] = seen.as_slice() {
        let strip = |v: &Value| {
            let mut keys = without_go_only(shape_of(v));
            keys.retain(|k| !k.ends_with(".client.rtt:number"));
            keys
        };
        assert_eq!(strip(a1), strip(a2), "auth error shape");
        assert_eq!(strip(r1), strip(r2), "refused disconnect shape");
        assert_eq!(strip(s1), strip(s2), "silent disconnect shape");
    }
}

/// The next message on `subject` within [`WAIT`], if one comes.
async fn maybe_next_json(sub: &mut async_nats::Subscriber, subject: &str) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let msg = tokio::time::timeout_at(deadline, sub.next()).await.ok()??;
        if msg.subject.as_str() == subject {
            return serde_json::from_slice(&msg.payload).ok();
        }
    }
}

/// The `server` object a LAMEDUCK or SHUTDOWN event carries, for each server, once `signal`
/// has been sent to it. A loaded Go server sometimes loses these (they end its event loop),
/// so only ours must send them.
async fn server_event(path: &std::path::Path, signal: &str, kind: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    for (name, server) in servers(path) {
        let sys = login("sys").connect(server.url()).await.expect("sys");
        let id = sys.server_info().server_id;
        let mut events = sys
            .subscribe(format!("$SYS.SERVER.{id}.*"))
            .await
            .expect("sub");
        sys.flush().await.expect("flush");
        server.signal(signal);
        let subject = format!("$SYS.SERVER.{id}.{kind}");
        let Some(doc) = maybe_next_json(&mut events, &subject).await else {
            assert_ne!(name, "ours", "no {kind} event");
            continue;
        };
        assert_eq!(doc["id"], id.as_str(), "{name}");
        assert_eq!(doc["name"], "sysev", "{name}");
        seen.push(doc);
    }
    seen
}

#[tokio::test]
async fn system_events_lame_duck_and_shutdown_match_go() {
    let (_dir, path) = config();
    // Lame duck mode is announced as it starts; a shutdown before the connections close.
    // (A lame duck Go server publishes no more events, not even SHUTDOWN; Natrium does.)
    for (signal, kind) in [("USR2", "LAMEDUCK"), ("TERM", "SHUTDOWN")] {
        let seen = server_event(&path, signal, kind).await;
        if let [ours, go] = seen.as_slice() {
            let shape = |v: &Value| without_go_only(shape_of(v));
            assert_eq!(shape(ours), shape(go), "{kind}");
        }
    }
}

/// Events are built only for subjects someone listens to: a system user subscribed to just
/// the account's connection counts gets those, and one subscribed to just its DISCONNECT
/// events gets those, with the same documents as when everything is listened to.
#[tokio::test]
async fn system_events_partial_interest_like_go() {
    let (_dir, path) = config();
    for (name, server) in servers(&path) {
        let sys = login("sys").connect(server.url()).await.expect("sys");
        let conns_subject = "$SYS.ACCOUNT.A.SERVER.CONNS";
        let mut conns = sys.subscribe(conns_subject).await.expect("sub");
        let mut gone = sys
            .subscribe("$SYS.ACCOUNT.A.DISCONNECT")
            .await
            .expect("sub");
        sys.flush().await.expect("flush");
        let a = login("a").connect(server.url()).await.expect("a");
        a.flush().await.expect("flush");
        let count = next_json(&mut conns, conns_subject).await;
        assert_eq!(count["acc"], "A", "{name}");
        assert_eq!(count["conns"], 1, "{name}");
        drop(a);
        let disconnect = next_json(&mut gone, "$SYS.ACCOUNT.A.DISCONNECT").await;
        assert_eq!(disconnect["client"]["acc"], "A", "{name}");
        assert_eq!(disconnect["reason"], "Client Closed", "{name}");
        let count = next_json(&mut conns, conns_subject).await;
        assert_eq!(count["conns"], 0, "{name}");
    }
}
