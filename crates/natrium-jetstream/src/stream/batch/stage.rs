//! The atomic batches a stream is staging: each message of a batch is checked as Go checks
//! it on arrival (stream rules, batch id, sequence, commit, limits) and kept in memory until
//! the commit; the publisher gets an empty reply for each staged message. Nothing of a batch
//! reaches the store before its commit, so a batch cut short by a crash, a gap or a timeout
//! is simply dropped (with Go's `stream_batch_abandoned` advisory).
//!
//! Bounds (Go's defaults, `server/stream.go`, unless `jetstream { limits { batch { … } } }`
//! sets them, see [`super::limits`]): at most `INFLIGHT_PER_STREAM_MAX` batches per stream
//! and `INFLIGHT_TOTAL_MAX` in the server, `BATCH_MSGS_MAX` messages each; beyond, a new
//! batch or message is refused with Go's error. A batch idle for the batch timeout is
//! abandoned, by the stream task's timer ([`sweep_idle`]) or at the next batch message.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use natrium_core::account::Account;
use natrium_core::endpoint::Delivery;
use natrium_core::internal::InternalClient;
use serde::Serialize;

use super::limits;
use super::parse::{BatchHeaders, Commit, BATCH_ID_BYTES_MAX, REQUIRED_API_LEVEL};
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::stream::header_edit;
use crate::stream::ingest::{Ingest, Outcome};

/// Go's `streamDefaultMaxAtomicBatchSize`.
pub const BATCH_MSGS_MAX: u64 = 1000;
/// Go's `streamDefaultMaxAtomicBatchInflightPerStream`.
pub const INFLIGHT_PER_STREAM_MAX: usize = 50;
/// Go's `streamDefaultMaxAtomicBatchInflightTotal`.
pub const INFLIGHT_TOTAL_MAX: usize = 1000;

/// Batches staged in the whole server (Go's `globalInflightAtomicBatches`).
static INFLIGHT_TOTAL: AtomicUsize = AtomicUsize::new(0);

/// One batch being staged.
struct Staged {
    msgs: Vec<Delivery>,
    /// The last batch sequence staged.
    last: u64,
    touched: Instant,
}

/// A stream's staged batches, by id.
#[derive(Default)]
pub struct AtomicBatches {
    open: HashMap<Vec<u8>, Staged>,
    /// A batch was opened since [`Self::take_opened`] (the stream task arms its timer).
    opened: bool,
}

impl Drop for AtomicBatches {
    fn drop(&mut self) {
        INFLIGHT_TOTAL.fetch_sub(self.open.len(), Ordering::Relaxed);
    }
}

impl AtomicBatches {
    fn remove(&mut self, id: &[u8]) -> Option<Staged> {
        let staged = self.open.remove(id)?;
        INFLIGHT_TOTAL.fetch_sub(1, Ordering::Relaxed);
        Some(staged)
    }

    /// Drops the batches idle past the timeout; returns their ids.
    fn sweep(&mut self, now: Instant) -> Vec<Vec<u8>> {
        let idle: Vec<Vec<u8>> = self
            .open
            .iter()
            .filter(|(_, s)| now.duration_since(s.touched) >= limits::timeout())
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            self.remove(id);
        }
        idle
    }

    /// When the next staged batch times out.
    pub fn next_timeout(&self) -> Option<Instant> {
        let oldest = self.open.values().map(|s| s.touched).min()?;
        Some(oldest + limits::timeout())
    }

    /// Whether a batch was opened since the last call.
    pub fn take_opened(&mut self) -> bool {
        std::mem::take(&mut self.opened)
    }

    /// Drops every staged batch (the stream stopped taking atomic batches).
    pub fn clear(&mut self) {
        INFLIGHT_TOTAL.fetch_sub(self.open.len(), Ordering::Relaxed);
        self.open.clear();
    }
}

/// Why a batch was abandoned (Go's `BatchAbandonReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    Timeout,
    Large,
    Incomplete,
    Unsupported,
}

