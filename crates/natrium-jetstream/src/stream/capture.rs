//! A stream's capture of publishes: the in-process sink subscribed on the stream's subjects
//! and the queue it fills for the stream's ingest task.
//!
//! Overflow rule: never drop. Past `max_msgs` queued messages or `max_bytes` queued bytes the
//! sink still takes the message but answers `AcceptedStall`, so the publisher waits for
//! [`Sink::until_ready`] before reading more; the ingest task wakes it each time it takes a
//! batch. A publisher is thus held back by the store's speed, and nothing it sent is lost.
//!
//! A memory stream, or a file stream whose acks do not wait for a sync (`sync_interval`,
//! `persist_mode: async`), may store a message on the publisher's task instead
//! ([`InlineIngest`]): when nothing is queued and the stream is not busy, the message is
//! stored and acknowledged right away, which saves the hops to the ingest task and its
//! blocking thread (a sync publish's round trip). A file store's write then lands in the page
//! cache on that task, as Go's read loop stores a publish.

use std::collections::VecDeque;
use std::sync::{OnceLock, Weak};

use natrium_core::endpoint::{Delivery, ReadyFuture, Sink, SinkAccept};
use parking_lot::Mutex;
use tokio::sync::Notify;

/// Go's defaults for a stream's inbound queue (`max_buffered_msgs`, `max_buffered_size`).
pub const QUEUE_MSGS_DEFAULT: usize = 10_000;
pub const QUEUE_BYTES_DEFAULT: usize = 128 * 1024 * 1024;

/// Stores one message on the caller's task if that keeps the stream's order; `false` leaves
/// it to the queue.
pub trait InlineIngest: Send + Sync {
    fn try_inline(&self, msg: &Delivery) -> bool;
}

/// The queue between the capture sink and the ingest task.
pub struct IngestQueue {
    /// Set for owners that handle a message on the publisher's task when they can (streams,
    /// direct-get services).
    inline: OnceLock<Weak<dyn InlineIngest>>,
    queued: Mutex<Queued>,
    /// Wakes the ingest task (a permit is kept if it is busy, so no wake-up is lost).
    pub(crate) wake: Notify,
    /// Wakes stalled publishers once the task took a batch.
    ready: Notify,
    max_msgs: usize,
    max_bytes: usize,
    cid: u64,
}

#[derive(Default)]
struct Queued {
    msgs: VecDeque<Delivery>,
    bytes: usize,
}

impl IngestQueue {
    pub fn new(cid: u64, max_msgs: usize, max_bytes: usize) -> Self {
        Self {
            inline: OnceLock::new(),
            queued: Mutex::new(Queued::default()),
            wake: Notify::new(),
            ready: Notify::new(),
            max_msgs: max_msgs.max(1),
            max_bytes: max_bytes.max(1),
            cid,
        }
    }

    /// Lets `owner` store messages on the publisher's task when it can.
    pub fn set_inline(&self, owner: Weak<dyn InlineIngest>) {
        let _ = self.inline.set(owner);
    }

    /// Takes up to `max` queued messages, oldest first, and wakes stalled publishers.
    pub fn take(&self, max: usize, into: &mut Vec<Delivery>) {
        {
            let mut q = self.queued.lock();
            let q = &mut *q;
            let n = q.msgs.len().min(max);
            for msg in q.msgs.drain(..n) {
                q.bytes = q.bytes.saturating_sub(size_of(&msg));
                into.push(msg);
            }
        }
        self.ready.notify_waiters();
    }

    fn is_full(&self) -> bool {
        let q = self.queued.lock();
        q.msgs.len() >= self.max_msgs || q.bytes >= self.max_bytes
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        self.queued.lock().msgs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn size_of(msg: &Delivery) -> usize {
    msg.subject.len() + msg.headers.as_ref().map_or(0, bytes::Bytes::len) + msg.payload.len()
}

impl Sink for IngestQueue {
    fn cid(&self) -> u64 {
        self.cid
    }

    fn deliver(&self, msg: Delivery) -> SinkAccept {
        if let Some(owner) = self.inline.get().and_then(Weak::upgrade) {
            if owner.try_inline(&msg) {
                return SinkAccept::Accepted;
            }
        }
        let size = size_of(&msg);
        let (was_empty, full) = {
            let mut q = self.queued.lock();
            let was_empty = q.msgs.is_empty();
            q.msgs.push_back(msg);
            q.bytes += size;
            (
                was_empty,
                q.msgs.len() >= self.max_msgs || q.bytes >= self.max_bytes,
            )
        };
        if was_empty {
            self.wake.notify_one();
        }
        if full {
            SinkAccept::AcceptedStall
        } else {
            SinkAccept::Accepted
        }
    }

    fn until_ready(&self) -> ReadyFuture<'_> {
        Box::pin(crate::stall::until_not_full(&self.ready, || self.is_full()))
    }
}
