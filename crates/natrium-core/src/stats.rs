//! Server-wide counters. Connections add to them once per read batch, not once per message, so
//! the hot path touches no shared cache line per message.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct ServerStats {
    pub in_msgs: AtomicU64,
    pub in_bytes: AtomicU64,
    pub out_msgs: AtomicU64,
    pub out_bytes: AtomicU64,
    pub slow_consumers: AtomicU64,
    pub slow_consumers_clients: AtomicU64,
    pub total_connections: AtomicU64,
    pub stale_connections: AtomicU64,
    /// Large frees so far (a purged or deleted stream): the binary's heap trimmer gives the
    /// memory back when this moves.
    pub heap_release_requests: AtomicU64,
}

/// Counts gathered while one read batch is processed, folded into [`ServerStats`] at its end.
#[derive(Debug, Default, Clone, Copy)]
pub struct BatchStats {
    pub in_msgs: u64,
    pub in_bytes: u64,
    pub out_msgs: u64,
    pub out_bytes: u64,
}

impl BatchStats {
    pub fn is_empty(&self) -> bool {
        self.in_msgs == 0 && self.out_msgs == 0
    }
}

impl ServerStats {
    pub fn add_batch(&self, batch: &BatchStats) {
        if batch.in_msgs != 0 {
            self.in_msgs.fetch_add(batch.in_msgs, Ordering::Relaxed);
            self.in_bytes.fetch_add(batch.in_bytes, Ordering::Relaxed);
        }
        if batch.out_msgs != 0 {
            self.out_msgs.fetch_add(batch.out_msgs, Ordering::Relaxed);
            self.out_bytes.fetch_add(batch.out_bytes, Ordering::Relaxed);
        }
    }

    pub fn load(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
