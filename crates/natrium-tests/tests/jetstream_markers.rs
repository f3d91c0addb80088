//! Subject delete markers (ADR-43, KV limit markers of ADR-48): on a stream with
//! `subject_delete_marker_ttl`, the last message of a subject that expires (by `max_age` or
//! its own TTL) gives way to a marker with Go's headers, which expires in turn; short TTLs
//! are raised to the marker TTL. Raw exchanges run against our binary and, where installed,
//! Go's, and must match; KV per-key TTL and limit markers run through `async-nats`.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, kv};
use base64::Engine as _;
use serde_json::{json, Value};

#[path = "support/hpub.rs"]
mod hpub;
#[path = "support/jetstream.rs"]
mod support;
use support::{login, request, three_accounts, WAIT};

const SEC: u64 = 1_000_000_000;

async fn create(client: &async_nats::Client, body: &Value) {
    let subject = format!("$JS.API.STREAM.CREATE.{}", body["name"].as_str().unwrap());
    let created = request(client, &subject, body.to_string()).await;
    assert!(created.get("error").is_none(), "{created}");
}

/// A message get's answer with headers and payload decoded and the time left out.
async fn get(client: &async_nats::Client, stream: &str, query: Value) -> Value {
    let subject = format!("$JS.API.STREAM.MSG.GET.{stream}");
    let answer = request(client, &subject, query.to_string()).await;
    if answer.get("error").is_some() {
        return answer["error"].clone();
    }
    let text = |field: &str| {
        let b64 = answer["message"][field].as_str().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("b64");
        String::from_utf8(bytes).expect("utf-8")
    };
    json!({
        "subject": answer["message"]["subject"],
        "seq": answer["message"]["seq"],
        "hdrs": text("hdrs"),
        "data": text("data"),
    })
}

/// Polls `check` until it holds (bounded by a deadline: expiry is the server's timer).
async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(8);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn state(client: &async_nats::Client, stream: &str) -> Value {
    let info = request(client, &format!("$JS.API.STREAM.INFO.{stream}"), "").await;
    info["state"].clone()
}

/// A delivery: subject, headers sorted by name, payload.
fn delivery(msg: &async_nats::Message) -> Value {
    let mut headers: Vec<(String, String)> = msg
        .headers
        .iter()
        .flat_map(|map| map.iter())
        .flat_map(|(name, values)| {
            values
                .iter()
                .map(move |v| (name.to_string(), v.as_str().to_owned()))
        })
        .collect();
    headers.sort();
    json!([
        msg.subject.as_str(),
        headers,
        String::from_utf8_lossy(&msg.payload)
    ])
}

/// Expiry by `max_age` and by TTL, with markers, as a consumer sees it; then the state once
/// the markers expired in turn.
async fn expiry_exchange(
    client: &async_nats::Client,
    raw: &mut hpub::Publisher,
    storage: &str,
) -> Vec<Value> {
    use futures::StreamExt as _;
    create(
        client,
        &json!({"name": "M", "subjects": ["m.>"], "storage": storage, "max_age": 2 * SEC,
                "allow_msg_ttl": true, "allow_rollup_hdrs": true,
                "subject_delete_marker_ttl": SEC}),
    )
    .await;
    let mut deliveries = client.subscribe("dlv").await.unwrap();
    let consumer = json!({"stream_name": "M",
        "config": {"deliver_subject": "dlv", "ack_policy": "none"}});
    let created = request(client, "$JS.API.CONSUMER.CREATE.M", consumer.to_string()).await;
    assert!(created.get("error").is_none(), "{created}");
    let mut out = Vec::new();
    for (subject, headers) in [
        ("m.a", vec![]),
        ("m.b", vec![]),
        ("m.b", vec![]),
        ("m.t", vec![("Nats-TTL", "1s")]),
        ("m.n", vec![("Nats-TTL", "never")]),
        ("m.k", vec![("KV-Operation", "PURGE")]),
    ] {
        out.push(json!(raw.publish(subject, &headers, "v")));
    }
    // Six messages, then the markers of m.t (its TTL), m.a and m.b (max_age).
    for _ in 0..9 {
        let msg = tokio::time::timeout(WAIT, deliveries.next())
            .await
            .expect("delivery in time")
            .expect("delivery");
        out.push(delivery(&msg));
    }
    until("markers expired", || async {
        state(client, "M").await["messages"] == json!(1)
    })
    .await;
    let s = state(client, "M").await;
    out.push(json!([s["first_seq"], s["last_seq"], s["num_subjects"]]));
    out
}

