//! JetStream pull consumers through `async-nats`: `fetch()`, `batch()` and `messages()`, acks
//! of every kind (ack, NAK with and without delay, in progress, term, double ack),
//! redelivery after `ack_wait`, `max_ack_pending`, `max_deliver` with its advisory, filter
//! subjects, work-queue retention, and a kill -9 in the middle of consumption: what was
//! acknowledged stays so, what was delivered and not acknowledged comes again with delivery
//! count 2. The raw-protocol status tests (and their comparison with Go) are in `raw.rs`.

use std::time::Duration;

use async_nats::jetstream::consumer::pull::Config as PullConfig;
use async_nats::jetstream::consumer::{AckPolicy, PullConsumer};
use async_nats::jetstream::stream::{Config as StreamConfig, RetentionPolicy, Stream};
use async_nats::jetstream::{AckKind, Context, Message};
use futures::StreamExt;
use natrium_tests::ServerProcess;

#[path = "jetstream_pull/raw.rs"]
mod raw;

const WAIT: Duration = Duration::from_secs(10);

fn start(dir: &std::path::Path) -> ServerProcess {
    let dir = dir.display().to_string();
    ServerProcess::start(&["-js", "-sd", &dir])
}

async fn connect(server: &ServerProcess) -> (async_nats::Client, Context) {
    let client = async_nats::connect(server.url()).await.expect("connect");
    let js = async_nats::jetstream::new(client.clone());
    (client, js)
}

async fn stream(js: &Context, name: &str, subjects: &[&str], retention: RetentionPolicy) -> Stream {
    js.create_stream(StreamConfig {
        name: name.into(),
        subjects: subjects.iter().map(|s| (*s).to_owned()).collect(),
        retention,
        ..Default::default()
    })
    .await
    .expect("stream")
}

async fn publish(js: &Context, subject: &str, payload: &str) {
    js.publish(subject.to_owned(), payload.to_owned().into())
        .await
        .expect("publish")
        .await
        .expect("stored");
}

async fn consumer(stream: &Stream, config: PullConfig) -> PullConsumer {
    stream.create_consumer(config).await.expect("consumer")
}

fn durable(name: &str) -> PullConfig {
    PullConfig {
        durable_name: Some(name.into()),
        ack_policy: AckPolicy::Explicit,
        ..Default::default()
    }
}

/// Fetches up to `n` messages (`no_wait`): what is there now.
async fn fetch(c: &PullConsumer, n: usize) -> Vec<Message> {
    let mut batch = c.fetch().max_messages(n).messages().await.expect("fetch");
    let mut out = Vec::new();
    while let Some(msg) = tokio::time::timeout(WAIT, batch.next())
        .await
        .expect("fetch in time")
    {
        out.push(msg.expect("message"));
    }
    out
}

/// Waits (bounded by `expires`) for up to `n` messages.
async fn batch(c: &PullConsumer, n: usize, expires: Duration) -> Vec<Message> {
    let mut batch = c
        .batch()
        .max_messages(n)
        .expires(expires)
        .messages()
        .await
        .expect("batch");
    let mut out = Vec::new();
    while let Some(msg) = tokio::time::timeout(WAIT, batch.next())
        .await
        .expect("batch in time")
    {
        out.push(msg.expect("message"));
    }
    out
}

fn payloads(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| String::from_utf8_lossy(&m.payload).into_owned())
        .collect()
}

fn delivered(msg: &Message) -> i64 {
    msg.info().expect("ack subject").delivered
}

#[tokio::test]
async fn jetstream_pull_fetch_acks_and_info() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_client, js) = connect(&server).await;
    let s = stream(&js, "S", &["s.>"], RetentionPolicy::Limits).await;
    for i in 1..=5 {
        publish(&js, "s.a", &format!("m{i}")).await;
    }
    let mut c = consumer(&s, durable("D")).await;
    let first = fetch(&c, 3).await;
    assert_eq!(payloads(&first), ["m1", "m2", "m3"]);
    let info = first[2].info().unwrap();
    assert_eq!((info.stream_sequence, info.consumer_sequence), (3, 3));
    assert_eq!((info.delivered, info.pending), (1, 2));
    for m in &first {
        m.ack().await.unwrap();
    }
    let rest = fetch(&c, 10).await;
    assert_eq!(payloads(&rest), ["m4", "m5"]);
    rest[0].double_ack().await.expect("double ack answered");
    rest[1].double_ack().await.expect("double ack answered");
    let info = c.info().await.unwrap().clone();
    assert_eq!(info.delivered.stream_sequence, 5);
    assert_eq!(info.ack_floor.stream_sequence, 5);
    assert_eq!(info.num_ack_pending, 0);
    assert_eq!(info.num_pending, 0);
    assert!(fetch(&c, 1).await.is_empty());
}

