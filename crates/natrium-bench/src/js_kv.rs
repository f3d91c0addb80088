//! JetStream key-value rows: a bucket made as the clients make one (stream `KV_<bucket>` on
//! `$KV.<bucket>.>`, history 1, rollups allowed, deletes denied, direct get on, discard new),
//! then puts (a publish whose ack is awaited) or gets (a direct get of a key's last value, as
//! the clients' `get` asks when the bucket allows direct gets) cycling over its keys for the
//! row's duration, `window` operations in flight at most.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::js_fetch::request;
use crate::outcome::Outcome;
use crate::wire::{Conn, Endpoint, Frame};

const BUCKET: &str = "BENCH";
/// Operations in flight at most while filling the bucket for the get row.
const FILL_WINDOW: u64 = 256;
/// The subscription answers (acks, direct-get replies) arrive on.
const SID_ANSWERS: u64 = 3;
const INBOX: &str = "_INBOX.kv";

/// Creates the bucket's stream with the configuration `create_key_value` sends.
fn create_bucket(conn: &mut Conn) -> Result<()> {
    let body = format!(
        r#"{{"name":"KV_{BUCKET}","description":"","subjects":["$KV.{BUCKET}.>"],"max_msgs_per_subject":1,"max_bytes":-1,"max_age":0,"max_msg_size":-1,"storage":"file","allow_rollup_hdrs":true,"deny_delete":true,"deny_purge":false,"allow_direct":true,"mirror_direct":false,"discard":"new","num_replicas":1}}"#
    );
    let answer = request(conn, &format!("$JS.API.STREAM.CREATE.KV_{BUCKET}"), &body)?;
    if !answer.windows(10).any(|w| w == b"did_create") {
        bail!("bucket create failed: {}", String::from_utf8_lossy(&answer));
    }
    conn.send(format!("SUB {INBOX} {SID_ANSWERS}\r\nPING\r\n").as_bytes())?;
    conn.expect_pong()
}

fn key(i: usize) -> String {
    format!("key{i:04}")
}

/// One put frame per key: `PUB $KV.<bucket>.<key> <inbox> <payload>`.
fn put_frames(keys: usize, payload: usize) -> Vec<Vec<u8>> {
    (0..keys)
        .map(|i| {
            let mut frame =
                format!("PUB $KV.{BUCKET}.{} {INBOX} {payload}\r\n", key(i)).into_bytes();
            frame.extend(std::iter::repeat_n(b'v', payload));
            frame.extend_from_slice(b"\r\n");
            frame
        })
        .collect()
}

/// One direct-get frame per key: an empty request on
/// `$JS.API.DIRECT.GET.KV_<bucket>.$KV.<bucket>.<key>`.
fn get_frames(keys: usize) -> Vec<Vec<u8>> {
    (0..keys)
        .map(|i| {
            format!(
                "PUB $JS.API.DIRECT.GET.KV_{BUCKET}.$KV.{BUCKET}.{} {INBOX} 0\r\n\r\n",
                key(i)
            )
            .into_bytes()
        })
        .collect()
}

/// The bucket stream's last sequence, from its info.
fn last_seq(conn: &mut Conn) -> Result<u64> {
    let info = request(conn, &format!("$JS.API.STREAM.INFO.KV_{BUCKET}"), "")?;
    let info: serde_json::Value = serde_json::from_slice(&info)?;
    info["state"]["last_seq"]
        .as_u64()
        .with_context(|| format!("no state in stream info: {info}"))
}

/// Puts cycling over `keys` keys for `dur`; afterwards the stream's last sequence must
/// account for every put (a refused put would be acknowledged with an error).
pub fn put(
    ep: &Endpoint,
    keys: usize,
    payload: usize,
    window: u64,
    dur: Duration,
) -> Result<Outcome> {
    let mut conn = Conn::open(ep)?;
    create_bucket(&mut conn)?;
    let outcome = cycle(&mut conn, &put_frames(keys, payload), window, dur, payload)?;
    let stored = last_seq(&mut conn)?;
    if stored != outcome.msgs {
        bail!("{} puts acknowledged, {stored} stored", outcome.msgs);
    }
    Ok(outcome)
}

/// Fills the bucket with one value per key (untimed), then gets cycling over the keys for
/// `dur`; every answer must be a value, not a status.
pub fn get(
    ep: &Endpoint,
    keys: usize,
    payload: usize,
    window: u64,
    dur: Duration,
) -> Result<Outcome> {
    let mut conn = Conn::open(ep)?;
    create_bucket(&mut conn)?;
    let puts = put_frames(keys, payload);
    for chunk in puts.chunks(FILL_WINDOW as usize) {
        conn.send(&chunk.concat())?;
        conn.count_msgs(chunk.len() as u64)?;
    }
    if last_seq(&mut conn)? != keys as u64 {
        bail!("bucket fill incomplete");
    }
    cycle(&mut conn, &get_frames(keys), window, dur, payload)
}

/// Sends `frames` round-robin for `dur`, at most `window` unanswered, topping the window up
/// each time half of it was answered; waits for the last answers. With a window of one, each
/// operation's latency is kept. A status answer (no responders, not found …) fails the run.
fn cycle(
    conn: &mut Conn,
    frames: &[Vec<u8>],
    window: u64,
    dur: Duration,
    payload: usize,
) -> Result<Outcome> {
    let window = window.max(1);
    let refill_at = (window / 2).max(1);
    let mut next = frames.iter().cycle();
    let mut out = Vec::new();
    let mut reply = Vec::new();
    let mut latencies = Vec::new();
    let (mut sent, mut answered) = (0u64, 0u64);
    let start = Instant::now();
    let mut t0 = start;
    loop {
        if start.elapsed() < dur && sent - answered <= window - refill_at {
            out.clear();
            while sent - answered < window {
                out.extend_from_slice(next.next().context("no frames")?);
                sent += 1;
            }
            t0 = Instant::now();
            conn.send(&out)?;
        }
        if answered == sent {
            break;
        }
        match conn.next_frame(&mut reply)? {
            Frame::Msg {
                sid: SID_ANSWERS,
                status: None,
            } => {
                answered += 1;
                if window == 1 {
                    latencies.push(t0.elapsed());
                }
            }
            Frame::Msg {
                sid: SID_ANSWERS,
                status: Some(code),
            } => bail!("status {code} answered"),
            _ => {}
        }
    }
    Ok(Outcome {
        msgs: answered,
        payload_bytes: answered * payload as u64,
        elapsed: start.elapsed(),
        latencies,
    })
}
