//! The bounded match cache: subject -> shared `MatchResult`, set-associative, sharded.
//!
//! A subject's 64-bit hash picks a shard (high bits) and a set within it (low bits). A set holds
//! [`CACHE_WAYS_PER_SET`] slots kept in recency order with the occupied ones first, so a hit
//! moves its slot to the front and a new entry pushes the last (least recently used) one out.
//! The bound is structural: there are exactly [`CACHE_ENTRIES_MAX`] slots.
//!
//! Each shard is one `parking_lot::Mutex`, held only for a probe of one set (or, for a wildcard
//! invalidation, one pass over the shard). Hit and lookup counters live inside the shard so the
//! hit path touches no extra atomic. Results evicted by a store are dropped after the lock is
//! released.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::limits::{
    CACHE_ENTRIES_MAX, CACHE_SETS_PER_SHARD, CACHE_SHARDS, CACHE_SLOTS_PER_SHARD,
    CACHE_WAYS_PER_SET,
};
use crate::matching::subject_matches;
use crate::result::MatchResult;

struct Slot<T> {
    hash: u64,
    subject: Box<[u8]>,
    result: Arc<MatchResult<T>>,
}

struct Shard<T> {
    slots: [Option<Slot<T>>; CACHE_SLOTS_PER_SHARD],
    /// Occupied slots.
    len: usize,
    /// Lookups and hits, for `/subsz`.
    lookups: u64,
    hits: u64,
}

/// Keeps each shard's lock on its own cache lines, so two cores probing different shards do
/// not bounce one line between them.
#[repr(align(128))]
struct Padded<U>(U);

/// The counters `Sublist::stats` needs from the cache.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CacheStats {
    pub(crate) entries: u64,
    pub(crate) lookups: u64,
    pub(crate) hits: u64,
    pub(crate) max_fanout: u64,
    pub(crate) total_fanout: u64,
}

pub(crate) struct MatchCache<T> {
    shards: Box<[Padded<Mutex<Shard<T>>>]>,
}

/// The slots of the set `hash` maps to.
fn set_of<T>(slots: &mut [Option<Slot<T>>], hash: u64) -> Option<&mut [Option<Slot<T>>]> {
    let start = (hash as usize & (CACHE_SETS_PER_SHARD - 1)) * CACHE_WAYS_PER_SET;
    slots.get_mut(start..start + CACHE_WAYS_PER_SET)
}

/// The way holding `subject` in `set`, if any.
fn find<T>(set: &[Option<Slot<T>>], hash: u64, subject: &[u8]) -> Option<usize> {
    set.iter()
        .map_while(Option::as_ref)
        .position(|s| s.hash == hash && *s.subject == *subject)
}

/// Drops the slots of `set` for which `evict` holds, keeping the others in order at the front.
/// Returns how many were dropped.
fn retain_set<T>(set: &mut [Option<Slot<T>>], mut evict: impl FnMut(&Slot<T>) -> bool) -> usize {
    let mut kept = 0;
    let mut dropped = 0;
    for read in 0..set.len() {
        let Some(slot) = set.get_mut(read) else { break };
        match slot {
            None => break,
            Some(s) if evict(s) => {
                *slot = None;
                dropped += 1;
            }
            Some(_) => {
                set.swap(kept, read);
                kept += 1;
            }
        }
    }
    dropped
}

impl<T> MatchCache<T> {
    pub(crate) fn new() -> Self {
        let shards = (0..CACHE_SHARDS)
            .map(|_| {
                Padded(Mutex::new(Shard {
                    slots: std::array::from_fn(|_| None),
                    len: 0,
                    lookups: 0,
                    hits: 0,
                }))
            })
            .collect();
        Self { shards }
    }

    fn shard(&self, hash: u64) -> Option<&Mutex<Shard<T>>> {
        self.shards
            .get((hash >> 40) as usize & (CACHE_SHARDS - 1))
            .map(|p| &p.0)
    }

    /// The cached result for `subject`, counting the lookup. No allocation.
    #[inline]
    pub(crate) fn lookup(&self, hash: u64, subject: &[u8]) -> Option<Arc<MatchResult<T>>> {
        let mut guard = self.shard(hash)?.lock();
        let shard = &mut *guard;
        shard.lookups += 1;
        let set = set_of(&mut shard.slots, hash)?;
        let way = find(set, hash, subject)?;
        if way > 0 {
            set.get_mut(..=way)?.rotate_right(1);
        }
        let result = Arc::clone(&set.first()?.as_ref()?.result);
        shard.hits += 1;
        Some(result)
    }

