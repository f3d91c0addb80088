//! JetStream push consumers through `async-nats`: delivery and acks, a deliver group spread
//! over two queue subscribers, no delivery (and `push_bound` false) without interest, flow
//! control answered by the client, ordered push and ordered pull consumers reading 1,000
//! messages in order, `rate_limit_bps` and `replay_policy: original` pacing, and an
//! inactive ephemeral removed. The raw status lines (idle
//! heartbeats, flow control, a stalled consumer) and their comparison with Go are in
//! `raw.rs`; ack policy `flow_control` in `fc_acks.rs`.

use std::time::Duration;

use async_nats::jetstream::consumer::push::{Config as PushConfig, OrderedConfig};
use async_nats::jetstream::consumer::{pull, AckPolicy, PushConsumer, ReplayPolicy};
use async_nats::jetstream::stream::{Config as StreamConfig, Stream};
use async_nats::jetstream::Context;
use futures::StreamExt;
use natrium_tests::ServerProcess;

#[path = "jetstream_push/fc_acks.rs"]
mod fc_acks;
#[path = "jetstream_push/raw.rs"]
mod raw;

#[path = "support/jetstream.rs"]
mod support;
use support::{start_js as start, WAIT};

async fn connect(server: &ServerProcess) -> (async_nats::Client, Context) {
    let client = async_nats::connect(server.url()).await.expect("connect");
    let js = async_nats::jetstream::new(client.clone());
    (client, js)
}

async fn stream(js: &Context, name: &str, subject: &str) -> Stream {
    js.create_stream(StreamConfig {
        name: name.into(),
        subjects: vec![subject.to_owned()],
        ..Default::default()
    })
    .await
    .expect("stream")
}

async fn publish_n(js: &Context, subject: &str, n: usize) {
    let mut acks = Vec::with_capacity(n);
    for i in 0..n {
        acks.push(
            js.publish(subject.to_owned(), i.to_string().into())
                .await
                .expect("publish"),
        );
    }
    for ack in acks {
        ack.await.expect("stored");
    }
}

/// A server with JetStream in a fresh directory (kept as long as the server), a client, its
/// JetStream context, and stream `name` on `subject`.
async fn open(
    name: &str,
    subject: &str,
) -> (
    tempfile::TempDir,
    ServerProcess,
    async_nats::Client,
    Context,
    Stream,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start(dir.path());
    let (client, js) = connect(&server).await;
    let s = stream(&js, name, subject).await;
    (dir, server, client, js, s)
}

async fn push_bound(js: &Context, stream: &str, consumer: &str) -> bool {
    let s = js.get_stream(stream).await.expect("stream");
    s.consumer_info(consumer).await.expect("info").push_bound
}