#[tokio::test]
async fn jetstream_markers_replace_expired_last_messages_as_go() {
    // Each run waits on the servers' timers: all four (two storages, ours and Go's) at once.
    let mut servers = Vec::new();
    for storage in ["memory", "file"] {
        for js in support::ours_then_go(three_accounts) {
            servers.push((storage, js));
        }
    }
    let runs = futures::future::join_all(servers.iter().map(|(storage, js)| async move {
        let client = login(&js.server, "a").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        let out = expiry_exchange(&client, &mut raw, storage).await;
        (*storage, js.name, out)
    }))
    .await;
    let marker = |subject: &str| {
        json!([
            subject,
            [
                ["Nats-Marker-Reason", "MaxAge"],
                ["Nats-Rollup", "sub"],
                ["Nats-TTL", "1s"]
            ],
            ""
        ])
    };
    for (storage, name, out) in &runs {
        // m.t's TTL (1s) comes first, then max_age (2s) takes m.a and m.b's second.
        assert_eq!(out[12], marker("m.t"), "{storage} {name}");
        assert_eq!(out[13], marker("m.a"), "{storage} {name}");
        assert_eq!(out[14], marker("m.b"), "{storage} {name}");
        assert_eq!(
            out[15],
            json!([5, 9, 1]),
            "{storage} {name}: m.n never expires"
        );
        let ours = runs.iter().find(|(s, n, _)| s == storage && *n == "ours");
        assert_eq!(
            Some(out),
            ours.map(|(_, _, o)| o),
            "{storage}: {name} vs ours"
        );
    }
}

/// The marker as stored, byte for byte: one subject message (`max_msgs_per_subject: 1`) so a
/// 1s TTL is not raised, and a marker TTL long enough to read it.
#[tokio::test]
async fn jetstream_markers_block_matches_go() {
    let mut runs = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        create(
            &client,
            &json!({"name": "S", "subjects": ["s.>"], "max_msgs_per_subject": 1,
                    "subject_delete_marker_ttl": 90 * SEC}),
        )
        .await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        let ack = raw.publish("s.a", &[("Nats-TTL", "1s")], "v");
        until("the marker", || async {
            state(&client, "S").await["last_seq"] == json!(2)
        })
        .await;
        let marker = get(&client, "S", json!({"last_by_subj": "s.a"})).await;
        runs.push((
            js.name,
            vec![
                json!(ack),
                marker,
                state(&client, "S").await["messages"].clone(),
            ],
        ));
    }
    let (_, ours) = runs.first().expect("ours ran");
    let block =
        "NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1m30s\r\nNats-Rollup: sub\r\n\r\n";
    assert_eq!(ours[1]["hdrs"], json!(block));
    assert_eq!(
        (&ours[1]["data"], &ours[1]["seq"], &ours[2]),
        (&json!(""), &json!(2), &json!(1))
    );
    if let Some((_, go)) = runs.get(1) {
        assert_eq!(ours, go, "ours vs Go");
    }
}

