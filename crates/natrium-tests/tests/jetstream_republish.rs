//! A stream's `subject_transform` and `republish` (ADR-28, ADR-36): the exact frames a raw
//! subscriber receives, side by side with the Go server when it is installed, and through
//! `async-nats` (stream config, a KV bucket with `republish`).

use std::time::Duration;

use async_nats::header;
use async_nats::jetstream::{self, kv, stream};
use futures::StreamExt;
use natrium_tests::raw::RawClient;
use natrium_tests::ServerProcess;

#[path = "support/jetstream.rs"]
mod support;
use support::{ours_then_go, start_js, three_accounts, WAIT};

/// A raw client of user `a` with headers on, subscribed to the republish subjects (`rp.>`,
/// `rh.>`) and to the replies (`ack.>`).
fn raw(server: &ServerProcess) -> RawClient {
    let mut c = RawClient::connect(&server.addr());
    let out = c.exchange(
        b"CONNECT {\"verbose\":false,\"headers\":true,\"user\":\"a\",\"pass\":\"a\",\"protocol\":1}\r\n\
          SUB rp.> 1\r\nSUB rh.> 2\r\nSUB ack.> 3\r\n",
    );
    assert!(!out.contains("-ERR"), "{out}");
    c
}

/// Reads one frame as `<subject> | <headers> | <payload>`, the time stamp replaced. An
/// asynchronous INFO (Go's server sends one now and then) is skipped.
fn read_frame(c: &mut RawClient) -> String {
    let mut line = c.read_line().expect("frame line");
    while line.starts_with("INFO ") {
        line = c.read_line().expect("frame line");
    }
    let parts: Vec<&str> = line.split(' ').collect();
    let (hlen, total): (usize, usize) = match parts[0] {
        "HMSG" => (parts[3].parse().unwrap(), parts[4].parse().unwrap()),
        "MSG" => (0, parts[3].parse().unwrap()),
        other => panic!("unexpected {other}: {line}"),
    };
    let body = c.read_bytes(total + 2);
    let headers = String::from_utf8_lossy(&body[..hlen])
        .lines()
        .map(|l| match l.split_once(": ") {
            Some(("Nats-Time-Stamp", ts)) => {
                assert!(ts.ends_with('Z') && ts.len() >= 20, "{ts}");
                "Nats-Time-Stamp: TS".to_owned()
            }
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\\r\\n");
    let payload = String::from_utf8_lossy(&body[hlen..total]).into_owned();
    format!("{} | {headers} | {payload}", parts[1])
}

/// Sends `frame` (whose reply is `reply`) and returns every frame up to that reply's.
fn exchange(c: &mut RawClient, frame: &str, reply: &str) -> Vec<String> {
    c.send(frame.as_bytes());
    let mut frames = Vec::new();
    loop {
        let f = read_frame(c);
        let done = f.starts_with(&format!("{reply} |"));
        frames.push(f);
        if done {
            return frames;
        }
    }
}

fn hpub(subject: &str, reply: &str, headers: &str, payload: &str) -> String {
    let hdr = format!("NATS/1.0\r\n{headers}\r\n");
    format!(
        "HPUB {subject} {reply} {} {}\r\n{hdr}{payload}\r\n",
        hdr.len(),
        hdr.len() + payload.len()
    )
}

fn publish(subject: &str, reply: &str, payload: &str) -> String {
    format!("PUB {subject} {reply} {}\r\n{payload}\r\n", payload.len())
}

/// The whole exchange against one server: its frames, in order, as text.
fn transcript(server: &ServerProcess) -> Vec<String> {
    let mut c = raw(server);
    let streams = [
        r#"{"name":"S","subjects":["in.>"],"storage":"memory",
            "subject_transform":{"src":"in.*.>","dest":"st.{{wildcard(1)}}.>"},
            "republish":{"src":"st.*.>","dest":"rp.{{wildcard(1)}}.{{partition(4,1)}}.>"}}"#,
        r#"{"name":"H","subjects":["h.*"],"storage":"memory",
            "republish":{"src":"h.*","dest":"rh.{{SplitFromLeft(1,2)}}","headers_only":true}}"#,
        // `split` can make an invalid subject (`rp..a`): that republish is dropped.
        r#"{"name":"V","subjects":["v.*"],"storage":"memory",
            "republish":{"src":"v.*","dest":"rp.{{split(1,-)}}"}}"#,
    ];
    for (name, body) in ["S", "H", "V"].into_iter().zip(streams) {
        let created = exchange(
            &mut c,
            &publish(&format!("$JS.API.STREAM.CREATE.{name}"), "ack.create", body),
            "ack.create",
        );
        assert!(created[0].contains("\"did_create\":true"), "{created:?}");
    }
    let steps = [
        publish("in.a.x", "ack.1", "one"),
        hpub("in.a.x", "ack.2", "Foo: bar\r\n", "two"),
        publish("in.b.y.z", "ack.3", "three"),
        hpub("in.a.x", "ack.4", "Nats-Msg-Id: m1\r\n", "four"),
        // A duplicate is not stored, so not republished.
        hpub("in.a.x", "ack.5", "Nats-Msg-Id: m1\r\n", "five"),
        // Expectations read the transformed subject.
        hpub(
            "in.a.x",
            "ack.6",
            "Nats-Expected-Last-Subject-Sequence: 4\r\n",
            "six",
        ),
        hpub(
            "in.a.x",
            "ack.7",
            "Nats-Expected-Last-Subject-Sequence: 1\r\n",
            "seven",
        ),
        // Not matched by the transform: stored as published, not republished.
        publish("in.q", "ack.8", "eight"),
        publish("h.kkk", "ack.9", "hello"),
        hpub("h.kkk", "ack.10", "Foo: baz\r\n", "world!"),
        publish("v.--a", "ack.11", "invalid"),
        publish("v.a-b", "ack.12", "valid"),
    ];
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        out.extend(exchange(&mut c, step, &format!("ack.{}", i + 1)));
    }
    let info = exchange(
        &mut c,
        &publish(
            "$JS.API.STREAM.INFO.S",
            "ack.info",
            r#"{"subjects_filter":">"}"#,
        ),
        "ack.info",
    );
    let body = info[0].rsplit(" | ").next().unwrap();
    let info: serde_json::Value = serde_json::from_str(body).unwrap();
    out.push(format!("subjects {}", info["state"]["subjects"]));
    out
}

