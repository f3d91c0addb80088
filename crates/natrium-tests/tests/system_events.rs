//! The system account over real sockets, against the Go server: a system user subscribed to
//! `$SYS.>` sees a client's CONNECT and DISCONNECT events and the account connection counts,
//! the server's STATSZ heartbeat, and gets answers to `$SYS.REQ.SERVER.PING.*` and
//! `$SYS.REQ.SERVER.<id>.*` requests with the documents of the HTTP endpoints. Payloads are
//! compared with Go's for shape (keys and types) and for the values both must agree on.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;
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

/// The JSON shape of a document: every key path with its JSON type.
fn shape(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                shape(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                shape(first, &format!("{path}[]"), out);
            }
        }
        Value::Null => out.push(format!("{path}:null")),
        Value::Bool(_) => out.push(format!("{path}:bool")),
        Value::Number(_) => out.push(format!("{path}:number")),
        Value::String(_) => out.push(format!("{path}:string")),
    }
}

fn shape_of(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    shape(value, "", &mut out);
    out.sort();
    out
}

/// Go-only fields Natrium leaves out on purpose (see docs/system-events.md).
fn without_go_only(mut keys: Vec<String>) -> Vec<String> {
    keys.retain(|k| {
        !k.contains("feature_flags")
            && !k.contains(".disk_io_wait_stats")
            && !k.ends_with(".go:string")
            && !k.contains(".jetstream.")
    });
    keys
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
