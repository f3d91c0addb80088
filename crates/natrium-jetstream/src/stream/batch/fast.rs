//! Fast batch publish (`allow_batched`, a reply ending in `.$FI`, see [`super::fast_reply`]):
//! not atomic, each message is checked and stored as a normal publish the moment it comes;
//! what the batch adds is flow control. The publisher is told, on its reply subject:
//! - `{"type":"ack","seq":<batch seq>,"msgs":<n>}`: everything up to `seq` was handled, the
//!   next ack comes `n` messages later. The first message gets one with `seq` 0; then one
//!   goes out each time `n` more are stored, `n` ramping up (doubling) to the client's flow
//!   capped at 500 shared between the stream's open batches, or down again;
//! - `{"type":"gap","last_seq":<expected>,"seq":<got>}` when a sequence is skipped or
//!   repeated: with `fail` (and always backwards) the batch ends there;
//! - `{"type":"err","seq":<n>,"error":{…}}` when a message is refused: with `fail` the batch
//!   ends (a refused first message gets the plain error PubAck instead);
//! - the PubAck `{"stream":…,"seq":<last stored>,"batch":<id>,"count":<last batch seq>}`
//!   when the batch ends (a commit, a commit-eob, or a gap or error that ends it).
//!
//! The messages are stored as published (only `Nats-Required-Api-Level` is removed).
//! Bounds (Go's defaults, unless `jetstream { limits { batch { … } } }` sets them, see
//! [`super::limits`]): `INFLIGHT_PER_STREAM_MAX` open batches per stream and
//! `INFLIGHT_TOTAL_MAX` in the server, beyond which a new batch is refused (429); a batch
//! with no message for the batch timeout is dropped silently (Go sends no advisory for a
//! fast batch), by the stream task's timer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use serde::Serialize;

use super::fast_reply::{self, FastReply, Op, Pattern};
use super::limits;
use super::parse::{BATCH_ID_BYTES_MAX, REQUIRED_API_LEVEL};
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::stream::header_edit;
use crate::stream::ingest::{Ingest, Outcome};

/// Go's `streamDefaultMaxFastBatchInflightPerStream`.
pub const INFLIGHT_PER_STREAM_MAX: usize = 1000;
/// Go's `streamDefaultMaxFastBatchInflightTotal`.
pub const INFLIGHT_TOTAL_MAX: usize = 50_000;
/// The most messages between two flow acks the server grants, shared by a stream's batches.
const ACK_MSGS_MAX: u16 = 500;

/// A header block without fields.
const EMPTY_BLOCK: &[u8] = b"NATS/1.0\r\n\r\n";

/// Open fast batches in the whole server (Go's `globalInflightFastBatches`).
static INFLIGHT_TOTAL: AtomicUsize = AtomicUsize::new(0);

/// One open fast batch (Go's `fastBatch`, with nothing ever pending: a message is stored
/// before the next is looked at).
struct Open {
    /// The highest batch sequence taken.
    lseq: u64,
    /// The highest batch sequence handled (stored, or passed over).
    pseq: u64,
    /// The batch sequence of the last flow ack.
    fseq: u64,
    /// The stream sequence of the last message stored.
    sseq: u64,
    ack_msgs: u16,
    /// The client's flow: `ack_msgs` never goes above it.
    flow: u16,
    gap_ok: bool,
    /// Ended, waiting for a message to be stored before its PubAck (does not happen while
    /// messages are stored one at a time; kept until the idle sweep as Go keeps it).
    committing: bool,
    /// Go's `pending` left over: messages refused by the checks made while storing (an
    /// expected last msg id, a broken counter, a full disk), which never count as handled.
    /// While there are any, `pseq` follows the message just stored, not `lseq`.
    stuck: u32,
    touched: Instant,
}

/// A stream's open fast batches, by id.
#[derive(Default)]
pub struct FastBatches {
    open: HashMap<Vec<u8>, Open>,
    /// A batch was opened since [`Self::take_opened`] (the stream task arms its timer).
    opened: bool,
}

impl Drop for FastBatches {
    fn drop(&mut self) {
        INFLIGHT_TOTAL.fetch_sub(self.open.len(), Ordering::Relaxed);
    }
}

