//! The concurrent subscription index: a token trie behind one `RwLock`, plus the match cache.
//!
//! # Concurrency
//!
//! Locks: `inner` (a `parking_lot::RwLock` over the trie and its counters) and the cache's shard
//! mutexes. **Lock order: `inner` before any shard; at most one shard at a time; a shard lock is
//! never held while taking `inner`.**
//!
//! - A cache hit takes one shard lock and nothing else.
//! - A miss walks the trie under `inner` *shared* and stores its result in the cache *before*
//!   releasing `inner`. A writer needs `inner` exclusively, so no insert or remove can slip
//!   between the walk and the store: the classic race, where a result computed before an insert
//!   is written to the cache after the insert invalidated it, cannot happen.
//! - `insert`/`remove` change the trie, evict the affected cache entries (a literal subject: its
//!   one entry; a wildcard: every cached subject it matches) and then bump the generation, all
//!   under `inner` exclusive, before returning. So once a call returns, no match started later
//!   can see the old result, from the cache or the trie.
//!
//! # Generation
//!
//! [`Sublist::generation`] is bumped after the cache evictions, with release ordering. A caller
//! keeping its own cache reads the generation *before* calling [`Sublist::matches`] and tags
//! the result with it ([`Sublist::matches_with_generation`] does both): if it read `g`, every
//! change up to `g` had already been evicted, so the result is at least as new as `g`, and any
//! later change shows up as a different generation.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::cache::MatchCache;
use crate::error::SublistError;
use crate::hash::SubjectHashBuilder;
use crate::limits::BATCH_WILDCARDS_BEFORE_CLEAR;
use crate::matching::subject_matches;
use crate::result::MatchResult;
use crate::stats::SublistStats;
use crate::trie::Trie;
use crate::validate::{has_no_empty_token, is_literal};

/// How one insert or removal moved the interest in its exact subject and queue group (not in
/// the subjects its wildcards cover): what a listener forwarding interest elsewhere (a route,
/// a leafnode, a push consumer) acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterestChange {
    /// Others were already there (or, for an insert, the value already was).
    Unchanged,
    /// The first subscription on this subject (plain), or the first member of this queue group
    /// on it.
    Appeared,
    /// The last one went.
    Gone,
}

/// What `inner` guards: the trie and the counters that change only with it.
struct Inner<T> {
    trie: Trie<T>,
    inserts: u64,
    removes: u64,
}

/// Subscription index. `T` is the runtime's subscription handle (an `Arc`); equality
/// identifies it. All methods take `&self` and are safe to call from many threads.
pub struct Sublist<T: Clone + Eq + std::hash::Hash + Send + Sync> {
    inner: RwLock<Inner<T>>,
    /// `None` when built with `new(false)`.
    cache: Option<MatchCache<T>>,
    hasher: SubjectHashBuilder,
    generation: AtomicU64,
    /// Matches counted here only when there is no cache (the cache counts its own lookups).
    uncached_matches: AtomicU64,
    /// Shared by every empty answer, so a miss with no subscriber allocates no result.
    empty: Arc<MatchResult<T>>,
}

impl<T: Clone + Eq + std::hash::Hash + Send + Sync> Sublist<T> {
    /// An empty index; `cache_enabled` false disables the match cache (Go's
    /// `NewSublistNoCache`, used when `no_sublist_cache` is set).
    pub fn new(cache_enabled: bool) -> Self {
        let hasher = SubjectHashBuilder::random();
        Self {
            inner: RwLock::new(Inner {
                trie: Trie::new(hasher.clone()),
                inserts: 0,
                removes: 0,
            }),
            cache: cache_enabled.then(MatchCache::new),
            hasher,
            generation: AtomicU64::new(0),
            uncached_matches: AtomicU64::new(0),
            empty: Arc::new(MatchResult::empty()),
        }
    }

    /// Whether the match cache is on.
    pub fn cache_enabled(&self) -> bool {
        self.cache.is_some()
    }

