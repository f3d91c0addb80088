//! JetStream retention edges, checked against Go when it is installed: an interest stream
//! keeps nothing that no consumer's filter matches (a publish with no consumer takes a
//! sequence, is acknowledged as usual, and leaves no message), and a consumer reset forward
//! lets go of the messages it skipped.

#[path = "support/jetstream.rs"]
mod support;

use serde_json::{json, Value};
use support::{ours_then_go, request};

fn config(store: &std::path::Path) -> String {
    format!("jetstream {{ store_dir: \"{}\" }}\n", store.display())
}

/// The stream's message count, first and last sequences.
async fn state(client: &async_nats::Client) -> Value {
    let info = request(client, "$JS.API.STREAM.INFO.I", "").await;
    let s = &info["state"];
    json!([s["messages"], s["first_seq"], s["last_seq"]])
}

async fn publish(client: &async_nats::Client, subject: &str) -> Value {
    request(client, subject, "x").await
}

#[tokio::test]
async fn jetstream_retention_interest_without_consumers_keeps_nothing() {
    for js in ours_then_go(config) {
        let client = async_nats::connect(js.server.url()).await.expect("connect");
        let created = request(
            &client,
            "$JS.API.STREAM.CREATE.I",
            r#"{"name":"I","subjects":["i.>"],"retention":"interest","storage":"file"}"#,
        )
        .await;
        assert!(created["error"].is_null(), "{}: {created}", js.name);
        let mut acks = Vec::new();
        for _ in 0..3 {
            acks.push(publish(&client, "i.a").await);
        }
        assert_eq!(
            acks,
            (1..=3)
                .map(|seq| json!({"stream":"I","seq":seq}))
                .collect::<Vec<_>>(),
            "{}",
            js.name
        );
        assert_eq!(state(&client).await, json!([0, 4, 3]), "{}", js.name);
        let consumer = request(
            &client,
            "$JS.API.CONSUMER.CREATE.I.B",
            r#"{"stream_name":"I","config":{"durable_name":"B","filter_subject":"i.b","ack_policy":"explicit"}}"#,
        )
        .await;
        assert!(consumer["error"].is_null(), "{}: {consumer}", js.name);
        // Only the consumer's subject is kept.
        assert_eq!(publish(&client, "i.a").await["seq"], 4, "{}", js.name);
        assert_eq!(publish(&client, "i.b").await["seq"], 5, "{}", js.name);
        assert_eq!(state(&client).await, json!([1, 5, 5]), "{}", js.name);
    }
}

/// A consumer reset forward on an interest stream lets go of what it skipped: each message
/// no other consumer still needs is removed (Go's clean-up after `CONSUMER.RESET`).
#[tokio::test]
async fn jetstream_retention_interest_reset_releases_skipped() {
    let mut runs = Vec::new();
    for js in ours_then_go(config) {
        let client = async_nats::connect(js.server.url()).await.expect("connect");
        let stream = r#"{"name":"I","subjects":["i.>"],"retention":"interest"}"#;
        request(&client, "$JS.API.STREAM.CREATE.I", stream).await;
        for (name, filter) in [("A", "i.>"), ("B", "i.b")] {
            let body = format!(
                r#"{{"stream_name":"I","config":{{"durable_name":"{name}","ack_policy":"explicit","filter_subject":"{filter}"}}}}"#
            );
            let created =
                request(&client, &format!("$JS.API.CONSUMER.CREATE.I.{name}"), body).await;
            assert!(created["error"].is_null(), "{created}");
        }
        for i in 0..10 {
            publish(&client, if i % 2 == 1 { "i.a" } else { "i.b" }).await;
        }
        let mut steps = Vec::new();
        for (name, seq) in [("A", 7), ("B", 9)] {
            let subject = format!("$JS.API.CONSUMER.RESET.I.{name}");
            let reset = request(&client, &subject, format!(r#"{{"seq":{seq}}}"#)).await;
            assert!(reset["error"].is_null(), "{reset}");
            steps.push(state(&client).await);
        }
        runs.push(steps);
    }
    // A let go of 1-6; B still needs 1, 3 and 5 (i.b) until its own reset to 9.
    assert_eq!(runs[0], [json!([7, 1, 10]), json!([4, 7, 10])]);
    if let [ours, go] = &runs[..] {
        assert_eq!(ours, go);
    }
}
