//! The duplicate window: message ids (`Nats-Msg-Id`) seen within the stream's
//! `duplicate_window`, with the sequence each was stored at. The stream layer owns one per
//! stream and rebuilds it after a restart from the messages since `now - window`
//! (`StreamStore::seq_from_time` then `load_next_msg`); the store itself parses no headers.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use foldhash::quality::RandomState;

use crate::limits::DEDUP_ENTRIES_MAX;

/// Message id → (sequence, time), bounded by a duration and by [`DEDUP_ENTRIES_MAX`].
#[derive(Debug)]
pub struct DedupWindow {
    window_ns: i64,
    /// Randomly seeded: ids come from publishers, who must not be able to aim collisions.
    ids: HashMap<Bytes, (u64, i64), RandomState>,
    /// Insertion order for expiry. An entry whose time no longer matches the map is stale
    /// (the id was removed and inserted again) and is skipped.
    order: VecDeque<(i64, Bytes)>,
}

impl DedupWindow {
    /// An empty window of `window` length.
    pub fn new(window: Duration) -> Self {
        DedupWindow {
            window_ns: i64::try_from(window.as_nanos()).unwrap_or(i64::MAX),
            ids: HashMap::default(),
            order: VecDeque::new(),
        }
    }

    /// The sequence a message with this id was stored at, if it is still in the window.
    pub fn check(&self, id: &[u8]) -> Option<u64> {
        self.ids.get(id).map(|(seq, _)| *seq)
    }

    /// Records an id stored at `seq` at time `timestamp_ns`. An id already present keeps its
    /// first sequence, as a duplicate would not have been stored.
    pub fn insert(&mut self, id: &[u8], seq: u64, timestamp_ns: i64) {
        if self.window_ns == 0 || self.ids.contains_key(id) {
            return;
        }
        if self.ids.len() >= DEDUP_ENTRIES_MAX {
            self.pop_oldest();
        }
        let key = Bytes::copy_from_slice(id);
        self.ids.insert(key.clone(), (seq, timestamp_ns));
        self.order.push_back((timestamp_ns, key));
    }

    /// Drops ids older than the window at `now_ns`.
    pub fn expire(&mut self, now_ns: i64) {
        let cutoff = now_ns.saturating_sub(self.window_ns);
        while self.order.front().is_some_and(|(ts, _)| *ts <= cutoff) {
            self.pop_oldest();
        }
    }

    /// Changes the window length; the next `expire` applies it.
    pub fn set_window(&mut self, window: Duration) {
        self.window_ns = i64::try_from(window.as_nanos()).unwrap_or(i64::MAX);
        if self.window_ns == 0 {
            self.clear();
        }
    }

    /// Ids held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no id is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Forgets every id (after a purge, for instance).
    pub fn clear(&mut self) {
        self.ids.clear();
        self.order.clear();
    }

    fn pop_oldest(&mut self) {
        while let Some((ts, key)) = self.order.pop_front() {
            if self.ids.get(&key).is_some_and(|(_, t)| *t == ts) {
                self.ids.remove(&key);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_dedup_window_expires_by_time() {
        let mut w = DedupWindow::new(Duration::from_nanos(100));
        w.insert(b"a", 1, 10);
        w.insert(b"b", 2, 50);
        w.insert(b"a", 3, 60);
        assert_eq!(w.check(b"a"), Some(1));
        w.expire(110);
        assert_eq!(w.check(b"a"), None);
        assert_eq!(w.check(b"b"), Some(2));
        w.expire(150);
        assert!(w.is_empty());
    }

    #[test]
    fn store_dedup_window_zero_keeps_nothing() {
        let mut w = DedupWindow::new(Duration::ZERO);
        w.insert(b"a", 1, 10);
        assert_eq!(w.check(b"a"), None);
    }
}
