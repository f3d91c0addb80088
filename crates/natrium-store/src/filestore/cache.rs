//! The record cache: message records written by this process, kept in memory as they went to
//! disk, so loading a recent message (what consumers mostly ask for) is a lookup and a CRC
//! check, with no read and no allocation: the message's headers and payload are views of the
//! cached bytes. Records are staged in one buffer and split off it, so a run of stores shares
//! one allocation per `STAGING_BYTES`.
//!
//! Bounded: the store keeps at most `FileStoreOptions::cache_bytes` cached across its blocks,
//! dropping the oldest first, and drops it all on `StreamStore::release_caches` (the engine
//! calls that for an idle stream). A block's cache is dropped when its bytes change on disk
//! (compaction, erase).

use bytes::{Bytes, BytesMut};

use super::block::Loc;

/// Capacity of the staging buffer that cached records are split off.
const STAGING_BYTES: usize = 64 * 1024;

/// One block's cached records: (offset in the block, the bytes written there), by offset.
#[derive(Default)]
pub struct BlockCache {
    segments: Vec<(u64, Bytes)>,
    bytes: u64,
}

impl BlockCache {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Adds the record written at `offset`; offsets only grow within a block.
    pub fn push(&mut self, offset: u64, record: Bytes) {
        self.bytes += record.len() as u64;
        self.segments.push((offset, record));
    }

    /// The record at `loc`, if cached.
    pub fn get(&self, loc: Loc) -> Option<Bytes> {
        let at = self
            .segments
            .binary_search_by_key(&loc.offset, |(offset, _)| *offset)
            .ok()?;
        let (_, record) = self.segments.get(at)?;
        (record.len() == loc.len as usize).then(|| record.clone())
    }

    /// Drops the oldest records until at most `keep` bytes are held; returns the bytes freed.
    pub fn trim_to(&mut self, keep: u64) -> u64 {
        let mut freed = 0;
        let mut cut = 0;
        for (_, record) in &self.segments {
            if self.bytes - freed <= keep {
                break;
            }
            freed += record.len() as u64;
            cut += 1;
        }
        self.segments.drain(..cut);
        self.bytes -= freed;
        freed
    }

    /// Drops everything; returns the bytes freed.
    pub fn clear(&mut self) -> u64 {
        self.segments = Vec::new();
        std::mem::take(&mut self.bytes)
    }
}

/// The buffer records are copied into before they are cached.
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

    #[test]
    fn store_cache_finds_and_trims() {
        let mut staging = Staging::default();
        let mut cache = BlockCache::default();
        for i in 0..10u64 {
            cache.push(32 + i * 10, staging.copy(&[i as u8; 10]));
        }
        let loc = |offset, len| Loc {
            block: 1,
            offset,
            len,
        };
        assert_eq!(cache.get(loc(52, 10)).unwrap().as_ref(), &[2u8; 10]);
        assert!(cache.get(loc(52, 11)).is_none());
        assert!(cache.get(loc(53, 10)).is_none());
        assert_eq!(cache.trim_to(35), 70);
        assert!(cache.get(loc(52, 10)).is_none());
        assert!(cache.get(loc(122, 10)).is_some());
        assert_eq!(cache.clear(), 30);
        assert_eq!(cache.bytes(), 0);
    }
}