impl FastBatches {
    fn remove(&mut self, id: &[u8]) {
        if self.open.remove(id).is_some() {
            INFLIGHT_TOTAL.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Drops the batches idle for the timeout at `now`.
    pub fn sweep(&mut self, now: Instant) {
        let before = self.open.len();
        self.open
            .retain(|_, b| now.duration_since(b.touched) < limits::timeout());
        INFLIGHT_TOTAL.fetch_sub(before - self.open.len(), Ordering::Relaxed);
    }

    /// When the next open batch times out.
    pub fn next_timeout(&self) -> Option<Instant> {
        let oldest = self.open.values().map(|b| b.touched).min()?;
        Some(oldest + limits::timeout())
    }

    /// Whether a batch was opened since the last call.
    pub fn take_opened(&mut self) -> bool {
        std::mem::take(&mut self.opened)
    }

    /// Drops every open batch (the stream no longer allows fast batches).
    pub fn clear(&mut self) {
        INFLIGHT_TOTAL.fetch_sub(self.open.len(), Ordering::Relaxed);
        self.open.clear();
    }

    /// The first ack's `msgs`: the client's flow up to 500 for a stream's only batch, else
    /// one (ramped up from there).
    fn initial_ack_msgs(&self, flow: u16) -> u16 {
        if self.open.len() > 1 {
            1
        } else {
            flow.min(ACK_MSGS_MAX)
        }
    }
}

/// Whether `msg` goes down the fast batch path (its reply ends in `.$FI`).
pub fn is_fast(msg: &Delivery) -> bool {
    fast_reply::original(msg.reply.as_deref(), msg.headers.as_deref()).is_some()
}

/// What one fast batch message leaves for its publisher, in order: flow reports as they
/// come, PubAcks rendered at the end (they need the ingest, busy storing meanwhile).
#[derive(Default)]
struct Replies {
    out: Vec<Reply>,
    /// The stream is `no_ack`: the answers a publish would get are withheld.
    no_ack: bool,
}

enum Reply {
    Flow(Bytes),
    Ack(Outcome),
    /// A duplicate first message that commits: its PubAck with the batch's id and count.
    DuplicateAck(u64, String, u64),
}

#[derive(Serialize)]
struct FlowAck {
    r#type: &'static str,
    seq: u64,
    msgs: u16,
}

#[derive(Serialize)]
struct FlowGap {
    r#type: &'static str,
    last_seq: u64,
    seq: u64,
}

#[derive(Serialize)]
struct FlowErr<'a> {
    r#type: &'static str,
    seq: u64,
    error: &'a ApiError,
}

impl Replies {
    fn json(&mut self, doc: &impl Serialize) {
        if let Ok(json) = serde_json::to_vec(doc) {
            self.out.push(Reply::Flow(Bytes::from(json)));
        }
    }

    fn flow(&mut self, seq: u64, msgs: u16) {
        self.json(&FlowAck {
            r#type: "ack",
            seq,
            msgs,
        });
    }

    fn gap(&mut self, last_seq: u64, seq: u64) {
        self.json(&FlowGap {
            r#type: "gap",
            last_seq,
            seq,
        });
    }

    fn err(&mut self, seq: u64, error: &ApiError) {
        self.json(&FlowErr {
            r#type: "err",
            seq,
            error,
        });
    }

    fn outcome(&mut self, outcome: Outcome) {
        self.out.push(Reply::Ack(outcome));
    }

    /// An answer as a publish gets it (none on a `no_ack` stream).
    fn answer(&mut self, outcome: Outcome) {
        if !self.no_ack {
            self.outcome(outcome);
        }
    }

    /// The PubAck that ends batch `id`: the last stored stream sequence, the last batch one.
    fn pub_ack(&mut self, id: &[u8], b: &Open) {
        self.outcome(Outcome::Batch {
            seq: b.sseq,
            id: String::from_utf8_lossy(id).into_owned(),
            count: b.lseq,
        });
    }

