//! A consumer's delivery bookkeeping in memory, with Go's rules: the next consumer sequence,
//! the ack floors, the messages delivered and not acknowledged (with the time of their last
//! delivery), the redelivery counts and queue, and the pull requests waiting. The state
//! store holds the same facts for a restart; the caller mirrors each change into it.
//!
//! Pure: every time is Unix nanoseconds passed in, so the rules are tested without clocks.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use natrium_store::{ConsumerState, Pending, SequencePair};

use super::config::AckPolicy;
use super::pull::WaitQueue;

/// Go fires the ack-wait timer a millisecond late so that a burst is handled at once.
pub const ACK_WAIT_DELAY_NS: i64 = 1_000_000;
/// After a restart, Go checks the recovered pending messages within a second (or the ack
/// wait, when shorter): ours waits exactly this long.
pub const RECOVERED_CHECK_NS: i64 = 1_000_000_000;

/// What Go keeps per consumer for delivery (`dseq`, `adflr`, `asflr`, `pending`, `rdc`,
/// `rdq`, `waiting`).
#[derive(Debug, Default)]
pub struct DeliveryState {
    /// The next consumer sequence.
    pub dseq: u64,
    pub ack_floor: SequencePair,
    pub pending: BTreeMap<u64, Pending>,
    /// Redeliveries by stream sequence (Go's `rdc`).
    pub rdc: BTreeMap<u64, u64>,
    rdq: VecDeque<u64>,
    rdq_set: BTreeSet<u64>,
    pub waiting: WaitQueue,
    /// Deliver-last-per-subject: the sequences still to send, and where to go on after.
    pub last_per_subject: Option<(VecDeque<u64>, u64)>,
    /// The cached count of messages left to deliver and the last stream sequence it counts.
    pub num_pending: Option<(u64, u64)>,
    /// When the pending messages must be looked at again (ack wait, backoff).
    pub ack_due: Option<i64>,
    /// The earliest expiry or heartbeat of a waiting request.
    pub wait_due: Option<i64>,
    /// The time the stream's timer holds for this consumer.
    pub armed: Option<i64>,
    /// Push delivery, flow control, heartbeats and inactivity.
    pub push: super::push::PushState,
    /// A `pinned_client` consumer's pin.
    pub pin: super::priority::Pin,
}

/// What an ack changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Acked {
    /// The stream sequences acknowledged by it (for interest and work-queue retention).
    pub seqs: Vec<u64>,
    /// The consumer and stream sequences to record in the store.
    pub store: Option<(u64, u64)>,
    /// `max_ack_pending` was reached before: delivery may go on.
    pub unblocked: bool,
}

impl DeliveryState {
    /// The state read back from the store; `now` starts the check of recovered pending
    /// messages.
    pub fn recovered(state: &ConsumerState, ack_wait: i64, now: i64) -> Self {
        let mut out = DeliveryState {
            dseq: state.delivered.consumer + 1,
            ack_floor: state.ack_floor,
            pending: state.pending.clone(),
            rdc: state.redelivered.clone(),
            ..DeliveryState::default()
        };
        if !out.pending.is_empty() {
            let wait = if ack_wait > 0 && ack_wait < RECOVERED_CHECK_NS {
                ack_wait + ACK_WAIT_DELAY_NS
            } else {
                RECOVERED_CHECK_NS
            };
            out.ack_due = Some(now.saturating_add(wait));
        }
        out
    }

    /// A new consumer starting before stream sequence `next`.
    pub fn starting(next: u64) -> Self {
        DeliveryState {
            dseq: 1,
            ack_floor: SequencePair {
                consumer: 0,
                stream: next.saturating_sub(1),
            },
            ..DeliveryState::default()
        }
    }

    /// The state as the store keeps it; `next` is the next stream sequence.
    pub fn to_store(&self, next: u64) -> ConsumerState {
        ConsumerState {
            delivered: SequencePair {
                consumer: self.dseq.saturating_sub(1),
                stream: next.saturating_sub(1),
            },
            ack_floor: self.ack_floor,
            pending: self.pending.clone(),
            redelivered: self.rdc.clone(),
        }
    }

    /// Go's `deliveryCount` (the count of redeliveries once there was one, else 1).
    pub fn delivery_count(&self, seq: u64) -> u64 {
        self.rdc.get(&seq).copied().filter(|n| *n >= 1).unwrap_or(1)
    }

    /// Counts one more delivery of `seq` and returns its delivery count.
    pub fn inc_delivery_count(&mut self, seq: u64) -> u64 {
        let n = self.rdc.entry(seq).or_insert(0);
        *n += 1;
        *n + 1
    }

    /// Takes back a delivery that did not happen.
    pub fn dec_delivery_count(&mut self, seq: u64) {
        let n = self.rdc.entry(seq).or_insert(0);
        *n = n.saturating_sub(1);
    }

    pub fn has_redeliveries(&self) -> bool {
        !self.rdq.is_empty()
    }

