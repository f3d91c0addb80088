//! A message that leaves the stream while a consumer holds it unacknowledged (deleted through
//! the API, pushed out by `max_msgs`) is let go at once, as Go's `decStreamPending` does: it
//! is terminated with the advisory "Unacknowledged message was deleted", the consumer's
//! ack-pending count and ack floor move, and it is never redelivered. The same exchange runs
//! against Go's server when installed, and the consumer's counters and the advisories are
//! compared.

use std::path::Path;

use futures::StreamExt;
use serde_json::{json, Value};

#[path = "support/jetstream.rs"]
mod support;
use support::{login, request, JsServer as Js, WAIT};

fn config(store: &Path) -> String {
    support::three_accounts(store)
}

/// The consumer counters the exchange moves.
fn counters(info: &Value) -> Value {
    json!({
        "num_ack_pending": info["num_ack_pending"],
        "num_pending": info["num_pending"],
        "num_redelivered": info["num_redelivered"],
        "ack_floor": info["ack_floor"]["stream_seq"],
        "delivered": info["delivered"]["stream_seq"],
    })
}

/// The advisory's fields that do not depend on time or identity.
fn advisory(body: &[u8]) -> Value {
    let value: Value = serde_json::from_slice(body).expect("advisory JSON");
    json!({
        "type": value["type"],
        "stream_seq": value["stream_seq"],
        "consumer_seq": value["consumer_seq"],
        "deliveries": value["deliveries"],
        "reason": value["reason"],
    })
}

/// Delivers sequences 1..=3 of four to a pull consumer, then deletes 2 and pushes 1 out by
/// publishing past `max_msgs: 4`. Returns the counters after each step and the
/// advisories.
async fn exchange(js: &Js) -> Vec<Value> {
    let a = login(&js.server, "a").await;
    let mut advisories = a
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.C")
        .await
        .unwrap();
    let created = request(
        &a,
        "$JS.API.STREAM.CREATE.S",
        r#"{"name":"S","subjects":["s.>"],"storage":"file","max_msgs":4}"#,
    )
    .await;
    assert!(created.get("error").is_none(), "{}: {created}", js.name);
    for i in 1..=4 {
        let ack = request(&a, &format!("s.{i}"), "m").await;
        assert_eq!(ack["seq"], i, "{}", js.name);
    }
    let consumer = request(
        &a,
        "$JS.API.CONSUMER.CREATE.S.C",
        r#"{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit","ack_wait":60000000000}}"#,
    )
    .await;
    assert!(consumer.get("error").is_none(), "{}: {consumer}", js.name);
    let mut fetched = a.subscribe("fetch.inbox").await.unwrap();
    a.publish_with_reply(
        "$JS.API.CONSUMER.MSG.NEXT.S.C",
        "fetch.inbox",
        r#"{"batch":3,"no_wait":true}"#.into(),
    )
    .await
    .unwrap();
    for _ in 0..3 {
        let msg = tokio::time::timeout(WAIT, fetched.next())
            .await
            .expect("delivery")
            .unwrap();
        assert!(msg.subject.starts_with("s."), "{}: {msg:?}", js.name);
    }
    let mut out = Vec::new();
    let info = request(&a, "$JS.API.CONSUMER.INFO.S.C", "").await;
    out.push(counters(&info));

    let deleted = request(&a, "$JS.API.STREAM.MSG.DELETE.S", r#"{"seq":2}"#).await;
    assert_eq!(deleted["success"], true, "{}: {deleted}", js.name);
    let first = tokio::time::timeout(WAIT, advisories.next())
        .await
        .unwrap_or_else(|_| panic!("{}: advisory after delete", js.name))
        .unwrap();
    out.push(advisory(&first.payload));
    let info = request(&a, "$JS.API.CONSUMER.INFO.S.C", "").await;
    out.push(counters(&info));

    // Three left: the fifth fits, the sixth pushes the first out.
    for i in 5..=6 {
        let ack = request(&a, &format!("s.{i}"), "m").await;
        assert_eq!(ack["seq"], i, "{}", js.name);
    }
    let second = tokio::time::timeout(WAIT, advisories.next())
        .await
        .unwrap_or_else(|_| panic!("{}: advisory after the limit", js.name))
        .unwrap();
    out.push(advisory(&second.payload));
    let info = request(&a, "$JS.API.CONSUMER.INFO.S.C", "").await;
    out.push(counters(&info));
    out
}

#[tokio::test]
async fn jetstream_removed_pending_messages_are_terminated_at_once_like_go() {
    let servers = support::ours_then_go(config);
    let mut results = Vec::new();
    for js in &servers {
        results.push((js.name, exchange(js).await));
    }
    let (_, ours) = &results[0];
    assert_eq!(
        ours[1]["reason"], "Unacknowledged message was deleted",
        "{ours:?}"
    );
    assert_eq!(ours[2]["num_ack_pending"], 2, "{ours:?}");
    assert_eq!(
        ours[4]["ack_floor"], 2,
        "1 and 2 gone: the floor moves: {ours:?}"
    );
    for (name, theirs) in &results[1..] {
        assert_eq!(ours, theirs, "ours vs {name}");
    }
}
