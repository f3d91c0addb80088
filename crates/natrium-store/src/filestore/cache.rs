//! The record cache: bytes of the stream's blocks kept in memory so that loading a message
//! usually reads nothing and allocates nothing (its headers and payload are views of the
//! cached bytes). Two kinds of segment: records this process wrote (staged in one buffer and
//! split off it, so a run of stores shares one allocation per `STAGING_BYTES`), and windows
//! of `WINDOW_BYTES` read on a miss (a decoded frame, for a sealed block), so a reader going
//! through a block reads it once.
//!
//! Bounded: at most `FileStoreOptions::cache_bytes` across the store's blocks, the oldest
//! windows and frames dropped first; written records are kept one by one only for the window
//! of the tail being written (at most `WINDOW_BYTES` of them), and leave as it moves on; `StreamStore::release_caches` drops all of it (the engine calls
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
    blocks: HashMap<u32, BlockSegments, foldhash::fast::RandomState>,
    /// Windows and frames in the order they came, for eviction (entries of dropped blocks
    /// are removed with them).
    order: VecDeque<(u32, Key)>,
    /// The records this process wrote in the window of the tail being written: the block,
    /// and (offset, record) by offset.
    written: Option<(u32, VecDeque<(u64, Bytes)>)>,
    bytes: u64,
}

/// One block's segments. A plain block's windows are found by index (offset / window size),
/// so most loads are one step; a sealed block's decoded frames by the frame's plain offset.
#[derive(Default)]
struct BlockSegments {
    windows: Vec<Option<Window>>,
    frames: BTreeMap<u64, Bytes>,
}

/// A window read from a plain block, and the span of it (offsets within the window) whose
/// records were checked against their CRCs when it was read.
struct Window {
    bytes: Bytes,
    verified: std::ops::Range<usize>,
}

/// Which segment of a block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Window(usize),
    Frame(u64),
}

/// What a written record's entry costs beyond its bytes (offset and handle), counted against
/// the budget.
const WRITTEN_ENTRY_BYTES: u64 = 40;

impl StoreCache {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Adds the window read at `start` (a multiple of [`WINDOW_BYTES`]) of plain block `block`,
    /// whose records in `verified` passed their CRCs.
    pub fn insert_window(
        &mut self,
        block: u32,
        start: u64,
        window: Bytes,
        verified: std::ops::Range<usize>,
        budget: u64,
    ) {
        let Ok(at) = usize::try_from(start / WINDOW_BYTES) else {
            return;
        };
        let len = window.len() as u64;
        if len > budget {
            return;
        }
        let windows = &mut self.blocks.entry(block).or_default().windows;
        if windows.len() <= at {
            windows.resize_with(at + 1, || None);
        }
        let Some(slot) = windows.get_mut(at) else {
            return;
        };
        let window = Window {
            bytes: window,
            verified,
        };
        match slot.replace(window) {
            Some(old) => self.bytes -= old.bytes.len() as u64,
            None => self.order.push_back((block, Key::Window(at))),
        }
        self.bytes += len;
        self.evict(budget);
    }

    /// Adds the record this process wrote at `loc`. Only the window being written keeps its
    /// records one by one: an earlier window (or an older tail) is complete on disk, and a
    /// load there reads it whole once, then finds any record of it in one step.
    pub fn insert_written(&mut self, loc: Loc, record: Bytes, budget: u64) {
        let cost = record.len() as u64 + WRITTEN_ENTRY_BYTES;
        if cost > budget {
            return;
        }
        let window = loc.offset() / WINDOW_BYTES;
        let (block, written) = self
            .written
            .get_or_insert_with(|| (loc.block, VecDeque::new()));
        let stale = |offset: u64| offset / WINDOW_BYTES < window || offset >= loc.offset();
        if *block != loc.block || written.back().is_some_and(|(offset, _)| stale(*offset)) {
            // Another tail, or offsets not growing (a rewritten block): start over.
            *block = loc.block;
            self.bytes -= written_bytes(written);
            written.clear();
        }
        while let Some((_, old)) = written.front().filter(|(offset, _)| stale(*offset)) {
            self.bytes -= old.len() as u64 + WRITTEN_ENTRY_BYTES;
            written.pop_front();
        }
        written.push_back((loc.offset(), record));
        self.bytes += cost;
        self.evict(budget);
    }

    /// Adds the decoded frame of sealed block `block` that starts at plain offset `start`.
    pub fn insert_frame(&mut self, block: u32, start: u64, frame: Bytes, budget: u64) {
        let len = frame.len() as u64;
        if len > budget {
            return;
        }
        let frames = &mut self.blocks.entry(block).or_default().frames;
        match frames.insert(start, frame) {
            Some(old) => self.bytes -= old.len() as u64,
            None => self.order.push_back((block, Key::Frame(start))),
        }
        self.bytes += len;
        self.evict(budget);
    }

    /// Drops the oldest segments while over `budget`.
    fn evict(&mut self, budget: u64) {
        while self.bytes > budget {
            let Some((block, key)) = self.order.pop_front() else {
                break;
            };
            self.remove(block, key);
        }
    }

    fn remove(&mut self, block: u32, key: Key) {
        let Some(segments) = self.blocks.get_mut(&block) else {
            return;
        };
        let freed = match key {
            Key::Window(at) => segments
                .windows
                .get_mut(at)
                .and_then(Option::take)
                .map_or(0, |w| w.bytes.len() as u64),
            Key::Frame(start) => segments.frames.remove(&start).map_or(0, |f| f.len() as u64),
        };
        self.bytes -= freed;
    }

    /// The record at `loc`, if a segment holds all of it, and whether its bytes were checked
    /// already (records this process wrote, decoded frames, the verified span of a window).
    pub fn get(&self, loc: Loc) -> Option<(Bytes, bool)> {
        let (segment, at, checked) = self.find(loc)?;
        Some((segment.slice(at), checked))
    }