    /// Adds `value` on `subject` (in group `queue`, if given). Inserting a value already
    /// present on the same subject and queue changes nothing and is not an error. Says whether
    /// interest in exactly this subject (and queue group) appeared with it.
    pub fn insert(
        &self,
        subject: &[u8],
        queue: Option<&[u8]>,
        value: T,
    ) -> Result<InterestChange, SublistError> {
        let mut inner = self.inner.write();
        let (added, first) = inner.trie.insert(subject, queue, value)?;
        if added {
            inner.inserts += 1;
            self.changed(&mut inner, subject);
        }
        Ok(if first {
            InterestChange::Appeared
        } else {
            InterestChange::Unchanged
        })
    }

    /// Removes `value` from `subject` and `queue`, pruning trie nodes left empty. Says whether
    /// interest in exactly this subject (and queue group) went with it.
    pub fn remove(
        &self,
        subject: &[u8],
        queue: Option<&[u8]>,
        value: &T,
    ) -> Result<InterestChange, SublistError> {
        let mut inner = self.inner.write();
        let last = inner.trie.remove(subject, queue, value)?;
        inner.removes += 1;
        self.changed(&mut inner, subject);
        Ok(if last {
            InterestChange::Gone
        } else {
            InterestChange::Unchanged
        })
    }

    /// Puts `new` in the place of `old` on `subject` and `queue` in one step: a match sees one
    /// or the other, never both or neither. Fails, changing nothing, when `old` is not there.
    pub fn replace(
        &self,
        subject: &[u8],
        queue: Option<&[u8]>,
        old: &T,
        new: T,
    ) -> Result<(), SublistError> {
        let mut inner = self.inner.write();
        inner.trie.remove(subject, queue, old)?;
        inner.trie.insert(subject, queue, new)?;
        self.changed(&mut inner, subject);
        Ok(())
    }

    /// Removes many subscriptions under one lock, as on connection close; entries that are not
    /// present are skipped. Returns how many were removed. Accepts any byte containers, e.g.
    /// `(Vec<u8>, Option<Vec<u8>>, T)` or `(&[u8], Option<&[u8]>, T)`.
    pub fn remove_batch<I, S, Q>(&self, items: I) -> usize
    where
        I: IntoIterator<Item = (S, Option<Q>, T)>,
        S: AsRef<[u8]>,
        Q: AsRef<[u8]>,
    {
        let mut inner = self.inner.write();
        let mut removed = 0;
        let mut wildcards: Vec<S> = Vec::new();
        for (subject, queue, value) in items {
            let bytes = subject.as_ref();
            if inner
                .trie
                .remove(bytes, queue.as_ref().map(AsRef::as_ref), &value)
                .is_err()
            {
                continue;
            }
            removed += 1;
            match &self.cache {
                Some(cache) if is_literal(bytes) => {
                    cache.evict_literal(self.hasher.hash_subject(bytes), bytes);
                }
                Some(_) => wildcards.push(subject),
                None => {}
            }
        }
        if removed == 0 {
            return 0;
        }
        inner.removes += removed as u64;
        if let Some(cache) = &self.cache {
            if wildcards.len() > BATCH_WILDCARDS_BEFORE_CLEAR {
                cache.evict_where(|_| true);
            } else if !wildcards.is_empty() {
                cache.evict_where(|s| wildcards.iter().any(|p| subject_matches(p.as_ref(), s)));
            }
        }
        self.generation.fetch_add(1, Ordering::Release);
        removed
    }

