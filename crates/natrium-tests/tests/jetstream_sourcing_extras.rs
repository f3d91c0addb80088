//! What sourcing does beside copying, compared with Go: a mirror with `mirror_direct`
//! answering its origin's direct gets, sourced messages republished, and counter increments
//! sourced into another counter stream.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{ours_then_go, request};

/// How long copying may take on a loaded machine.
const WAIT: Duration = Duration::from_secs(20);

fn js_conf(store: &std::path::Path) -> String {
    format!("jetstream {{ store_dir: \"{}\" }}\n", store.display())
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

async fn create(client: &async_nats::Client, name: &str, config: &str) {
    let doc = request(client, &format!("$JS.API.STREAM.CREATE.{name}"), config).await;
    assert!(doc["error"].is_null(), "{doc}");
}

/// A message's subject, status, the headers named in `names` and its payload, as text.
fn describe(msg: &async_nats::Message, names: &[&str]) -> String {
    let headers = msg.headers.clone().unwrap_or_default();
    let status = msg.status.map(|s| s.as_u16()).unwrap_or_default();
    let mut out = format!("{} | {status} |", msg.subject);
    for name in names {
        let value = headers
            .iter()
            .find(|(n, _)| n.to_string() == *name)
            .and_then(|(_, v)| v.first().map(ToString::to_string));
        let _ = write!(out, " {name}={}", value.unwrap_or_default());
    }
    let _ = write!(out, " | {}", String::from_utf8_lossy(&msg.payload));
    out
}

/// The answer to a raw direct get, asked again until someone answers.
async fn direct_get(client: &async_nats::Client, subject: &str, body: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let asked = client.request(subject.to_owned(), body.to_owned().into());
        if let Ok(Ok(msg)) = tokio::time::timeout(Duration::from_secs(2), asked).await {
            let names = ["Nats-Stream", "Nats-Subject", "Nats-Sequence"];
            let text = describe(&msg, &names);
            // The reply inbox differs between runs.
            return text
                .split_once(" | ")
                .map_or(text.clone(), |(_, t)| t.to_owned());
        }
        assert!(Instant::now() < deadline, "{subject}: nobody answers");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn jetstream_mirror_direct_answers_the_origins_direct_gets_as_go() {
    let mut runs = Vec::new();
    for server in ours_then_go(js_conf) {
        let client = async_nats::connect(server.server.url()).await.unwrap();
        let origin = r#"{"name":"O","subjects":["o.>"],"storage":"memory","allow_direct":true}"#;
        create(&client, "O", origin).await;
        for i in 0..5 {
            request(&client, &format!("o.{}", i % 2), format!("m{i}")).await;
        }
        create(
            &client,
            "M",
            r#"{"name":"M","storage":"memory","mirror":{"name":"O"}}"#,
        )
        .await;
        let info = wait_msgs(&client, "M", 5).await;
        // Inherited from the origin's `allow_direct`.
        assert_eq!(info["config"]["mirror_direct"], true, "{}", server.name);
        // Only the mirror is left to answer the origin's direct gets.
        let deleted = request(&client, "$JS.API.STREAM.DELETE.O", "").await;
        assert_eq!(deleted["success"], true);
        let answers = vec![
            direct_get(&client, "$JS.API.DIRECT.GET.O", r#"{"seq":3}"#).await,
            direct_get(&client, "$JS.API.DIRECT.GET.O.o.1", "").await,
            direct_get(&client, "$JS.API.DIRECT.GET.O", r#"{"seq":9}"#).await,
        ];
        assert!(answers[0].contains("Nats-Stream=M"), "{answers:?}");
        runs.push((server.name, answers));
    }
    if let [(_, ours), (_, go)] = &runs[..] {
        assert_eq!(ours, go, "direct get answers");
    }
}