#[tokio::test]
async fn jetstream_markers_raise_short_ttls_as_go() {
    let mut runs = Vec::new();
    for js in support::ours_then_go(three_accounts) {
        let client = login(&js.server, "a").await;
        let mut raw = hpub::Publisher::connect(&js.server, "a");
        create(
            &client,
            &json!({"name": "R", "subjects": ["r.>"], "subject_delete_marker_ttl": 5 * SEC}),
        )
        .await;
        create(
            &client,
            &json!({"name": "P", "subjects": ["p.>"], "max_msgs_per_subject": 1,
                    "subject_delete_marker_ttl": 5 * SEC}),
        )
        .await;
        let mut out = Vec::new();
        for (subject, ttl) in [("r.a", "1s"), ("r.b", "7"), ("r.c", "never"), ("p.a", "2s")] {
            let headers = [("Nats-TTL", ttl), ("X-After", "x")];
            out.push(json!(raw.publish(subject, &headers, "v")));
        }
        for (stream, seq) in [("R", 1), ("R", 2), ("R", 3), ("P", 1)] {
            out.push(get(&client, stream, json!({ "seq": seq })).await);
        }
        let info = request(&client, "$JS.API.STREAM.INFO.R", "").await;
        out.push(json!([
            info["config"]["allow_msg_ttl"],
            info["config"]["allow_rollup_hdrs"]
        ]));
        runs.push((js.name, out));
    }
    let (_, ours) = runs.first().expect("ours ran");
    assert_eq!(
        ours[4]["hdrs"],
        json!("NATS/1.0\r\nX-After: x\r\nNats-TTL: 5\r\n\r\n")
    );
    assert_eq!(
        ours[5]["hdrs"],
        json!("NATS/1.0\r\nNats-TTL: 7\r\nX-After: x\r\n\r\n")
    );
    assert_eq!(
        ours[7]["hdrs"],
        json!("NATS/1.0\r\nNats-TTL: 2s\r\nX-After: x\r\n\r\n")
    );
    assert_eq!(ours[8], json!([true, true]));
    if let Some((_, go)) = runs.get(1) {
        assert_eq!(ours, go, "ours vs Go");
    }
}

#[tokio::test]
async fn jetstream_markers_kv_per_key_ttl_and_limit_markers_through_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = support::start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    let store = js
        .create_key_value(kv::Config {
            bucket: "TTL".into(),
            history: 5,
            limit_markers: Some(Duration::from_secs(1)),
            ..Default::default()
        })
        .await
        .unwrap();
    let info = store.status().await.unwrap();
    assert_eq!(
        info.info.config.subject_delete_marker_ttl,
        Some(Duration::from_secs(1))
    );
    store
        .create_with_ttl("k", "v1".into(), Duration::from_secs(1))
        .await
        .unwrap();
    store.put("other", "stays".into()).await.unwrap();
    until("the key expires", || async {
        store.get("k").await.unwrap().is_none()
    })
    .await;
    let entry = store.entry("k").await.unwrap().expect("the marker");
    assert_eq!(entry.operation, kv::Operation::Purge);
    assert_eq!(entry.revision, 3, "the marker took the next sequence");
    assert_eq!(store.get("other").await.unwrap().unwrap(), "stays");
    // A key whose marker stands may be created again.
    let revision = store.create("k", "v2".into()).await.unwrap();
    assert_eq!(revision, 4);
    assert_eq!(store.get("k").await.unwrap().unwrap(), "v2");
    store
        .purge_with_ttl("other", Duration::from_secs(1))
        .await
        .unwrap();
    until("the purge marker expires", || async {
        store.entry("other").await.unwrap().is_none()
    })
    .await;
}

