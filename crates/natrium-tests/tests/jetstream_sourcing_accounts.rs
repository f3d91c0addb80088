//! Mirrors and sources across accounts: account `A` exports its consumer API, the flow-control
//! subjects and a deliver-subject stream; account `B` imports them under a prefix and mirrors
//! and sources `A`'s stream through `external { api, deliver }`. The copies and the stream
//! info `mirror` / `sources` JSON are compared with Go's.

use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{login, normalise_times, ours_then_go, request};

/// How long copying may take on a loaded machine.
const WAIT: Duration = Duration::from_secs(20);

fn two_accounts(store: &std::path::Path) -> String {
    format!(
        "jetstream {{ store_dir: \"{}\" }}\n\
         accounts {{\n\
           A {{\n\
             jetstream: enabled\n\
             users [ {{user: a, password: a}} ]\n\
             exports [\n\
               {{ service: \"$JS.API.CONSUMER.>\" }}\n\
               {{ service: \"$JS.FC.>\" }}\n\
               {{ stream: \"RI.DELIVER.>\" }}\n\
             ]\n\
           }}\n\
           B {{\n\
             jetstream: enabled\n\
             users [ {{user: b, password: b}} ]\n\
             imports [\n\
               {{ service: {{account: A, subject: \"$JS.API.CONSUMER.>\"}}, to: \"RI.JS.API.CONSUMER.>\" }}\n\
               {{ service: {{account: A, subject: \"$JS.FC.>\"}} }}\n\
               {{ stream: {{account: A, subject: \"RI.DELIVER.>\"}} }}\n\
             ]\n\
           }}\n\
           SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
         }}\n\
         system_account: SYS\n",
        store.display()
    )
}

/// Waits until stream `name` holds `msgs` messages; its info then.
async fn wait_msgs(client: &async_nats::Client, name: &str, msgs: u64) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let info = request(client, &format!("$JS.API.STREAM.INFO.{name}"), "").await;
        if info["state"]["messages"].as_u64() == Some(msgs) {
            return info;
        }
        assert!(
            Instant::now() < deadline,
            "{name} never held {msgs} messages: {info}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The subjects and payloads of stream `name`'s messages 1 to `last`.
async fn contents(client: &async_nats::Client, name: &str, last: u64) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for seq in 1..=last {
        let body = format!("{{\"seq\":{seq}}}");
        let msg = request(client, &format!("$JS.API.STREAM.MSG.GET.{name}"), body).await;
        let m = &msg["message"];
        out.push((m["subject"].to_string(), m["data"].to_string()));
    }
    out
}

#[tokio::test]
async fn jetstream_sourcing_across_accounts_matches_go() {
    let mut runs = Vec::new();
    for server in ours_then_go(two_accounts) {
        let a = login(&server.server, "a").await;
        let b = login(&server.server, "b").await;
        let origin = r#"{"name":"O","subjects":["o.>"],"storage":"memory"}"#;
        let doc = request(&a, "$JS.API.STREAM.CREATE.O", origin).await;
        assert!(doc["error"].is_null(), "{}: {doc}", server.name);
        for i in 0..20 {
            let ack = request(&a, &format!("o.{}", i % 3), format!("m{i}")).await;
            assert!(ack["error"].is_null(), "{ack}");
        }
        let external = r#"{"api":"RI.JS.API","deliver":"RI.DELIVER.SYNC"}"#;
        let mirror = format!(
            r#"{{"name":"M","storage":"memory","mirror":{{"name":"O","external":{external}}}}}"#
        );
        let source = format!(
            r#"{{"name":"S","storage":"memory","sources":[{{"name":"O","filter_subject":"o.1","external":{external}}}]}}"#
        );
        let mut created = Vec::new();
        for (name, cfg) in [("M", mirror), ("S", source)] {
            let mut doc = request(&b, &format!("$JS.API.STREAM.CREATE.{name}"), cfg).await;
            assert!(doc["error"].is_null(), "{}: {doc}", server.name);
            normalise_times(&mut doc, &["active"]);
            created.push(doc);
        }
        wait_msgs(&b, "M", 20).await;
        wait_msgs(&b, "S", 7).await;
        // Followers: what the origin takes next is copied too.
        for i in 20..25 {
            request(&a, &format!("o.{}", i % 3), format!("m{i}")).await;
        }
        let mut infos = Vec::new();
        for (name, msgs) in [("M", 25), ("S", 8)] {
            let mut info = wait_msgs(&b, name, msgs).await;
            normalise_times(&mut info, &["active", "leader"]);
            infos.push(info);
        }
        let copies = (contents(&b, "M", 25).await, contents(&b, "S", 8).await);
        assert_eq!(copies.0, contents(&a, "O", 25).await, "{}", server.name);
        runs.push((server.name, created, infos, copies));
    }
    if let [(_, ours_c, ours_i, ours_m), (_, go_c, go_i, go_m)] = &runs[..] {
        assert_eq!(ours_c, go_c, "create answers");
        assert_eq!(ours_i, go_i, "stream infos");
        assert_eq!(ours_m, go_m, "copies");
    }
}

/// More than the origin consumer's first flow-control window (6 MiB of 256 KiB messages):
/// the copies' flow-control answers reach the origin's account through the `$JS.FC.>`
/// service import, and everything is copied.
#[tokio::test]
async fn jetstream_sourcing_across_accounts_flow_control() {
    for server in ours_then_go(two_accounts) {
        let a = login(&server.server, "a").await;
        let b = login(&server.server, "b").await;
        let origin = r#"{"name":"O","subjects":["o.>"],"storage":"memory"}"#;
        request(&a, "$JS.API.STREAM.CREATE.O", origin).await;
        let payload = "X".repeat(256 * 1024);
        for _ in 0..24 {
            let ack = request(&a, "o.big", payload.as_bytes()).await;
            assert!(ack["error"].is_null(), "{ack}");
        }
        let external = r#"{"api":"RI.JS.API","deliver":"RI.DELIVER.FC"}"#;
        let mirror = format!(
            r#"{{"name":"M","storage":"memory","mirror":{{"name":"O","external":{external}}}}}"#
        );
        let source = format!(
            r#"{{"name":"S","storage":"memory","sources":[{{"name":"O","external":{external}}}]}}"#
        );
        for (name, cfg) in [("M", mirror), ("S", source)] {
            let doc = request(&b, &format!("$JS.API.STREAM.CREATE.{name}"), cfg).await;
            assert!(doc["error"].is_null(), "{}: {doc}", server.name);
        }
        for name in ["M", "S"] {
            let info = wait_msgs(&b, name, 24).await;
            let bytes = info["state"]["bytes"].as_u64().unwrap_or_default();
            assert!(bytes > 6 * 1024 * 1024, "{}: {info}", server.name);
        }
    }
}
