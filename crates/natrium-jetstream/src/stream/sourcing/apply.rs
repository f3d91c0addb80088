//! What one delivery of the origin consumer does to the copy, as Go's
//! `processInboundMirrorMsg` and `processInboundSourceMsg` decide it: control messages
//! answered, old or repeated deliveries ignored, a mirror storing at the origin's sequence
//! (its gaps skipped), a source storing under its own sequence with the `Nats-Stream-Source`
//! header, and a retry asked for whenever a delivery is missing.
//!
//! Runs with the stream's `core` locked, a batch at a time; the answers to publish are
//! collected and sent by the caller once the lock is released.

use std::sync::Arc;

use bytes::Bytes;
use natrium_core::account::Account;
use natrium_core::endpoint::Delivery;
use natrium_store::{NewMsg, StoreError};

use super::header;
use super::status::Status;
use crate::config::StreamConfig;
use crate::consumer::ack::{parse_subject, AckSubject};
use crate::stream::ingest::Outcome;
use crate::stream::running::StreamCore;

/// The consumer's position as the copy tracks it.
#[derive(Debug, Default, Clone)]
pub struct Track {
    /// The current origin consumer; deliveries of others are ignored.
    pub cname: String,
    /// The last origin sequence taken.
    pub sseq: u64,
    /// The last delivery sequence taken.
    pub dseq: u64,
    /// The flow-control reply the consumer says it waits for, and how many heartbeats said so.
    pub stalled_fc: Option<String>,
    pub stalled_count: u32,
    /// A source's origin identity (empty until known), and whether the origin was found
    /// created again (its old position no longer counts).
    pub ident: String,
    pub recreated: bool,
}

/// Go's `sourceFCStalledThreshold`.
const STALLED_HEARTBEATS: u32 = 3;

/// What the batch asks of the task.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Continue,
    /// A new consumer from `Track::sseq + 1` (a delivery was missed or could not be stored).
    Retry,
}

/// A message to publish after the batch (flow-control answers).
pub struct Reply {
    pub subject: String,
    pub headers: Option<Vec<u8>>,
}

/// One batch's context.
pub struct Batch<'a> {
    pub core: &'a mut StreamCore,
    /// The stream's account (republished copies are published there).
    pub account: &'a Arc<Account>,
    pub track: &'a mut Track,
    pub status: &'a Status,
    pub replies: &'a mut Vec<Reply>,
    pub stored: bool,
    /// A source's interest filters (an interest stream keeps only what they match).
    pub interest: Option<&'a [natrium_store::Filter]>,
    pub now_ns: i64,
    /// A mirror delivery said fewer than Go's `dgetCaughtUpThresh` messages are pending.
    pub caught_up: bool,
}

/// Go's `dgetCaughtUpThresh`: a mirror with `mirror_direct` answers its origin's direct gets
/// once fewer messages than this are pending.
const CAUGHT_UP_PENDING: u64 = 10;

/// A control message: flow control answered, a heartbeat checked against what was taken.
fn control(b: &mut Batch<'_>, msg: &Delivery) -> Next {
    if let Some(reply) = msg.reply.as_deref() {
        let hdr = format!(
            "NATS/1.0\r\nNats-Last-Consumer: {}\r\nNats-Last-Stream: {}\r\n\r\n",
            b.track.dseq, b.track.sseq
        );
        b.replies.push(Reply {
            subject: String::from_utf8_lossy(reply).into_owned(),
            headers: Some(hdr.into_bytes()),
        });
        return Next::Continue;
    }
    let hb = header::heartbeat(msg.headers.as_deref().unwrap_or_default());
    if hb.last_consumer > 0 && hb.last_consumer != b.track.dseq {
        return Next::Retry;
    }
    if let Some(fc) = hb.stalled {
        if b.track.stalled_fc.as_deref() != Some(fc.as_str()) {
            b.track.stalled_fc = Some(fc.clone());
            b.track.stalled_count = 0;
        }
        b.track.stalled_count += 1;
        if b.track.stalled_count == STALLED_HEARTBEATS {
            b.status.set_error(Some(
                crate::errors::table::SOURCE_CONSUMER_FLOW_CONTROL_STALLED.err(),
            ));
        }
        b.replies.push(Reply {
            subject: fc,
            headers: None,
        });
    } else {
        clear_stalled(b);
    }
    Next::Continue
}

fn clear_stalled(b: &mut Batch<'_>) {
    if b.track.stalled_fc.take().is_some() {
        b.track.stalled_count = 0;
        let code = crate::errors::table::SOURCE_CONSUMER_FLOW_CONTROL_STALLED.err_code;
        if b.status.error_is(code) {
            b.status.set_error(None);
        }
    }
}

/// The first transform whose source matches `subject`, applied.
fn transformed(transforms: &[nats_subject::SubjectTransform], subject: &Bytes) -> Bytes {
    let mut out = Vec::new();
    for tr in transforms {
        if tr.apply(subject, &mut out) {
            return Bytes::from(out);
        }
    }
    subject.clone()
}

