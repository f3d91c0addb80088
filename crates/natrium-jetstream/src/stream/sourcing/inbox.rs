//! The in-process sink of one origin: the messages of its consumer's deliver subject and the
//! answers to its create requests, queued for the origin's task.
//!
//! Overflow rule: drop, count. The origin consumer delivers under flow control, so at most
//! its window (32 MiB) is outstanding; past [`QUEUE_BYTES_MAX`] something is wrong, and a
//! dropped message shows as a gap in the delivery sequence, which makes the task create a
//! new consumer from the last stored position (nothing is lost, only re-sent).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use natrium_core::endpoint::{Delivery, Sink, SinkAccept};
use parking_lot::Mutex;
use tokio::sync::Notify;

/// Twice the consumer's largest flow-control window.
pub const QUEUE_BYTES_MAX: usize = 64 * 1024 * 1024;
/// What a queued message costs beside its bytes (so empty heartbeats are bounded too).
const MSG_OVERHEAD_BYTES: usize = 128;

/// The queue behind the origin's subscriptions.
pub struct OriginInbox {
    cid: u64,
    queued: Mutex<Queued>,
    /// Wakes the task (a permit is kept while it is busy).
    pub wake: Notify,
    /// Messages dropped by the overflow rule.
    pub dropped: AtomicU64,
}

#[derive(Default)]
struct Queued {
    msgs: VecDeque<Delivery>,
    bytes: usize,
}

fn cost(msg: &Delivery) -> usize {
    msg.subject.len()
        + msg.reply.as_ref().map_or(0, bytes::Bytes::len)
        + msg.headers.as_ref().map_or(0, bytes::Bytes::len)
        + msg.payload.len()
        + MSG_OVERHEAD_BYTES
}

impl OriginInbox {
    pub fn new(cid: u64) -> Self {
        Self {
            cid,
            queued: Mutex::new(Queued::default()),
            wake: Notify::new(),
            dropped: AtomicU64::new(0),
        }
    }

    /// Takes up to `max` messages, oldest first.
    pub fn take(&self, max: usize, into: &mut Vec<Delivery>) {
        let mut q = self.queued.lock();
        let n = q.msgs.len().min(max);
        let mut freed = 0;
        for msg in q.msgs.drain(..n) {
            freed += cost(&msg);
            into.push(msg);
        }
        q.bytes = q.bytes.saturating_sub(freed);
    }

    /// Forgets everything queued (a new consumer starts from a known position).
    pub fn clear(&self) {
        let mut q = self.queued.lock();
        q.msgs.clear();
        q.bytes = 0;
    }
}

impl Sink for OriginInbox {
    fn cid(&self) -> u64 {
        self.cid
    }

    fn deliver(&self, msg: Delivery) -> SinkAccept {
        let size = cost(&msg);
        let mut q = self.queued.lock();
        if q.bytes.saturating_add(size) > QUEUE_BYTES_MAX {
            drop(q);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return SinkAccept::Dropped;
        }
        let was_empty = q.msgs.is_empty();
        q.msgs.push_back(msg);
        q.bytes += size;
        drop(q);
        if was_empty {
            self.wake.notify_one();
        }
        SinkAccept::Accepted
    }
}