    pub fn on_redeliver_queue(&self, seq: u64) -> bool {
        self.rdq_set.contains(&seq)
    }

    pub fn redeliver_queued(&self) -> usize {
        self.rdq.len()
    }

    pub fn add_to_redeliver_queue(&mut self, seq: u64) {
        if self.rdq_set.insert(seq) {
            self.rdq.push_back(seq);
        }
    }

    pub fn next_to_redeliver(&mut self) -> Option<u64> {
        let seq = self.rdq.pop_front()?;
        self.rdq_set.remove(&seq);
        Some(seq)
    }

    pub fn remove_from_redeliver_queue(&mut self, seq: u64) {
        if self.rdq_set.remove(&seq) {
            self.rdq.retain(|s| *s != seq);
        }
    }

    /// Records a delivery of `sseq` as consumer sequence `dseq` at `now`, and when the ack
    /// wait (or the backoff step) of that delivery falls due.
    pub fn track_pending(&mut self, sseq: u64, dseq: u64, now: i64, wait: i64) {
        self.pending
            .entry(sseq)
            .and_modify(|p| p.timestamp_ns = now)
            .or_insert(Pending {
                consumer_seq: dseq,
                timestamp_ns: now,
            });
        let due = now.saturating_add(wait);
        if self.ack_due.is_none_or(|d| d > due) {
            self.ack_due = Some(due);
        }
    }

    /// Go's `moveAckFloor`: after an ack of the message next above the floor, the floor moves
    /// up to just below the oldest message still pending. `next` is the next stream sequence.
    pub fn move_ack_floor(&mut self, dseq: u64, sseq: u64, next: u64) {
        if self.pending.is_empty() {
            self.ack_floor = SequencePair {
                consumer: self.dseq.saturating_sub(1),
                stream: next.saturating_sub(1),
            };
        } else if dseq == self.ack_floor.consumer + 1 {
            self.ack_floor = SequencePair {
                consumer: dseq,
                stream: sseq,
            };
            if let Some((ss, p)) = self.pending.range(sseq + 1..next).next() {
                if p.consumer_seq > 0 {
                    self.ack_floor = SequencePair {
                        consumer: p.consumer_seq - 1,
                        stream: ss - 1,
                    };
                }
            }
        }
    }

    /// Go's `processAckMsg` for an ack of `sseq`/`dseq` (`next` is the next stream
    /// sequence, `max_ack_pending` 0 for none); `None` when the ack is above what was
    /// delivered.
    pub fn ack(
        &mut self,
        policy: AckPolicy,
        (sseq, dseq): (u64, u64),
        next: u64,
        max_ack_pending: usize,
    ) -> Option<Acked> {
        if sseq >= next {
            return None;
        }
        let mut out = Acked {
            unblocked: max_ack_pending > 0 && self.pending.len() >= max_ack_pending,
            ..Acked::default()
        };
        match policy {
            AckPolicy::Explicit => {
                if let Some(p) = self.pending.remove(&sseq) {
                    self.move_ack_floor(p.consumer_seq, sseq, next);
                    out.store = Some((p.consumer_seq, sseq));
                } else {
                    out.store = Some((dseq, sseq));
                }
                out.seqs.push(sseq);
                self.rdc.remove(&sseq);
                self.remove_from_redeliver_queue(sseq);
            }
            AckPolicy::All | AckPolicy::FlowControl => {
                if dseq <= self.ack_floor.consumer || sseq <= self.ack_floor.stream {
                    return Some(Acked::default());
                }
                self.ack_floor = SequencePair {
                    consumer: dseq,
                    stream: sseq,
                };
                let kept = self.pending.split_off(&(sseq + 1));
                let acked = std::mem::replace(&mut self.pending, kept);
                out.seqs
                    .extend(acked.keys().copied().filter(|s| *s != sseq));
                out.seqs.push(sseq);
                let kept = self.rdc.split_off(&(sseq + 1));
                self.rdc = kept;
                for seq in acked.keys() {
                    self.remove_from_redeliver_queue(*seq);
                }
                out.store = Some((dseq, sseq));
            }
            AckPolicy::None => return Some(Acked::default()),
        }
        Some(out)
    }

    /// Whether the message at `sseq` is still wanted by this consumer (Go's `needAck`, for
    /// interest retention); the caller checked the consumer's filter.
    pub fn need_ack(&self, policy: AckPolicy, sseq: u64, next: u64) -> bool {
        let need = match policy {
            AckPolicy::None | AckPolicy::All | AckPolicy::FlowControl => {
                sseq > self.ack_floor.stream
            }
            AckPolicy::Explicit => {
                sseq > self.ack_floor.stream && (sseq >= next || self.pending.contains_key(&sseq))
            }
        };
        need || self.rdc.contains_key(&sseq)
    }
}

