//! JetStream delivery rows: a stream filled with `messages` messages (untimed), then read
//! back (timed) by an ordered consumer (ephemeral push, no acks, flow control answered) or by
//! a durable pull consumer fetching batches and acknowledging every message.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::outcome::Outcome;
use crate::wire::{Conn, Endpoint, Frame};

/// Publishes in flight at most while filling the stream.
const FILL_WINDOW: u64 = 4096;
/// Publishes per write while filling.
const FILL_BATCH: u64 = 256;
/// Messages per pull request on the fetch row (the clients' default fetch size).
pub const FETCH_BATCH: u64 = 500;
/// The ordered consumer's idle heartbeat: longer than any run, so only flow control shows.
const HEARTBEAT_NS: u64 = 5_000_000_000;

const SID_ACKS: u64 = 1;
const SID_API: u64 = 2;
const SID_DELIVER: u64 = 3;

/// Sends one API request on `SID_API`'s inbox and returns its answer; nothing else may be
/// arriving on the connection meanwhile.
pub fn request(conn: &mut Conn, subject: &str, body: &str) -> Result<Vec<u8>> {
    conn.send(
        format!(
            "SUB _INBOX.api {SID_API}\r\nUNSUB {SID_API} 1\r\nPUB {subject} _INBOX.api {}\r\n{body}\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    conn.next_msg_payload()
}

/// Creates file stream `READ` on `read.msgs` and publishes `messages` of `payload` bytes,
/// waiting for every ack.
fn fill(conn: &mut Conn, payload: usize, messages: u64) -> Result<()> {
    fill_stream(conn, "READ", "read.msgs", payload, messages)
}

/// Creates file stream `name` on `subject` and publishes `messages` of `payload` bytes to it,
/// `FILL_WINDOW` acks outstanding at most, waiting for every ack.
pub fn fill_stream(
    conn: &mut Conn,
    name: &str,
    subject: &str,
    payload: usize,
    messages: u64,
) -> Result<()> {
    let body = format!(r#"{{"name":"{name}","subjects":["{subject}"],"storage":"file"}}"#);
    let answer = request(conn, &format!("$JS.API.STREAM.CREATE.{name}"), &body)?;
    if !answer.windows(10).any(|w| w == b"did_create") {
        bail!("stream create failed: {}", String::from_utf8_lossy(&answer));
    }
    conn.send(format!("SUB _INBOX.fill {SID_ACKS}\r\n").as_bytes())?;
    let mut frame = format!("PUB {subject} _INBOX.fill {payload}\r\n").into_bytes();
    frame.extend(std::iter::repeat_n(b'x', payload));
    frame.extend_from_slice(b"\r\n");
    let batch = frame.repeat(FILL_BATCH as usize);
    let (mut sent, mut acked) = (0u64, 0u64);
    while acked < messages {
        while sent < messages && sent - acked < FILL_WINDOW {
            let n = (messages - sent).min(FILL_BATCH);
            conn.send(&batch[..frame.len() * n as usize])?;
            sent += n;
        }
        acked += conn.count_msgs((sent - acked).min(FILL_BATCH))?;
    }
    conn.send(format!("UNSUB {SID_ACKS}\r\n").as_bytes())
}

/// An ordered consumer as the clients create one (ephemeral push, `ack_policy: none`, flow
/// control and heartbeats, memory state, one replica) reads the whole stream; flow-control
/// requests are answered as they come.
pub fn ordered_consume(ep: &Endpoint, payload: usize, messages: u64) -> Result<Outcome> {
    let mut conn = Conn::open(ep)?;
    fill(&mut conn, payload, messages)?;
    conn.send(format!("SUB _INBOX.ordered {SID_DELIVER}\r\nPING\r\n").as_bytes())?;
    conn.expect_pong()?;
    let body = format!(
        r#"{{"stream_name":"READ","config":{{"deliver_subject":"_INBOX.ordered","deliver_policy":"all","ack_policy":"none","replay_policy":"instant","flow_control":true,"idle_heartbeat":{HEARTBEAT_NS},"mem_storage":true,"num_replicas":1}}}}"#
    );
    let start = Instant::now();
    conn.send(
        format!(
            "SUB _INBOX.api {SID_API}\r\nUNSUB {SID_API} 1\r\nPUB $JS.API.CONSUMER.CREATE.READ _INBOX.api {}\r\n{body}\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    let mut reply = Vec::new();
    let mut got = 0;
    while got < messages {
        match conn.next_frame(&mut reply)? {
            Frame::Msg {
                sid: SID_DELIVER,
                status: None,
            } => got += 1,
            Frame::Msg {
                sid: SID_DELIVER,
                status: Some(_),
            } if !reply.is_empty() => {
                // A flow-control request (or a stalled heartbeat): answered with an empty
                // message, as the clients do.
                let mut answer = b"PUB ".to_vec();
                answer.extend_from_slice(&reply);
                answer.extend_from_slice(b" 0\r\n\r\n");
                conn.send(&answer)?;
            }
            _ => {}
        }
    }
    Ok(read_outcome(messages, payload, start.elapsed()))
}

/// A durable pull consumer with explicit acks reads the whole stream in fetches of
/// `FETCH_BATCH`; each batch's acks go out in one write together with the next request.
pub fn durable_fetch(ep: &Endpoint, payload: usize, messages: u64) -> Result<Outcome> {
    let mut conn = Conn::open(ep)?;
    fill(&mut conn, payload, messages)?;
    let body = r#"{"stream_name":"READ","config":{"durable_name":"FETCH","deliver_policy":"all","ack_policy":"explicit","replay_policy":"instant"}}"#;
    let answer = request(&mut conn, "$JS.API.CONSUMER.CREATE.READ.FETCH", body)?;
    if !answer.windows(7).any(|w| w == b"\"name\":") {
        bail!(
            "consumer create failed: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    conn.send(format!("SUB _INBOX.fetch {SID_DELIVER}\r\nPING\r\n").as_bytes())?;
    conn.expect_pong()?;
    let next = format!(r#"{{"batch":{FETCH_BATCH},"expires":5000000000}}"#);
    let next = format!(
        "PUB $JS.API.CONSUMER.MSG.NEXT.READ.FETCH _INBOX.fetch {}\r\n{next}\r\n",
        next.len()
    )
    .into_bytes();
    let mut acks = Vec::with_capacity(FETCH_BATCH as usize * 80 + next.len());
    let mut reply = Vec::new();
    let mut got = 0;
    let start = Instant::now();
    conn.send(&next)?;
    while got < messages {
        let mut in_batch = 0;
        // A batch ends when it is full or the server ends it with a status (408, 409).
        while in_batch < FETCH_BATCH && got < messages {
            match conn.next_frame(&mut reply)? {
                Frame::Msg {
                    sid: SID_DELIVER,
                    status: None,
                } => {
                    acks.extend_from_slice(b"PUB ");
                    acks.extend_from_slice(&reply);
                    acks.extend_from_slice(b" 0\r\n\r\n");
                    in_batch += 1;
                    got += 1;
                }
                Frame::Msg {
                    sid: SID_DELIVER,
                    status: Some(code),
                } if code >= 400 => break,
                _ => {}
            }
        }
        if got < messages {
            acks.extend_from_slice(&next);
        }
        conn.send(&acks)?;
        acks.clear();
    }
    Ok(read_outcome(messages, payload, start.elapsed()))
}

fn read_outcome(messages: u64, payload: usize, elapsed: Duration) -> Outcome {
    Outcome {
        msgs: messages,
        payload_bytes: messages * payload as u64,
        elapsed,
        ..Outcome::default()
    }
}
