//! Size limits of the subscription index, each with the Go default it mirrors and why.
//!
//! Go's match cache is a map capped at 1,024 entries that, once over, deletes arbitrary entries
//! until 256 remain. We keep the same 1,024-entry ceiling but organise it as a set-associative
//! cache: a subject hashes to one set of [`CACHE_WAYS_PER_SET`] slots and a new entry evicts the
//! least recently used slot of its set. The bound therefore holds at every instant (no sweep,
//! no moment over the cap), eviction is O(1) and a hot subject is never swept out by a burst of
//! cold ones. Overflow action: evict the set's least recently used entry.

/// Mutex-guarded shards of the match cache; a subject's shard comes from its hash, so matches
/// on different subjects rarely contend. Power of two.
pub const CACHE_SHARDS: usize = 16;

/// Sets per shard. Power of two.
pub const CACHE_SETS_PER_SHARD: usize = 16;

/// Slots per set: the associativity. Four ways keeps conflict misses rare for working sets
/// well under the cap while a probe still touches at most two cache lines.
pub const CACHE_WAYS_PER_SET: usize = 4;

/// Slots in one shard.
pub const CACHE_SLOTS_PER_SHARD: usize = CACHE_SETS_PER_SHARD * CACHE_WAYS_PER_SET;

/// Most match results cached at once: Go's `slCacheMax` (1,024).
pub const CACHE_ENTRIES_MAX: usize = CACHE_SHARDS * CACHE_SLOTS_PER_SHARD;

/// A batch removal with more wildcard subscriptions than this clears the whole cache instead of
/// testing every cached subject against every removed pattern.
pub const BATCH_WILDCARDS_BEFORE_CLEAR: usize = 16;

/// A node's subscriber list or a level's child map is shrunk once it uses less than
/// 1/`SHRINK_RATIO` of its capacity (and the capacity is above [`SHRINK_MIN_CAPACITY`]), so
/// memory returns after a burst of subscriptions goes away.
pub const SHRINK_RATIO: usize = 4;

/// Subscribers on one subject (or in one queue group on it) from which a position index is
/// kept beside the vector, making unsubscribe O(1); it is dropped again below half this many.
/// Go keeps every node's subscribers in maps; below this size a vector scan is as fast.
pub const MEMBERS_INDEX_FROM: usize = 32;

/// Capacity under which a collection is never shrunk: not worth the reallocation.
pub const SHRINK_MIN_CAPACITY: usize = 16;

const _: () = assert!(CACHE_SHARDS.is_power_of_two());
const _: () = assert!(CACHE_SETS_PER_SHARD.is_power_of_two());
const _: () = assert!(CACHE_WAYS_PER_SET >= 1);
const _: () = assert!(CACHE_ENTRIES_MAX == 1024);
const _: () = assert!(SHRINK_RATIO >= 2);
const _: () = assert!(MEMBERS_INDEX_FROM >= 4);
