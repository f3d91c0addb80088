//! Core NATS through the official Rust client (`async-nats`) against our binary.

use std::time::Duration;

use futures::StreamExt;
use natrium_tests::ServerProcess;

const WAIT: Duration = Duration::from_secs(10);

/// A server round trip on `client`'s connection: everything it sent before has been processed
/// once the no-responders answer comes back (`flush` only empties the client's buffer).
async fn round_trip(client: &async_nats::Client) {
    let _ = client.request("_round_trip.nobody", "".into()).await;
}

async fn next(sub: &mut async_nats::Subscriber) -> async_nats::Message {
    tokio::time::timeout(WAIT, sub.next())
        .await
        .expect("message in time")
        .expect("open")
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
    assert_eq!(
        (a.subject.as_str(), b.subject.as_str()),
        ("orders.new", "orders.new.eu")
    );
    assert_eq!(next(&mut exact).await.payload, "two");
}

#[tokio::test]
async fn core_queue_groups_deliver_each_message_once() {
    let server = ServerProcess::start(&[]);
    let client = async_nats::connect(server.url()).await.unwrap();
    let total = 300;
    let (tx, mut rx) = tokio::sync::mpsc::channel(total);
    for member in 0..3 {
        let mut sub = client
            .queue_subscribe("jobs", "workers".into())
            .await
            .unwrap();
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(msg) = sub.next().await {
                let _ = tx.send((member, msg.payload)).await;
            }
        });
    }
    client.flush().await.unwrap();
    for i in 0..total {
        client.publish("jobs", i.to_string().into()).await.unwrap();
    }
    client.flush().await.unwrap();
    let mut counts = [0usize; 3];
    let mut seen = std::collections::HashSet::new();
    for _ in 0..total {
        let (member, payload) = tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap()
            .unwrap();
        counts[member] += 1;
        assert!(seen.insert(payload), "delivered twice");
    }
    assert!(
        counts.iter().all(|c| *c > 0),
        "spread across members: {counts:?}"
    );
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
                responder
                    .publish(reply, (n * 2).to_string().into())
                    .await
                    .unwrap();
            }
        }
    });
    for n in [1u64, 21, 500] {
        let answer = client
            .request("math.double", n.to_string().into())
            .await
            .unwrap();
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
    client
        .publish_with_headers("with.headers", headers, "body".into())
        .await
        .unwrap();
    let msg = next(&mut sub).await;
    let got = msg.headers.expect("headers");
    assert_eq!(
        got.get("X-Trace").map(async_nats::HeaderValue::as_str),
        Some("abc")
    );
    let multi: Vec<&str> = got
        .get_all("X-Multi")
        .map(async_nats::HeaderValue::as_str)
        .collect();
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
        client
            .publish("limited", i.to_string().into())
            .await
            .unwrap();
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
    let quiet = async_nats::ConnectOptions::new()
        .no_echo()
        .connect(server.url())
        .await
        .unwrap();
    let other = async_nats::connect(server.url()).await.unwrap();
    let mut own = quiet.subscribe("echo.test").await.unwrap();
    round_trip(&quiet).await;
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
        client
            .publish("drain.me", i.to_string().into())
            .await
            .unwrap();
    }
    // async-nats' flush only writes its buffer, and its drain drops the subscription at the
    // client's next poll: a round trip first makes sure the 50 messages have arrived.
    round_trip(&client).await;
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
    // Wait for the client's disconnect, then its "connected" event after the restart.
    let mut seen_disconnect = false;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .unwrap()
            .unwrap();
        if event.contains("disconnected") {
            seen_disconnect = true;
        } else if seen_disconnect && event.contains("connected") {
            break;
        }
    }
    client
        .publish("after.restart", "back".into())
        .await
        .unwrap();
    client.flush().await.unwrap();
    assert_eq!(next(&mut sub).await.payload, "back");
    drop(second);
}