    fn done(self, ingest: &Ingest, seq: Option<u64>) -> Outcome {
        let replies = self
            .out
            .into_iter()
            .map(|reply| match reply {
                Reply::Flow(json) => json,
                Reply::Ack(outcome) => {
                    let mut buf = Vec::new();
                    ingest.ack(&outcome, &mut buf);
                    Bytes::from(buf)
                }
                Reply::DuplicateAck(seq, id, count) => {
                    let mut buf = Vec::new();
                    ingest.ack(&Outcome::Duplicate(seq), &mut buf);
                    buf.pop();
                    let id = serde_json::to_string(&id).unwrap_or_default();
                    let tail = format!(",\"batch\":{id},\"count\":{count}}}");
                    buf.extend_from_slice(tail.as_bytes());
                    Bytes::from(buf)
                }
            })
            .collect();
        Outcome::Fast { seq, replies }
    }
}

/// Takes one message whose reply ends in `.$FI` ([`is_fast`]).
pub fn ingest(
    ingest: &mut Ingest,
    config: &StreamConfig,
    batches: &mut FastBatches,
    msg: &Delivery,
    (now_ns, interested): (i64, bool),
) -> Outcome {
    let original = fast_reply::original(msg.reply.as_deref(), msg.headers.as_deref());
    let reply = match admit(ingest, config, msg, original.as_deref()) {
        Ok(reply) => reply,
        Err(err) => return Outcome::Refused(err),
    };
    let now = Instant::now();
    if let Err(err) = open(batches, &reply, now) {
        return Outcome::Refused(err);
    }
    let mut msg = msg.clone();
    if let Some(level) = api_level(msg.headers.as_deref()) {
        if level_refused(level) {
            batches.remove(reply.id);
            return Outcome::Refused(table::REQUIRED_API_LEVEL.err());
        }
        let block = msg.headers.as_deref().unwrap_or_default();
        let kept = header_edit::remove_field(block, REQUIRED_API_LEVEL);
        // Go drops a block left with no field at all.
        msg.headers = (kept.len() > EMPTY_BLOCK.len()).then(|| Bytes::from(kept));
    }
    let mut replies = Replies {
        out: Vec::new(),
        no_ack: config.no_ack,
    };
    let n_open = batches.open.len();
    let Some(b) = batches.open.get_mut(reply.id) else {
        return replies.done(ingest, None);
    };
    b.touched = now;
    let step = if reply.op == Op::Ping {
        ping(b, &reply, n_open, &mut replies)
    } else {
        before_store(b, &reply, &mut replies)
    };
    if step == Step::Store {
        let outcome = ingest.process(config, &msg, now_ns, interested);
        let (step, seq) = after_store(b, &reply, n_open, &outcome, &mut replies);
        if step == Step::End {
            batches.remove(reply.id);
        }
        return replies.done(ingest, seq);
    }
    if step == Step::End {
        batches.remove(reply.id);
    }
    replies.done(ingest, None)
}

/// What is left to do with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Nothing more (the batch goes on).
    Skip,
    /// The batch ended: drop it.
    End,
    /// Check and store it.
    Store,
}

/// Go's checks before a fast batch message is looked at: the stream takes messages (sealed,
/// limits, size), allows fast batches, and the reply fits the pattern with a short id.
fn admit<'m>(
    ingest: &Ingest,
    config: &StreamConfig,
    msg: &Delivery,
    original: Option<&'m [u8]>,
) -> Result<FastReply<'m>, ApiError> {
    ingest.admit_batch_msg(config, msg)?;
    if !config.allow_batched {
        return Err(table::BATCH_PUBLISH_DISABLED.err());
    }
    let Pattern::Fast(reply) = fast_reply::read(original) else {
        return Err(table::BATCH_PUBLISH_INVALID_PATTERN.err());
    };
    if reply.id.len() > BATCH_ID_BYTES_MAX {
        return Err(table::BATCH_PUBLISH_INVALID_BATCH_ID.err());
    }
    Ok(reply)
}

