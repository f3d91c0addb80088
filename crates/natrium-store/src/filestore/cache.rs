//! The record cache: bytes of the stream's blocks kept in memory so that loading a message
//! usually reads nothing and allocates nothing (its headers and payload are views of the
//! cached bytes). Two kinds of segment: records this process wrote (staged in one buffer and
//! split off it, so a run of stores shares one allocation per `STAGING_BYTES`), and windows
//! of `WINDOW_BYTES` read on a miss (a decoded frame, for a sealed block), so a reader going
//! through a block reads it once.
//!
//! Bounded: at most `FileStoreOptions::cache_bytes` across the store's blocks, the oldest
//! segments dropped first; `StreamStore::release_caches` drops all of it (the engine calls
//! that for an idle stream). A block's segments are dropped when its bytes change on disk
//! (compaction, erase, sealing) or it is removed.

use std::collections::{BTreeMap, HashMap, VecDeque};

use bytes::{Bytes, BytesMut};

use super::block::Loc;

/// Capacity of the staging buffer that written records are split off.
const STAGING_BYTES: usize = 64 * 1024;

/// What a miss on a plain block reads around the record.
pub const WINDOW_BYTES: u64 = 64 * 1024;

/// Cached segments of every block of one store.
#[derive(Default)]
pub struct StoreCache {
    /// Block → segment offset → bytes.
    blocks: HashMap<u32, BTreeMap<u64, Bytes>>,
    /// Segments in the order they came, for eviction (entries of dropped blocks are removed
    /// with them).
    order: VecDeque<(u32, u64)>,
    bytes: u64,
}

impl StoreCache {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Adds the segment starting at `offset` of block `block`, then drops the oldest segments
    /// while over `budget`.
    pub fn insert(&mut self, block: u32, offset: u64, segment: Bytes, budget: u64) {
        let len = segment.len() as u64;
        if len > budget {
            return;
        }
        if let Some(old) = self
            .blocks
            .entry(block)
            .or_default()
            .insert(offset, segment)
        {
            self.bytes -= old.len() as u64;
        } else {
            self.order.push_back((block, offset));
        }
        self.bytes += len;
        while self.bytes > budget {
            let Some((block, offset)) = self.order.pop_front() else {
                break;
            };
            self.remove(block, offset);
        }
    }

    fn remove(&mut self, block: u32, offset: u64) {
        if let Some(segments) = self.blocks.get_mut(&block) {
            if let Some(old) = segments.remove(&offset) {
                self.bytes -= old.len() as u64;
            }
            if segments.is_empty() {
                self.blocks.remove(&block);
            }
        }
    }

    /// The record at `loc`, if a segment holds all of it.
    /// A segment holding a record starts less than `WINDOW_BYTES` before it (a written record
    /// starts at it, a window at the aligned offset below it, a frame holds at most that much
    /// before a record), so only those are looked at.
    pub fn get(&self, loc: Loc) -> Option<Bytes> {
        let segments = self.blocks.get(&loc.block)?;
        let lowest = loc.offset.saturating_sub(WINDOW_BYTES - 1);
        segments
            .range(lowest..=loc.offset)
            .rev()
            .find_map(|(start, segment)| {
                let from = usize::try_from(loc.offset - start).ok()?;
                let to = from.checked_add(loc.len as usize)?;
                (to <= segment.len()).then(|| segment.slice(from..to))
            })
    }

    /// Drops block `block`'s segments.
    pub fn drop_block(&mut self, block: u32) {
        if let Some(segments) = self.blocks.remove(&block) {
            self.bytes -= segments.values().map(|s| s.len() as u64).sum::<u64>();
            self.order.retain(|(b, _)| *b != block);
        }
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        *self = StoreCache::default();
    }
}

/// The buffer written records are copied into before they are cached.
#[derive(Default)]
pub struct Staging {
    buf: BytesMut,
}

impl Staging {
    /// A cached copy of `record`.
    pub fn copy(&mut self, record: &[u8]) -> Bytes {
        if self.buf.capacity() < record.len() {
            self.buf = BytesMut::with_capacity(STAGING_BYTES.max(record.len()));
        }
        self.buf.extend_from_slice(record);
        self.buf.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(block: u32, offset: u64, len: u32) -> Loc {
        Loc { block, offset, len }
    }

    #[test]
    fn store_cache_finds_slices_and_evicts_oldest() {
        let mut staging = Staging::default();
        let mut cache = StoreCache::default();
        for i in 0..10u64 {
            cache.insert(1, 32 + i * 10, staging.copy(&[i as u8; 10]), 1000);
        }
        cache.insert(2, 32, Bytes::from(vec![9u8; 100]), 1000);
        assert_eq!(cache.get(loc(1, 52, 10)).unwrap().as_ref(), &[2u8; 10]);
        assert!(cache.get(loc(1, 52, 11)).is_none(), "runs past its segment");
        assert_eq!(cache.get(loc(2, 40, 20)).unwrap().as_ref(), &[9u8; 20]);
        assert!(cache.get(loc(3, 40, 20)).is_none());
        assert_eq!(cache.bytes(), 200);
        cache.insert(3, 32, Bytes::from(vec![1u8; 150]), 300);
        assert_eq!(cache.bytes(), 300, "the five oldest went");
        assert!(cache.get(loc(1, 32, 10)).is_none());
        assert!(cache.get(loc(1, 122, 10)).is_some());
        cache.drop_block(2);
        assert_eq!(cache.bytes(), 200);
        assert!(cache.get(loc(2, 40, 20)).is_none());
        cache.clear();
        assert_eq!(cache.bytes(), 0);
    }
}
