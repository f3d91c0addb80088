//! JetStream consumer priority groups (ADR-42) and `CONSUMER.RESET`, over raw requests:
//! `pinned_client` (the `Nats-Pin-Id` header, `423 Nats-Pin-Id mismatch`, `423
//! Nats-Wrong-Pin-Id` after an UNPIN or once the pin lapsed after `priority_timeout`, a new
//! pin, `pinned_client_id` in the info, the pinned and unpinned advisories), `overflow`
//! (a request below its `min_pending` waits until it expires), `prioritized` (the lower
//! priority served first), and RESET's responses and refusals (to a sequence, to the ack
//! floor, below the start sequence, not allowed, bad JSON, no answer for an unknown
//! consumer), persisted across a restart. Each exchange runs against our binary and, where
//! installed, Go's, and the frames and documents must be equal.

use std::path::Path;
use std::time::Duration;

use natrium_tests::raw::RawClient;
use serde_json::Value;

#[path = "support/jetstream.rs"]
mod support;
use support::{normalise_times, JsServer};

fn config(store: &Path) -> String {
    format!("jetstream {{ store_dir: \"{}\" }}\n", store.display())
}

/// One frame: subject, header block (pin ids replaced by `<pin>`) and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Frame {
    subject: String,
    sid: String,
    headers: Option<String>,
    payload: String,
}

fn raw(server: &JsServer) -> RawClient {
    let mut c = RawClient::connect(&server.server.addr());
    let out = c.exchange(
        b"CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\n\
          SUB r.> 1\r\n",
    );
    assert!(!out.contains("-ERR"), "{out}");
    c
}

fn read_frame(c: &mut RawClient) -> Frame {
    let line = c.read_line().expect("frame line");
    let parts: Vec<&str> = line.split(' ').collect();
    let numbers: Vec<usize> = parts.iter().rev().map_while(|p| p.parse().ok()).collect();
    let (hlen, total) = match parts[0] {
        "HMSG" => (numbers[1], numbers[0]),
        "MSG" => (0, numbers[0]),
        other => panic!("unexpected {other}: {line}"),
    };
    let body = c.read_bytes(total + 2);
    Frame {
        subject: parts[1].to_owned(),
        sid: parts[2].to_owned(),
        headers: (hlen > 0).then(|| String::from_utf8_lossy(&body[..hlen]).into_owned()),
        payload: String::from_utf8_lossy(&body[hlen..total]).into_owned(),
    }
}

fn send(c: &mut RawClient, subject: &str, reply: &str, body: &str) {
    c.send(format!("PUB {subject} {reply} {}\r\n{body}\r\n", body.len()).as_bytes());
}

fn ask(c: &mut RawClient, subject: &str, body: &str) -> Frame {
    send(c, subject, "r.api", body);
    read_frame(c)
}