#[tokio::test]
async fn jetstream_push_delivers_and_takes_acks() {
    let (_dir, _server, _client, js, s) = open("P", "p.>").await;
    publish_n(&js, "p.a", 10).await;
    let consumer: PushConsumer = s
        .create_consumer(PushConfig {
            durable_name: Some("D".into()),
            deliver_subject: "deliver.d".into(),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .expect("consumer");
    let mut messages = consumer.messages().await.expect("messages");
    for i in 0..10 {
        let msg = tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("in time")
            .expect("some")
            .expect("ok");
        assert_eq!(msg.subject.as_str(), "p.a");
        assert_eq!(msg.payload, i.to_string().as_bytes());
        msg.double_ack().await.expect("double ack");
    }
    let mut consumer = consumer;
    let info = consumer.info().await.expect("info");
    assert_eq!(info.ack_floor.stream_sequence, 10);
    assert_eq!(info.num_ack_pending, 0);
    assert!(info.push_bound);
}

#[tokio::test]
async fn jetstream_push_deliver_group_spreads_over_queue_subscribers() {
    let (_dir, _server, client, js, s) = open("G", "g.>").await;
    let mut a = client
        .queue_subscribe("deliver.g", "workers".into())
        .await
        .unwrap();
    let mut b = client
        .queue_subscribe("deliver.g", "workers".into())
        .await
        .unwrap();
    client.flush().await.unwrap();
    let _consumer: PushConsumer = s
        .create_consumer(PushConfig {
            durable_name: Some("Q".into()),
            deliver_subject: "deliver.g".into(),
            deliver_group: Some("workers".into()),
            ack_policy: AckPolicy::None,
            ..Default::default()
        })
        .await
        .expect("consumer");
    publish_n(&js, "g.x", 200).await;
    let (mut got_a, mut got_b) = (0, 0);
    while got_a + got_b < 200 {
        tokio::select! {
            Some(_) = a.next() => got_a += 1,
            Some(_) = b.next() => got_b += 1,
            () = tokio::time::sleep(WAIT) => panic!("only {got_a} + {got_b} of 200"),
        }
    }
    assert!(got_a > 0 && got_b > 0, "{got_a} / {got_b}");
}

#[tokio::test]
async fn jetstream_push_needs_interest() {
    let (_dir, _server, client, js, s) = open("I", "i.>").await;
    publish_n(&js, "i.x", 5).await;
    let _c: PushConsumer = s
        .create_consumer(PushConfig {
            durable_name: Some("N".into()),
            deliver_subject: "deliver.i".into(),
            ack_policy: AckPolicy::Explicit,
            ..Default::default()
        })
        .await
        .expect("consumer");
    assert!(!push_bound(&js, "I", "N").await);
    // Nothing was delivered while nobody listened: a subscriber now gets all five.
    let mut sub = client.subscribe("deliver.i").await.unwrap();
    client.flush().await.unwrap();
    for i in 0..5 {
        let msg = tokio::time::timeout(WAIT, sub.next())
            .await
            .expect("in time")
            .expect("msg");
        assert_eq!(msg.payload, i.to_string().as_bytes());
        let reply = msg.reply.expect("ack subject");
        let prefix = format!("$JS.ACK.I.N.1.{}.{}.", i + 1, i + 1);
        assert!(reply.as_str().starts_with(&prefix), "{reply}");
    }
    assert!(push_bound(&js, "I", "N").await);
}

#[tokio::test]
async fn jetstream_push_flow_control_answered_by_the_client() {
    let (_dir, _server, _client, js, s) = open("F", "f.>").await;
    let big = vec![b'x'; 100 * 1024];
    for _ in 0..60 {
        js.publish("f.big", big.clone().into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let consumer: PushConsumer = s
        .create_consumer(PushConfig {
            durable_name: Some("FC".into()),
            deliver_subject: "deliver.f".into(),
            ack_policy: AckPolicy::None,
            flow_control: true,
            idle_heartbeat: Duration::from_secs(1),
            ..Default::default()
        })
        .await
        .expect("consumer");
    let mut messages = consumer.messages().await.expect("messages");
    for _ in 0..60 {
        let msg = tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("in time: the flow control must have been answered")
            .expect("some")
            .expect("ok");
        assert_eq!(msg.payload.len(), big.len());
    }
}

#[tokio::test]
async fn jetstream_push_ordered_consumer_reads_in_order() {
    let (_dir, _server, client, js, s) = open("O", "o.>").await;
    publish_n(&js, "o.x", 1000).await;
    let consumer = s
        .create_consumer(OrderedConfig {
            deliver_subject: client.new_inbox(),
            ..Default::default()
        })
        .await
        .expect("ordered push");
    let mut messages = consumer.messages().await.expect("messages");
    for i in 0..1000 {
        let msg = tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("in time")
            .expect("some")
            .expect("ok");
        assert_eq!(msg.payload, i.to_string().as_bytes());
        assert_eq!(msg.info().unwrap().stream_sequence, i as u64 + 1);
    }
}

#[tokio::test]
async fn jetstream_push_ordered_pull_consumer_reads_in_order() {
    let (_dir, _server, _client, js, s) = open("OP", "op.>").await;
    publish_n(&js, "op.x", 1000).await;
    let consumer = s
        .create_consumer(pull::OrderedConfig::default())
        .await
        .expect("ordered pull");
    let mut messages = consumer.messages().await.expect("messages");
    for i in 0..1000 {
        let msg = tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("in time")
            .expect("some")
            .expect("ok");
        assert_eq!(msg.payload, i.to_string().as_bytes());
    }
}

#[tokio::test]
async fn jetstream_push_inactive_ephemeral_is_removed() {
    let (_dir, _server, client, _js, s) = open("E", "e.>").await;
    let mut advisories = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.DELETED.E.*")
        .await
        .unwrap();
    client.flush().await.unwrap();
    let push: PushConsumer = s
        .create_consumer(PushConfig {
            deliver_subject: "deliver.nobody".into(),
            inactive_threshold: Duration::from_millis(300),
            ..Default::default()
        })
        .await
        .expect("push ephemeral");
    let pull_consumer = s
        .create_consumer(pull::Config {
            inactive_threshold: Duration::from_millis(300),
            ..Default::default()
        })
        .await
        .expect("pull ephemeral");
    let mut names = vec![
        push.cached_info().name.clone(),
        pull_consumer.cached_info().name.clone(),
    ];
    names.sort();
    let mut deleted = Vec::new();
    for _ in 0..2 {
        let msg = tokio::time::timeout(WAIT, advisories.next())
            .await
            .expect("deleted in time")
            .expect("advisory");
        let body: serde_json::Value = serde_json::from_slice(&msg.payload).unwrap();
        assert_eq!(body["action"], "delete");
        deleted.push(body["consumer"].as_str().unwrap().to_owned());
    }
    deleted.sort();
    assert_eq!(deleted, names);
    let mut s = s;
    assert_eq!(s.info().await.unwrap().state.consumer_count, 0);
}

/// Reads `n` messages from a push consumer; returns the time each came.
async fn arrivals(consumer: PushConsumer, n: usize) -> Vec<std::time::Instant> {
    let mut messages = consumer.messages().await.expect("messages");
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("in time")
            .expect("some")
            .expect("ok");
        out.push(std::time::Instant::now());
    }
    out
}

#[tokio::test]
async fn jetstream_push_rate_limit_paces_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (client, js) = connect(&server).await;
    js.create_stream(StreamConfig {
        name: "R".into(),
        subjects: vec!["r.>".into()],
        max_message_size: 1000,
        ..Default::default()
    })
    .await
    .expect("stream");
    for _ in 0..5 {
        js.publish("r.x", vec![b'x'; 900].into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    // 80,000 bits a second is 10,000 bytes; a bucket of 1,000 (the stream's max message
    // size): after the first, each ~900-byte message waits ~90 ms. (async-nats names the
    // field `rate_limit`, which the server refuses as Go does: the request is made here.)
    let mut sub = client.subscribe("deliver.r").await.unwrap();
    let body = r#"{"stream_name":"R","config":{"name":"RL","deliver_subject":"deliver.r","ack_policy":"none","rate_limit_bps":80000}}"#;
    let reply = client
        .request("$JS.API.CONSUMER.CREATE.R.RL", body.into())
        .await
        .expect("create");
    assert!(
        std::str::from_utf8(&reply.payload)
            .unwrap()
            .contains("\"rate_limit_bps\":80000"),
        "{reply:?}"
    );
    let mut times = Vec::new();
    for _ in 0..5 {
        tokio::time::timeout(WAIT, sub.next())
            .await
            .expect("in time")
            .expect("msg");
        times.push(std::time::Instant::now());
    }
    let spread = times[4] - times[0];
    assert!(spread >= Duration::from_millis(300), "{spread:?}");
}

#[tokio::test]
async fn jetstream_push_replay_original_keeps_the_spacing() {
    let (_dir, _server, _client, js, s) = open("RO", "ro.>").await;
    publish_n(&js, "ro.x", 1).await;
    // The stored spacing the replay must keep (setting up timestamps, not synchronising).
    tokio::time::sleep(Duration::from_millis(400)).await;
    publish_n(&js, "ro.x", 1).await;
    let consumer: PushConsumer = s
        .create_consumer(PushConfig {
            deliver_subject: "deliver.ro".into(),
            ack_policy: AckPolicy::None,
            replay_policy: ReplayPolicy::Original,
            ..Default::default()
        })
        .await
        .expect("consumer");
    let times = arrivals(consumer, 2).await;
    let spread = times[1] - times[0];
    assert!(spread >= Duration::from_millis(350), "{spread:?}");
}

/// A stream import a reload adds: the push consumer hears the importing account's
/// subscription, made before the reload, and delivers there.
#[tokio::test]
async fn jetstream_push_delivers_across_an_import_added_by_reload() {
    let store = tempfile::tempdir().unwrap();
    let conf = |import: &str| {
        format!(
            "jetstream {{ store_dir: \"{}\" }}\n\
             accounts {{\n\
               A {{ jetstream: enabled, users [ {{user: a, password: a}} ], exports [ {{stream: \"d.>\"}} ] }}\n\
               B {{ users [ {{user: b, password: b}} ] {import} }}\n\
             }}\n",
            store.path().display()
        )
    };
    let file = natrium_tests::reload::Conf::new(&conf(""));
    let server = ServerProcess::start(&["-c", file.arg(), "-a", "127.0.0.1", "-p", "-1"]);
    let a = async_nats::ConnectOptions::with_user_and_password("a".into(), "a".into())
        .connect(server.url())
        .await
        .unwrap();
    let b = async_nats::ConnectOptions::with_user_and_password("b".into(), "b".into())
        .connect(server.url())
        .await
        .unwrap();
    let js = async_nats::jetstream::new(a.clone());
    let stream = stream(&js, "S", "s.>").await;
    stream
        .create_consumer(PushConfig {
            durable_name: Some("P".into()),
            deliver_subject: "d.x".into(),
            ..PushConfig::default()
        })
        .await
        .unwrap();
    let mut deliveries = b.subscribe("d.x").await.unwrap();
    b.flush().await.unwrap();
    publish_n(&js, "s.1", 1).await;
    file.write(&conf(
        ", imports [ {stream: {account: A, subject: \"d.>\"}} ]",
    ));
    natrium_tests::reload::sighup(&server, 1);
    let msg = tokio::time::timeout(WAIT, deliveries.next())
        .await
        .expect("delivered after the reload")
        .expect("subscription");
    assert_eq!(msg.subject.as_str(), "s.1");
}
