//! Snapshot and restore drivers shared by the snapshot tests: a snapshot received with its
//! chunks acknowledged (or not), a restore sent in chunks as `nats stream restore` sends it.

#![allow(dead_code)]

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{json, Value};

use crate::support::WAIT;

pub async fn request_raw(client: &async_nats::Client, subject: &str, body: Bytes) -> Bytes {
    tokio::time::timeout(WAIT, client.request(subject.to_owned(), body))
        .await
        .expect("answer in time")
        .expect("answer")
        .payload
}

pub async fn request(client: &async_nats::Client, subject: &str, body: &Value) -> Value {
    let body = if body.is_null() {
        Bytes::new()
    } else {
        body.to_string().into()
    };
    serde_json::from_slice(&request_raw(client, subject, body).await).expect("json")
}

/// What a snapshot delivered: the response, the data chunks with their reply subjects, and
/// the closing message's status and description.
pub struct Snapshot {
    pub response: Value,
    pub chunks: Vec<(Option<String>, Bytes)>,
    pub end: (Option<u16>, Option<String>),
}

impl Snapshot {
    pub fn data(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|(_, c)| c.to_vec()).collect()
    }
}

/// Snapshots `stream`, acknowledging each chunk when `ack`.
pub async fn snapshot(
    client: &async_nats::Client,
    stream: &str,
    ask: Value,
    ack: bool,
) -> Snapshot {
    let inbox = client.new_inbox();
    let mut sub = client.subscribe(inbox.clone()).await.unwrap();
    let mut ask = ask;
    ask["deliver_subject"] = json!(inbox);
    let response = request(client, &format!("$JS.API.STREAM.SNAPSHOT.{stream}"), &ask).await;
    let mut chunks = Vec::new();
    if response.get("error").is_some() {
        return Snapshot {
            response,
            chunks,
            end: (None, None),
        };
    }
    loop {
        let msg = tokio::time::timeout(WAIT, sub.next())
            .await
            .expect("chunk in time")
            .expect("chunk");
        if msg.payload.is_empty() {
            return Snapshot {
                response,
                chunks,
                end: (msg.status.map(|s| s.as_u16()), msg.description),
            };
        }
        let reply = msg.reply.map(|r| r.to_string());
        if let (true, Some(reply)) = (ack, &reply) {
            client.publish(reply.clone(), Bytes::new()).await.unwrap();
        }
        chunks.push((reply, msg.payload));
    }
}

/// Restores `data` as `config` in chunks of `chunk` bytes; the final answer.
pub async fn restore(
    client: &async_nats::Client,
    config: &Value,
    data: &[u8],
    chunk: usize,
) -> Value {
    let name = config["name"].as_str().unwrap();
    let body = json!({"config": config, "state": {}});
    let answer = request(client, &format!("$JS.API.STREAM.RESTORE.{name}"), &body).await;
    assert_eq!(
        answer["type"],
        "io.nats.jetstream.api.v1.stream_restore_response"
    );
    let deliver = answer["deliver_subject"].as_str().unwrap().to_owned();
    assert!(deliver.starts_with(&format!("$JS.SNAPSHOT.RESTORE.{name}.")));
    for piece in data.chunks(chunk) {
        let ack = request_raw(client, &deliver, Bytes::copy_from_slice(piece)).await;
        assert!(ack.is_empty(), "chunk ack {ack:?}");
    }
    serde_json::from_slice(&request_raw(client, &deliver, Bytes::new()).await).unwrap()
}
