//! JetStream rows: publishes into a stream, acknowledged by the server. Both servers run
//! with a fresh store directory per run; the stream is created with a raw `$JS.API` request.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::outcome::Outcome;
use crate::wire::{Conn, Endpoint};

/// Where the stream keeps its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Memory,
    File,
}

/// Acks outstanding at most on the async row (a batching client's window).
const ASYNC_WINDOW: u64 = 4096;
/// Publishes per write on the async row.
const ASYNC_BATCH: u64 = 256;

const SUBJECT: &str = "bench.js";

/// Creates stream `BENCH` on `bench.js` and waits for its answer.
fn create_stream(conn: &mut Conn, storage: Storage) -> Result<()> {
    let storage = match storage {
        Storage::Memory => "memory",
        Storage::File => "file",
    };
    let body = format!(r#"{{"name":"BENCH","subjects":["{SUBJECT}"],"storage":"{storage}"}}"#);
    conn.send(
        format!(
            "SUB _INBOX.create 90\r\nUNSUB 90 1\r\nPUB $JS.API.STREAM.CREATE.BENCH _INBOX.create {}\r\n{body}\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    let answer = conn.next_msg_payload()?;
    if !answer.windows(10).any(|w| w == b"did_create") {
        bail!("stream create failed: {}", String::from_utf8_lossy(&answer));
    }
    Ok(())
}

fn publish_frame(reply: &str, payload: usize) -> Vec<u8> {
    let mut frame = format!("PUB {SUBJECT} {reply} {payload}\r\n").into_bytes();
    frame.extend(std::iter::repeat_n(b'x', payload));
    frame.extend_from_slice(b"\r\n");
    frame
}

/// A connection with stream `BENCH` created and the ack inbox subscribed, and the publish
/// frame to send.
fn open_publisher(ep: &Endpoint, storage: Storage, payload: usize) -> Result<(Conn, Vec<u8>)> {
    let mut conn = Conn::open(ep)?;
    create_stream(&mut conn, storage)?;
    conn.send(b"SUB _INBOX.ack 1\r\nPING\r\n")?;
    conn.expect_pong()?;
    Ok((conn, publish_frame("_INBOX.ack", payload)))
}

/// One publisher, one publish in flight: each waits for its ack.
pub fn sync_publish(
    ep: &Endpoint,
    storage: Storage,
    payload: usize,
    dur: Duration,
) -> Result<Outcome> {
    let (mut conn, frame) = open_publisher(ep, storage, payload)?;
    let mut latencies = Vec::new();
    let start = Instant::now();
    while start.elapsed() < dur {
        let t0 = Instant::now();
        conn.send(&frame)?;
        conn.count_msgs(1)?;
        latencies.push(t0.elapsed());
    }
    Ok(Outcome {
        msgs: latencies.len() as u64,
        payload_bytes: latencies.len() as u64 * payload as u64,
        elapsed: start.elapsed(),
        latencies,
    })
}

/// One publisher keeping up to `ASYNC_WINDOW` acks outstanding, in writes of `ASYNC_BATCH`.
pub fn async_publish(
    ep: &Endpoint,
    storage: Storage,
    payload: usize,
    messages: u64,
) -> Result<Outcome> {
    let (mut conn, frame) = open_publisher(ep, storage, payload)?;
    let batch: Vec<u8> = frame.repeat(ASYNC_BATCH as usize);
    let (mut sent, mut acked) = (0u64, 0u64);
    let start = Instant::now();
    while acked < messages {
        while sent < messages && sent - acked < ASYNC_WINDOW {
            let n = (messages - sent).min(ASYNC_BATCH);
            conn.send(&batch[..frame.len() * n as usize])?;
            sent += n;
        }
        let want = (sent - acked).min(ASYNC_BATCH);
        acked += conn.count_msgs(want)?;
    }
    Ok(Outcome {
        msgs: messages,
        payload_bytes: messages * payload as u64,
        elapsed: start.elapsed(),
        ..Outcome::default()
    })
}