impl Abandoned {
    fn word(self) -> &'static str {
        match self {
            Abandoned::Timeout => "timeout",
            Abandoned::Large => "large",
            Abandoned::Incomplete => "incomplete",
            Abandoned::Unsupported => "unsupported",
        }
    }
}

#[derive(Serialize)]
struct AbandonedBody<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    account: &'a str,
    stream: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
    batch: &'a str,
    reason: &'a str,
}

/// Where a batch message's advisories go, and the stream's staged batches.
pub struct Notify<'a> {
    pub client: &'a mut InternalClient,
    pub account: &'a Arc<Account>,
    pub events: &'a crate::event::EventScope,
    pub batches: &'a mut AtomicBatches,
    /// Where a commit puts what it stored, when the stream republishes.
    pub committed: Option<&'a mut Vec<crate::stream::republish::Committed>>,
}

impl Notify<'_> {
    /// `$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.<stream>`, in the stream's account (unless
    /// it is the system account) and, naming the account, in the system account, as Go.
    fn abandoned(&mut self, stream: &str, id: &[u8], reason: Abandoned) {
        const KIND: &str = "io.nats.jetstream.advisory.v1.stream_batch_abandoned";
        let subject = format!("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.{stream}");
        let batch = String::from_utf8_lossy(id);
        let mut body = AbandonedBody {
            account: "",
            stream,
            domain: &self.events.domain,
            batch: &batch,
            reason: reason.word(),
        };
        let system = &self.events.system;
        if !Arc::ptr_eq(self.account, system) && crate::event::has_interest(self.account, &subject)
        {
            let json = crate::event::typed_json(KIND, &body);
            self.client.publish_in(self.account, &subject, None, &json);
        }
        if crate::event::has_interest(system, &subject) {
            body.account = &self.account.name;
            let json = crate::event::typed_json(KIND, &body);
            self.client.publish_in(system, &subject, None, &json);
        }
    }
}

/// Abandons the batches idle past the timeout, each with its advisory (the stream task's
/// timer calls this when the oldest is due).
pub fn sweep_idle(mut notify: Notify<'_>, stream: &str) {
    for id in notify.batches.sweep(Instant::now()) {
        notify.abandoned(stream, &id, Abandoned::Timeout);
    }
}

/// Takes one message carrying `Nats-Batch-Id` (`super::atomic_id`): refused, staged, or, at
/// the commit, the whole batch checked and stored (`super::commit`).
pub fn ingest(
    ingest: &mut Ingest,
    config: &StreamConfig,
    mut notify: Notify<'_>,
    msg: &Delivery,
    now_ns: i64,
) -> Outcome {
    match stage(ingest, config, &mut notify, msg, now_ns) {
        Ok(outcome) => outcome,
        Err(err) => Outcome::Refused(err),
    }
}

fn stage(
    ingest: &mut Ingest,
    config: &StreamConfig,
    notify: &mut Notify<'_>,
    msg: &Delivery,
    now_ns: i64,
) -> Result<Outcome, ApiError> {
    let block = msg.headers.as_deref().unwrap_or_default();
    let hdrs = BatchHeaders::read(block).ok_or_else(|| table::ATOMIC_PUBLISH_MISSING_SEQ.err())?;
    ingest.admit_batch_msg(config, msg)?;
    if !config.allow_atomic {
        return Err(table::ATOMIC_PUBLISH_DISABLED.err());
    }
    if hdrs.id.len() > BATCH_ID_BYTES_MAX {
        return Err(table::ATOMIC_PUBLISH_INVALID_BATCH_ID.err());
    }
    let seq = hdrs
        .seq
        .ok_or_else(|| table::ATOMIC_PUBLISH_MISSING_SEQ.err())?;
    let now = Instant::now();
    for id in notify.batches.sweep(now) {
        notify.abandoned(&config.name, &id, Abandoned::Timeout);
    }
    let mut batches = std::mem::take(&mut *notify.batches);
    let result = stage_in(
        &mut batches,
        ingest,
        config,
        notify,
        msg,
        (seq, now, now_ns),
    );
    *notify.batches = batches;
    result
}

