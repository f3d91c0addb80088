//! Fast batch publish (`allow_batched`) by raw publishes whose reply is
//! `<prefix>.<id>.<flow>.<ok|fail>.<seq>.<op>.$FI`: the flow acks, gap and error reports and
//! the PubAck that ends a batch (commit, commit-eob, a gap or an error), pings, the refusals
//! (disabled stream, invalid pattern or id, unknown batch, the per-stream limit of open
//! batches) and what is stored. The same exchange runs against our binary and, where
//! installed, Go's; the transcripts must be identical.
//!
//! Every publish is followed by a barrier: a publish to the same stream refused by its
//! `Nats-Expected-Stream`, whose error ack comes after everything the stream sent before.

use serde_json::json;

#[path = "support/jetstream.rs"]
mod support;
use natrium_tests::raw::RawClient;
use support::{login, request, three_accounts};

const BARRIER: &str = "BAR";

/// A raw connection (of user `a` unless told) subscribed to every fast batch reply (`fb.>`), the
/// barrier's answers and what streams republish (`rp.>`).
struct Fast(RawClient);

impl Fast {
    fn connect(server: &natrium_tests::ServerProcess) -> Fast {
        Self::connect_as(server, "a")
    }

    fn connect_as(server: &natrium_tests::ServerProcess, user: &str) -> Fast {
        let mut raw = RawClient::connect(&server.addr());
        let connect = format!(
            "CONNECT {{\"verbose\":false,\"headers\":true,\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\n\
             SUB fb.> 1\r\nSUB {BARRIER} 2\r\nSUB rp.> 3\r\nPING\r\n"
        );
        raw.send(connect.as_bytes());
        loop {
            let line = raw.read_line().expect("PONG");
            assert!(!line.contains("-ERR"), "{line}");
            if line == "PONG" {
                break;
            }
        }
        Fast(raw)
    }

    fn frame(subject: &str, reply: &str, headers: &[(&str, &str)], payload: &str) -> Vec<u8> {
        let mut block = String::from("NATS/1.0\r\n");
        for (name, value) in headers {
            block.push_str(name);
            block.push_str(": ");
            block.push_str(value);
            block.push_str("\r\n");
        }
        block.push_str("\r\n");
        let total = block.len() + payload.len();
        let mut frame =
            format!("HPUB {subject} {reply} {} {total}\r\n{block}", block.len()).into_bytes();
        frame.extend_from_slice(payload.as_bytes());
        frame.extend_from_slice(b"\r\n");
        frame
    }

    /// Sends `frames`, then the barrier on `subject`'s stream; every reply before the
    /// barrier's answer, as `<subject> <body>`.
    fn exchange(&mut self, frames: &[u8], subject: &str) -> Vec<String> {
        let mut out = frames.to_vec();
        out.extend(Self::frame(
            subject,
            BARRIER,
            &[("Nats-Expected-Stream", "nope")],
            "",
        ));
        self.0.send(&out);
        self.read_until(|subject, _| subject == BARRIER)
    }

    /// The replies up to the one `last(subject, body)` is true of (the barrier's answer is
    /// left out).
    fn read_until(&mut self, last: impl Fn(&str, &str) -> bool) -> Vec<String> {
        let mut replies = Vec::new();
        loop {
            let line = self.0.read_line().expect("a line");
            if line == "PING" {
                self.0.send(b"PONG\r\n");
                continue;
            }
            let parts: Vec<&str> = line.split(' ').collect();
            assert!(matches!(parts[0], "MSG" | "HMSG"), "{line}");
            let size: usize = parts.last().unwrap().parse().unwrap();
            let body = self.0.read_bytes(size + 2);
            let body = String::from_utf8_lossy(&body[..size]).into_owned();
            let done = last(parts[1], &body);
            if parts[1].starts_with("rp.") {
                // A republished copy: its headers carry times; where it comes is compared.
                replies.push(parts[1].to_owned());
            } else if parts[1] != BARRIER {
                replies.push(format!("{} {body}", parts[1]));
            }
            if done {
                return replies;
            }
        }
    }

