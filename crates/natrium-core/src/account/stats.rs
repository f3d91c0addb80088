//! Per-account counters, as `/accstatz` reports them. Publishers fold their read batch in once
//! per batch (like the server-wide counters); deliveries made in another account's name are
//! added as they happen, which only cross-account traffic does.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::stats::BatchStats;

#[derive(Debug, Default)]
pub struct AccountStats {
    /// Messages published by the account's clients.
    pub in_msgs: AtomicU64,
    pub in_bytes: AtomicU64,
    /// Messages delivered on the account's behalf (matched in its index, or forwarded from
    /// its streams to importers).
    pub out_msgs: AtomicU64,
    pub out_bytes: AtomicU64,
    pub slow_consumers: AtomicU64,
    /// Clients logged in now.
    conns: AtomicUsize,
}

impl AccountStats {
    pub fn add_batch(&self, batch: &BatchStats) {
        if batch.in_msgs != 0 {
            self.in_msgs.fetch_add(batch.in_msgs, Ordering::Relaxed);
            self.in_bytes.fetch_add(batch.in_bytes, Ordering::Relaxed);
        }
        self.add_out(batch.out_msgs, batch.out_bytes);
    }

    pub fn add_out(&self, msgs: u64, bytes: u64) {
        if msgs != 0 {
            self.out_msgs.fetch_add(msgs, Ordering::Relaxed);
            self.out_bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    pub fn conns(&self) -> usize {
        self.conns.load(Ordering::Relaxed)
    }

    /// Counts a client in unless that would pass `max` (negative: unlimited).
    pub fn try_add_conn(&self, max: i64) -> bool {
        let before = self.conns.fetch_add(1, Ordering::Relaxed);
        if max >= 0 && i64::try_from(before).unwrap_or(i64::MAX) >= max {
            self.conns.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    pub fn remove_conn(&self) {
        let _ = self
            .conns
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    pub fn load(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn account_stats_connection_limit() {
        let s = AccountStats::default();
        assert!(s.try_add_conn(2));
        assert!(s.try_add_conn(2));
        assert!(!s.try_add_conn(2));
        assert_eq!(s.conns(), 2);
        s.remove_conn();
        assert!(s.try_add_conn(2));
        assert!(s.try_add_conn(-1));
        s.remove_conn();
        s.remove_conn();
        s.remove_conn();
        s.remove_conn();
        assert_eq!(s.conns(), 0);
    }
}
