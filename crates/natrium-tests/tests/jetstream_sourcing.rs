//! Mirrors and sources through the official Rust client (`async-nats`): a mirror catching up
//! and following its origin with the origin's sequences, sources with filters, transforms and
//! start positions writing Go's `Nats-Stream-Source` header, copies resuming after kill -9
//! without a gap or a duplicate, and the stream info `mirror` / `sources` JSON compared with
//! Go's; durable sourcing of interest and work-queue origins in `durable.rs`.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, stream};
use serde_json::Value;

#[path = "jetstream_sourcing/durable.rs"]
mod durable;
#[path = "support/jetstream.rs"]
mod support;
use support::{normalise_times, ours_then_go, request, JsServer};

/// How long copying may take: a retry after a lost consumer waits Go's backoff (up to
/// 10 s), so a loaded machine gets more than the usual answer wait.
const WAIT: Duration = Duration::from_secs(30);

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

async fn publish(js: &jetstream::Context, subject: &str, payload: String) -> u64 {
    js.publish(subject.to_owned(), payload.into())
        .await
        .unwrap()
        .await
        .unwrap()
        .sequence
}

async fn get(client: &async_nats::Client, stream: &str, seq: u64) -> Value {
    let body = format!("{{\"seq\":{seq}}}");
    request(client, &format!("$JS.API.STREAM.MSG.GET.{stream}"), body).await
}

fn js_conf(store: &std::path::Path) -> String {
    format!("jetstream {{ store_dir: \"{}\" }}\n", store.display())
}

