//! Atomic batch publish (ADR-50) by raw publishes: `Nats-Batch-Id`, `-Sequence` and `-Commit`
//! on `allow_atomic` streams, the empty replies to staged messages, the commit's PubAck with
//! `batch` and `count`, every error a batch can provoke, the stored messages (an `eob`
//! commit marks the last one) and the `stream_batch_abandoned` advisories. The same exchange
//! runs against our binary and, where installed, Go's; the transcripts must be identical.
//! Then a kill -9 in the middle of batches: each is wholly stored or not at all.

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{json, Value};

#[path = "support/hpub.rs"]
mod hpub;
#[path = "support/jetstream.rs"]
mod support;
use support::{login, request, three_accounts};

const ID: &str = "Nats-Batch-Id";
const SEQ: &str = "Nats-Batch-Sequence";
const COMMIT: &str = "Nats-Batch-Commit";

/// A publish: subject, headers in order, payload.
type Case = (&'static str, Vec<(&'static str, String)>, &'static str);

fn batch(id: &str, seq: u64) -> Vec<(&'static str, String)> {
    vec![(ID, id.to_owned()), (SEQ, seq.to_string())]
}

fn commit(id: &str, seq: u64, how: &str) -> Vec<(&'static str, String)> {
    let mut h = batch(id, seq);
    h.push((COMMIT, how.to_owned()));
    h
}