    /// Caches `result` for `subject`, evicting the set's least recently used entry if full.
    /// The caller must hold the trie lock (shared is enough) so that `result` cannot be older
    /// than the last invalidation.
    pub(crate) fn store(&self, hash: u64, subject: &[u8], result: Arc<MatchResult<T>>) {
        let Some(shard) = self.shard(hash) else {
            return;
        };
        let evicted = {
            let mut guard = shard.lock();
            let shard = &mut *guard;
            let Some(set) = set_of(&mut shard.slots, hash) else {
                return;
            };
            if let Some(way) = find(set, hash, subject) {
                // A concurrent miss stored first. Its entry is still current: any change to
                // the trie since then would have evicted it.
                if let Some(recent) = set.get_mut(..=way) {
                    recent.rotate_right(1);
                }
                return;
            }
            set.rotate_right(1);
            let new = Slot {
                hash,
                subject: Box::from(subject),
                result,
            };
            let evicted = set.first_mut().and_then(|s| s.replace(new));
            if evicted.is_none() {
                shard.len += 1;
            }
            evicted
        };
        drop(evicted);
    }

    /// Forgets the entry for the literal `subject`, if cached.
    pub(crate) fn evict_literal(&self, hash: u64, subject: &[u8]) {
        let Some(shard) = self.shard(hash) else {
            return;
        };
        let mut guard = shard.lock();
        let shard = &mut *guard;
        let Some(set) = set_of(&mut shard.slots, hash) else {
            return;
        };
        shard.len -= retain_set(set, |s| s.hash == hash && *s.subject == *subject);
    }

    /// Forgets every entry whose subject `evict` selects; one pass over all slots.
    pub(crate) fn evict_where(&self, mut evict: impl FnMut(&[u8]) -> bool) {
        for shard in &self.shards {
            let mut guard = shard.0.lock();
            let shard = &mut *guard;
            let mut dropped = 0;
            for set in shard.slots.chunks_mut(CACHE_WAYS_PER_SET) {
                dropped += retain_set(set, |s| evict(&s.subject));
            }
            shard.len -= dropped;
        }
    }

    /// Forgets every entry a subscription on the wildcard `pattern` could change.
    pub(crate) fn evict_matching(&self, pattern: &[u8]) {
        self.evict_where(|subject| subject_matches(pattern, subject));
    }

    /// Counters and fanout figures over the cached results.
    pub(crate) fn stats(&self) -> CacheStats {
        let mut out = CacheStats::default();
        for shard in &self.shards {
            let shard = shard.0.lock();
            out.entries += shard.len as u64;
            out.lookups += shard.lookups;
            out.hits += shard.hits;
            for slot in shard.slots.iter().flatten() {
                let fanout = slot.result.fanout() as u64;
                out.total_fanout += fanout;
                out.max_fanout = out.max_fanout.max(fanout);
            }
        }
        debug_assert!(out.entries <= CACHE_ENTRIES_MAX as u64);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(n: u32) -> Arc<MatchResult<u32>> {
        Arc::new(MatchResult {
            plain: vec![n],
            queues: Vec::new(),
        })
    }

    #[test]
    fn cache_hit_miss_and_lru_within_a_set() {
        let cache = MatchCache::<u32>::new();
        // Same hash bits for shard and set, different subjects: all in one set.
        let h = 0x55;
        for i in 0..CACHE_WAYS_PER_SET as u32 {
            cache.store(h, format!("s{i}").as_bytes(), result(i));
        }
        assert_eq!(cache.lookup(h, b"s0").unwrap().plain, vec![0]);
        // s0 is now most recent; the next store evicts s1, the least recently used.
        cache.store(h, b"new", result(99));
        assert!(cache.lookup(h, b"s1").is_none());
        assert!(cache.lookup(h, b"s0").is_some());
        assert!(cache.lookup(h, b"new").is_some());
        let stats = cache.stats();
        assert_eq!(stats.entries, CACHE_WAYS_PER_SET as u64);
        assert_eq!(stats.lookups, 4);
        assert_eq!(stats.hits, 3);
    }

    #[test]
    fn cache_is_bounded() {
        let cache = MatchCache::<u32>::new();
        let b = crate::hash::SubjectHashBuilder::random();
        for i in 0..10_000u32 {
            let s = format!("subject.{i}");
            cache.store(b.hash_subject(s.as_bytes()), s.as_bytes(), result(i));
        }
        let stats = cache.stats();
        assert!(stats.entries <= CACHE_ENTRIES_MAX as u64);
        assert!(
            stats.entries > (CACHE_ENTRIES_MAX as u64) * 9 / 10,
            "{}",
            stats.entries
        );
    }

    #[test]
    fn cache_evictions_keep_sets_compact() {
        let cache = MatchCache::<u32>::new();
        let h = 7;
        for s in ["a.x", "b.x", "a.y", "c"] {
            cache.store(h, s.as_bytes(), result(0));
        }
        cache.evict_matching(b"a.*");
        assert!(cache.lookup(h, b"a.x").is_none());
        assert!(cache.lookup(h, b"b.x").is_some());
        assert!(cache.lookup(h, b"c").is_some());
        cache.evict_literal(h, b"c");
        assert!(cache.lookup(h, b"c").is_none());
        assert!(cache.lookup(h, b"b.x").is_some());
        assert_eq!(cache.stats().entries, 1);
        cache.evict_where(|_| true);
        assert_eq!(cache.stats().entries, 0);
    }
}
