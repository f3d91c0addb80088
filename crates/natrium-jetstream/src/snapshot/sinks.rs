//! The in-process subscribers of snapshots and restores, and the subscription guard that
//! removes them.
//!
//! - [`AckWindow`]: a snapshot's chunk acknowledgements (each frees one window slot) and the
//!   account's interest changes (the receiver may have gone). Never full: it only counts.
//! - [`ChunkQueue`]: a restore's incoming chunks for its worker thread. Overflow rule: never
//!   drop (a lost chunk would corrupt the archive); past [`CHUNKS_QUEUED_MARK`] chunks or
//!   [`CHUNK_BYTES_QUEUED_MARK`] bytes the publisher is stalled until the worker takes one,
//!   as a stream's capture does. Clients send one chunk per request, so it rarely fills.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use natrium_core::account::{Account, InterestListener, SubRef};
use natrium_core::endpoint::{Delivery, ReadyFuture, Sink, SinkAccept, Subscription};
use nats_subject::InterestChange;
use parking_lot::{Condvar, Mutex};
use tokio::sync::Notify;

/// Chunks a restore queues before the publisher waits.
pub const CHUNKS_QUEUED_MARK: usize = 4;
/// Bytes a restore queues before the publisher waits (a chunk is at most `max_payload`).
pub const CHUNK_BYTES_QUEUED_MARK: usize = 8 * 1024 * 1024;

/// A sink's subscription, removed from its account when dropped.
pub struct SinkSub {
    account: Arc<Account>,
    sub: Arc<Subscription>,
}

impl SinkSub {
    /// Subscribes `sink` on `subject` in `account`; `None` if the subject is not valid.
    pub fn new(account: &Arc<Account>, sink: &Arc<dyn Sink>, subject: &str) -> Option<Self> {
        let sub = crate::sink_sub::subscribe(account, sink, 1, subject, None)?;
        Some(Self {
            account: Arc::clone(account),
            sub,
        })
    }
}

impl Drop for SinkSub {
    fn drop(&mut self) {
        let _ = self.account.unsubscribe(&SubRef(Arc::clone(&self.sub)));
    }
}

/// What woke a snapshot waiting for its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// At least one chunk was acknowledged; the number taken.
    Acks(usize),
    /// Some subscription of the account came or went.
    Interest,
    Timeout,
}

#[derive(Default)]
struct WindowState {
    acks: usize,
    interest_changed: bool,
}

/// A snapshot's acknowledgements and interest changes.
pub struct AckWindow {
    cid: u64,
    state: Mutex<WindowState>,
    changed: Condvar,
}

impl AckWindow {
    pub fn new(cid: u64) -> Self {
        Self {
            cid,
            state: Mutex::new(WindowState::default()),
            changed: Condvar::new(),
        }
    }

    /// Waits until `deadline` for an acknowledgement or an interest change.
    pub fn wait(&self, deadline: Instant) -> Wake {
        let mut state = self.state.lock();
        loop {
            if state.acks > 0 {
                return Wake::Acks(std::mem::take(&mut state.acks));
            }
            if std::mem::take(&mut state.interest_changed) {
                return Wake::Interest;
            }
            if self.changed.wait_until(&mut state, deadline).timed_out() {
                return Wake::Timeout;
            }
        }
    }
}

impl Sink for AckWindow {
    fn cid(&self) -> u64 {
        self.cid
    }

    fn deliver(&self, _msg: Delivery) -> SinkAccept {
        self.state.lock().acks += 1;
        self.changed.notify_one();
        SinkAccept::Accepted
    }
}

impl InterestListener for AckWindow {
    fn interest_changed(&self, _: &str, _: &[u8], _: Option<&[u8]>, _: InterestChange) {
        self.state.lock().interest_changed = true;
        self.changed.notify_one();
    }
}

#[derive(Default)]
struct Queued {
    chunks: VecDeque<Delivery>,
    bytes: usize,
}

impl Queued {
    fn is_full(&self) -> bool {
        self.chunks.len() >= CHUNKS_QUEUED_MARK || self.bytes >= CHUNK_BYTES_QUEUED_MARK
    }
}

/// A restore's incoming chunks.
pub struct ChunkQueue {
    cid: u64,
    queued: Mutex<Queued>,
    arrived: Condvar,
    /// Wakes stalled publishers once the worker took a chunk.
    ready: Notify,
}

impl ChunkQueue {
    pub fn new(cid: u64) -> Self {
        Self {
            cid,
            queued: Mutex::new(Queued::default()),
            arrived: Condvar::new(),
            ready: Notify::new(),
        }
    }

    /// The next chunk, waiting at most `timeout` for one.
    pub fn next(&self, timeout: Duration) -> Option<Delivery> {
        let deadline = Instant::now() + timeout;
        let mut queued = self.queued.lock();
        loop {
            if let Some(chunk) = queued.chunks.pop_front() {
                queued.bytes = queued.bytes.saturating_sub(chunk.payload.len());
                drop(queued);
                self.ready.notify_waiters();
                return Some(chunk);
            }
            if self.arrived.wait_until(&mut queued, deadline).timed_out() {
                return None;
            }
        }
    }
}

impl Sink for ChunkQueue {
    fn cid(&self) -> u64 {
        self.cid
    }

    fn deliver(&self, msg: Delivery) -> SinkAccept {
        let full = {
            let mut queued = self.queued.lock();
            queued.bytes += msg.payload.len();
            queued.chunks.push_back(msg);
            queued.is_full()
        };
        self.arrived.notify_one();
        if full {
            SinkAccept::AcceptedStall
        } else {
            SinkAccept::Accepted
        }
    }

    fn until_ready(&self) -> ReadyFuture<'_> {
        Box::pin(crate::stall::until_not_full(&self.ready, || {
            self.queued.lock().is_full()
        }))
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn chunk(n: usize) -> Delivery {
        Delivery {
            subject: Bytes::from_static(b"x"),
            reply: Some(Bytes::from_static(b"r")),
            headers: None,
            payload: Bytes::from(vec![0; n]),
            sid: 1,
            origin: None,
        }
    }

    #[test]
    fn snapshot_chunk_queue_stalls_past_its_mark_and_never_drops() {
        let q = ChunkQueue::new(1);
        for i in 1..=CHUNKS_QUEUED_MARK {
            let accept = q.deliver(chunk(10));
            let stalled = i == CHUNKS_QUEUED_MARK;
            assert_eq!(accept == SinkAccept::AcceptedStall, stalled, "chunk {i}");
        }
        assert_eq!(q.deliver(chunk(10)), SinkAccept::AcceptedStall);
        for _ in 0..=CHUNKS_QUEUED_MARK {
            assert!(q.next(Duration::ZERO).is_some());
        }
        assert!(q.next(Duration::from_millis(1)).is_none());
    }

    #[test]
    fn snapshot_ack_window_counts_acks_and_interest() {
        let w = AckWindow::new(1);
        let soon = || Instant::now() + Duration::from_millis(1);
        assert_eq!(w.wait(soon()), Wake::Timeout);
        w.deliver(chunk(0));
        w.deliver(chunk(0));
        assert_eq!(w.wait(soon()), Wake::Acks(2));
        w.interest_changed("A", b"x", None, InterestChange::Gone);
        assert_eq!(w.wait(soon()), Wake::Interest);
    }
}