fn with(
    mut h: Vec<(&'static str, String)>,
    name: &'static str,
    v: &str,
) -> Vec<(&'static str, String)> {
    h.push((name, v.to_owned()));
    h
}

#[allow(clippy::too_many_lines)] // One flat list of publishes.
fn cases() -> Vec<Case> {
    let long = "x".repeat(65);
    vec![
        ("a.1", batch("b1", 1), "one"),
        ("a.2", batch("b1", 2), "two"),
        ("a.3", commit("b1", 3, "1"), "three"),
        ("n.1", batch("b2", 1), ""),
        ("a.1", batch(&long, 1), ""),
        ("a.1", vec![(ID, "b3".into())], ""),
        ("a.1", vec![(ID, "b3".into()), (SEQ, "x".into())], ""),
        ("a.1", batch("b4", 2), ""),
        ("a.1", batch("b4", 1001), ""),
        ("a.1", commit("b4", 1001, "eob"), ""),
        ("a.1", batch("b5", 1), ""),
        ("a.1", batch("b5", 3), ""),
        ("a.1", batch("b5", 2), ""),
        ("a.1", commit("b6", 1, "eob"), ""),
        ("a.1", batch("b7", 1), ""),
        ("a.1", commit("b7", 2, "2"), ""),
        ("a.1", batch("b8", 1), "eight"),
        ("a.1", commit("b8", 2, "eob"), "not stored"),
        (
            "a.1",
            with(batch("b9", 1), "Nats-Expected-Last-Msg-Id", "m"),
            "",
        ),
        ("a.1", commit("b9", 2, "1"), ""),
        ("a.1", with(batch("b10", 1), "Nats-Msg-Id", "m1"), ""),
        ("a.1", with(commit("b10", 2, "1"), "Nats-Msg-Id", "m1"), ""),
        (
            "a.1",
            with(batch("b11", 1), "Nats-Expected-Last-Sequence", "4"),
            "",
        ),
        (
            "a.1",
            with(commit("b11", 2, "1"), "Nats-Expected-Last-Sequence", "5"),
            "",
        ),
        (
            "a.1",
            with(commit("b12", 1, "1"), "Nats-Expected-Last-Sequence", "99"),
            "",
        ),
        (
            "a.x",
            with(batch("b13", 1), "Nats-Expected-Last-Subject-Sequence", "0"),
            "",
        ),
        (
            "a.x",
            with(
                commit("b13", 2, "1"),
                "Nats-Expected-Last-Subject-Sequence",
                "0",
            ),
            "",
        ),
        (
            "a.1",
            with(
                commit("b14", 1, "1"),
                "Nats-Expected-Last-Subject-Sequence",
                "1",
            ),
            "",
        ),
        (
            "a.1",
            with(
                commit("b14", 1, "1"),
                "Nats-Expected-Last-Subject-Sequence",
                "4",
            ),
            "ok",
        ),
        ("a.1", with(commit("b15", 1, "1"), "Nats-Rollup", "sub"), ""),
        (
            "a.1",
            with(commit("b16", 1, "1"), "Nats-Required-Api-Level", "99"),
            "",
        ),
        (
            "a.1",
            with(commit("b17", 1, "1"), "Nats-Required-Api-Level", "1"),
            "level",
        ),
        (
            "a.1",
            with(commit("b18", 1, "1"), "Nats-Msg-Id", "m9"),
            "m9",
        ),
        (
            "a.1",
            with(commit("b19", 1, "1"), "Nats-Msg-Id", "m9"),
            "again",
        ),
        ("a.1", with(commit("b20", 1, "1"), "Nats-TTL", "5s"), ""),
        (
            "a.1",
            with(commit("b21", 1, "1"), "Nats-Expected-Stream", "N"),
            "",
        ),
        ("d.1", batch("b22", 1), ""),
        ("d.2", batch("b22", 2), ""),
        ("d.3", commit("b22", 3, "1"), ""),
        ("d.1", batch("b23", 1), "d"),
        ("d.2", commit("b23", 2, "1"), "d"),
        ("r.1", with(batch("b24", 1), "Nats-Rollup", "all"), "r1"),
        ("r.1", with(commit("b24", 2, "1"), "Nats-Rollup", "sub"), ""),
        ("r.1", batch("b25", 1), "r2"),
        ("r.2", with(batch("b25", 2), "Nats-Rollup", "all"), ""),
        ("r.2", with(batch("b26", 1), "Nats-Rollup", "sub"), "r3"),
        ("r.2", commit("b26", 2, "1"), "r4"),
    ]
}

/// The stored message at `seq` of `stream`, as text.
async fn stored(client: &async_nats::Client, stream: &str, seq: u64) -> String {
    let subject = format!("$JS.API.STREAM.MSG.GET.{stream}");
    let mut answer = request(client, &subject, json!({ "seq": seq }).to_string()).await;
    if let Some(msg) = answer.get_mut("message") {
        msg.as_object_mut().map(|m| m.remove("time"));
    }
    answer.to_string()
}

async fn exchange(
    (client, sys): (&async_nats::Client, &async_nats::Client),
    raw: &mut hpub::Publisher,
) -> Vec<String> {
    let mut advisories = client
        .subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.>")
        .await
        .unwrap();
    client.flush().await.unwrap();
    // Go sends a copy to the system account, naming the account.
    let mut system_copies = sys
        .subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.>")
        .await
        .unwrap();
    sys.flush().await.unwrap();
    for body in [
        json!({"name": "A", "subjects": ["a.>"], "allow_atomic": true, "storage": "file"}),
        json!({"name": "N", "subjects": ["n.>"]}),
        json!({"name": "D", "subjects": ["d.>"], "allow_atomic": true, "max_msgs": 2,
               "discard": "new", "storage": "memory"}),
        json!({"name": "R", "subjects": ["r.>"], "allow_atomic": true, "allow_rollup_hdrs": true}),
    ] {
        let subject = format!("$JS.API.STREAM.CREATE.{}", body["name"].as_str().unwrap());
        let created = request(client, &subject, body.to_string()).await;
        assert!(created.get("error").is_none(), "{created}");
    }
    let mut transcript = Vec::new();
    for (subject, headers, payload) in cases() {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let ack = raw.publish(subject, &headers, payload);
        transcript.push(format!("{subject} {headers:?} {payload:?} -> {ack}"));
    }
    // Fifty batches staged at once fill the stream; the next is refused.
    for i in 0..51 {
        let ack = raw.publish("a.1", &[(ID, &format!("open{i}")), (SEQ, "1")], "");
        transcript.push(format!("open{i} -> {ack}"));
    }
    for (stream, last) in [("A", 8), ("D", 2), ("R", 5)] {
        for seq in 1..=last {
            transcript.push(stored(client, stream, seq).await);
        }
    }
    let mut reasons = Vec::new();
    for subscription in [&mut advisories, &mut system_copies] {
        for _ in 0..3 {
            let next = tokio::time::timeout(Duration::from_secs(5), subscription.next()).await;
            let msg = next.expect("advisory in time").expect("subscription");
            let doc: Value = serde_json::from_slice(&msg.payload).unwrap();
            reasons.push(format!(
                "{} {} {} {} {} {}",
                msg.subject,
                doc["type"],
                doc["batch"],
                doc["reason"],
                doc["account"],
                doc["domain"]
            ));
        }
    }
    reasons.sort();
    transcript.extend(reasons);
    transcript
}

#[tokio::test]
async fn jetstream_batch_atomic_acks_errors_and_stored_match_go() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        let sys = login(&js.server, "sys").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        transcripts.push((js.name, exchange((&client, &sys), &mut raw).await));
    }
    let (_, ours) = transcripts.first().expect("ours ran");
    let ack = |i: usize| ours[i].rsplit(" -> ").next().unwrap_or_default().to_owned();
    assert_eq!(ack(0), "");
    assert_eq!(ack(2), r#"{"stream":"A","seq":3,"batch":"b1","count":3}"#);
    assert!(ack(3).contains("10174"), "{}", ack(3));
    assert_eq!(ack(17), r#"{"stream":"A","seq":4,"batch":"b8","count":1}"#);
    if let Some((_, go)) = transcripts.get(1) {
        for (o, g) in ours.iter().zip(go) {
            assert_eq!(o, g, "ours vs Go");
        }
        assert_eq!(ours.len(), go.len());
    }
}

/// The frames of `batches` atomic batches of `BATCH_MSGS` messages each on `a.<k>`.
fn batch_frames(batches: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for b in 0..batches {
        for k in 1..=BATCH_MSGS {
            let mut block = format!("NATS/1.0\r\n{ID}: k{b}\r\n{SEQ}: {k}\r\n");
            if k == BATCH_MSGS {
                block.push_str(COMMIT);
                block.push_str(": 1\r\n");
            }
            block.push_str("\r\n");
            let payload = format!("batch {b} message {k} {}", "x".repeat(200));
            let head = format!(
                "HPUB a.{k} ACKS {} {}\r\n",
                block.len(),
                block.len() + payload.len()
            );
            out.extend_from_slice(head.as_bytes());
            out.extend_from_slice(block.as_bytes());
            out.extend_from_slice(payload.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    out
}

const BATCH_MSGS: u64 = 20;

#[tokio::test]
async fn jetstream_batch_atomic_all_or_nothing_across_kill_9() {
    use std::io::Write as _;
    let config = three_accounts;
    let mut js = support::JsServer::start("ours", false, config).expect("ours starts");
    let client = login(&js.server, "a").await;
    let body = json!({"name": "A", "subjects": ["a.>"], "allow_atomic": true});
    let created = request(&client, "$JS.API.STREAM.CREATE.A", body.to_string()).await;
    assert!(created.get("error").is_none(), "{created}");
    // A publisher pours batches in from its own thread while the server is killed.
    let addr = js.server.addr();
    let publisher = std::thread::spawn(move || {
        let Ok(mut conn) = std::net::TcpStream::connect(addr) else {
            return;
        };
        let connect =
            "CONNECT {\"verbose\":false,\"headers\":true,\"user\":\"a\",\"pass\":\"a\"}\r\n";
        let _ = conn.write_all(connect.as_bytes());
        let frames = batch_frames(400);
        for chunk in frames.chunks(7000) {
            if conn.write_all(chunk).is_err() {
                return;
            }
        }
    });
    let deadline = tokio::time::Instant::now() + support::WAIT;
    loop {
        let info = request(&client, "$JS.API.STREAM.INFO.A", "").await;
        if info["state"]["messages"].as_u64().unwrap_or(0) >= 10 * BATCH_MSGS {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "batches stored in time"
        );
    }
    drop(client);
    js.server.kill();
    let _ = publisher.join();
    let js = support::JsServer::start_in(js.dir, "ours", false, config).expect("restarts");
    let client = login(&js.server, "a").await;
    let info = request(&client, "$JS.API.STREAM.INFO.A", "").await;
    let msgs = info["state"]["messages"].as_u64().expect("messages");
    let last = info["state"]["last_seq"].as_u64().expect("last_seq");
    assert!(msgs >= 10 * BATCH_MSGS, "{info}");
    assert_eq!(msgs % BATCH_MSGS, 0, "a partial batch survived: {info}");
    assert_eq!(msgs, last, "{info}");
    // Every stored message sits at its batch sequence; the last of each batch committed it.
    for seq in [1, BATCH_MSGS, last - BATCH_MSGS + 1, last] {
        let got = request(
            &client,
            "$JS.API.STREAM.MSG.GET.A",
            json!({ "seq": seq }).to_string(),
        )
        .await;
        let subject = got["message"]["subject"].as_str().unwrap_or_default();
        let k = (seq - 1) % BATCH_MSGS + 1;
        assert_eq!(subject, format!("a.{k}"), "{got}");
    }
}
