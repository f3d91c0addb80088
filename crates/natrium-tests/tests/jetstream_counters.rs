//! Distributed counters (ADR-49) by raw publishes: `Nats-Incr` of any size on an
//! `allow_msg_counter` stream, the stored `{"val":"N"}` messages, the PubAck's `val`, and
//! Go's error for every misuse. The same exchange runs against our binary and, where
//! installed, Go's; the transcripts must be identical byte for byte.

use base64::Engine as _;
use serde_json::{json, Value};

#[path = "support/hpub.rs"]
mod hpub;
#[path = "support/jetstream.rs"]
mod support;
use support::{login, request, three_accounts};

/// The stored message at `seq` of `stream`: subject, headers and payload as text.
async fn stored(client: &async_nats::Client, stream: &str, seq: u64) -> Value {
    let subject = format!("$JS.API.STREAM.MSG.GET.{stream}");
    let answer = request(client, &subject, json!({ "seq": seq }).to_string()).await;
    let text = |field: &str| {
        let b64 = answer["message"][field].as_str().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64");
        String::from_utf8(bytes).expect("utf-8")
    };
    json!({
        "subject": answer["message"]["subject"],
        "hdrs": text("hdrs"),
        "data": text("data"),
        "error": answer["error"],
    })
}

/// A publish: subject, headers in order, payload.
type Case = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    &'static str,
);

/// One exchange: the acks of every publish, in order, then the stored messages.
async fn exchange(client: &async_nats::Client, raw: &mut hpub::Publisher) -> Vec<String> {
    for body in [
        json!({"name": "C", "subjects": ["c.>"], "allow_msg_counter": true}),
        json!({"name": "N", "subjects": ["n.>"]}),
    ] {
        let subject = format!("$JS.API.STREAM.CREATE.{}", body["name"].as_str().unwrap());
        let created = request(client, &subject, body.to_string()).await;
        assert!(created.get("error").is_none(), "{created}");
    }
    let incr = "Nats-Incr";
    let cases: Vec<Case> = vec![
        ("c.a", vec![(incr, "1")], ""),
        ("c.a", vec![(incr, "+41")], ""),
        ("c.a", vec![(incr, "-100")], ""),
        ("c.b", vec![(incr, "99999999999999999999999999999")], ""),
        ("c.b", vec![(incr, "1")], ""),
        ("c.b", vec![(incr, "-0"), ("X-Other", "kept")], ""),
        ("c.a", vec![(incr, "007"), ("Nats-Msg-Id", "m1")], ""),
        ("c.a", vec![(incr, "5"), ("Nats-Msg-Id", "m1")], ""),
        // Misuse, each refused as Go refuses it.
        ("c.a", vec![], "no increment"),
        ("c.a", vec![(incr, "1")], "a payload"),
        ("c.a", vec![(incr, "1.5")], ""),
        ("c.a", vec![(incr, "1_000")], ""),
        ("c.a", vec![(incr, "0x10")], ""),
        ("c.a", vec![(incr, " ")], ""),
        ("c.a", vec![(incr, "1"), ("Nats-Rollup", "sub")], ""),
        ("c.a", vec![(incr, "1"), ("Nats-Expected-Stream", "C")], ""),
        (
            "c.a",
            vec![(incr, "1"), ("Nats-Expected-Last-Sequence", "9")],
            "",
        ),
        (
            "c.a",
            vec![(incr, "1"), ("Nats-Expected-Last-Msg-Id", "m1")],
            "",
        ),
        (
            "c.a",
            vec![(incr, "1"), ("Nats-Expected-Last-Subject-Sequence", "9")],
            "",
        ),
        (
            "c.a",
            vec![
                (incr, "1"),
                ("Nats-Expected-Last-Subject-Sequence-Subject", "c.b"),
            ],
            "",
        ),
        ("c.a", vec![(incr, "1"), ("Nats-TTL", "5s")], ""),
        ("c.a", vec![("Nats-Msg-Id", "m2")], ""),
        ("n.a", vec![(incr, "1")], ""),
        ("n.a", vec![(incr, "one")], ""),
        ("n.a", vec![(incr, "1")], "x"),
        ("c.a", vec![(incr, "-1")], ""),
    ];
    let mut transcript = Vec::new();
    for (subject, headers, payload) in &cases {
        let ack = raw.publish(subject, headers, payload);
        transcript.push(format!("{subject} {headers:?} {payload:?} -> {ack}"));
    }
    for seq in 1..=7 {
        transcript.push(stored(client, "C", seq).await.to_string());
    }
    transcript
}

#[tokio::test]
async fn jetstream_counter_acks_stored_values_and_errors_match_go() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        transcripts.push((js.name, exchange(&client, &mut raw).await));
    }
    let (_, ours) = transcripts.first().expect("ours ran");
    let expect = [
        (0, r#"{"stream":"C","seq":1,"val":"1"}"#),
        (1, r#"{"stream":"C","seq":2,"val":"42"}"#),
        (2, r#"{"stream":"C","seq":3,"val":"-58"}"#),
        (
            3,
            r#"{"stream":"C","seq":4,"val":"99999999999999999999999999999"}"#,
        ),
        (
            4,
            r#"{"stream":"C","seq":5,"val":"100000000000000000000000000000"}"#,
        ),
        (6, r#"{"stream":"C","seq":7,"val":"-51"}"#),
        (7, r#"{"stream":"C","seq":7,"duplicate": true}"#),
    ];
    for (i, ack) in expect {
        assert!(ours[i].ends_with(ack), "{}", ours[i]);
    }
    let refusals = [
        (8, 10169),
        (9, 10170),
        (10, 10171),
        (14, 10171),
        (19, 10171),
        (20, 10166),
        (21, 10169),
        (22, 10168),
        (23, 10171),
    ];
    for (i, code) in refusals {
        assert!(
            ours[i].contains(&format!("\"err_code\":{code}")),
            "{}",
            ours[i]
        );
    }
    assert!(
        ours[25].ends_with(r#""seq":8,"val":"-52"}"#),
        "{}",
        ours[25]
    );
    let stored_b = &ours[cases_len(ours) + 5];
    assert!(stored_b.contains(r#""data":"{\"val\":\"100000000000000000000000000000\"}""#));
    if let Some((_, go)) = transcripts.get(1) {
        for (o, g) in ours.iter().zip(go) {
            assert_eq!(o, g, "ours vs Go");
        }
        assert_eq!(ours.len(), go.len());
    }
}

/// Where the stored messages start in a transcript (after the acks).
fn cases_len(transcript: &[String]) -> usize {
    transcript
        .iter()
        .take_while(|line| line.contains(" -> "))
        .count()
}
