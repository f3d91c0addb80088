//! Core NATS through the official Rust client (`async-nats`) against our binary.

use std::time::Duration;

use futures::{FutureExt, StreamExt};
use natrium_tests::ServerProcess;

const WAIT: Duration = Duration::from_secs(10);

async fn next(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(WAIT, sub.next()).await.expect("message in time").expect("open")
}

#[tokio::test]
async fn core_pub_sub_with_wildcards() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut star = client.subscribe("orders.*").await.unwrap();
    let mut full = client.subscribe("orders.>").await.unwrap();
    let mut exact = client.subscribe("orders.new.eu").await.unwrap();
    client.publish("orders.new", "one".into()).await.unwrap();
    client.publish("orders.new.eu", "two".into()).await.unwrap();
    client.flush().await.unwrap();
    assert_eq!(next(&mut star).await.payload, "one");
    let a = next(&mut full).await;
    let b = next(&mut full).await;
    assert_eq!((a.subject.as_str(), b.subject.as_str()), ("orders.new", "orders.new.eu"));
    assert_eq!(next(&mut exact).await.payload, "two");
}

#[tokio::test]
async fn core_queue_groups_deliver_each_message_once() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut members = Vec::new();
    for _ in 0..3 {
        members.push(client.queue_subscribe("jobs", "workers".into()).await.unwrap());
    }
    let mut plain = client.subscribe("jobs").await.unwrap();
    client.flush().await.unwrap();
    let total = 300;
    for i in 0..total {
        client.publish("jobs", i.to_string().into()).await.unwrap();
    }
    client.flush().await.unwrap();
    for _ in 0..total {
        next(&mut plain).await;
    }
    // The plain subscriber saw every message, so all queue deliveries are queued too.
    let mut counts = Vec::new();
    let mut seen = 0;
    for member in &mut members {
        let mut n = 0;
        while let Some(Some(_)) = member.next().now_or_never() {
            n += 1;
        }
        seen += n;
        counts.push(n);
    }
    assert_eq!(seen, total, "each message to exactly one member: {counts:?}");
    assert!(counts.iter().all(|c| *c > 0), "spread across members: {counts:?}");
}

#[tokio::test]
async fn core_request_reply() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut service = client.subscribe("math.double").await.unwrap();
    let responder = client.clone();
    tokio::spawn(async move {
        while let Some(msg) = service.next().await {
            let n: u64 = std::str::from_utf8(&msg.payload).unwrap().parse().unwrap();
            if let Some(reply) = msg.reply {
                responder.publish(reply, (n * 2).to_string().into()).await.unwrap();
            }
        }
    });
    for n in [1u64, 21, 500] {
        let answer = client.request("math.double", n.to_string().into()).await.unwrap();
        assert_eq!(answer.payload, (n * 2).to_string());
    }
}

#[tokio::test]
async fn core_no_responders() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let err = client.request("nobody.here", "x".into()).await.unwrap_err();
    assert_eq!(err.kind(), async_nats::RequestErrorKind::NoResponders);
}

#[tokio::test]
async fn core_headers_pass_through_untouched() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("with.headers").await.unwrap();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("X-Trace", "abc");
    headers.append("X-Multi", "one");
    headers.append("X-Multi", "two");
    client.publish_with_headers("with.headers", headers, "body".into()).await.unwrap();
    let msg = next(&mut sub).await;
    let got = msg.headers.expect("headers");
    assert_eq!(got.get("X-Trace").map(|v| v.as_str()), Some("abc"));
    let multi: Vec<&str> = got.get_all("X-Multi").map(|v| v.as_str()).collect();
    assert_eq!(multi, ["one", "two"]);
    assert_eq!(msg.payload, "body");
}

#[tokio::test]
async fn core_auto_unsubscribe_after_n() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("limited").await.unwrap();
    sub.unsubscribe_after(3).await.unwrap();
    for i in 0..10 {
        client.publish("limited", i.to_string().into()).await.unwrap();
    }
    client.flush().await.unwrap();
    let mut got = Vec::new();
    while let Ok(Some(msg)) = tokio::time::timeout(WAIT, sub.next()).await {
        got.push(msg.payload);
    }
    assert_eq!(got, ["0", "1", "2"]);
}

#[tokio::test]
async fn core_no_echo() {
    let server = ServerProcess::start(&[]);
    let quiet = async_nats::ConnectOptions::new().no_echo().connect(server.url()).await.unwrap();
    let other = async_nats::connect(server.url()).await.unwrap();
    let mut own = quiet.subscribe("echo.test").await.unwrap();
    quiet.flush().await.unwrap();
    quiet.publish("echo.test", "mine".into()).await.unwrap();
    quiet.flush().await.unwrap();
    other.publish("echo.test", "theirs".into()).await.unwrap();
    other.flush().await.unwrap();
    assert_eq!(next(&mut own).await.payload, "theirs");
}

#[tokio::test]
async fn core_drain_delivers_pending_then_closes() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let mut sub = client.subscribe("drain.me").await.unwrap();
    client.flush().await.unwrap();
    for i in 0..50 {
        client.publish("drain.me", i.to_string().into()).await.unwrap();
    }
    client.flush().await.unwrap();
    sub.drain().await.unwrap();
    let mut n = 0;
    while let Ok(Some(_)) = tokio::time::timeout(WAIT, sub.next()).await {
        n += 1;
    }
    assert_eq!(n, 50);
}

#[tokio::test]
async fn core_client_reconnects_after_server_restart() {
    let dir = tempfile::tempdir().unwrap();
    let first = ServerProcess::start(&[]);
    let port = first.port.to_string();
    let (tx, mut rx) = tokio::sync::mpsc::channel(8);
    let client = async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .event_callback(move |event| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(event.to_string()).await;
            }
        })
        .connect(first.url())
        .await
        .unwrap();
    let mut sub = client.subscribe("after.restart").await.unwrap();
    client.flush().await.unwrap();
    drop(first);
    let _ = dir;
    let second = ServerProcess::start(&["-p", &port]);
    // Wait for the client's own "connected" event after the restart.
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await.unwrap().unwrap();
        if event.contains("connected") && !event.contains("disconnected") {
            break;
        }
    }
    client.publish("after.restart", "back".into()).await.unwrap();
    client.flush().await.unwrap();
    assert_eq!(next(&mut sub).await.payload, "back");
    drop(second);
}