#[tokio::test]
async fn jetstream_pull_messages_wake_on_new_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_client, js) = connect(&server).await;
    let s = stream(&js, "S", &["s.>"], RetentionPolicy::Limits).await;
    let c = consumer(&s, durable("D")).await;
    let mut messages = c.messages().await.expect("messages");
    for i in 1..=3 {
        publish(&js, "s.x", &format!("n{i}")).await;
    }
    for i in 1..=3 {
        let msg = tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("in time")
            .expect("open")
            .expect("message");
        assert_eq!(msg.payload, format!("n{i}"));
        msg.ack().await.unwrap();
    }
}

#[tokio::test]
async fn jetstream_pull_nak_term_progress_and_ack_wait() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_client, js) = connect(&server).await;
    let s = stream(&js, "S", &["s.>"], RetentionPolicy::Limits).await;
    for i in 1..=3 {
        publish(&js, "s.a", &format!("m{i}")).await;
    }
    let c = consumer(
        &s,
        PullConfig {
            ack_wait: Duration::from_millis(600),
            ..durable("D")
        },
    )
    .await;
    let got = fetch(&c, 3).await;
    assert_eq!(got.len(), 3);
    got[0].ack_with(AckKind::Nak(None)).await.unwrap();
    got[1].ack_with(AckKind::Term).await.unwrap();
    got[2].ack_with(AckKind::Progress).await.unwrap();
    // The NAK'd message comes back at once, counted twice.
    let again = batch(&c, 1, Duration::from_secs(2)).await;
    assert_eq!(payloads(&again), ["m1"]);
    assert_eq!(delivered(&again[0]), 2);
    again[0].ack().await.unwrap();
    // The one in progress was not acknowledged: it comes back after the ack wait.
    let late = batch(&c, 1, Duration::from_secs(3)).await;
    assert_eq!(payloads(&late), ["m3"]);
    assert_eq!(delivered(&late[0]), 2);
    late[0].double_ack().await.unwrap();
    // A NAK with a delay waits for it.
    publish(&js, "s.a", "m4").await;
    let m4 = fetch(&c, 1).await;
    m4[0]
        .ack_with(AckKind::Nak(Some(Duration::from_millis(300))))
        .await
        .unwrap();
    assert!(fetch(&c, 1).await.is_empty(), "delayed");
    let back = batch(&c, 1, Duration::from_secs(3)).await;
    assert_eq!(payloads(&back), ["m4"]);
}

#[tokio::test]
async fn jetstream_pull_max_ack_pending_and_max_deliver() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (client, js) = connect(&server).await;
    let s = stream(&js, "S", &["s.>"], RetentionPolicy::Limits).await;
    for i in 1..=4 {
        publish(&js, "s.a", &format!("m{i}")).await;
    }
    let c = consumer(
        &s,
        PullConfig {
            max_ack_pending: 2,
            ..durable("P")
        },
    )
    .await;
    let got = batch(&c, 4, Duration::from_millis(500)).await;
    assert_eq!(payloads(&got), ["m1", "m2"]);
    got[0].double_ack().await.unwrap();
    let more = batch(&c, 4, Duration::from_millis(500)).await;
    assert_eq!(payloads(&more), ["m3"]);

    let mut advisories = client
        .subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.M")
        .await
        .unwrap();
    client.flush().await.unwrap();
    let m = consumer(
        &s,
        PullConfig {
            max_deliver: 2,
            ack_wait: Duration::from_millis(300),
            filter_subject: "s.m".into(),
            ..durable("M")
        },
    )
    .await;
    publish(&js, "s.m", "once").await;
    let mut counts = Vec::new();
    for _ in 0..2 {
        let got = batch(&m, 1, Duration::from_secs(2)).await;
        counts.push(delivered(&got[0]));
    }
    assert_eq!(counts, [1, 2]);
    // As in Go, the limit is found when the message would go out a third time.
    assert!(batch(&m, 1, Duration::from_millis(800)).await.is_empty());
    let advisory = tokio::time::timeout(WAIT, advisories.next())
        .await
        .expect("advisory in time")
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&advisory.payload).unwrap();
    assert_eq!(doc["type"], "io.nats.jetstream.advisory.v1.max_deliver");
    assert_eq!(
        (doc["stream_seq"].as_u64(), doc["deliveries"].as_u64()),
        (Some(5), Some(2))
    );
}