/// A full stream (`max_msgs: 3`, `discard: new`) whose expiring messages are each the last of
/// their subject: by `Nats-TTL` (`mode` "ttl": f.a at 1s) or by `max_age` ("age": all three at
/// 2s). The refused markers leave the messages in place; once a delete makes room, the retry
/// (Go's, at most 2 s after the last try) stores them, and they expire in turn.
async fn refused_marker_exchange(
    client: &async_nats::Client,
    storage: &str,
    mode: &str,
) -> Vec<Value> {
    let name = format!("F{storage}{mode}");
    let mut config = json!({"name": name, "subjects": [format!("{name}.>")], "storage": storage,
        "allow_msg_ttl": true, "subject_delete_marker_ttl": SEC, "max_msgs": 3,
        "discard": "new"});
    if mode == "age" {
        config["max_age"] = json!(2 * SEC);
    }
    create(client, &config).await;
    let mut out = Vec::new();
    for subject in ["a", "b", "c"] {
        // Concurrent runs share a server: acks come back on each request's own inbox.
        let mut headers = async_nats::HeaderMap::new();
        if mode == "ttl" && subject == "a" {
            headers.insert("Nats-TTL", "1s");
        }
        let ack = client
            .request_with_headers(format!("{name}.{subject}"), headers, "v".into())
            .await
            .expect("ack");
        out.push(serde_json::from_slice::<Value>(&ack.payload).expect("JSON ack"));
    }
    // Past the expiry and a first retry: the messages stay (nothing else can be awaited).
    let held_until = Instant::now() + Duration::from_millis(3500);
    while Instant::now() < held_until {
        let s = state(client, &name).await;
        assert_eq!(
            (&s["messages"], &s["first_seq"]),
            (&json!(3), &json!(1)),
            "{name}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let deleted = request(
        client,
        &format!("$JS.API.STREAM.MSG.DELETE.{name}"),
        json!({"seq": 3}).to_string(),
    )
    .await;
    out.push(deleted);
    let freed = Instant::now();
    let markers = if mode == "ttl" { 1 } else { 2 };
    until("the retried markers", || async {
        state(client, &name).await["last_seq"] == json!(3 + markers)
    })
    .await;
    assert!(
        freed.elapsed() < Duration::from_secs(4),
        "{name}: retried late"
    );
    for subject in ["a", "b"] {
        let last = json!({"last_by_subj": format!("{name}.{subject}")});
        out.push(get(client, &name, last).await);
    }
    until("the markers expired", || async {
        state(client, &name).await["messages"] == json!(2 - markers)
    })
    .await;
    let s = state(client, &name).await;
    out.push(json!([s["first_seq"], s["last_seq"], s["messages"]]));
    out
}

#[tokio::test]
async fn jetstream_markers_refused_marker_is_retried_as_go() {
    let servers = support::ours_then_go(three_accounts);
    let mut cases = Vec::new();
    for js in &servers {
        for storage in ["memory", "file"] {
            for mode in ["ttl", "age"] {
                cases.push((js, storage, mode));
            }
        }
    }
    let runs = futures::future::join_all(cases.into_iter().map(|(js, storage, mode)| async move {
        let client = login(&js.server, "a").await;
        let out = refused_marker_exchange(&client, storage, mode).await;
        (js.name, storage, mode, out)
    }))
    .await;
    let marker =
        "NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\nNats-Rollup: sub\r\n\r\n";
    for (name, storage, mode, out) in &runs {
        let case = format!("{name} {storage} {mode}");
        // The marker of a took sequence 4 (and b's, by max_age, 5).
        assert_eq!(
            (&out[4]["seq"], &out[4]["hdrs"]),
            (&json!(4), &json!(marker)),
            "{case}"
        );
        if *mode == "age" {
            assert_eq!(out[5]["seq"], json!(5), "{case}");
            assert_eq!(out[6], json!([6, 5, 0]), "{case}");
        } else {
            assert_eq!(out[5]["seq"], json!(2), "{case}: b stays");
            assert_eq!(out[6], json!([2, 4, 1]), "{case}");
        }
        let ours = runs
            .iter()
            .find(|(n, s, m, _)| *n == "ours" && s == storage && m == mode);
        assert_eq!(Some(out), ours.map(|(_, _, _, o)| o), "{case} vs ours");
    }
}