/// Finds the batch (one past its timeout is gone), or opens it: only at sequence 1 (not by
/// a ping), within the limits.
fn open(batches: &mut FastBatches, reply: &FastReply<'_>, now: Instant) -> Result<(), ApiError> {
    match batches.open.get(reply.id) {
        // Timed out, though the stream task's timer has not swept it yet.
        Some(b) if now.duration_since(b.touched) >= limits::timeout() => batches.remove(reply.id),
        Some(_) => return Ok(()),
        None => {}
    }
    if reply.seq != 1 || reply.op == Op::Ping {
        return Err(table::BATCH_PUBLISH_UNKNOWN_BATCH_ID.err());
    }
    let too_many = || table::BATCH_PUBLISH_TOO_MANY_INFLIGHT.err();
    if batches.open.len() >= limits::inflight_per_stream(INFLIGHT_PER_STREAM_MAX) {
        return Err(too_many());
    }
    let total = limits::inflight_total(INFLIGHT_TOTAL_MAX);
    if INFLIGHT_TOTAL.fetch_add(1, Ordering::Relaxed) >= total {
        INFLIGHT_TOTAL.fetch_sub(1, Ordering::Relaxed);
        return Err(too_many());
    }
    let b = Open {
        lseq: 0,
        pseq: 0,
        fseq: 0,
        sseq: 0,
        ack_msgs: 0,
        flow: reply.flow,
        gap_ok: reply.gap_ok,
        committing: false,
        stuck: 0,
        touched: now,
    };
    batches.open.insert(reply.id.to_vec(), b);
    let ack_msgs = batches.initial_ack_msgs(reply.flow);
    if let Some(b) = batches.open.get_mut(reply.id) {
        b.ack_msgs = ack_msgs;
    }
    batches.opened = true;
    Ok(())
}

/// `Nats-Required-Api-Level`, when present.
fn api_level(block: Option<&[u8]>) -> Option<&[u8]> {
    let block = block.filter(|b| !b.is_empty())?;
    let parsed = nats_proto::headers::Headers::parse(block).ok()?;
    parsed.get(REQUIRED_API_LEVEL).filter(|v| !v.is_empty())
}

/// A required API level above ours, or not a number.
fn level_refused(level: &[u8]) -> bool {
    std::str::from_utf8(level)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .is_none_or(|n| n > i64::from(crate::config::API_LEVEL))
}

/// Ends the batch if all it took was handled: its PubAck. Else it waits, `committing`.
fn commit(id: &[u8], b: &mut Open, replies: &mut Replies) -> Step {
    b.committing = true;
    if b.lseq == b.pseq {
        replies.pub_ack(id, b);
        Step::End
    } else {
        Step::Skip
    }
}

/// A ping: the flow state again, after a gap report when the client is ahead of us.
fn ping(b: &mut Open, reply: &FastReply<'_>, n_open: usize, replies: &mut Replies) -> Step {
    let mut resend = true;
    let mut step = Step::Skip;
    if reply.seq > b.lseq {
        replies.gap(b.lseq + 1, reply.seq + 1);
        if b.gap_ok {
            b.lseq = reply.seq;
            if b.stuck == 0 {
                b.pseq = b.lseq;
            }
            resend = !check_flow(b, n_open, replies);
        } else {
            step = commit(reply.id, b, replies);
            resend = step != Step::End;
        }
    }
    if resend {
        replies.flow(b.fseq, b.ack_msgs);
    }
    step
}

/// Gaps and commits, before a message is stored; the first message's flow ack.
fn before_store(b: &mut Open, reply: &FastReply<'_>, replies: &mut Replies) -> Step {
    if b.committing {
        return Step::Skip;
    }
    let expected = b.lseq + 1;
    if reply.seq == expected {
        b.lseq = expected;
    } else {
        replies.gap(expected, reply.seq);
        if b.gap_ok && reply.seq > expected {
            b.lseq = reply.seq;
        } else {
            return commit(reply.id, b, replies);
        }
    }
    if reply.commits() {
        if reply.op == Op::CommitEob {
            b.lseq -= 1;
            if b.stuck == 0 {
                b.pseq = b.lseq;
            }
        }
        let step = commit(reply.id, b, replies);
        if reply.op == Op::CommitEob {
            return step;
        }
    }
    // The first flow ack is the one report a `no_ack` stream does not send.
    if reply.seq == 1 && !reply.commits() && !replies.no_ack {
        replies.flow(0, b.ack_msgs);
    }
    Step::Store
}