/// The batch steps of [`stage`], on `batches` (taken out of `notify` for the time).
fn stage_in(
    batches: &mut AtomicBatches,
    ingest: &mut Ingest,
    config: &StreamConfig,
    notify: &mut Notify<'_>,
    msg: &Delivery,
    (seq, now, now_ns): (u64, Instant, i64),
) -> Result<Outcome, ApiError> {
    let block = msg.headers.as_deref().unwrap_or_default();
    let hdrs = BatchHeaders::read(block).ok_or_else(|| table::ATOMIC_PUBLISH_MISSING_SEQ.err())?;
    let eob = hdrs.commit == Commit::Eob;
    let size = seq - u64::from(eob);
    let msgs_max = limits::max_msgs(BATCH_MSGS_MAX);
    let too_large = || table::ATOMIC_PUBLISH_TOO_LARGE_BATCH.with(&[("size", &msgs_max)]);
    let incomplete = || table::ATOMIC_PUBLISH_INCOMPLETE_BATCH.err();
    if !batches.open.contains_key(hdrs.id) {
        if seq != 1 {
            return Err(if size > msgs_max {
                too_large()
            } else {
                incomplete()
            });
        }
        let per_stream = limits::inflight_per_stream(INFLIGHT_PER_STREAM_MAX);
        if batches.open.len() >= per_stream
            || INFLIGHT_TOTAL.fetch_add(1, Ordering::Relaxed)
                >= limits::inflight_total(INFLIGHT_TOTAL_MAX)
        {
            if batches.open.len() < per_stream {
                INFLIGHT_TOTAL.fetch_sub(1, Ordering::Relaxed);
            }
            return Err(table::ATOMIC_PUBLISH_TOO_MANY_INFLIGHT.err());
        }
        let staged = Staged {
            msgs: Vec::new(),
            last: 0,
            touched: now,
        };
        batches.open.insert(hdrs.id.to_vec(), staged);
        batches.opened = true;
    }
    let abandon = |batches: &mut AtomicBatches, notify: &mut Notify<'_>, reason| {
        batches.remove(hdrs.id);
        if let Some(reason) = reason {
            notify.abandoned(&config.name, hdrs.id, reason);
        }
    };
    if hdrs.commit == Commit::Invalid {
        abandon(batches, notify, None);
        return Err(table::ATOMIC_PUBLISH_INVALID_BATCH_COMMIT.err());
    }
    if hdrs.api_level_refused {
        abandon(batches, notify, Some(Abandoned::Unsupported));
        return Err(table::REQUIRED_API_LEVEL.err());
    }
    let last = batches.open.get(hdrs.id).map_or(0, |s| s.last);
    if last + 1 != seq || (seq == 1 && eob) {
        abandon(batches, notify, Some(Abandoned::Incomplete));
        return Err(incomplete());
    }
    if size > msgs_max {
        abandon(batches, notify, Some(Abandoned::Large));
        return Err(too_large());
    }
    let mut staged_msg = msg.clone();
    if hdrs.api_level {
        let kept = header_edit::remove_field(block, REQUIRED_API_LEVEL);
        staged_msg.headers = Some(Bytes::from(kept));
    }
    if hdrs.commit == Commit::No {
        if let Some(staged) = batches.open.get_mut(hdrs.id) {
            staged.msgs.push(staged_msg);
            staged.last = seq;
            staged.touched = now;
        }
        return Ok(Outcome::Staged);
    }
    let mut msgs = batches.remove(hdrs.id).map(|s| s.msgs).unwrap_or_default();
    if !eob {
        msgs.push(staged_msg);
    }
    let id = String::from_utf8_lossy(hdrs.id).into_owned();
    let committed = notify.committed.as_deref_mut();
    Ok(super::commit::commit(
        ingest,
        config,
        (&id, &msgs, eob),
        now_ns,
        committed,
    ))
}