    /// One publish and its replies, as a transcript line.
    fn publish(&mut self, subject: &str, reply: &str, headers: &[(&str, &str)]) -> String {
        let replies = self.exchange(&Self::frame(subject, reply, headers, "p"), subject);
        format!("{subject} {reply} {headers:?} -> {}", replies.join(" | "))
    }
}

/// A fast batch reply: `fb.<id>.<flow>.<gap>.<seq>.<op>.$FI`.
fn fi(id: &str, flow: u32, gap: &str, seq: u64, op: u8) -> String {
    format!("fb.{id}.{flow}.{gap}.{seq}.{op}.$FI")
}

/// A publish: subject, reply, headers in order.
type Case = (&'static str, String, Vec<(&'static str, &'static str)>);

/// The publishes, in order.
fn cases() -> Vec<Case> {
    let long = "x".repeat(65);
    let mut c = Vec::new();
    let mut add = |s: &'static str, r: String, h: Vec<(&'static str, &'static str)>| {
        c.push((s, r, h));
    };
    // A whole batch, acks every 2 messages, committed by its sixth.
    add("f.1", fi("b1", 2, "fail", 1, 0), vec![]);
    for seq in 2..=5 {
        add("f.2", fi("b1", 2, "fail", seq, 1), vec![("K", "v")]);
    }
    add("f.3", fi("b1", 2, "fail", 6, 2), vec![]);
    // Gaps: forward with fail ends the batch; with ok it goes on; backwards always ends.
    add("f.1", fi("b2", 10, "fail", 1, 0), vec![]);
    add("f.1", fi("b2", 10, "fail", 3, 1), vec![]);
    add("f.1", fi("b3", 10, "ok", 1, 0), vec![]);
    add("f.1", fi("b3", 10, "ok", 3, 1), vec![]);
    add("f.1", fi("b3", 10, "ok", 4, 2), vec![]);
    add("f.1", fi("b4", 10, "ok", 1, 0), vec![]);
    add("f.1", fi("b4", 10, "ok", 2, 1), vec![]);
    add("f.1", fi("b4", 10, "ok", 2, 1), vec![]);
    // Commit-eob: the batch ends before the message, which is not stored.
    add("f.1", fi("b5", 10, "fail", 1, 0), vec![]);
    add("f.1", fi("b5", 10, "fail", 2, 1), vec![]);
    add("f.eob", fi("b5", 10, "fail", 3, 3), vec![]);
    // Pings: the flow state again; ahead of the server, a gap (fail ends, ok goes on).
    add("f.1", fi("b6", 10, "fail", 1, 0), vec![]);
    add("f.1", fi("b6", 10, "fail", 1, 4), vec![]);
    add("f.1", fi("b6", 10, "fail", 5, 4), vec![]);
    add("f.1", fi("b7", 10, "ok", 1, 0), vec![]);
    add("f.1", fi("b7", 10, "ok", 3, 4), vec![]);
    add("f.1", fi("b7", 10, "ok", 4, 2), vec![]);
    // Refusals before any batch: unknown ids, invalid pattern and id, disabled stream.
    add("f.1", fi("b99", 10, "ok", 2, 1), vec![]);
    add("f.1", fi("b99", 10, "ok", 1, 4), vec![]);
    add("f.1", "fb.b1.$FI".into(), vec![]);
    add("f.1", fi("b1", 10, "maybe", 1, 0), vec![]);
    add("f.1", fi(&long, 10, "ok", 1, 0), vec![]);
    add("n.1", fi("n1", 10, "ok", 1, 0), vec![]);
    add("n.1", "fb.n.$FI".into(), vec![]);
    // Refused messages: a first one (fail) gets the plain error; later ones an `err` report.
    add(
        "f.1",
        fi("b8", 10, "fail", 1, 0),
        vec![("Nats-Expected-Stream", "X")],
    );
    add("f.1", fi("b8", 10, "fail", 2, 1), vec![]);
    add("f.1", fi("b9", 10, "ok", 1, 0), vec![]);
    add(
        "f.1",
        fi("b9", 10, "ok", 2, 1),
        vec![("Nats-Expected-Stream", "X")],
    );
    add("f.1", fi("b9", 10, "ok", 3, 2), vec![]);
    add("f.1", fi("b10", 10, "fail", 1, 0), vec![]);
    add("f.1", fi("b10", 10, "fail", 2, 1), vec![("Nats-TTL", "5s")]);
    // Duplicates, the API level, a one-message batch.
    add(
        "f.1",
        fi("b11", 10, "fail", 1, 0),
        vec![("Nats-Msg-Id", "m1")],
    );
    add(
        "f.1",
        fi("b12", 10, "fail", 1, 2),
        vec![("Nats-Msg-Id", "m1")],
    );
    add(
        "f.1",
        fi("b11", 10, "fail", 2, 1),
        vec![("Nats-Msg-Id", "m1")],
    );
    add("f.1", fi("b11", 10, "fail", 3, 3), vec![]);
    add(
        "f.1",
        fi("b13", 10, "fail", 1, 0),
        vec![("Nats-Required-Api-Level", "99")],
    );
    add(
        "f.lvl",
        fi("b14", 10, "fail", 1, 2),
        vec![("Nats-Required-Api-Level", "1")],
    );
    // Expectations: checked per message as for a publish.
    let expect = |name: &'static str, v: &'static str| vec![(name, v)];
    add(
        "f.x",
        fi("b15", 10, "ok", 1, 0),
        expect("Nats-Expected-Last-Msg-Id", "no"),
    );
    add(
        "f.x",
        fi("b15", 10, "ok", 2, 1),
        expect("Nats-Expected-Last-Sequence", "1"),
    );
    let last_subject = "Nats-Expected-Last-Subject-Sequence";
    add("f.x", fi("b15", 10, "ok", 3, 1), expect(last_subject, "1"));
    add("f.x", fi("b15", 10, "ok", 4, 1), expect(last_subject, "0"));
    add("f.x", fi("b15", 10, "ok", 5, 3), vec![]);
    // A refusal made while storing: answered as a publish, the batch goes on (even `fail`).
    let bad_id = || expect("Nats-Expected-Last-Msg-Id", "no");
    for (id, last_op) in [("b16", 3), ("b17", 2)] {
        add("f.y", fi(id, 2, "fail", 1, 0), vec![]);
        add("f.y", fi(id, 2, "fail", 2, 1), bad_id());
        add("f.y", fi(id, 2, "fail", 3, 1), vec![]);
        add("f.y", fi(id, 2, "fail", 4, 1), vec![]);
        add("f.y", fi(id, 2, "fail", 5, last_op), vec![]);
    }
    c
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

async fn run(client: &async_nats::Client, raw: &mut Fast) -> Vec<String> {
    for body in [
        json!({"name": "F", "subjects": ["f.>"], "allow_batched": true, "storage": "file"}),
        json!({"name": "N", "subjects": ["n.>"]}),
        json!({"name": "L", "subjects": ["l.>"], "allow_batched": true, "storage": "memory"}),
        json!({"name": "Q", "subjects": ["q.>"], "allow_batched": true, "no_ack": true}),
        json!({"name": "S", "subjects": ["s.>"], "allow_batched": true, "storage": "memory"}),
        json!({"name": "R", "subjects": ["r.>"], "allow_batched": true,
               "republish": {"src": ">", "dest": "rp.>"}}),
    ] {
        let subject = format!("$JS.API.STREAM.CREATE.{}", body["name"].as_str().unwrap());
        let created = request(client, &subject, body.to_string()).await;
        assert!(created.get("error").is_none(), "{created}");
    }
    let mut transcript = Vec::new();
    for (subject, reply, headers) in cases() {
        transcript.push(raw.publish(subject, &reply, &headers));
    }
    // Flow ramps up from 1 (another batch is open) towards 100, the client's flow.
    raw.publish("f.r", &fi("hold", 10, "ok", 1, 0), &[]);
    let mut frames = Vec::new();
    for seq in 1..=20 {
        frames.extend(Fast::frame(
            "f.r",
            &fi("ramp", 100, "ok", seq, u8::from(seq > 1)),
            &[],
            "",
        ));
    }
    transcript.push(format!(
        "ramp -> {}",
        raw.exchange(&frames, "f.r").join(" | ")
    ));
    let info = request(client, "$JS.API.STREAM.INFO.F", "").await;
    let last = info["state"]["last_seq"].as_u64().expect("last_seq");
    transcript.push(format!("F state {}", info["state"]["messages"]));
    for seq in 1..=last {
        transcript.push(stored(client, "F", seq).await);
    }
    transcript.extend(limit(raw));
    transcript.push(no_ack(raw));
    transcript.push(slow_down(raw));
    transcript.push(republished(raw));
    transcript.push(counted(client, raw).await);
    transcript
}

/// A counter stream's increments in a fast batch: each stored as it comes, the batch's
/// PubAck without `val`.
async fn counted(client: &async_nats::Client, raw: &mut Fast) -> String {
    let body = json!({"name": "K", "subjects": ["k.>"], "allow_batched": true,
                      "allow_msg_counter": true});
    let created = request(client, "$JS.API.STREAM.CREATE.K", body.to_string()).await;
    let mut out = vec![format!("K created {}", created["error"])];
    for (seq, op, incr) in [(1, 0, "1"), (2, 1, "2"), (3, 2, "3")] {
        let reply = fi("k", 10, "fail", seq, op);
        let replies = raw.exchange(
            &Fast::frame("k.1", &reply, &[("Nats-Incr", incr)], ""),
            "k.1",
        );
        out.extend(replies);
    }
    if created.get("error").is_none() {
        out.push(stored(client, "K", 3).await);
    }
    out.join(" | ")
}

/// A batch granted 500 alone is slowed (halved at each ack) to 50 once ten are open.
fn slow_down(raw: &mut Fast) -> String {
    let mut frames = Fast::frame("s.1", &fi("big", 500, "ok", 1, 0), &[], "");
    for i in 0..9 {
        frames.extend(Fast::frame(
            "s.1",
            &fi(&format!("s{i}"), 500, "ok", 1, 0),
            &[],
            "",
        ));
    }
    for seq in 2..=1000 {
        frames.extend(Fast::frame("s.1", &fi("big", 500, "ok", seq, 1), &[], ""));
    }
    let replies = raw.exchange(&frames, "s.1");
    let big: Vec<String> = replies
        .into_iter()
        .filter(|r| r.starts_with("fb.big."))
        .collect();
    format!("slow -> {}", big.join(" | "))
}

/// A fast batch's stored messages are republished. (Where the copies come among the
/// replies differs: ours go out after the stored group, before its acks.)
fn republished(raw: &mut Fast) -> String {
    let mut frames = Vec::new();
    for (seq, op) in [(1, 0), (2, 1), (2, 1), (3, 1)] {
        frames.extend(Fast::frame("r.1", &fi("rp", 2, "ok", seq, op), &[], "x"));
    }
    frames.extend(Fast::frame("r.1", &fi("rp", 2, "ok", 4, 2), &[], "x"));
    let (copies, replies): (Vec<String>, Vec<String>) = raw
        .exchange(&frames, "r.1")
        .into_iter()
        .partition(|r| r.starts_with("rp."));
    format!("republish -> {copies:?} {}", replies.join(" | "))
}

/// A `no_ack` stream answers no refusal and sends no first flow ack; the rest of a fast
/// batch's flow, and its PubAck, go out. (No barrier: the stream answers none.)
fn no_ack(raw: &mut Fast) -> String {
    let mut frames = Vec::new();
    frames.extend(Fast::frame("q.1", &fi("q1", 2, "fail", 1, 0), &[], ""));
    frames.extend(Fast::frame("q.1", "fb.bad.$FI", &[], ""));
    frames.extend(Fast::frame("q.2", &fi("q1", 2, "fail", 2, 1), &[], ""));
    frames.extend(Fast::frame("q.3", &fi("q1", 2, "fail", 3, 3), &[], ""));
    raw.0.send(&frames);
    let replies = raw.read_until(|_, body| body.contains("\"batch\""));
    format!("no_ack -> {}", replies.join(" | "))
}

/// A stream takes 1000 open fast batches; the next is refused (429).
fn limit(raw: &mut Fast) -> Vec<String> {
    let mut frames = Vec::new();
    for i in 0..1000 {
        frames.extend(Fast::frame(
            "l.1",
            &fi(&format!("o{i}"), 10, "ok", 1, 0),
            &[],
            "",
        ));
    }
    let opened = raw.exchange(&frames, "l.1");
    let over = raw.publish("l.1", &fi("o1000", 10, "ok", 1, 0), &[]);
    let first = opened
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(" | ");
    vec![format!("opened {} {first}", opened.len()), over]
}

#[tokio::test]
async fn jetstream_batch_fast_flow_gaps_errors_and_stored_match_go() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        let mut raw = Fast::connect(&js.server);
        transcripts.push((js.name, run(&client, &mut raw).await));
    }
    let (_, ours) = transcripts.first().expect("ours ran");
    let line = |prefix: &str| ours.iter().find(|l| l.contains(prefix)).cloned();
    let first = line("fb.b1.2.fail.1.0.$FI").unwrap_or_default();
    assert!(
        first.contains(r#"{"type":"ack","seq":0,"msgs":2}"#),
        "{first}"
    );
    let commit = line("fb.b1.2.fail.6.2.$FI").unwrap_or_default();
    assert!(
        commit.contains(r#"{"stream":"F","seq":6,"batch":"b1","count":6}"#),
        "{commit}"
    );
    if let Some((_, go)) = transcripts.get(1) {
        if let Ok(dir) = std::env::var("FAST_BATCH_DUMP") {
            let _ = std::fs::write(format!("{dir}/ours.txt"), ours.join("\n"));
            let _ = std::fs::write(format!("{dir}/go.txt"), go.join("\n"));
        }
        for (o, g) in ours.iter().zip(go) {
            assert_eq!(o, g, "ours vs Go");
        }
        assert_eq!(ours.len(), go.len());
    }
}

/// `three_accounts` with `limits { batch { timeout: 500ms } }`.
fn short_timeout(store: &std::path::Path) -> String {
    three_accounts(store).replace(
        "jetstream {",
        "jetstream { limits { batch { timeout: \"500ms\" } }\n",
    )
}

/// An idle fast batch is dropped at the timeout (silently: a later message finds no batch);
/// an idle atomic batch opened just after it is abandoned with its advisory, sent by the
/// stream's timer with no further message.
// TODO(#17): the other batch limits (`max_inflight_per_stream`, `max_inflight_total`,
// `max_msgs`) are taken but not provoked here (Go's defaults are, in the test above).
async fn idle(client: &async_nats::Client, raw: &mut Fast) -> Vec<String> {
    use futures::StreamExt as _;
    let mut advisories = client
        .subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.>")
        .await
        .unwrap();
    client.flush().await.unwrap();
    let body = json!({"name": "T", "subjects": ["t.>"], "allow_batched": true,
                      "allow_atomic": true});
    let created = request(client, "$JS.API.STREAM.CREATE.T", body.to_string()).await;
    assert!(created.get("error").is_none(), "{created}");
    let atomic = [("Nats-Batch-Id", "a1"), ("Nats-Batch-Sequence", "1")];
    let mut transcript = vec![
        raw.publish("t.1", &fi("slow", 10, "ok", 1, 0), &[]),
        raw.publish("t.1", "fb.atomic", &atomic),
    ];
    let next = tokio::time::timeout(support::WAIT, advisories.next()).await;
    let msg = next.expect("advisory in time").expect("subscription");
    let doc: serde_json::Value = serde_json::from_slice(&msg.payload).unwrap();
    transcript.push(format!(
        "{} {} {} {} {}",
        msg.subject, doc["type"], doc["stream"], doc["batch"], doc["reason"]
    ));
    transcript.push(raw.publish("t.1", &fi("slow", 10, "ok", 2, 1), &[]));
    transcript
}

#[tokio::test]
async fn jetstream_batch_fast_idle_timeout_matches_go() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(short_timeout) {
        let client = login(&js.server, "a").await;
        let mut raw = Fast::connect(&js.server);
        let mut transcript = idle(&client, &mut raw).await;
        // The configured batch limits show in `/varz` as Go's `JSLimitOpts`.
        let port = js.server.monitor_port.expect("monitoring port");
        let varz = natrium_tests::raw::http_get_json(port, "/varz");
        transcript.push(varz["jetstream"]["limits"].to_string());
        transcripts.push(transcript);
    }
    let ours = transcripts.first().expect("ours ran");
    assert!(ours[2].contains("\"timeout\""), "{}", ours[2]);
    assert!(ours[3].contains("10208"), "{}", ours[3]);
    assert!(
        ours[4].contains(r#""max_batch_timeout":500000000"#),
        "{}",
        ours[4]
    );
    if let Some(go) = transcripts.get(1) {
        assert_eq!(ours, go, "ours vs Go");
    }
}

/// `A` exports its stream's subjects as a service; `C` imports them.
fn importing(store: &std::path::Path) -> String {
    format!(
        "accounts {{\n\
           SYS {{ users [ {{user: sys, password: sys}} ] }}\n\
           A {{ jetstream: enabled, users [ {{user: a, password: a}} ],\n\
                exports [ {{service: \"f.>\"}} ] }}\n\
           C {{ users [ {{user: c, password: c}} ],\n\
                imports [ {{service: {{account: A, subject: \"f.>\"}}}} ] }}\n\
         }}\n\
         system_account: SYS\n\
         jetstream {{ store_dir: \"{}\" }}\n",
        store.display()
    )
}

/// Through a service import the stream sees a mapped reply; the fast batch is read from the
/// original one, which `Nats-Request-Info` carries (each publish gets one response back).
#[tokio::test]
async fn jetstream_batch_fast_through_service_import_matches_go() {
    let mut transcripts = Vec::new();
    for js in support::ours_then_go(importing) {
        let client = login(&js.server, "a").await;
        let body = json!({"name": "F", "subjects": ["f.>"], "allow_batched": true});
        let created = request(&client, "$JS.API.STREAM.CREATE.F", body.to_string()).await;
        assert!(created.get("error").is_none(), "{created}");
        let mut raw = Fast::connect_as(&js.server, "c");
        let mut transcript = Vec::new();
        for (seq, op) in [(1, 0), (2, 1), (3, 2)] {
            transcript.push(raw.publish("f.1", &fi("imp", 2, "fail", seq, op), &[]));
        }
        transcripts.push(transcript);
    }
    let ours = transcripts.first().expect("ours ran");
    assert!(
        ours[2].contains(r#""batch":"imp","count":3"#),
        "{}",
        ours[2]
    );
    if let Some(go) = transcripts.get(1) {
        assert_eq!(ours, go, "ours vs Go");
    }
}
