//! `sample_freq` ack metrics: with `"100%"` every explicit ack of a pending message is
//! reported on `$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>`, with Go's document; with
//! no sampling nothing is. The same exchange runs against Go's server when installed.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};

#[path = "support/jetstream.rs"]
mod support;
use support::{login, request, JsServer as Js, WAIT};

fn config(store: &Path) -> String {
    support::three_accounts(store)
}

/// The metric's fields that do not depend on time or identity.
fn metric(body: &[u8]) -> Value {
    let value: Value = serde_json::from_slice(body).expect("metric JSON");
    assert!(
        value["ack_time"].as_i64().is_some_and(|t| t >= 0),
        "{value}"
    );
    assert!(
        value["id"].is_string() && value["timestamp"].is_string(),
        "{value}"
    );
    let mut keys: Vec<&String> = value.as_object().expect("object").keys().collect();
    keys.sort();
    json!({
        "keys": keys,
        "type": value["type"],
        "stream": value["stream"],
        "consumer": value["consumer"],
        "stream_seq": value["stream_seq"],
        "consumer_seq": value["consumer_seq"],
        "deliveries": value["deliveries"],
    })
}

async fn exchange(js: &Js) -> Vec<Value> {
    let a = login(&js.server, "a").await;
    let mut metrics = a
        .subscribe("$JS.EVENT.METRIC.CONSUMER.ACK.M.>")
        .await
        .unwrap();
    let created = request(
        &a,
        "$JS.API.STREAM.CREATE.M",
        r#"{"name":"M","subjects":["m"]}"#,
    )
    .await;
    assert!(created.get("error").is_none(), "{}: {created}", js.name);
    for _ in 0..2 {
        request(&a, "m", "x").await;
    }
    for (name, freq) in [("S", r#","sample_freq":"100%""#), ("N", "")] {
        let body = format!(
            r#"{{"stream_name":"M","config":{{"durable_name":"{name}","ack_policy":"explicit"{freq}}}}}"#
        );
        let made = request(&a, &format!("$JS.API.CONSUMER.CREATE.M.{name}"), body).await;
        assert!(made.get("error").is_none(), "{}: {made}", js.name);
    }
    let mut out = Vec::new();
    let mut deliveries = a.subscribe("fetched").await.unwrap();
    let mut acked = a.subscribe("acked").await.unwrap();
    for name in ["N", "S"] {
        for _ in 0..2 {
            let next = format!("$JS.API.CONSUMER.MSG.NEXT.M.{name}");
            a.publish_with_reply(next, "fetched", r#"{"batch":1}"#.into())
                .await
                .unwrap();
            let msg = tokio::time::timeout(WAIT, deliveries.next())
                .await
                .expect("delivery in time")
                .unwrap();
            let ack = msg.reply.expect("ack subject");
            // A double ack: answered once the ack was handled.
            a.publish_with_reply(ack, "acked", "+ACK".into())
                .await
                .unwrap();
            tokio::time::timeout(WAIT, acked.next())
                .await
                .expect("ack answered in time")
                .unwrap();
        }
    }
    for _ in 0..2 {
        let m = tokio::time::timeout(WAIT, metrics.next())
            .await
            .unwrap_or_else(|_| panic!("{}: metric in time", js.name))
            .unwrap();
        assert_eq!(m.subject.as_str(), "$JS.EVENT.METRIC.CONSUMER.ACK.M.S");
        out.push(metric(&m.payload));
    }
    let none = tokio::time::timeout(Duration::from_millis(200), metrics.next()).await;
    assert!(none.is_err(), "{}: no metric for N", js.name);
    out
}

#[tokio::test]
async fn jetstream_ack_metrics_sampled_like_go() {
    let servers = support::ours_then_go(config);
    let mut results = Vec::new();
    for js in &servers {
        results.push((js.name, exchange(js).await));
    }
    let (_, ours) = &results[0];
    assert_eq!(ours[0]["type"], "io.nats.jetstream.metric.v1.consumer_ack");
    assert_eq!(ours[1]["stream_seq"], 2);
    for (name, theirs) in &results[1..] {
        assert_eq!(ours, theirs, "ours vs {name}");
    }
}