    /// Evicts what a change on `subject` affects, then bumps the generation. Taking the write
    /// guard's contents proves `inner` is held exclusively, which the cache protocol needs.
    fn changed(&self, _held: &mut Inner<T>, subject: &[u8]) {
        if let Some(cache) = &self.cache {
            if is_literal(subject) {
                cache.evict_literal(self.hasher.hash_subject(subject), subject);
            } else {
                cache.evict_matching(subject);
            }
        }
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Every subscription a message on the literal `subject` reaches. A cache hit is one hash,
    /// one shard lock and one `Arc` clone. A subject with an empty token matches nothing.
    #[inline]
    pub fn matches(&self, subject: &[u8]) -> Arc<MatchResult<T>> {
        let Some(cache) = &self.cache else {
            self.uncached_matches.fetch_add(1, Ordering::Relaxed);
            return self.walk(subject, None);
        };
        let hash = self.hasher.hash_subject(subject);
        if let Some(hit) = cache.lookup(hash, subject) {
            return hit;
        }
        self.walk(subject, Some((cache, hash)))
    }

    /// The miss path: walk the trie and, with a cache, store the result before unlocking.
    fn walk(&self, subject: &[u8], cache: Option<(&MatchCache<T>, u64)>) -> Arc<MatchResult<T>> {
        if !has_no_empty_token(subject) {
            return Arc::clone(&self.empty);
        }
        let inner = self.inner.read();
        let found = inner.trie.collect(subject);
        let result = if found.is_empty() {
            Arc::clone(&self.empty)
        } else {
            Arc::new(found)
        };
        if let Some((cache, hash)) = cache {
            cache.store(hash, subject, Arc::clone(&result));
        }
        drop(inner);
        result
    }

    /// [`Sublist::matches`] plus the generation the result is valid for (see the module doc):
    /// a per-connection cache may keep the result until [`Sublist::generation`] differs.
    pub fn matches_with_generation(&self, subject: &[u8]) -> (u64, Arc<MatchResult<T>>) {
        let generation = self.generation.load(Ordering::Acquire);
        (generation, self.matches(subject))
    }

    /// A number that changes whenever an insert or remove changes the index. Read it before
    /// matching when caching results outside the index.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Subscriptions in the index.
    pub fn count(&self) -> usize {
        self.inner.read().trie.subs
    }

    /// Trie nodes below the root: 0 when the index is empty. For tests and diagnostics.
    pub fn node_count(&self) -> usize {
        self.inner.read().trie.nodes
    }

    /// Walks the whole trie and checks its counters and structural invariants. Slow; for tests.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> bool {
        let inner = self.inner.read();
        let trie = &inner.trie;
        trie.recount() == (trie.nodes, trie.levels, trie.subs)
    }

    /// Counters as Go's `/subsz` reports them; fanout figures are taken over cached results.
    pub fn stats(&self) -> SublistStats {
        let (num_subs, num_inserts, num_removes) = {
            let inner = self.inner.read();
            (inner.trie.subs as u64, inner.inserts, inner.removes)
        };
        let mut stats = SublistStats {
            num_subs,
            num_inserts,
            num_removes,
            ..Default::default()
        };
        if let Some(cache) = &self.cache {
            let c = cache.stats();
            stats.num_cache = c.entries;
            stats.num_matches = c.lookups;
            stats.cache_hits = c.hits;
            stats.max_fanout = c.max_fanout;
            stats.total_fanout = c.total_fanout;
        } else {
            stats.num_matches = self.uncached_matches.load(Ordering::Relaxed);
        }
        stats.recompute_ratios();
        stats
    }

    /// Every subscription, in no particular order (for monitoring).
    pub fn all(&self) -> Vec<T> {
        let inner = self.inner.read();
        let mut out = Vec::with_capacity(inner.trie.subs);
        inner.trie.all(&mut out);
        out
    }
}

impl<T: Clone + Eq + std::hash::Hash + Send + Sync> Default for Sublist<T> {
    fn default() -> Self {
        Self::new(true)
    }
}

impl<T: Clone + Eq + std::hash::Hash + Send + Sync> fmt::Debug for Sublist<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sublist")
            .field("count", &self.count())
            .field("cache_enabled", &self.cache_enabled())
            .field("generation", &self.generation())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "sublist_tests.rs"]
mod tests;