#[tokio::test]
async fn jetstream_mirror_catches_up_and_follows() {
    let Some(server) = JsServer::start("ours", false, js_conf) else {
        return;
    };
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    js.create_stream(stream::Config {
        name: "O".into(),
        subjects: vec!["o.>".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    for i in 0..100 {
        publish(&js, &format!("o.{}", i % 4), format!("m{i}")).await;
    }
    // Gaps in the origin stay gaps in the mirror.
    for seq in [10, 11, 50] {
        let body = format!("{{\"seq\":{seq}}}");
        request(&client, "$JS.API.STREAM.MSG.DELETE.O", body).await;
    }
    js.create_stream(stream::Config {
        name: "M".into(),
        mirror: Some(stream::Source {
            name: "O".into(),
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .unwrap();
    let info = wait_msgs(&client, "M", 97).await;
    assert_eq!(info["state"]["last_seq"], 100);
    assert_eq!(info["mirror"]["name"], "O");
    assert_eq!(info["mirror"]["lag"], 0);
    for i in 100..150 {
        publish(&js, &format!("o.{}", i % 4), format!("m{i}")).await;
    }
    let info = wait_msgs(&client, "M", 147).await;
    assert_eq!(info["state"]["num_deleted"], 3);
    let msg = get(&client, "M", 120).await;
    let origin = get(&client, "O", 120).await;
    assert_eq!(msg["message"]["subject"], "o.3");
    assert_eq!(msg["message"]["data"], origin["message"]["data"]);
    assert_eq!(msg["message"]["time"], origin["message"]["time"]);
    assert!(get(&client, "M", 10).await["error"].is_object());
    // Nothing publishes into a mirror: it has no subjects.
    assert!(info["config"]["subjects"].is_null());
}

#[tokio::test]
async fn jetstream_sources_filters_transforms_and_header() {
    let Some(server) = JsServer::start("ours", false, js_conf) else {
        return;
    };
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    for name in ["A", "B"] {
        js.create_stream(stream::Config {
            name: name.into(),
            subjects: vec![format!("{}.>", name.to_lowercase())],
            ..Default::default()
        })
        .await
        .unwrap();
    }
    for i in 0..10 {
        publish(&js, &format!("a.{}", i % 2), format!("a{i}")).await;
        publish(&js, &format!("b.{i}"), format!("b{i}")).await;
    }
    let sources = vec![
        stream::Source {
            name: "A".into(),
            filter_subject: Some("a.1".into()),
            ..Default::default()
        },
        stream::Source {
            name: "B".into(),
            start_sequence: Some(6),
            subject_transforms: vec![stream::SubjectTransform {
                source: "b.>".into(),
                destination: "from_b.>".into(),
            }],
            ..Default::default()
        },
    ];
    js.create_stream(stream::Config {
        name: "S".into(),
        subjects: vec!["s.>".into()],
        sources: Some(sources),
        ..Default::default()
    })
    .await
    .unwrap();
    let info = wait_msgs(&client, "S", 10).await;
    let sources = info["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    let mut subjects = Vec::new();
    for seq in 1..=10 {
        let msg = get(&client, "S", seq).await;
        let subject = msg["message"]["subject"].as_str().unwrap().to_owned();
        let hdrs = msg["message"]["hdrs"].as_str().unwrap();
        let hdrs = base64_decode(hdrs);
        if subject.starts_with("from_b.") {
            let n = subject.trim_start_matches("from_b.");
            let origin_seq = n.parse::<u64>().unwrap() + 1;
            assert!(
                hdrs.contains(&format!(
                    "Nats-Stream-Source: B {origin_seq} b.> from_b.> b.{n} "
                )),
                "{hdrs:?}"
            );
        } else {
            assert_eq!(subject, "a.1");
            assert!(hdrs.contains("Nats-Stream-Source: A "), "{hdrs:?}");
            assert!(hdrs.contains(" a.1 > a.1 "), "{hdrs:?}");
        }
        subjects.push(subject);
    }
    assert_eq!(subjects.iter().filter(|s| *s == "a.1").count(), 5);
    assert!(subjects.contains(&"from_b.9".to_owned()));
    assert!(!subjects.contains(&"from_b.1".to_owned()));
}

fn base64_decode(text: &str) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

/// A mirror and a source killed with -9 in the middle of catching up resume from what they
/// stored: every origin message is copied exactly once.
#[tokio::test]
async fn jetstream_sourcing_resumes_after_kill_without_gap_or_duplicate() {
    const N: u64 = 20_000;
    let Some(mut server) = JsServer::start("ours", false, js_conf) else {
        return;
    };
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    js.create_stream(stream::Config {
        name: "O".into(),
        subjects: vec!["o.>".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    let mut acks = Vec::new();
    for i in 0..N {
        let ack = js
            .publish(format!("o.{}", i % 7), format!("{i}").into())
            .await
            .unwrap();
        acks.push(ack);
    }
    for ack in acks {
        ack.await.unwrap();
    }
    for (name, cfg) in [
        ("M", r#"{"name":"M","mirror":{"name":"O"}}"#),
        ("S", r#"{"name":"S","sources":[{"name":"O"}]}"#),
    ] {
        let created = request(&client, &format!("$JS.API.STREAM.CREATE.{name}"), cfg).await;
        assert!(created["error"].is_null(), "{created}");
    }
    // Killed as soon as both copied something.
    let deadline = Instant::now() + WAIT;
    loop {
        let m = request(&client, "$JS.API.STREAM.INFO.M", "").await;
        let s = request(&client, "$JS.API.STREAM.INFO.S", "").await;
        if m["state"]["messages"].as_u64() > Some(0) && s["state"]["messages"].as_u64() > Some(0) {
            break;
        }
        assert!(Instant::now() < deadline, "nothing copied");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(client);
    server.server.kill();
    server.server = support::launch(server.dir.path(), false).unwrap();
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let m = wait_msgs(&client, "M", N).await;
    assert_eq!(m["state"]["last_seq"], N);
    let s = wait_msgs(&client, "S", N).await;
    assert_eq!(s["state"]["last_seq"], N, "a duplicate took a sequence");
    assert_eq!(s["sources"][0]["seq"], N);
    // The source copied in the origin's order: its n-th message is the origin's n-th.
    for seq in [1, N / 2, N] {
        let copy = get(&client, "S", seq).await;
        let origin = get(&client, "O", seq).await;
        assert_eq!(copy["message"]["data"], origin["message"]["data"]);
    }
}

/// Stream info's `mirror` and `sources` (and the stored source header) as Go shows them.
#[tokio::test]
async fn jetstream_sourcing_info_matches_go() {
    let mut docs = Vec::new();
    for server in ours_then_go(js_conf) {
        let client = async_nats::connect(server.server.url()).await.unwrap();
        let js = jetstream::new(client.clone());
        let steps = [
            ("O", r#"{"name":"O","subjects":["o.>"],"storage":"memory"}"#),
            (
                "M",
                r#"{"name":"M","mirror":{"name":"O","filter_subject":"o.1"},"storage":"memory"}"#,
            ),
            (
                "S",
                r#"{"name":"S","storage":"memory","sources":[{"name":"O","subject_transforms":[{"src":"o.*","dest":"t.{{wildcard(1)}}"}]},{"name":"O","filter_subject":"o.1","opt_start_seq":3}]}"#,
            ),
        ];
        let mut created = Vec::new();
        for (name, cfg) in steps {
            let mut doc = request(&client, &format!("$JS.API.STREAM.CREATE.{name}"), cfg).await;
            assert!(doc["error"].is_null(), "{}: {doc}", server.name);
            normalise_times(&mut doc, &["active"]);
            if let Some(sources) = doc["sources"].as_array_mut() {
                sources.sort_by_key(ToString::to_string);
            }
            created.push(doc);
            if name == "O" {
                for i in 0..4 {
                    publish(&js, &format!("o.{}", i % 2), format!("{i}")).await;
                }
            }
        }
        wait_msgs(&client, "M", 2).await;
        wait_msgs(&client, "S", 5).await;
        let mut infos = Vec::new();
        for name in ["M", "S"] {
            let mut info = request(&client, &format!("$JS.API.STREAM.INFO.{name}"), "").await;
            normalise_times(&mut info, &["active", "leader"]);
            if let Some(sources) = info["sources"].as_array_mut() {
                sources.sort_by_key(ToString::to_string);
            }
            infos.push(info);
        }
        let mut headers = Vec::new();
        for seq in 1..=5 {
            let msg = get(&client, "S", seq).await;
            let hdrs = base64_decode(msg["message"]["hdrs"].as_str().unwrap());
            // The origin's identity is a hash of its creation time: the same length in both.
            let (head, ident) = hdrs.trim_end().rsplit_once(' ').unwrap();
            headers.push(format!("{head} <{} chars>", ident.len()));
        }
        headers.sort();
        docs.push((server.name, created, infos, headers));
    }
    if let [(_, ours_c, ours_i, ours_h), (_, go_c, go_i, go_h)] = &docs[..] {
        assert_eq!(ours_c[1..], go_c[1..], "create answers");
        assert_eq!(ours_i, go_i, "stream infos");
        assert_eq!(ours_h, go_h, "source headers");
    }
}

/// Waits up to `within` until stream `name` holds `msgs` messages.
async fn wait_msgs_within(client: &async_nats::Client, name: &str, msgs: u64, within: Duration) {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let info = request(client, &format!("$JS.API.STREAM.INFO.{name}"), "").await;
        if info["state"]["messages"].as_u64() == Some(msgs) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{name} never held {msgs} messages");
}

/// A mirror whose origin does not exist yet shows Go's error and copies once it does (after
/// Go's backoff); a source whose origin is deleted and created again starts it over (Go's
/// 10 s silence check, then the identity mismatch). Slow by Go's timings (about 25 s).
#[tokio::test]
async fn jetstream_sourcing_origin_missing_then_recreated() {
    let Some(server) = JsServer::start("ours", false, js_conf) else {
        return;
    };
    let client = async_nats::connect(server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    for (name, cfg) in [
        (
            "M",
            r#"{"name":"M","mirror":{"name":"O"},"storage":"memory"}"#,
        ),
        (
            "S",
            r#"{"name":"S","sources":[{"name":"O"}],"storage":"memory"}"#,
        ),
    ] {
        request(&client, &format!("$JS.API.STREAM.CREATE.{name}"), cfg).await;
    }
    let deadline = Instant::now() + WAIT;
    loop {
        let info = request(&client, "$JS.API.STREAM.INFO.M", "").await;
        if info["mirror"]["error"]["err_code"] == 10059 {
            assert_eq!(info["mirror"]["error"]["description"], "stream not found");
            break;
        }
        assert!(Instant::now() < deadline, "no error shown: {info}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let origin = r#"{"name":"O","subjects":["o.>"],"storage":"memory"}"#;
    request(&client, "$JS.API.STREAM.CREATE.O", origin).await;
    for i in 0..3 {
        publish(&js, "o.a", format!("{i}")).await;
    }
    wait_msgs_within(&client, "M", 3, Duration::from_secs(25)).await;
    wait_msgs_within(&client, "S", 3, Duration::from_secs(25)).await;
    request(&client, "$JS.API.STREAM.DELETE.O", "").await;
    request(&client, "$JS.API.STREAM.CREATE.O", origin).await;
    publish(&js, "o.b", "new".into()).await;
    wait_msgs_within(&client, "S", 4, Duration::from_secs(25)).await;
    let msg = get(&client, "S", 4).await;
    let hdrs = base64_decode(msg["message"]["hdrs"].as_str().unwrap());
    assert!(
        hdrs.contains("Nats-Stream-Source: O 1 > > o.b "),
        "{hdrs:?}"
    );
}