/// A delivery's ack subject when it carries a message not copied yet; else what to do with
/// it (a control message handled, another consumer's or a redelivery skipped, a message
/// seen again counted).
fn fresh<'m>(b: &mut Batch<'_>, msg: &'m Delivery) -> Result<AckSubject<'m>, Next> {
    if header::is_control(msg.headers.as_ref(), &msg.payload) {
        return Err(control(b, msg));
    }
    let ack = msg
        .reply
        .as_deref()
        .and_then(|r| std::str::from_utf8(r).ok())
        .and_then(parse_subject)
        .ok_or(Next::Continue)?;
    if ack.consumer != b.track.cname || ack.delivered > 1 {
        return Err(Next::Continue);
    }
    let (sseq, dseq) = (ack.stream_seq, ack.consumer_seq);
    let t = &mut *b.track;
    if sseq <= t.sseq {
        if dseq == t.dseq.saturating_add(1) {
            t.dseq = dseq;
        }
        return Err(Next::Continue);
    }
    Ok(ack)
}

/// One mirror delivery.
pub fn mirror_msg(
    b: &mut Batch<'_>,
    msg: &Delivery,
    transforms: &[nats_subject::SubjectTransform],
) -> Next {
    let ack = match fresh(b, msg) {
        Ok(ack) => ack,
        Err(next) => return next,
    };
    let (sseq, dseq) = (ack.stream_seq, ack.consumer_seq);
    let t = &mut *b.track;
    // Sequences come from the delivery's ack subject: no arithmetic on them may overflow.
    if sseq != t.sseq.saturating_add(1) && dseq != t.dseq.saturating_add(1) {
        return Next::Retry;
    }
    let store = &mut b.core.ingest.store;
    let last = store.fast_state().last_seq;
    let gap = sseq.saturating_sub(1).saturating_sub(last);
    if sseq > t.sseq.saturating_add(1) && gap > 0 {
        // The origin removed what lies between: the copy leaves the same gap.
        if let Err(err) = store.skip_msgs(last + 1, gap, b.now_ns) {
            log_failed(&b.core.config, &err);
            return Next::Retry;
        }
    }
    let copy = Delivery {
        subject: transformed(transforms, &msg.subject),
        reply: None,
        headers: header::rewrite(msg.headers.as_ref(), false, None),
        payload: msg.payload.clone(),
        sid: msg.sid,
        origin: None,
    };
    let mut stored = Ok(());
    b.core
        .store_copy(b.account, &copy, ack.timestamp_ns, |core| {
            let headers = copy.headers.clone().unwrap_or_default();
            let new = NewMsg::new(
                &copy.subject,
                headers,
                copy.payload.clone(),
                ack.timestamp_ns,
            );
            stored = core.ingest.store.store_raw_msg(new, sseq, true).map(drop);
            match &stored {
                Ok(()) => Outcome::Stored(sseq),
                Err(err) => Outcome::Refused(crate::stream::ingest::store_failed(err)),
            }
        });
    let store = &mut b.core.ingest.store;
    match stored {
        Ok(()) => {
            t.sseq = sseq;
            t.dseq = dseq;
            b.stored = true;
            b.status.set_lag(ack.pending);
            b.caught_up |= ack.pending < CAUGHT_UP_PENDING;
            clear_stalled(b);
            Next::Continue
        }
        Err(err) => {
            log_failed(&b.core.config, &err);
            // Resume from what the store holds.
            t.sseq = store.fast_state().last_seq;
            Next::Retry
        }
    }
}

fn log_failed(config: &StreamConfig, err: &StoreError) {
    tracing::warn!(
        "Error processing inbound mirror message for '{}': {err}",
        config.name
    );
}

/// One source delivery.
pub fn source_msg(
    b: &mut Batch<'_>,
    msg: &Delivery,
    transforms: &[nats_subject::SubjectTransform],
) -> Next {
    let ack = match fresh(b, msg) {
        Ok(ack) => ack,
        Err(next) => return next,
    };
    let (sseq, dseq) = (ack.stream_seq, ack.consumer_seq);
    let t = &mut *b.track;
    if dseq != t.dseq.saturating_add(1) {
        return if dseq > t.dseq {
            Next::Retry
        } else {
            Next::Continue
        };
    }
    let origin_subject = String::from_utf8_lossy(&msg.subject);
    let value = header::source_value(&b.status.index_name, sseq, &origin_subject, &t.ident);
    let headers = header::rewrite(msg.headers.as_ref(), true, Some(&value));
    let copy = Delivery {
        subject: transformed(transforms, &msg.subject),
        reply: None,
        headers,
        payload: msg.payload.clone(),
        sid: msg.sid,
        origin: None,
    };
    let core = &mut *b.core;
    let mapped = core.transformed(&copy);
    let copy: &Delivery = &mapped;
    let interested = b
        .interest
        .is_none_or(|filters| filters.iter().any(|f| f.matches(&copy.subject)));
    let store = |core: &mut StreamCore| {
        core.ingest
            .process_sourced(&core.config, copy, b.now_ns, interested)
    };
    // What an interest stream does not keep is not republished either.
    let outcome = if interested {
        core.store_copy(b.account, copy, b.now_ns, store)
    } else {
        store(core)
    };
    if let Outcome::Refused(err) = outcome {
        tracing::warn!(
            "Error processing inbound source {:?} for '{}': {}",
            b.status.index_name,
            core.config.name,
            err.description
        );
        return Next::Retry;
    }
    // Stored, counted or a duplicate (a publish never stages a batch here).
    t.sseq = sseq;
    t.dseq = dseq;
    b.stored = true;
    b.status.set_lag(ack.pending);
    b.status.set_stored(sseq);
    clear_stalled(b);
    Next::Continue
}
