//! Push consumers' interest, flow-control answers and idle heartbeats, and every consumer's
//! inactivity clean-up, as Go's `updateDeliveryInterest`, `processFlowControl`,
//! `sendIdleHeartbeat` and `deleteNotActive` do them; all through the stream engine's one
//! timer set (no timer of their own).
//!
//! Runs with the consumer's `core` locked, like [`super::deliver`]; the delivery itself is
//! [`super::deliver::deliver`].

use nats_proto::headers::Headers;

use super::acking::ack_received;
use super::config::{AckPolicy, ReplayPolicy};
use super::deliver::{deliver, process_waiting, send_flow_control, Round};
use super::push::heartbeat;
use super::running::ConsumerCore;

/// Go's `JSLastStreamSeq` and `JSLastConsumerSeq`.
const LAST_STREAM: &[u8] = b"Nats-Last-Stream";
const LAST_CONSUMER: &[u8] = b"Nats-Last-Consumer";

/// Looks at a consumer (created, recovered, updated): its flow-control window, whether its
/// deliver subject has interest, its inactivity deadline.
pub fn looked(core: &mut ConsumerCore, r: &mut Round<'_>) {
    let dthresh = core.config.inactive_threshold;
    if core.config.replay_policy == ReplayPolicy::Original && core.delivery.dseq <= 1 {
        // Go replays what the stream holds when the consumer starts, push or pull.
        let last = r.stream.core.lock().ingest.store.fast_state().last_seq;
        core.delivery.push.replay_until.get_or_insert(last);
    }
    if core.config.is_push() {
        if core.config.flow_control {
            core.delivery.push.start_flow_control();
        }
        let interest = crate::event::has_interest(&r.stream.account, &core.config.deliver_subject);
        set_interest(core, r, interest);
        if !interest && dthresh > 0 && core.delivery.push.delete_due.is_none() {
            core.delivery.push.delete_due = Some(r.now.saturating_add(dthresh));
        }
    } else if dthresh > 0 {
        let p = &mut core.delivery.push;
        if p.last_active == 0 {
            p.last_active = r.now;
        }
        if p.delete_due.is_none() {
            p.delete_due = Some(p.last_active.saturating_add(dthresh));
        }
    } else {
        core.delivery.push.delete_due = None;
    }
}

/// The account's interest changed: a push consumer checks its deliver subject again.
pub fn interest_changed(core: &mut ConsumerCore, r: &mut Round<'_>) {
    if !core.config.is_push() {
        return;
    }
    let interest = crate::event::has_interest(&r.stream.account, &core.config.deliver_subject);
    set_interest(core, r, interest);
}

/// Go's `updateDeliveryInterest`: interest that appears delivers and stops the inactivity
/// deadline; interest that goes starts it (when the consumer has a threshold).
fn set_interest(core: &mut ConsumerCore, r: &mut Round<'_>, interest: bool) {
    let was = core.delivery.push.active;
    core.delivery.push.active = interest;
    if interest {
        core.delivery.push.delete_due = None;
        if !was {
            let hb = core.config.idle_heartbeat;
            core.delivery.push.hb_due = (hb > 0).then(|| r.now.saturating_add(hb));
            deliver(core, r);
        }
    } else {
        core.delivery.push.hb_due = None;
        let dthresh = core.config.inactive_threshold;
        if was && dthresh > 0 && core.delivery.push.delete_due.is_none() {
            core.delivery.push.delete_due = Some(r.now.saturating_add(dthresh));
        }
    }
}

/// A flow-control answer on `subject`: the outstanding one reopens the window and, with
/// `ack_policy: flow_control`, acknowledges what its `Nats-Last-Stream` and
/// `Nats-Last-Consumer` headers say was received (Go's `processFlowControl`).
pub fn on_flow_control(
    core: &mut ConsumerCore,
    r: &mut Round<'_>,
    subject: &str,
    headers: Option<&[u8]>,
) {
    if !core.delivery.push.answered(subject) {
        return;
    }
    if core.config.ack_policy == AckPolicy::FlowControl {
        if let Some(seqs) = headers.and_then(received) {
            ack_received(core, r, seqs);
        }
    }
    deliver(core, r);
}