#[test]
fn jetstream_republish_raw_frames_match_go() {
    let servers = ours_then_go(three_accounts);
    let runs: Vec<(&str, Vec<String>)> = servers
        .iter()
        .map(|s| (s.name, transcript(&s.server)))
        .collect();
    let ours = &runs[0].1;
    // The facts checked whether or not Go is installed.
    let expect = [
        "rp.a.0.x | NATS/1.0\\r\\nNats-Stream: S\\r\\nNats-Subject: st.a.x\\r\\nNats-Sequence: 1\\r\\nNats-Time-Stamp: TS\\r\\nNats-Last-Sequence: 0\\r\\n | one",
        "ack.1 |  | {\"stream\":\"S\",\"seq\":1}",
        "rp.a.0.x | NATS/1.0\\r\\nFoo: bar\\r\\nNats-Stream: S\\r\\nNats-Subject: st.a.x\\r\\nNats-Sequence: 2\\r\\nNats-Time-Stamp: TS\\r\\nNats-Last-Sequence: 1\\r\\n | two",
    ];
    for (i, line) in expect.iter().enumerate() {
        assert_eq!(ours[i], *line, "{ours:#?}");
    }
    assert!(
        ours.iter()
            .any(|f| f.starts_with("rh.kk.k | NATS/1.0\\r\\nNats-Stream: H")
                && f.contains("Nats-Msg-Size: 5")
                && f.ends_with(" | ")),
        "{ours:#?}"
    );
    assert!(!ours.iter().any(|f| f.contains("invalid")), "{ours:#?}");
    assert!(ours.iter().any(|f| f.starts_with("rp.a.b | ")), "{ours:#?}");
    for (name, frames) in &runs[1..] {
        assert_eq!(ours, frames, "ours vs {name}");
    }
}

/// An atomic batch's messages are republished once it commits, in order, each with its
/// subject's previous sequence (one stored before the batch, or one of the batch).
fn batch_transcript(server: &ServerProcess) -> Vec<String> {
    let mut c = raw(server);
    let body = r#"{"name":"B","subjects":["b.*"],"storage":"file","allow_atomic":true,
        "republish":{"src":"b.*","dest":"rp.b.{{wildcard(1)}}"}}"#;
    let created = exchange(
        &mut c,
        &publish("$JS.API.STREAM.CREATE.B", "ack.create", body),
        "ack.create",
    );
    assert!(created[0].contains("\"did_create\":true"), "{created:?}");
    let mut out = exchange(&mut c, &publish("b.x", "ack.0", "before"), "ack.0");
    let staged = [("b.x", "1", "one"), ("b.y", "2", "two")];
    for (subject, seq, payload) in staged {
        let hdr = format!("NATS/1.0\r\nNats-Batch-Id: B1\r\nNats-Batch-Sequence: {seq}\r\n\r\n");
        c.send(
            format!(
                "HPUB {subject} {} {}\r\n{hdr}{payload}\r\n",
                hdr.len(),
                hdr.len() + payload.len()
            )
            .as_bytes(),
        );
    }
    let commit = hpub(
        "b.x",
        "ack.commit",
        "Nats-Batch-Id: B1\r\nNats-Batch-Sequence: 3\r\nNats-Batch-Commit: 1\r\n",
        "three",
    );
    out.extend(exchange(&mut c, &commit, "ack.commit"));
    out
}

