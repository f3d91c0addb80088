//! Acks of one consumer as Go's `processAck` handles them (`+ACK`, `-NAK` with its delay,
//! `+WPI`, `+NXT`, `+TERM`), and its timer: the ack-wait check that queues redeliveries
//! (`checkPending`) and the sweep of waiting requests.
//!
//! Runs with the consumer's `core` locked, like [`super::deliver`]. A double ack (an ack
//! with a reply subject) is answered through the round's outbox, which is published only
//! once the consumer's state is stored.

use super::ack::{nak_delay, parse_body, parse_subject, AckKind};
use super::config::AckPolicy;
use super::deliver::{deliver, on_request, process_waiting, stored, timing, Round};
use super::outbox::Advice;
use super::running::ConsumerCore;
use crate::stream::signal::Removed;

/// Go resets its timer to this after a NAK with a delay, so the check runs soon.
const NAK_DELAY_CHECK_NS: i64 = 10_000_000;

/// Handles an ack message on `subject` with `body`; `reply` is the double-ack's reply.
pub fn on_ack(
    core: &mut ConsumerCore,
    r: &mut Round<'_>,
    subject: &str,
    reply: Option<&str>,
    body: &[u8],
) {
    if matches!(
        core.config.ack_policy,
        AckPolicy::None | AckPolicy::FlowControl
    ) {
        // Go takes no acks for these policies: nothing listens.
        return;
    }
    let Some(info) = parse_subject(subject) else {
        return;
    };
    let seqs = (info.stream_seq, info.consumer_seq);
    let mut answer = info.stream_seq != 0;
    match parse_body(body) {
        AckKind::Ack => answer &= ack(core, r, seqs, Some(info.delivered)),
        AckKind::Next(rest) => {
            ack(core, r, seqs, Some(info.delivered));
            if let Some(reply) = reply {
                on_request(core, r, reply, rest);
            }
            answer = false;
        }
        AckKind::Nak(arg) => nak(core, r, seqs, info.delivered, arg),
        AckKind::Progress => progress(core, r, info.stream_seq),
        AckKind::Term(reason) => {
            answer &= terminate(core, r, seqs, info.delivered, &reason);
        }
        AckKind::Other => {}
    }
    if let Some(reply) = reply.filter(|_| answer) {
        r.out.ack_reply(reply);
    }
}

/// An ack carried by a flow-control answer (`ack_policy: flow_control`): everything up to
/// stream sequence `sseq` (delivery `dseq`) was received, as an `AckAll` ack of it.
pub fn ack_received(core: &mut ConsumerCore, r: &mut Round<'_>, seqs: (u64, u64)) {
    ack(core, r, seqs, None);
}

/// Go's `processAckMsg`: `false` when the ack is for a message not delivered yet.
/// `sample` (the deliveries the ack subject names) asks for the `sample_freq` ack metric.
fn ack(
    core: &mut ConsumerCore,
    r: &mut Round<'_>,
    (sseq, dseq): (u64, u64),
    sample: Option<u64>,
) -> bool {
    if let Some(deliveries) = sample {
        sample_ack(core, r, (sseq, dseq), deliveries);
    }
    let max = usize::try_from(core.config.max_ack_pending).unwrap_or(0);
    let policy = core.config.ack_policy;
    let Some(acked) = core.delivery.ack(policy, (sseq, dseq), core.next_seq, max) else {
        return false;
    };
    if let (Some((d, s)), Some(store)) = (acked.store, core.store.as_mut()) {
        stored(store.update_acks(d, s), r);
        r.out.touch(r.consumer);
    }
    if !r.limits {
        for seq in acked.seqs {
            r.out.released.push((r.consumer.to_owned(), seq));
        }
    }
    if acked.unblocked {
        deliver(core, r);
    }
    true
}

/// Go's `sampleAck`: with `sample_freq` set, an explicit ack of a pending message is
/// reported on `$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>` that share of the time.
fn sample_ack(core: &ConsumerCore, r: &mut Round<'_>, (sseq, dseq): (u64, u64), dc: u64) {
    if core.config.sample_freq.is_empty() || core.config.ack_policy != AckPolicy::Explicit {
        return;
    }
    let Some(pending) = core.delivery.pending.get(&sseq) else {
        return;
    };
    let freq: i64 = core
        .config
        .sample_freq
        .trim_end_matches('%')
        .parse()
        .unwrap_or(0);
    // Go draws `rand.Int32N(100) <= freq`; a multiplicative hash of the clock is draw enough
    // for a sampling rate.
    let seed = (r.now as u64) ^ sseq.rotate_left(29);
    let draw = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57;
    let sampled = freq >= 100 || (freq > 0 && i64::try_from(draw % 100).unwrap_or(0) <= freq);
    if sampled {
        let delay = r.now.saturating_sub(pending.timestamp_ns);
        r.ack_metric((dseq, sseq), dc, delay);
    }
}

/// Go's `processTerm`: an ack that stops redelivery, and its advisory.
pub fn terminate(
    core: &mut ConsumerCore,
    r: &mut Round<'_>,
    seqs: (u64, u64),
    deliveries: u64,
    reason: &str,
) -> bool {
    let acked = ack(core, r, seqs, None);
    r.advise(Advice::Terminated, (seqs.1, seqs.0), deliveries, reason);
    acked
}

/// Go's reason for a pending message that left the stream.
const DELETED_REASON: &str = "Unacknowledged message was deleted";

