//! JetStream consuming rows: the server's CPU while thousands of durable consumers sit idle,
//! and the time a KV-style watcher (last value per subject) takes to start over a stream
//! with a long history. Both drive the servers with raw `$JS.API` requests.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::outcome::{Budget, Outcome};
use crate::server::Running;
use crate::wire::{Conn, Endpoint};

/// API requests in flight at most while creating consumers (Go caps its API queue).
const API_WINDOW: usize = 256;
/// Publishes in flight at most while filling the KV stream.
const PUBLISH_WINDOW: usize = 512;
/// One consumer in this many holds an unacknowledged message (ack wait 30 s); the others
/// start at the stream's end and have nothing to do.
const PENDING_EVERY: usize = 10;
/// Revisions written per key in the watch row (the stream keeps them all).
const REVISIONS: usize = 5;

/// Sends one API request and returns its answer; nothing else may be arriving meanwhile.
fn request(conn: &mut Conn, subject: &str, body: &str) -> Result<Vec<u8>> {
    conn.send(
        format!(
            "SUB _INBOX.api 91\r\nUNSUB 91 1\r\nPUB {subject} _INBOX.api {}\r\n{body}\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    conn.next_msg_payload()
}

fn create_stream(conn: &mut Conn, name: &str, body: &str) -> Result<()> {
    let answer = request(conn, &format!("$JS.API.STREAM.CREATE.{name}"), body)?;
    if !answer.windows(10).any(|w| w == b"did_create") {
        bail!("stream create failed: {}", String::from_utf8_lossy(&answer));
    }
    Ok(())
}

/// How many consumers the idle row creates: 10,000 at the default budget, a few in smoke.
pub fn idle_consumer_count(budget: Budget, wanted: usize) -> usize {
    usize::try_from(budget.messages / 200).map_or(wanted, |n| n.clamp(10, wanted))
}

/// Sends `frames` in windows of `window`, waiting for one answer per frame.
fn pipelined(conn: &mut Conn, frames: &[Vec<u8>], window: usize) -> Result<()> {
    for chunk in frames.chunks(window) {
        conn.send(&chunk.concat())?;
        conn.count_msgs(chunk.len() as u64)?;
    }
    Ok(())
}

/// Creates stream `IDLE` with a few messages and `consumers` durable pull consumers, one in
/// `PENDING_EVERY` holding a delivered, unacknowledged message. Returns the connection,
/// which stays open (and idle) while the caller measures.
pub fn setup_idle_consumers(ep: &Endpoint, consumers: usize) -> Result<Conn> {
    let mut conn = Conn::open(ep)?;
    // Go caps a stream at 1,000 consumers unless its config says otherwise.
    create_stream(
        &mut conn,
        "IDLE",
        &format!(
            r#"{{"name":"IDLE","subjects":["idle.>"],"storage":"file","max_consumers":{consumers}}}"#
        ),
    )?;
    conn.send(b"SUB _INBOX.r 1\r\n")?;
    let publishes: Vec<Vec<u8>> = (0..10)
        .map(|i| format!("PUB idle.{i} _INBOX.r 5\r\nhello\r\n").into_bytes())
        .collect();
    pipelined(&mut conn, &publishes, API_WINDOW)?;
    let creates: Vec<Vec<u8>> = (0..consumers)
        .map(|i| {
            let policy = if i % PENDING_EVERY == 0 { "all" } else { "new" };
            let body = format!(
                r#"{{"stream_name":"IDLE","config":{{"durable_name":"c{i}","deliver_policy":"{policy}","ack_policy":"explicit","ack_wait":30000000000}}}}"#
            );
            format!(
                "PUB $JS.API.CONSUMER.CREATE.IDLE.c{i} _INBOX.r {}\r\n{body}\r\n",
                body.len()
            )
            .into_bytes()
        })
        .collect();
    pipelined(&mut conn, &creates, API_WINDOW)?;
    let fetches: Vec<Vec<u8>> = (0..consumers)
        .step_by(PENDING_EVERY)
        .map(|i| {
            format!("PUB $JS.API.CONSUMER.MSG.NEXT.IDLE.c{i} _INBOX.r 1\r\n1\r\n").into_bytes()
        })
        .collect();
    pipelined(&mut conn, &fetches, API_WINDOW)?;
    conn.send(b"UNSUB 1\r\n")?;
    let info = request(&mut conn, "$JS.API.STREAM.INFO.IDLE", "")?;
    let want = format!("\"consumer_count\":{consumers}");
    if !info.windows(want.len()).any(|w| w == want.as_bytes()) {
        bail!("consumers missing: {}", String::from_utf8_lossy(&info));
    }
    Ok(conn)
}

/// Work left over from the setup counts as settled once a second costs less than this.
const SETTLED_CPU_PER_SECOND: f64 = 0.005;
/// The settling waits at most this many seconds.
const SETTLE_SECONDS_MAX: u32 = 30;

/// Server CPU seconds per second of wall time while nothing happens for `idle`, once the
/// setup's deferred work is over: a second costing under `SETTLED_CPU_PER_SECOND`, at most
/// `SETTLE_SECONDS_MAX` seconds after the setup (Natrium syncs a consumer's state a second
/// after it changes, so creating 10,000 consumers leaves 20,000 file syncs for the next
/// seconds; that is the creation's cost, not the idle one). Returns the CPU per second and
/// the seconds it took to settle.
pub fn idle_cpu_per_second(server: &Running, idle: Duration) -> (f64, u32) {
    let mut settled_after = 0;
    for second in 1..=SETTLE_SECONDS_MAX {
        let before = server.cpu_seconds();
        std::thread::sleep(Duration::from_secs(1).min(idle));
        settled_after = second;
        if server.cpu_seconds() - before < SETTLED_CPU_PER_SECOND {
            break;
        }
    }
    let cpu0 = server.cpu_seconds();
    let t0 = Instant::now();
    std::thread::sleep(idle);
    let per_second = (server.cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64();
    (per_second, settled_after)
}

/// How many keys the watch row writes: 100,000 at the default budget, fewer in smoke.
pub fn watch_key_count(budget: Budget, wanted: usize) -> usize {
    usize::try_from(budget.messages / 20).map_or(wanted, |n| n.clamp(100, wanted))
}

/// Fills stream `KV` with `REVISIONS` revisions of `keys` keys, then times a watcher: a push
/// consumer delivering the last message per subject without acks, as KV `watch_all` asks.
pub fn kv_watch_start(ep: &Endpoint, keys: usize) -> Result<Outcome> {
    let mut conn = Conn::open(ep)?;
    create_stream(
        &mut conn,
        "KV",
        &format!(
            r#"{{"name":"KV","subjects":["kv.>"],"storage":"file","max_msgs_per_subject":{REVISIONS}}}"#
        ),
    )?;
    conn.send(b"SUB _INBOX.ack 1\r\n")?;
    let publishes: Vec<Vec<u8>> = (0..REVISIONS)
        .flat_map(|rev| (0..keys).map(move |k| (rev, k)))
        .map(|(rev, k)| format!("PUB kv.key{k} _INBOX.ack 2\r\nr{rev}\r\n").into_bytes())
        .collect();
    pipelined(&mut conn, &publishes, PUBLISH_WINDOW)?;
    conn.send(b"UNSUB 1\r\nSUB _INBOX.watch 2\r\nPING\r\n")?;
    conn.expect_pong()?;
    let body = r#"{"stream_name":"KV","config":{"deliver_subject":"_INBOX.watch","deliver_policy":"last_per_subject","ack_policy":"none","replay_policy":"instant","filter_subject":"kv.>","mem_storage":true,"num_replicas":1}}"#;
    let start = Instant::now();
    conn.send(
        format!(
            "SUB _INBOX.wc 3\r\nUNSUB 3 1\r\nPUB $JS.API.CONSUMER.CREATE.KV _INBOX.wc {}\r\n{body}\r\n",
            body.len()
        )
        .as_bytes(),
    )?;
    // Every key's last value, plus the create answer.
    conn.count_msgs(keys as u64 + 1)?;
    Ok(Outcome {
        msgs: keys as u64,
        payload_bytes: keys as u64 * 2,
        elapsed: start.elapsed(),
        ..Outcome::default()
    })
}