/// What the ack-wait check found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Expired {
    /// Messages that reached `max_deliver` now: (stream sequence, deliveries) for the
    /// advisory, and (consumer seq, stream seq, delivery count, time) for the store.
    pub exceeded: Vec<(u64, u64)>,
    pub store_delivered: Vec<(u64, u64, u64, i64)>,
    /// Pending entries dropped (below the stream's first or the ack floor): the state is
    /// stored whole.
    pub state_changed: bool,
    /// Messages were queued for redelivery.
    pub redeliver: bool,
}

/// The timing rules of a consumer's acks.
#[derive(Debug, Clone, Copy)]
pub struct AckTiming<'a> {
    pub ack_wait: i64,
    pub backoff: &'a [i64],
    /// 0 for no limit.
    pub max_deliver: u64,
}

impl AckTiming<'_> {
    /// How long after a delivery numbered by `rdc` its ack wait ends (Go's `trackPending`).
    pub fn wait_for(&self, rdc: u64) -> i64 {
        let base = match self.backoff {
            [] => self.ack_wait,
            steps => {
                let i = usize::try_from(rdc)
                    .unwrap_or(usize::MAX)
                    .min(steps.len() - 1);
                steps.get(i).copied().unwrap_or(self.ack_wait)
            }
        };
        base.saturating_add(ACK_WAIT_DELAY_NS)
    }
}

impl DeliveryState {
    /// Go's `hasMaxDeliveries`: a message delivered `max_deliver` times leaves pending.
    fn max_delivered(
        &mut self,
        seq: u64,
        timing: &AckTiming<'_>,
        next: u64,
        out: &mut Expired,
    ) -> bool {
        let max = timing.max_deliver;
        if max == 0 {
            return false;
        }
        let dc = self.delivery_count(seq);
        if dc < max {
            return false;
        }
        if dc == max {
            out.exceeded.push((seq, dc));
        }
        if let Some(p) = self.pending.remove(&seq) {
            out.store_delivered
                .push((p.consumer_seq, seq, dc + 1, p.timestamp_ns));
            self.move_ack_floor(p.consumer_seq, seq, next);
        }
        self.rdc.insert(seq, dc);
        true
    }

    /// Go's `checkPending`: queues for redelivery what waited past its ack wait, drops what
    /// left the stream (`first_seq`), and sets when to look again.
    pub fn check_pending(
        &mut self,
        now: i64,
        timing: &AckTiming<'_>,
        first_seq: u64,
        next: u64,
    ) -> Expired {
        let mut out = Expired::default();
        if timing.ack_wait <= 0 {
            self.ack_due = None;
            return out;
        }
        let mut next_check = timing.backoff.last().copied().unwrap_or(timing.wait_for(0));
        let mut expired = Vec::new();
        let seqs: Vec<u64> = self.pending.keys().copied().collect();
        for seq in seqs {
            let Some(p) = self.pending.get(&seq).copied() else {
                continue;
            };
            if seq < first_seq || seq <= self.ack_floor.stream {
                self.pending.remove(&seq);
                self.rdc.remove(&seq);
                self.remove_from_redeliver_queue(seq);
                out.state_changed = true;
                self.ack_floor.stream = self.ack_floor.stream.max(seq);
                self.ack_floor.consumer = self.ack_floor.consumer.max(p.consumer_seq);
                continue;
            }
            let elapsed = now.saturating_sub(p.timestamp_ns);
            let mut deadline = timing.ack_wait;
            if let Some(last) = timing.backoff.len().checked_sub(1) {
                let dc = usize::try_from(self.rdc.get(&seq).copied().unwrap_or(0))
                    .unwrap_or(usize::MAX)
                    .min(last);
                let following = (dc + 1).min(last);
                deadline = timing.backoff.get(dc).copied().unwrap_or(deadline);
                if let Some(step) = timing.backoff.get(following) {
                    next_check = next_check.min(*step);
                }
            }
            if elapsed >= deadline {
                if !self.on_redeliver_queue(seq) && !self.max_delivered(seq, timing, next, &mut out)
                {
                    expired.push(seq);
                }
            } else {
                next_check = next_check.min(deadline - elapsed);
            }
        }
        if let Some(first) = expired.first() {
            let offset = self
                .pending
                .get(first)
                .map_or(0, |p| now.saturating_sub(p.timestamp_ns));
            for seq in &expired {
                self.add_to_redeliver_queue(*seq);
                if let Some(p) = self.pending.get_mut(seq) {
                    p.timestamp_ns = p.timestamp_ns.saturating_add(offset);
                }
            }
            out.redeliver = true;
        }
        if self.pending.is_empty() {
            self.ack_due = None;
            self.rdq.clear();
            self.rdq_set.clear();
            self.ack_floor = SequencePair {
                consumer: self.dseq.saturating_sub(1),
                stream: next.saturating_sub(1),
            };
        } else {
            self.ack_due = Some(now.saturating_add(next_check.max(ACK_WAIT_DELAY_NS)));
        }
        out
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
