//! The reply subjects a connection with `allow_responses` may publish to: one entry per
//! message with a reply subject delivered to it, used up after `max` responses or `expires`.
//!
//! Bounded by a capacity (see [`crate::limits::REPLY_PERMS_ENTRIES_MAX`]); when full, the
//! oldest entry is evicted. Entries leave in the order they arrived, so expiry pops them off
//! the front of an arrival queue. A refreshed or used-up entry leaves a stale item in that
//! queue (recognised by its sequence number); the queue is compacted when stale items make
//! it twice the capacity, so both structures stay bounded and every operation is amortised
//! O(1). Time is passed in, so the table is pure and testable.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use crate::permissions::ResponsePermission;

#[derive(Debug, Clone, Copy)]
struct Pending {
    /// When the request carrying this reply subject was delivered.
    at: Instant,
    /// Responses published so far.
    uses: u64,
    /// Matches the arrival-queue item that is this entry's current position.
    seq: u64,
}

#[derive(Debug)]
pub struct ReplyTable {
    perm: ResponsePermission,
    capacity: usize,
    entries: HashMap<Arc<[u8]>, Pending>,
    arrivals: VecDeque<(Arc<[u8]>, u64)>,
    next_seq: u64,
}

impl ReplyTable {
    /// An empty table; `capacity` is at least 1.
    #[must_use]
    pub fn new(perm: ResponsePermission, capacity: usize) -> Self {
        Self {
            perm,
            capacity: capacity.max(1),
            entries: HashMap::new(),
            arrivals: VecDeque::new(),
            next_seq: 0,
        }
    }

    /// Live entries (some may have expired but not been pruned yet).
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn expired(&self, p: &Pending, now: Instant) -> bool {
        self.perm
            .expires
            .is_some_and(|ttl| now.saturating_duration_since(p.at) > ttl)
    }

    /// Applies new limits (a reload) to the replies held and to come, as Go checks each
    /// response against the limits in force.
    pub fn set_permission(&mut self, perm: ResponsePermission) {
        self.perm = perm;
    }

