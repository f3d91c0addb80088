//! A connection's outbound buffer: publishers on any task append whole frames under a short
//! lock, and the connection's writer task swaps the buffer out and writes it in one syscall.
//!
//! Overflow policy: past the stall mark (3/4 of `max_pending`, as in Go, but at most
//! `OUTBOUND_STALL_BYTES_MAX` so that a merely busy subscriber does not hold tens of megabytes)
//! the publisher is told to wait for the writer; past `max_pending` the connection is a slow
//! consumer and is closed; protocol replies count toward it too. Pending bytes include
//! the batch the writer is currently writing, so a stuck socket is noticed.

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::limits::OUTBOUND_STALL_BYTES_MAX;

/// What happened to a frame handed to [`Outbound`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued; the writer needs a wake-up at the end of the batch.
    Queued,
    /// Queued, but the buffer is filling up: the publisher should wait for it to drain.
    QueuedStall,
    /// Not queued: this frame would push the connection over max_pending.
    SlowConsumer,
    /// Not queued: the connection is closing.
    Closed,
}

struct State {
    buf: Vec<u8>,
    /// Bytes the writer has taken and not finished writing.
    in_flight: usize,
    closed: bool,
    out_msgs: u64,
    out_bytes: u64,
}

pub struct Outbound {
    state: Mutex<State>,
    wake_writer: Notify,
    drained: Notify,
    max_pending: usize,
    stall_at: usize,
}

impl Outbound {
    pub fn new(max_pending: usize) -> Self {
        Self {
            state: Mutex::new(State {
                buf: Vec::new(),
                in_flight: 0,
                closed: false,
                out_msgs: 0,
                out_bytes: 0,
            }),
            wake_writer: Notify::new(),
            drained: Notify::new(),
            max_pending,
            stall_at: (max_pending / 4 * 3).min(OUTBOUND_STALL_BYTES_MAX),
        }
    }

    /// Appends one message frame made of `parts` (header line, payload, CRLF). `payload_len`
    /// counts toward the message statistics.
    pub fn enqueue_msg(&self, parts: &[&[u8]], payload_len: usize) -> Enqueued {
        let frame_len: usize = parts.iter().map(|p| p.len()).sum();
        let mut state = self.state.lock();
        if state.closed {
            return Enqueued::Closed;
        }
        let pending = state.buf.len() + state.in_flight;
        if pending.saturating_add(frame_len) > self.max_pending {
            return Enqueued::SlowConsumer;
        }
        for part in parts {
            state.buf.extend_from_slice(part);
        }
        state.out_msgs += 1;
        state.out_bytes += payload_len as u64;
        if pending + frame_len > self.stall_at {
            Enqueued::QueuedStall
        } else {
            Enqueued::Queued
        }
    }

    /// Appends a protocol line (PONG, +OK, -ERR, INFO, PING). It counts toward `max_pending`
    /// like a message: replies to a client that never reads are what a pipelining client
    /// makes the server hold (see `ClientHandle::send_proto`).
    pub fn enqueue_proto(&self, line: &[u8]) -> Enqueued {
        let mut state = self.state.lock();
        if state.closed {
            return Enqueued::Closed;
        }
        let pending = state.buf.len() + state.in_flight;
        if pending.saturating_add(line.len()) > self.max_pending {
            return Enqueued::SlowConsumer;
        }
        state.buf.extend_from_slice(line);
        Enqueued::Queued
    }

    /// Wakes the writer; cheap and idempotent, so callers may call it once per batch.
    pub fn flush(&self) {
        self.wake_writer.notify_one();
    }

    pub(crate) async fn wait_for_data(&self) {
        self.wake_writer.notified().await;
    }

    /// Waits until the writer finishes a write (used by stalled publishers, with a timeout).
    pub async fn wait_drained(&self) {
        self.drained.notified().await;
    }

    /// Swaps the queued bytes into `spare` (which must be empty) and marks them in flight.
    pub(crate) fn take(&self, spare: &mut Vec<u8>) {
        debug_assert!(spare.is_empty());
        let mut state = self.state.lock();
        std::mem::swap(&mut state.buf, spare);
        state.in_flight = spare.len();
    }

    /// The writer finished writing what it took.
    pub(crate) fn written(&self) {
        self.state.lock().in_flight = 0;
        self.drained.notify_waiters();
    }

    /// Stops accepting frames. Returns false if it was already closed.
    pub(crate) fn close(&self) -> bool {
        let mut state = self.state.lock();
        let was_open = !state.closed;
        state.closed = true;
        drop(state);
        self.wake_writer.notify_one();
        self.drained.notify_waiters();
        was_open
    }

    /// Drops whatever is still queued (a slow consumer is not flushed).
    pub(crate) fn discard(&self) {
        let mut state = self.state.lock();
        state.buf = Vec::new();
    }

    pub fn pending_bytes(&self) -> usize {
        let state = self.state.lock();
        state.buf.len() + state.in_flight
    }

    /// Messages and payload bytes queued to this connection so far.
    pub fn out_counts(&self) -> (u64, u64) {
        let state = self.state.lock();
        (state.out_msgs, state.out_bytes)
    }

    /// Resolves once the queued bytes are back under the stall mark (or the connection closed).
    pub async fn wait_below_stall_mark(&self) {
        loop {
            // Register for the wake-up before checking, so a write finishing in between is seen.
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let state = self.state.lock();
                if state.closed || state.buf.len() + state.in_flight <= self.stall_at {
                    return;
                }
            }
            drained.await;
        }
    }

    pub fn max_pending(&self) -> usize {
        self.max_pending
    }

    /// The capacity of the queue buffer (for tests of the writer's buffer policy).
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.state.lock().buf.capacity()
    }
}
