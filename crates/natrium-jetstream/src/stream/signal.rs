//! What a stream tells its consumer engine (`crate::consumer::engine`): that messages were
//! stored, so that requests waiting for them can be served. The stream holds only this, so
//! the engine (which holds the stream) makes no cycle.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The stream's side of the engine's wake-ups.
#[derive(Default)]
pub struct Signal {
    /// Messages were stored since the engine last looked.
    stored: AtomicBool,
    /// Consumers with waiting requests: the stream signals only when there are some.
    waiting: AtomicUsize,
    /// Wakes the engine's task (a permit is kept while it is busy).
    pub(crate) notify: Notify,
}

impl Signal {
    /// Called by the stream after a group commit that stored messages.
    pub fn stored(&self) {
        if self.waiting.load(Ordering::Acquire) > 0 {
            self.stored.store(true, Ordering::Release);
            self.notify.notify_one();
        }
    }

    /// Whether messages were stored since the last call.
    pub fn take_stored(&self) -> bool {
        self.stored.swap(false, Ordering::AcqRel)
    }

    /// How many consumers have requests waiting.
    pub fn set_waiting(&self, consumers: usize) {
        self.waiting.store(consumers, Ordering::Release);
    }
}