#[tokio::test]
async fn jetstream_pull_filter_subjects_and_work_queue() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_client, js) = connect(&server).await;
    let mut s = stream(&js, "W", &["w.>"], RetentionPolicy::WorkQueue).await;
    for subject in ["w.a", "w.b", "w.c", "w.a"] {
        publish(&js, subject, subject).await;
    }
    let c = consumer(
        &s,
        PullConfig {
            filter_subjects: vec!["w.a".into(), "w.c".into()],
            ..durable("F")
        },
    )
    .await;
    let got = fetch(&c, 10).await;
    assert_eq!(payloads(&got), ["w.a", "w.c", "w.a"]);
    for m in &got {
        m.double_ack().await.unwrap();
    }
    // Acknowledged work is gone; the message no consumer took stays.
    let info = s.info().await.unwrap();
    assert_eq!(info.state.messages, 1);
}

#[tokio::test]
async fn jetstream_pull_resumes_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    {
        let (_client, js) = connect(&server).await;
        let s = stream(&js, "K", &["k.>"], RetentionPolicy::Limits).await;
        for i in 1..=4 {
            publish(&js, "k.a", &format!("m{i}")).await;
        }
        let c = consumer(
            &s,
            PullConfig {
                ack_wait: Duration::from_secs(1),
                ..durable("D")
            },
        )
        .await;
        let got = fetch(&c, 4).await;
        assert_eq!(got.len(), 4);
        got[0].double_ack().await.unwrap();
        got[1].double_ack().await.unwrap();
    }
    server.kill();
    let server = start(dir.path());
    let (_client, js) = connect(&server).await;
    let s = js.get_stream("K").await.expect("stream recovered");
    let c: PullConsumer = s.get_consumer("D").await.expect("consumer recovered");
    let again = batch(&c, 2, Duration::from_secs(5)).await;
    assert_eq!(payloads(&again), ["m3", "m4"]);
    assert!(again.iter().all(|m| delivered(m) == 2));
}

#[tokio::test]
async fn jetstream_pull_interest_retention_waits_for_every_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let (_client, js) = connect(&server).await;
    let mut s = stream(&js, "I", &["i.>"], RetentionPolicy::Interest).await;
    let a = consumer(&s, durable("A")).await;
    let b = consumer(&s, durable("B")).await;
    publish(&js, "i.x", "one").await;
    publish(&js, "i.x", "two").await;
    for m in fetch(&a, 2).await {
        m.double_ack().await.unwrap();
    }
    assert_eq!(
        s.info().await.unwrap().state.messages,
        2,
        "B still needs them"
    );
    let got = fetch(&b, 2).await;
    got[0].double_ack().await.unwrap();
    assert_eq!(s.info().await.unwrap().state.messages, 1);
    got[1].double_ack().await.unwrap();
    assert_eq!(s.info().await.unwrap().state.messages, 0);
}

/// `replay_policy: original` paces a pull consumer as it paces a push one: a request for two
/// messages stored 400 ms apart gets the second no sooner than the spacing allows, on ours
/// and on Go's (Go's one delivery loop serves both kinds).
#[tokio::test]
async fn jetstream_pull_replay_original_keeps_the_spacing_like_go() {
    use async_nats::jetstream::consumer::ReplayPolicy;
    for go in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().display().to_string();
        let args = ["-js", "-sd", &path, "-a", "127.0.0.1", "-p", "-1"];
        let Some(server) = ServerProcess::start_ours_or_go(go, &args) else {
            continue;
        };
        let (_client, js) = connect(&server).await;
        let s = stream(&js, "RO", &["ro.>"], RetentionPolicy::Limits).await;
        publish(&js, "ro.x", "1").await;
        // The stored spacing the replay must keep (setting up timestamps, not synchronising).
        tokio::time::sleep(Duration::from_millis(400)).await;
        publish(&js, "ro.x", "2").await;
        let c = consumer(
            &s,
            PullConfig {
                ack_policy: AckPolicy::None,
                replay_policy: ReplayPolicy::Original,
                ..Default::default()
            },
        )
        .await;
        let mut batch = c
            .batch()
            .max_messages(2)
            .expires(Duration::from_secs(5))
            .messages()
            .await
            .expect("batch");
        let mut times = Vec::new();
        for _ in 0..2 {
            tokio::time::timeout(WAIT, batch.next())
                .await
                .expect("in time")
                .expect("a message")
                .expect("not an error");
            times.push(std::time::Instant::now());
        }
        let spread = times[1] - times[0];
        assert!(spread >= Duration::from_millis(350), "go={go}: {spread:?}");
    }
}
