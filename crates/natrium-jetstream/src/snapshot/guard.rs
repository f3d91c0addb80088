//! The number of snapshots and restores running at once, capped at [`TRANSFERS_MAX`]: each
//! holds a thread and up to a window of buffers, and a client may ask for many. Go has no
//! cap; past ours a request is refused with Go's snapshot or restore error.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Transfers (snapshots and restores together) a server runs at once.
pub const TRANSFERS_MAX: usize = 64;

/// One running transfer; dropping it frees its place.
pub struct TransferGuard {
    count: Arc<AtomicUsize>,
}

impl TransferGuard {
    /// A place among `count`'s, if one is free.
    pub fn try_new(count: &Arc<AtomicUsize>) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < TRANSFERS_MAX).then_some(n + 1)
            })
            .ok()?;
        Some(Self {
            count: Arc::clone(count),
        })
    }
}

impl Drop for TransferGuard {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_transfers_are_capped() {
        let count = Arc::new(AtomicUsize::new(0));
        let held: Vec<_> = (0..TRANSFERS_MAX)
            .map(|_| TransferGuard::try_new(&count).unwrap())
            .collect();
        assert!(TransferGuard::try_new(&count).is_none());
        drop(held);
        assert_eq!(count.load(Ordering::Acquire), 0);
        assert!(TransferGuard::try_new(&count).is_some());
    }
}