/// Messages that left the stream: each one this consumer holds unacknowledged is terminated
/// (acknowledged, with the terminated advisory), as Go does. When the list overflowed, every
/// pending message is looked up in the store instead.
pub fn on_removed(core: &mut ConsumerCore, r: &mut Round<'_>, removed: &Removed) {
    if core.delivery.pending.is_empty() {
        return;
    }
    let gone: Vec<(u64, u64)> = if removed.overflowed {
        let pending: Vec<(u64, u64)> = core
            .delivery
            .pending
            .iter()
            .map(|(sseq, p)| (*sseq, p.consumer_seq))
            .collect();
        let stream = r.stream.core.lock();
        pending
            .into_iter()
            .filter(|(sseq, _)| stream.ingest.store.load_msg(*sseq).is_err())
            .collect()
    } else {
        removed
            .seqs
            .iter()
            .filter_map(|sseq| {
                let p = core.delivery.pending.get(sseq)?;
                Some((*sseq, p.consumer_seq))
            })
            .collect()
    };
    for (sseq, dseq) in gone {
        let deliveries = core.delivery.delivery_count(sseq);
        terminate(core, r, (sseq, dseq), deliveries, DELETED_REASON);
    }
}

/// Go's `processNak`: redeliver now, or after the delay the NAK asks for.
fn nak(core: &mut ConsumerCore, r: &mut Round<'_>, (sseq, dseq): (u64, u64), dc: u64, arg: &[u8]) {
    let d = &core.delivery;
    if dseq <= d.ack_floor.consumer || dseq > d.dseq || !d.pending.contains_key(&sseq) {
        return;
    }
    r.advise(Advice::Nak, (dseq, sseq), dc, "");
    match nak_delay(arg) {
        Ok(Some(delay)) => {
            core.delivery.remove_from_redeliver_queue(sseq);
            let ack_wait = core.config.ack_wait;
            if let Some(p) = core.delivery.pending.get_mut(&sseq) {
                p.timestamp_ns = r.now.saturating_sub(ack_wait).saturating_add(delay);
                let (cseq, ts) = (p.consumer_seq, p.timestamp_ns);
                if let Some(store) = core.store.as_mut() {
                    stored(store.update_delivered(cseq, sseq, dc, ts), r);
                    r.out.touch(r.consumer);
                }
                let soon = r.now.saturating_add(NAK_DELAY_CHECK_NS);
                let due = &mut core.delivery.ack_due;
                *due = Some(due.map_or(soon, |t| t.min(soon)));
            }
            return;
        }
        Ok(None) => {}
        Err(arg) => tracing::warn!(
            "JetStream consumer '{} > {} > {}' bad NAK delay value: {}",
            r.stream.account.name,
            r.stream.name,
            r.consumer,
            natrium_gofmt::go_quote(&arg)
        ),
    }
    core.delivery.add_to_redeliver_queue(sseq);
    deliver(core, r);
}

/// Go's `progressUpdate` (`+WPI`): the ack wait starts again.
fn progress(core: &mut ConsumerCore, r: &mut Round<'_>, sseq: u64) {
    let now = r.now;
    if let Some(p) = core.delivery.pending.get_mut(&sseq) {
        p.timestamp_ns = now;
        let cseq = p.consumer_seq;
        if let Some(store) = core.store.as_mut() {
            stored(store.update_delivered(cseq, sseq, 1, now), r);
            r.out.touch(r.consumer);
        }
    }
}

/// The consumer's timer: the ack-wait check when due, the sweep of waiting requests, and
/// delivery of what became due.
pub fn on_timer(core: &mut ConsumerCore, r: &mut Round<'_>) {
    if core.delivery.ack_due.is_some_and(|t| t <= r.now) {
        check_pending(core, r);
    }
    if core.delivery.pin.due().is_some_and(|t| t <= r.now) {
        // No request from the pinned client for `priority_timeout`: the pin lapses.
        let group = std::mem::take(&mut core.delivery.pin.group);
        core.delivery.pin.clear();
        r.advise_pin(&group, None);
    }
    let pull = !core.config.is_push();
    if pull && core.delivery.wait_due.is_some_and(|t| t <= r.now) {
        // Go's request timer ends the stream for waiting requests: a `no_wait` request that
        // delivered something is answered `404 No Messages` here, even while the consumer
        // is held at `max_ack_pending`, so it stops taking messages its requester no longer
        // waits for.
        process_waiting(core, r, true);
    }
    if core.delivery.waiting.is_empty() && pull {
        process_waiting(core, r, true);
    } else {
        deliver(core, r);
    }
}

fn check_pending(core: &mut ConsumerCore, r: &mut Round<'_>) {
    let first = r.stream.core.lock().ingest.store.fast_state().first_seq;
    let next = core.next_seq;
    let timing = timing(core);
    let (backoff, ack_wait, max_deliver) =
        (timing.backoff.to_vec(), timing.ack_wait, timing.max_deliver);
    let timing = super::state::AckTiming {
        ack_wait,
        backoff: &backoff,
        max_deliver,
    };
    let expired = core.delivery.check_pending(r.now, &timing, first, next);
    for (seq, deliveries) in &expired.exceeded {
        r.advise(Advice::MaxDeliver, (0, *seq), *deliveries, "");
    }
    if let Some(store) = core.store.as_mut() {
        for (cseq, sseq, dc, ts) in &expired.store_delivered {
            stored(store.update_delivered(*cseq, *sseq, *dc, *ts), r);
        }
        if expired.state_changed {
            let state = core.delivery.to_store(next);
            stored(store.force_update(&state), r);
        }
        if !expired.store_delivered.is_empty() || expired.state_changed {
            r.out.touch(r.consumer);
        }
    }
}