#[test]
fn jetstream_republish_of_a_committed_atomic_batch_matches_go() {
    let servers = ours_then_go(three_accounts);
    let runs: Vec<Vec<String>> = servers
        .iter()
        .map(|s| batch_transcript(&s.server))
        .collect();
    let ours = &runs[0];
    let republished: Vec<&String> = ours.iter().filter(|f| f.starts_with("rp.")).collect();
    assert_eq!(republished.len(), 4, "{ours:#?}");
    assert!(
        republished[1].contains("Nats-Sequence: 2\\r\\n"),
        "{ours:#?}"
    );
    assert!(
        republished[1].contains("Nats-Last-Sequence: 1\\r\\n"),
        "{ours:#?}"
    );
    assert!(republished[2].starts_with("rp.b.y "), "{ours:#?}");
    assert!(
        republished[2].contains("Nats-Last-Sequence: 0\\r\\n"),
        "{ours:#?}"
    );
    assert!(
        republished[3].contains("Nats-Last-Sequence: 2\\r\\n"),
        "{ours:#?}"
    );
    assert!(ours.last().unwrap().starts_with("ack.commit "), "{ours:#?}");
    for theirs in &runs[1..] {
        assert_eq!(ours, theirs, "ours vs Go");
    }
}

/// Publishes through `async-nats` to a stream with a transform and republish, and reads the
/// republished message and the stored one.
#[tokio::test]
async fn jetstream_transform_and_republish_through_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    let mut sub = client.subscribe("out.>").await.unwrap();
    client.flush().await.unwrap();
    let stream = js
        .create_stream(stream::Config {
            name: "T".into(),
            subjects: vec!["orders.*".into()],
            subject_transform: Some(stream::SubjectTransform {
                source: "orders.*".into(),
                destination: "o.{{partition(3,1)}}.{{wildcard(1)}}".into(),
            }),
            republish: Some(stream::Republish {
                source: "o.*.*".into(),
                destination: "out.$2".into(),
                headers_only: false,
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let ack = js.publish("orders.foo", "x".into()).await.unwrap();
    assert_eq!(ack.await.unwrap().sequence, 1);
    let msg = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(msg.subject.as_str(), "out.foo");
    let headers = msg.headers.unwrap();
    // Standard names are looked up by their constants in async-nats.
    // FNV-1a of `foo` is 2851307223, 0 modulo 3.
    assert_eq!(
        headers.get(header::NATS_SUBJECT).unwrap().as_str(),
        "o.0.foo"
    );
    assert_eq!(headers.get(header::NATS_STREAM).unwrap().as_str(), "T");
    let stored = stream
        .get_last_raw_message_by_subject("o.0.foo")
        .await
        .unwrap();
    assert_eq!(stored.sequence, 1);
}

/// A KV bucket with `republish`: each put arrives on the republish subject with the
/// stream's headers; a headers-only bucket sends the size instead of the value.
#[tokio::test]
async fn jetstream_kv_republish_through_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    let mut sub = client.subscribe("repub.>").await.unwrap();
    client.flush().await.unwrap();
    let kv = js
        .create_key_value(kv::Config {
            bucket: "B".into(),
            history: 3,
            republish: Some(stream::Republish {
                source: ">".into(),
                destination: "repub.>".into(),
                headers_only: false,
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let first = kv.put("k", "v1".into()).await.unwrap();
    let second = kv.put("k", "v2".into()).await.unwrap();
    for (seq, last, value) in [(first, 0, "v1"), (second, first, "v2")] {
        let msg = tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(msg.subject.as_str(), "repub.$KV.B.k");
        assert_eq!(&msg.payload[..], value.as_bytes());
        let headers = msg.headers.unwrap();
        assert_eq!(headers.get(header::NATS_STREAM).unwrap().as_str(), "KV_B");
        assert_eq!(
            headers.get(header::NATS_SUBJECT).unwrap().as_str(),
            "$KV.B.k"
        );
        assert_eq!(
            headers.get(header::NATS_SEQUENCE).unwrap().as_str(),
            seq.to_string()
        );
        assert_eq!(
            headers.get(header::NATS_LAST_SEQUENCE).unwrap().as_str(),
            last.to_string()
        );
    }
    // Nothing more was republished: the next message is the one published now.
    client.publish("repub.marker", "m".into()).await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.subject.as_str(), "repub.marker");
}

/// Stores subjects through a transform calling every mapping function, and the outcome of
/// creating streams with odd transforms: the stored subjects (partition numbers included)
/// and the errors, to compare with Go's.
fn functions_transcript(server: &ServerProcess) -> Vec<String> {
    let mut c = raw(server);
    let dest = "g.{{partition(7,1,2)}}.{{SplitFromLeft(1,2)}}.{{SliceFromRight(2,3)}}.\
                {{split(1,-)}}.{{left(2,2)}}.{{right(1,3)}}.{{wildcard(2)}}.$1.{{partition(5)}}.>";
    let create = format!(
        r#"{{"name":"F","subjects":["f.>"],"storage":"memory",
            "subject_transform":{{"src":"f.*.*.>","dest":"{dest}"}}}}"#
    );
    let mut out = exchange(
        &mut c,
        &publish("$JS.API.STREAM.CREATE.F", "ack.create", &create),
        "ack.create",
    );
    out.truncate(0);
    let words = [
        "a",
        "ab",
        "abc",
        "abcdef",
        "a-b",
        "-a-b-",
        "a--b",
        "--a",
        "x1-y2-z3",
        "0123456789",
    ];
    for (i, w1) in words.iter().enumerate() {
        let w2 = words[(i * 7 + 3) % words.len()];
        let subject = format!("f.{w1}.{w2}.t{i}");
        exchange(&mut c, &publish(&subject, "ack.p", "x"), "ack.p");
    }
    let info = exchange(
        &mut c,
        &publish(
            "$JS.API.STREAM.INFO.F",
            "ack.info",
            r#"{"subjects_filter":">"}"#,
        ),
        "ack.info",
    );
    let body = info[0].rsplit(" | ").next().unwrap();
    let info: serde_json::Value = serde_json::from_str(body).unwrap();
    out.push(format!("subjects {}", info["state"]["subjects"]));
    let odd = [
        "o.{{left(1,2)}}.>",
        "o.{{ wildcard( 1 ) }}.>",
        "o.$0.>",
        "o.{{random(3)}}.>",
        "o.{{Partition(3,1)}}.>",
        "o.{{partition(2147483648,1)}}.>",
        "o.{{left(1)}}.>",
        "o.{{right(1,2,3)}}.>",
        "o.{{split(1,a b)}}.>",
        "o.{{SPLIT(1,-)}}.>",
        "o.{{wildcard(2)}}.>",
        "o.{{nope(1)}}.>",
        "o.{{x}}{{wildcard(1)}}.>",
        "o.{{wildcard(1)}}x}}.>",
    ];
    for (i, dest) in odd.iter().enumerate() {
        let body = format!(
            r#"{{"name":"E{i}","subjects":["e{i}.>"],"storage":"memory",
                "subject_transform":{{"src":"e{i}.*.>","dest":"{dest}"}}}}"#
        );
        let reply = exchange(
            &mut c,
            &publish(&format!("$JS.API.STREAM.CREATE.E{i}"), "ack.e", &body),
            "ack.e",
        );
        let body = reply[0].rsplit(" | ").next().unwrap();
        let answer: serde_json::Value = serde_json::from_str(body).unwrap();
        out.push(format!(
            "{dest}: {}",
            answer
                .get("error")
                .map_or("created".to_owned(), ToString::to_string)
        ));
    }
    out
}

#[test]
fn jetstream_transform_functions_match_go() {
    let servers = ours_then_go(three_accounts);
    let runs: Vec<(&str, Vec<String>)> = servers
        .iter()
        .map(|s| (s.name, functions_transcript(&s.server)))
        .collect();
    let ours = &runs[0].1;
    assert!(ours[0].contains("\"g."), "{ours:#?}");
    assert!(ours[1].ends_with("created"), "{ours:#?}");
    for (name, frames) in &runs[1..] {
        assert_eq!(ours, frames, "ours vs {name}");
    }
}