fn setup(c: &mut RawClient, consumer: &str) {
    let stream = r#"{"name":"S","subjects":["s.>"],"storage":"memory"}"#;
    assert!(ask(c, "$JS.API.STREAM.CREATE.S", stream)
        .payload
        .contains("\"created\""));
    for i in 1..=4 {
        assert!(ask(c, "s.x", &format!("m{i}")).payload.contains("\"seq\""));
    }
    let body = format!(r#"{{"stream_name":"S","config":{consumer}}}"#);
    let created = ask(c, "$JS.API.CONSUMER.CREATE.S.C", &body);
    assert!(created.payload.contains("\"config\""), "{created:?}");
}

fn next(c: &mut RawClient, n: u32, body: &str) -> Frame {
    send(c, "$JS.API.CONSUMER.MSG.NEXT.S.C", &format!("r.{n}"), body);
    read_frame(c)
}

/// The pin id a delivery carries.
fn pin_of(frame: &Frame) -> String {
    let headers = frame.headers.as_deref().unwrap_or_default();
    headers
        .lines()
        .find_map(|l| l.strip_prefix("Nats-Pin-Id: "))
        .unwrap_or_else(|| panic!("no pin in {frame:?}"))
        .to_owned()
}

fn hide_pin(mut frame: Frame, pin: &str) -> Frame {
    frame.headers = frame.headers.map(|h| h.replace(pin, "<pin>"));
    frame.payload = frame.payload.replace(pin, "<pin>");
    frame
}

fn pinned_exchange(server: &JsServer) -> Vec<Frame> {
    let mut c = raw(server);
    setup(
        &mut c,
        r#"{"durable_name":"C","ack_policy":"explicit","priority_policy":"pinned_client","priority_groups":["A"]}"#,
    );
    let first = next(&mut c, 1, r#"{"batch":1,"group":"A"}"#);
    let pin = pin_of(&first);
    assert_eq!(pin.len(), 22, "{first:?}");
    let mut out = vec![hide_pin(first, &pin)];
    out.push(next(&mut c, 2, r#"{"batch":1,"group":"A","id":"other"}"#));
    let again = next(
        &mut c,
        3,
        &format!(r#"{{"batch":1,"group":"A","id":"{pin}"}}"#),
    );
    out.push(hide_pin(again, &pin));
    out.push(next(&mut c, 4, r#"{"batch":1,"group":"B"}"#));
    let info = ask(&mut c, "$JS.API.CONSUMER.INFO.S.C", "");
    let doc: Value = serde_json::from_str(&info.payload).expect("info");
    let group = &doc["priority_groups"][0];
    assert_eq!(
        group["pinned_client_id"],
        Value::from(pin.as_str()),
        "{doc}"
    );
    assert_ne!(group["pinned_ts"], Value::from("0001-01-01T00:00:00Z"));
    let unpin = ask(&mut c, "$JS.API.CONSUMER.UNPIN.S.C", r#"{"group":"A"}"#);
    out.push(unpin);
    let stale = next(
        &mut c,
        5,
        &format!(r#"{{"batch":1,"group":"A","id":"{pin}"}}"#),
    );
    out.push(hide_pin(stale, &pin));
    let fresh = next(&mut c, 6, r#"{"batch":1,"group":"A"}"#);
    let new_pin = pin_of(&fresh);
    assert_ne!(new_pin, pin);
    out.push(hide_pin(fresh, &new_pin));
    out
}

#[test]
fn jetstream_priority_pinned_client_statuses_match_go() {
    let runs: Vec<Vec<Frame>> = support::ours_then_go(config)
        .iter()
        .map(pinned_exchange)
        .collect();
    let ours = &runs[0];
    assert_eq!(
        ours[1].headers.as_deref(),
        Some("NATS/1.0 423 Nats-Pin-Id mismatch\r\n\r\n")
    );
    assert_eq!(
        ours[5].headers.as_deref(),
        Some("NATS/1.0 423 Nats-Wrong-Pin-Id\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n")
    );
    if let Some(go) = runs.get(1) {
        assert_eq!(ours, go);
    }
}

fn overflow_and_prioritized(server: &JsServer) -> Vec<Frame> {
    let mut c = raw(server);
    setup(
        &mut c,
        r#"{"durable_name":"C","ack_policy":"explicit","priority_policy":"overflow","priority_groups":["A"]}"#,
    );
    let mut out = vec![
        next(
            &mut c,
            1,
            r#"{"batch":1,"group":"A","min_pending":5,"expires":200000000}"#,
        ),
        next(
            &mut c,
            2,
            r#"{"batch":1,"group":"A","min_pending":4,"expires":200000000}"#,
        ),
        next(&mut c, 3, r#"{"batch":1,"group":"A","priority":1}"#),
    ];
    let body = r#"{"stream_name":"S","config":{"durable_name":"P","ack_policy":"explicit","priority_policy":"prioritized","priority_groups":["A"]}}"#;
    assert!(ask(&mut c, "$JS.API.CONSUMER.CREATE.S.P", body)
        .payload
        .contains("\"config\""));
    // Both requests in one write: the lower priority value is served first. A delivery is
    // seen on the stored subject: each requester's own subscription (its sid) tells them
    // apart.
    let low = r#"{"batch":2,"group":"A","priority":1,"expires":500000000}"#;
    let high = r#"{"batch":2,"group":"A","priority":0,"expires":500000000}"#;
    let out_sub = c.exchange(b"SUB low.> 7\r\nSUB high.> 8\r\nPING\r\n");
    assert!(out_sub.contains("PONG"), "{out_sub}");
    let mut two = Vec::new();
    for (reply, body) in [("low.1", low), ("high.1", high)] {
        two.extend_from_slice(
            format!(
                "PUB $JS.API.CONSUMER.MSG.NEXT.S.P {reply} {}\r\n{body}\r\n",
                body.len()
            )
            .as_bytes(),
        );
    }
    c.send(&two);
    out.extend((0..4).map(|_| read_frame(&mut c)));
    out
}

#[test]
fn jetstream_priority_overflow_and_prioritized_match_go() {
    let runs: Vec<Vec<Frame>> = support::ours_then_go(config)
        .iter()
        .map(overflow_and_prioritized)
        .collect();
    let ours = &runs[0];
    assert_eq!(
        ours[0].headers.as_deref(),
        Some("NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n")
    );
    assert_eq!(
        (ours[1].payload.as_str(), ours[2].payload.as_str()),
        ("m1", "m2")
    );
    let order: Vec<(&str, &str)> = ours[3..]
        .iter()
        .map(|f| (f.sid.as_str(), f.payload.as_str()))
        .collect();
    assert_eq!(order, [("8", "m1"), ("8", "m2"), ("7", "m3"), ("7", "m4")]);
    if let Some(go) = runs.get(1) {
        assert_eq!(ours, go);
    }
}

/// RESET requests and their answers (times normalised); `None` when nothing answered.
async fn reset_exchange(server: &JsServer) -> Vec<Option<Value>> {
    let client = async_nats::connect(server.server.url())
        .await
        .expect("connect");
    let stream = r#"{"name":"R","subjects":["rs.>"]}"#;
    support::request(&client, "$JS.API.STREAM.CREATE.R", stream).await;
    for i in 1..=5 {
        client
            .publish(format!("rs.{i}"), "m".into())
            .await
            .expect("publish");
    }
    client.flush().await.expect("flush");
    for (name, extra) in [
        ("D", ""),
        (
            "B",
            r#","deliver_policy":"by_start_sequence","opt_start_seq":3"#,
        ),
        ("L", r#","deliver_policy":"last""#),
    ] {
        let body = format!(
            r#"{{"stream_name":"R","config":{{"durable_name":"{name}","ack_policy":"explicit"{extra}}}}}"#
        );
        support::request(&client, &format!("$JS.API.CONSUMER.CREATE.R.{name}"), body).await;
    }
    let mut out = Vec::new();
    for (consumer, body) in [
        ("D", r#"{"seq":3}"#),
        ("D", ""),
        ("B", r#"{"seq":1}"#),
        ("B", r#"{"seq":4}"#),
        ("L", r#"{"seq":2}"#),
        ("D", r#"{"seq":"x"}"#),
        ("nope", ""),
    ] {
        let subject = format!("$JS.API.CONSUMER.RESET.R.{consumer}");
        let answer = tokio::time::timeout(
            Duration::from_millis(500),
            client.request(subject, body.to_owned().into()),
        )
        .await;
        out.push(match answer {
            Ok(Ok(reply)) => {
                let mut doc: Value = serde_json::from_slice(&reply.payload).expect("JSON");
                normalise_times(&mut doc, &[]);
                Some(doc)
            }
            _ => None,
        });
    }
    // With a `Nats-Stream-Identity` header, a reset made answers with the stream's identity
    // (a hash of its creation time: its length is compared); a refused one without it.
    for (consumer, body) in [("D", ""), ("B", r#"{"seq":1}"#)] {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Stream-Identity", "");
        let subject = format!("$JS.API.CONSUMER.RESET.R.{consumer}");
        let reply = tokio::time::timeout(
            support::WAIT,
            client.request_with_headers(subject, headers, body.to_owned().into()),
        )
        .await
        .expect("answer in time")
        .expect("answer");
        let identity = reply
            .headers
            .as_ref()
            .and_then(|h| h.get("Nats-Stream-Identity"))
            .map(|v| v.as_str().len());
        out.push(Some(serde_json::json!({ "identity_len": identity })));
    }
    out
}

#[tokio::test]
async fn jetstream_priority_reset_responses_match_go() {
    let servers = support::ours_then_go(config);
    let mut runs = Vec::new();
    for server in &servers {
        runs.push(reset_exchange(server).await);
    }
    let ours = &runs[0];
    assert_eq!(ours[0].as_ref().expect("answer")["reset_seq"], 3);
    // Back to one above the ack floor, which the first reset moved to 2.
    assert_eq!(ours[1].as_ref().expect("answer")["reset_seq"], 3);
    let refused = ours[2].as_ref().expect("answer");
    assert_eq!(refused["error"]["err_code"], 10204);
    assert_eq!(
        refused["error"]["description"],
        "invalid reset: below start seq"
    );
    assert_eq!(refused["reset_seq"], 0);
    assert!(ours[6].is_none(), "{:?}", ours[6]);
    assert!(ours[7].as_ref().expect("answer")["identity_len"].as_u64() > Some(0));
    assert!(ours[8].as_ref().expect("answer")["identity_len"].is_null());
    if let Some(go) = runs.get(1) {
        assert_eq!(ours, go);
    }
}

#[tokio::test]
async fn jetstream_priority_reset_is_persisted() {
    let server = JsServer::start("ours", false, config).expect("ours");
    let client = async_nats::connect(server.server.url())
        .await
        .expect("connect");
    support::request(
        &client,
        "$JS.API.STREAM.CREATE.F",
        r#"{"name":"F","subjects":["f.>"]}"#,
    )
    .await;
    for i in 1..=5 {
        client
            .publish(format!("f.{i}"), "m".into())
            .await
            .expect("publish");
    }
    client.flush().await.expect("flush");
    let body = r#"{"stream_name":"F","config":{"durable_name":"D","ack_policy":"explicit"}}"#;
    support::request(&client, "$JS.API.CONSUMER.CREATE.F.D", body).await;
    let reset = support::request(&client, "$JS.API.CONSUMER.RESET.F.D", r#"{"seq":4}"#).await;
    assert_eq!(reset["reset_seq"], 4, "{reset}");
    assert_eq!(reset["num_pending"], 2, "{reset}");
    drop(client);
    let JsServer { server, dir, name } = server;
    drop(server);
    let again = JsServer::start_in(dir, name, false, config).expect("restart");
    let client = async_nats::connect(again.server.url())
        .await
        .expect("connect");
    let info = support::request(&client, "$JS.API.CONSUMER.INFO.F.D", "").await;
    assert_eq!(info["delivered"]["stream_seq"], 3, "{info}");
    assert_eq!(info["ack_floor"]["stream_seq"], 3, "{info}");
    assert_eq!(info["num_pending"], 2, "{info}");
}

/// A pin lapses once its client made no request for `priority_timeout`: the next request
/// is pinned anew, and the old id is refused in the queue.
fn lapse_exchange(server: &JsServer) -> Vec<Frame> {
    let mut c = raw(server);
    setup(
        &mut c,
        r#"{"durable_name":"C","ack_policy":"explicit","priority_policy":"pinned_client","priority_groups":["A"],"priority_timeout":200000000}"#,
    );
    let first = next(&mut c, 1, r#"{"batch":1,"group":"A"}"#);
    let pin = pin_of(&first);
    std::thread::sleep(Duration::from_millis(400));
    let stale = next(
        &mut c,
        2,
        &format!(r#"{{"batch":1,"group":"A","id":"{pin}"}}"#),
    );
    let fresh = next(&mut c, 3, r#"{"batch":1,"group":"A"}"#);
    let new_pin = pin_of(&fresh);
    assert_ne!(new_pin, pin);
    vec![
        hide_pin(first, &pin),
        hide_pin(stale, &pin),
        hide_pin(fresh, &new_pin),
    ]
}

#[test]
fn jetstream_priority_pin_lapses_after_priority_timeout() {
    let runs: Vec<Vec<Frame>> = support::ours_then_go(config)
        .iter()
        .map(lapse_exchange)
        .collect();
    assert_eq!(
        runs[0][1].headers.as_deref(),
        Some("NATS/1.0 423 Nats-Wrong-Pin-Id\r\nNats-Pending-Messages: 1\r\nNats-Pending-Bytes: 0\r\n\r\n")
    );
    if let Some(go) = runs.get(1) {
        assert_eq!(runs[0], *go);
    }
}

/// The pinned and unpinned (timeout) advisories of a pin that lapses, ids and times
/// normalised.
async fn pin_advisories(server: &JsServer) -> Vec<Value> {
    use futures::StreamExt;
    let client = async_nats::connect(server.server.url())
        .await
        .expect("connect");
    let mut pinned = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.PINNED.>")
        .await
        .expect("sub");
    let mut unpinned = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.>")
        .await
        .expect("sub");
    let stream = r#"{"name":"V","subjects":["v.>"],"storage":"memory"}"#;
    support::request(&client, "$JS.API.STREAM.CREATE.V", stream).await;
    client.publish("v.1", "m".into()).await.expect("publish");
    let body = r#"{"stream_name":"V","config":{"durable_name":"C","priority_policy":"pinned_client","priority_groups":["G"],"priority_timeout":200000000}}"#;
    support::request(&client, "$JS.API.CONSUMER.CREATE.V.C", body).await;
    // A delivery is seen on the stored subject: read it on its own subscription.
    let mut inbox = client.subscribe("pull.v").await.expect("sub");
    let body = r#"{"batch":1,"group":"G"}"#;
    client
        .publish_with_reply("$JS.API.CONSUMER.MSG.NEXT.V.C", "pull.v", body.into())
        .await
        .expect("pull");
    let next = tokio::time::timeout(Duration::from_secs(5), inbox.next())
        .await
        .expect("a message in time")
        .expect("a message");
    assert!(next.headers.is_some());
    let mut out = Vec::new();
    for sub in [&mut pinned, &mut unpinned] {
        let msg = tokio::time::timeout(Duration::from_secs(2), sub.next())
            .await
            .expect("advisory in time")
            .expect("advisory");
        let mut doc: Value = serde_json::from_slice(&msg.payload).expect("JSON");
        normalise_times(&mut doc, &["id", "timestamp", "pinned_id"]);
        out.push(doc);
    }
    out
}

#[tokio::test]
async fn jetstream_priority_pin_advisories_match_go() {
    let servers = support::ours_then_go(config);
    let mut runs = Vec::new();
    for server in &servers {
        runs.push(pin_advisories(server).await);
    }
    assert_eq!(runs[1 % runs.len()], runs[0]);
    assert_eq!(runs[0][1]["reason"], "timeout");
}

#[tokio::test]
async fn jetstream_priority_reset_of_an_interest_consumer_releases_what_it_skipped() {
    let mut runs = Vec::new();
    for server in &support::ours_then_go(config) {
        let client = async_nats::connect(server.server.url())
            .await
            .expect("connect");
        let body = r#"{"name":"I","subjects":["i.>"],"retention":"interest"}"#;
        support::request(&client, "$JS.API.STREAM.CREATE.I", body).await;
        for durable in ["A", "B"] {
            let body = format!(
                r#"{{"stream_name":"I","config":{{"durable_name":"{durable}","ack_policy":"explicit"}}}}"#
            );
            let subject = format!("$JS.API.CONSUMER.CREATE.I.{durable}");
            support::request(&client, &subject, &body).await;
        }
        for i in 1..=6 {
            let ack = client.request(format!("i.{i}"), "m".into()).await;
            assert!(ack.is_ok(), "{}", server.name);
        }
        // A skips to 5: messages 1 to 4 are still needed by B, and stay.
        let reset = support::request(&client, "$JS.API.CONSUMER.RESET.I.A", r#"{"seq":5}"#).await;
        assert_eq!(reset["reset_seq"], 5, "{}: {reset}", server.name);
        let kept = support::request(&client, "$JS.API.STREAM.INFO.I", "").await;
        // B skips past all six: now 1 to 4 go; 5 and 6 stay for A.
        let reset = support::request(&client, "$JS.API.CONSUMER.RESET.I.B", r#"{"seq":7}"#).await;
        assert_eq!(reset["reset_seq"], 7, "{}: {reset}", server.name);
        let released = support::request(&client, "$JS.API.STREAM.INFO.I", "").await;
        runs.push(serde_json::json!([
            kept["state"]["messages"],
            released["state"]["messages"],
            released["state"]["first_seq"]
        ]));
    }
    assert_eq!(runs[0], serde_json::json!([6, 2, 5]), "{runs:?}");
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{runs:?}");
}
