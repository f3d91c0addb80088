//! What a stream tells its consumer engine (`crate::consumer::engine`): that messages were
//! stored, so that requests waiting for them can be served, and which messages left the
//! stream one by one, so that consumers holding them unacknowledged let them go at once (Go's
//! `decStreamPending`). The stream holds only this, so the engine (which holds the stream)
//! makes no cycle.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;

/// Removed sequences kept for the engine at most. Overflow rule: past this the list is
/// dropped and marked overflowed, and the engine checks every pending message of every
/// consumer against the store instead (the same outcome, more work).
pub const REMOVED_MAX: usize = 4096;

/// Messages removed since the engine last looked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Removed {
    pub seqs: Vec<u64>,
    /// More were removed than `REMOVED_MAX`: `seqs` is incomplete.
    pub overflowed: bool,
}

/// The stream's side of the engine's wake-ups.
#[derive(Default)]
pub struct Signal {
    /// Messages were stored since the engine last looked.
    stored: AtomicBool,
    /// Consumers with waiting requests: the stream signals only when there are some.
    waiting: AtomicUsize,
    /// Wakes the engine's task (a permit is kept while it is busy).
    pub(crate) notify: Notify,
    /// Some consumer holds unacknowledged messages: only then are removals recorded.
    tracking: AtomicBool,
    removed: Mutex<Removed>,
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

    /// Called by the store (inside its call, so cheaply) for each message it removed alone.
    pub fn removed(&self, seq: u64) {
        if !self.tracking.load(Ordering::Acquire) {
            return;
        }
        let mut removed = self.removed.lock();
        if removed.overflowed {
            return;
        }
        if removed.seqs.len() >= REMOVED_MAX {
            removed.seqs = Vec::new();
            removed.overflowed = true;
        } else {
            removed.seqs.push(seq);
        }
        drop(removed);
        self.notify.notify_one();
    }

    /// What was removed since the last call, if anything.
    pub fn take_removed(&self) -> Option<Removed> {
        let mut removed = self.removed.lock();
        if removed.seqs.is_empty() && !removed.overflowed {
            return None;
        }
        Some(std::mem::take(&mut *removed))
    }

    /// Whether removals are worth recording (some consumer has messages pending).
    pub fn set_tracking(&self, tracking: bool) {
        self.tracking.store(tracking, Ordering::Release);
    }

    /// How many consumers have requests waiting.
    pub fn set_waiting(&self, consumers: usize) {
        self.waiting.store(consumers, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_signal_records_removals_only_while_tracking_and_bounded() {
        let signal = Signal::default();
        signal.removed(1);
        assert_eq!(
            signal.take_removed(),
            None,
            "nothing pending: nothing recorded"
        );
        signal.set_tracking(true);
        signal.removed(2);
        signal.removed(3);
        assert_eq!(
            signal.take_removed(),
            Some(Removed {
                seqs: vec![2, 3],
                overflowed: false
            })
        );
        assert_eq!(signal.take_removed(), None);
        for seq in 0..=REMOVED_MAX as u64 {
            signal.removed(seq);
        }
        let removed = signal.take_removed().unwrap();
        assert!(removed.overflowed && removed.seqs.is_empty());
    }
}