    /// Allows responses on `reply`, for a message delivered `now`. A reply subject already
    /// held starts over (Go resets it the same way).
    pub fn record(&mut self, reply: &[u8], now: Instant) {
        self.prune(now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = if let Some((key, p)) = self.entries.get_key_value(reply) {
            let key = Arc::clone(key);
            debug_assert!(p.seq < seq);
            key
        } else {
            if self.entries.len() >= self.capacity {
                self.evict_oldest();
            }
            Arc::from(reply)
        };
        self.entries.insert(
            Arc::clone(&key),
            Pending {
                at: now,
                uses: 0,
                seq,
            },
        );
        self.arrivals.push_back((key, seq));
        if self.arrivals.len() > self.capacity.saturating_mul(2) {
            self.compact();
        }
        debug_assert!(self.entries.len() <= self.capacity);
    }

    /// Whether a response may be published to `subject` now; counts it if so.
    pub fn allow(&mut self, subject: &[u8], now: Instant) -> bool {
        let Some(p) = self.entries.get(subject).copied() else {
            return false;
        };
        if self.expired(&p, now) {
            self.entries.remove(subject);
            return false;
        }
        let uses = p.uses + 1;
        if self.perm.max_msgs.is_some_and(|max| uses >= max) {
            self.entries.remove(subject);
        } else if let Some(p) = self.entries.get_mut(subject) {
            p.uses = uses;
        }
        true
    }

    /// Whether the arrival-queue item `(key, seq)` is its entry's current position.
    fn is_current(&self, key: &[u8], seq: u64) -> bool {
        self.entries.get(key).is_some_and(|p| p.seq == seq)
    }

    /// Drops expired entries and stale items from the front of the arrival queue.
    fn prune(&mut self, now: Instant) {
        while let Some((key, seq)) = self.arrivals.front() {
            if let Some(p) = self.entries.get(&**key).filter(|p| p.seq == *seq) {
                if !self.expired(p, now) {
                    break;
                }
                self.entries.remove(&**key);
            }
            self.arrivals.pop_front();
        }
    }

    /// Removes the oldest live entry.
    fn evict_oldest(&mut self) {
        while let Some((key, seq)) = self.arrivals.pop_front() {
            if self.is_current(&key, seq) {
                self.entries.remove(&*key);
                return;
            }
        }
    }

    /// Drops the stale items of the arrival queue.
    fn compact(&mut self) {
        let mut arrivals = std::mem::take(&mut self.arrivals);
        arrivals.retain(|(key, seq)| self.is_current(key, *seq));
        self.arrivals = arrivals;
        debug_assert_eq!(self.arrivals.len(), self.entries.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn table(max: Option<u64>, expires: Option<Duration>, cap: usize) -> ReplyTable {
        ReplyTable::new(
            ResponsePermission {
                max_msgs: max,
                expires,
            },
            cap,
        )
    }

    #[test]
    fn auth_replies_default_one_response() {
        let t0 = Instant::now();
        let mut t = ReplyTable::new(ResponsePermission::default(), 8);
        assert!(!t.allow(b"_INBOX.a", t0));
        t.record(b"_INBOX.a", t0);
        assert!(t.allow(b"_INBOX.a", t0));
        assert!(!t.allow(b"_INBOX.a", t0));
        assert!(t.is_empty());
    }

    #[test]
    fn auth_replies_max_and_expiry() {
        let t0 = Instant::now();
        let mut t = table(Some(2), Some(Duration::from_secs(1)), 8);
        t.record(b"a", t0);
        assert!(t.allow(b"a", t0));
        assert!(t.allow(b"a", t0));
        assert!(!t.allow(b"a", t0));
        t.record(b"b", t0);
        // Exactly at the limit is still allowed (Go: expired when strictly later).
        assert!(t.allow(b"b", t0 + Duration::from_secs(1)));
        assert!(!t.allow(b"b", t0 + Duration::from_millis(1001)));
        // Re-delivery of the same reply subject starts it over.
        t.record(b"c", t0);
        t.record(b"c", t0 + Duration::from_secs(5));
        assert!(t.allow(b"c", t0 + Duration::from_secs(5)));
    }

    #[test]
    fn auth_replies_unlimited() {
        let t0 = Instant::now();
        let mut t = table(None, None, 8);
        t.record(b"a", t0);
        for i in 0..1000 {
            assert!(t.allow(b"a", t0 + Duration::from_secs(i * 3600)));
        }
    }

    #[test]
    fn auth_replies_bounded_evicts_oldest() {
        let t0 = Instant::now();
        let mut t = table(None, None, 4);
        for i in 0..100u32 {
            t.record(format!("r.{i}").as_bytes(), t0);
            assert!(t.len() <= 4);
            assert!(t.arrivals.len() <= 8);
        }
        assert!(!t.allow(b"r.95", t0));
        for i in 96..100 {
            assert!(t.allow(format!("r.{i}").as_bytes(), t0));
        }
    }

    #[test]
    fn auth_replies_refresh_and_use_keep_queue_bounded() {
        let t0 = Instant::now();
        let mut t = table(Some(1), Some(Duration::from_secs(60)), 4);
        for i in 0..10_000u32 {
            let key = format!("r.{}", i % 3);
            t.record(key.as_bytes(), t0);
            if i % 2 == 0 {
                assert!(t.allow(key.as_bytes(), t0));
            }
            assert!(t.arrivals.len() <= 8, "{}", t.arrivals.len());
            assert!(t.len() <= 4);
        }
    }

    #[test]
    fn auth_replies_expired_entries_pruned_on_record() {
        let t0 = Instant::now();
        let mut t = table(Some(1), Some(Duration::from_secs(1)), 1000);
        for i in 0..500u32 {
            t.record(format!("old.{i}").as_bytes(), t0);
        }
        t.record(b"new", t0 + Duration::from_secs(2));
        assert_eq!(t.len(), 1);
        assert_eq!(t.arrivals.len(), 1);
    }
}