/// The (stream, delivery) sequences a flow-control answer reports; `None` without a
/// positive `Nats-Last-Stream` (a delivery sequence that is absent or not positive is 0, as
/// an answer before any delivery has it).
fn received(block: &[u8]) -> Option<(u64, u64)> {
    let h = Headers::parse(block).ok()?;
    let number = |name: &[u8]| -> Option<i64> {
        let v = std::str::from_utf8(h.get(name)?).ok()?;
        v.trim().parse().ok()
    };
    let sseq = u64::try_from(number(LAST_STREAM)?)
        .ok()
        .filter(|s| *s > 0)?;
    let dseq = number(LAST_CONSUMER).and_then(|d| u64::try_from(d).ok());
    Some((sseq, dseq.unwrap_or(0)))
}

/// The consumer's timer: an idle heartbeat that fell due, and the inactivity check.
/// Returns `true` when the consumer has been inactive long enough to be deleted.
pub fn tick(core: &mut ConsumerCore, r: &mut Round<'_>) -> bool {
    let now = r.now;
    if let Some(due) = core.delivery.push.hb_due.filter(|t| *t <= now) {
        let hb = core.config.idle_heartbeat;
        if core.delivery.push.active && hb > 0 {
            let p = &core.delivery.push;
            let last = (
                core.delivery.dseq.saturating_sub(1),
                core.next_seq.saturating_sub(1),
            );
            let block = heartbeat(last.0, last.1, p.fcid.as_deref());
            r.out.status(&core.config.deliver_subject, block);
            let fc_acks = core.config.ack_policy == AckPolicy::FlowControl;
            if fc_acks && !core.delivery.pending.is_empty() && core.delivery.push.fcid.is_none() {
                // Acks ride on flow-control answers: an idle consumer asks for one so that
                // what it delivered last is acknowledged too.
                send_flow_control(core, r);
            }
            core.delivery.push.hb_due = Some(due.max(now).saturating_add(hb));
        } else {
            core.delivery.push.hb_due = None;
        }
    }
    let Some(due) = core.delivery.push.delete_due.filter(|t| *t <= now) else {
        return false;
    };
    let dthresh = core.config.inactive_threshold;
    if dthresh <= 0 {
        core.delivery.push.delete_due = None;
        return false;
    }
    if core.config.is_push() {
        if core.delivery.push.active {
            core.delivery.push.delete_due = None;
            return false;
        }
        return true;
    }
    let p = &mut core.delivery.push;
    let elapsed = now.saturating_sub(p.last_active);
    if elapsed < dthresh {
        p.delete_due = Some(p.last_active.saturating_add(dthresh));
        return false;
    }
    process_waiting(core, r, true);
    if !core.delivery.waiting.is_empty() {
        // Requests still wait (their requesters listen): look again a threshold later.
        core.delivery.push.delete_due = Some(due.max(now).saturating_add(dthresh));
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::received;

    #[test]
    fn consumer_push_flow_control_answer_sequences() {
        let block = b"NATS/1.0\r\nNats-Last-Consumer: 7\r\nNats-Last-Stream: 12\r\n\r\n";
        assert_eq!(received(block), Some((12, 7)));
        let no_deliveries = b"NATS/1.0\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 3\r\n\r\n";
        assert_eq!(received(no_deliveries), Some((3, 0)));
        let negative = b"NATS/1.0\r\nNats-Last-Consumer: -1\r\nNats-Last-Stream: 3\r\n\r\n";
        assert_eq!(received(negative), Some((3, 0)));
        assert_eq!(received(b"NATS/1.0\r\nNats-Last-Stream: 0\r\n\r\n"), None);
        assert_eq!(received(b"NATS/1.0\r\n\r\n"), None);
    }
}