    /// The segment holding the record at `loc`, the record's span in it, and whether its
    /// bytes were checked already. Borrowed, so a load slices only what it returns.
    pub fn find(&self, loc: Loc) -> Option<(&Bytes, std::ops::Range<usize>, bool)> {
        let Some(segments) = self.blocks.get(&loc.block) else {
            return self
                .written_record(loc)
                .map(|record| (record, 0..record.len(), true));
        };
        let len = loc.len as usize;
        let window = usize::try_from(loc.offset() / WINDOW_BYTES).ok();
        if let Some(Some(w)) = window.and_then(|at| segments.windows.get(at)) {
            let from = usize::try_from(loc.offset() % WINDOW_BYTES).ok()?;
            if from + len <= w.bytes.len() {
                let checked = w.verified.start <= from && from + len <= w.verified.end;
                return Some((&w.bytes, from..from + len, checked));
            }
        }
        if let Some(record) = self.written_record(loc) {
            return Some((record, 0..record.len(), true));
        }
        let (start, frame) = segments.frames.range(..=loc.offset()).next_back()?;
        let from = usize::try_from(loc.offset() - start).ok()?;
        (from + len <= frame.len()).then_some((frame, from..from + len, true))
    }

    /// The record this process wrote at `loc`, if still kept one by one.
    fn written_record(&self, loc: Loc) -> Option<&Bytes> {
        let (block, written) = self.written.as_ref().filter(|(b, _)| *b == loc.block)?;
        debug_assert_eq!(*block, loc.block);
        let at = written
            .binary_search_by_key(&loc.offset(), |(offset, _)| *offset)
            .ok()?;
        let (_, record) = written.get(at)?;
        (record.len() == loc.len as usize).then_some(record)
    }

    /// Drops block `block`'s segments.
    pub fn drop_block(&mut self, block: u32) {
        if let Some((_, written)) = self.written.take_if(|(b, _)| *b == block) {
            self.bytes -= written_bytes(&written);
        }
        if let Some(segments) = self.blocks.remove(&block) {
            let windows: u64 = segments
                .windows
                .iter()
                .flatten()
                .map(|w| w.bytes.len() as u64)
                .sum();
            let frames: u64 = segments.frames.values().map(|f| f.len() as u64).sum();
            self.bytes -= windows + frames;
            self.order.retain(|(b, _)| *b != block);
        }
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        *self = StoreCache::default();
    }
}

/// What written records count against the budget.
fn written_bytes(written: &VecDeque<(u64, Bytes)>) -> u64 {
    written
        .iter()
        .map(|(_, r)| r.len() as u64 + WRITTEN_ENTRY_BYTES)
        .sum()
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
        Loc::new(block, offset, len).unwrap()
    }

    #[test]
    fn store_cache_finds_slices_and_evicts_oldest() {
        let mut staging = Staging::default();
        let mut cache = StoreCache::default();
        for i in 0..10u64 {
            let at = loc(1, 32 + i * 10, 10);
            cache.insert_written(at, staging.copy(&[i as u8; 10]), 10_000);
        }
        assert_eq!(cache.bytes(), 500);
        cache.insert_window(2, 0, Bytes::from(vec![9u8; 100]), 30..60, 10_000);
        cache.insert_frame(3, 32, Bytes::from(vec![7u8; 100]), 10_000);
        assert_eq!(
            cache.get(loc(1, 52, 10)).unwrap(),
            (Bytes::from(vec![2u8; 10]), true)
        );
        assert!(
            cache.get(loc(1, 52, 11)).is_none(),
            "not the record written there"
        );
        assert_eq!(
            cache.get(loc(2, 40, 20)).unwrap(),
            (Bytes::from(vec![9u8; 20]), true)
        );
        assert_eq!(
            cache.get(loc(2, 50, 20)).unwrap(),
            (Bytes::from(vec![9u8; 20]), false)
        );
        assert!(cache.get(loc(2, 90, 20)).is_none(), "runs past the window");
        assert_eq!(
            cache.get(loc(3, 60, 20)).unwrap(),
            (Bytes::from(vec![7u8; 20]), true)
        );
        assert!(cache.get(loc(4, 40, 20)).is_none());
        assert_eq!(cache.bytes(), 700);
        cache.insert_window(5, WINDOW_BYTES, Bytes::from(vec![1u8; 150]), 0..0, 750);
        assert_eq!(cache.bytes(), 750, "the oldest window went first");
        assert!(cache.get(loc(2, 40, 20)).is_none());
        assert!(cache.get(loc(3, 60, 20)).is_some());
        assert!(
            cache.get(loc(1, 32, 10)).is_some(),
            "written records are not evicted"
        );
        assert_eq!(
            cache.get(loc(5, WINDOW_BYTES + 5, 5)).unwrap().0.as_ref(),
            &[1u8; 5]
        );
        // Writing into the next window lets the previous window's records go.
        let next = loc(1, WINDOW_BYTES + 32, 10);
        cache.insert_written(next, staging.copy(&[42u8; 10]), 10_000);
        assert!(cache.get(loc(1, 32, 10)).is_none());
        assert!(cache.get(next).is_some());
        assert_eq!(cache.bytes(), 300);
        // A new tail lets the old tail's records go.
        cache.insert_written(loc(6, 32, 10), staging.copy(&[6u8; 10]), 10_000);
        assert!(cache.get(next).is_none());
        assert_eq!(cache.bytes(), 300);
        cache.drop_block(6);
        assert_eq!(cache.bytes(), 250);
        cache.clear();
        assert_eq!(cache.bytes(), 0);
    }
}