/// What storing the message came to: the next flow ack, or the batch's end.
fn after_store(
    b: &mut Open,
    reply: &FastReply<'_>,
    n_open: usize,
    outcome: &Outcome,
    replies: &mut Replies,
) -> (Step, Option<u64>) {
    let seq = match outcome {
        Outcome::Stored(seq) | Outcome::Counted(seq, _) => *seq,
        Outcome::Duplicate(dup) => return (duplicate(b, reply, n_open, *dup, replies), None),
        Outcome::Refused(err) if checked_while_storing(err) => {
            // Answered as a publish; the batch goes on, this message never handled.
            b.stuck += 1;
            replies.answer(outcome.clone());
            return (Step::Skip, None);
        }
        Outcome::Refused(err) => return (refused(b, reply, err, replies), None),
        _ => return (Step::Skip, None),
    };
    b.sseq = seq;
    b.pseq = if b.stuck == 0 { b.lseq } else { reply.seq };
    if b.committing && b.lseq == b.pseq {
        let ack = Outcome::Batch {
            seq: b.sseq,
            id: String::from_utf8_lossy(reply.id).into_owned(),
            count: b.lseq,
        };
        // With messages stuck, Go answers this one as a publish.
        if b.stuck == 0 {
            replies.outcome(ack);
        } else {
            replies.answer(ack);
        }
        return (Step::End, Some(seq));
    }
    check_flow(b, n_open, replies);
    (Step::Skip, Some(seq))
}

/// A `Nats-Msg-Id` already stored: passed over; a commit still ends the batch.
fn duplicate(
    b: &mut Open,
    reply: &FastReply<'_>,
    n_open: usize,
    dup: u64,
    replies: &mut Replies,
) -> Step {
    if b.stuck == 0 {
        b.pseq = reply.seq;
        check_flow(b, n_open, replies);
    }
    if !reply.commits() {
        return Step::Skip;
    }
    if !b.gap_ok && b.lseq == 1 {
        let id = String::from_utf8_lossy(reply.id).into_owned();
        replies.out.push(Reply::DuplicateAck(dup, id, reply.seq));
        return Step::End;
    }
    commit(reply.id, b, replies)
}

/// A refused message: the plain error for a batch's first (with `fail`), else an `err`
/// report, and with `fail` (or on a commit) the batch ends before it.
fn refused(b: &mut Open, reply: &FastReply<'_>, err: &ApiError, replies: &mut Replies) -> Step {
    if !b.gap_ok && b.lseq == 1 {
        replies.outcome(Outcome::Refused(err.clone()));
        return Step::End;
    }
    replies.err(reply.seq, err);
    if b.gap_ok && !reply.commits() {
        return Step::Skip;
    }
    b.lseq -= 1;
    if b.stuck == 0 {
        b.pseq = b.lseq;
    }
    commit(reply.id, b, replies)
}

/// The refusals Go makes while storing a fast batch message, after its batch took it (the
/// others come from the checks made before).
fn checked_while_storing(err: &ApiError) -> bool {
    err.is(&table::STREAM_WRONG_LAST_MSG_ID)
        || err.is(&table::MESSAGE_COUNTER_BROKEN)
        || err.is(&table::STORAGE_RESOURCES_EXCEEDED)
}

/// A flow ack once `ack_msgs` more messages were handled, with `ack_msgs` moved towards
/// the stream's share (500 over its open batches, at most the client's flow): doubled up,
/// halved down. Whether one was sent.
fn check_flow(b: &mut Open, n_open: usize, replies: &mut Replies) -> bool {
    let every = u64::from(b.ack_msgs.max(1));
    if b.pseq < b.fseq + every {
        return false;
    }
    b.fseq += (b.pseq - b.fseq) / every * every;
    let share = usize::from(ACK_MSGS_MAX) / n_open.max(1);
    let target = u16::try_from(share)
        .unwrap_or(ACK_MSGS_MAX)
        .max(1)
        .min(b.flow);
    if b.ack_msgs < target {
        b.ack_msgs = b.ack_msgs.saturating_mul(2).min(target);
    } else if b.ack_msgs > target {
        b.ack_msgs = (b.ack_msgs / 2).max(target);
    }
    replies.flow(b.fseq, b.ack_msgs);
    true
}
