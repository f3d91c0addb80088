//! Compaction (`docs/store-format.md` §9): a sealed block whose dead records (removed
//! messages, tombstones that delete nothing any more) take at least half of it is rewritten
//! without them. Each run of dropped message records becomes one `Deleted` record, so their
//! sequences stay accounted for; a tombstone is kept only while its message record is still
//! on disk in another block; a `First` record only if it is the latest. Skips and truncates
//! stay. The new content replaces the old by the atomic write rule (temporary file, sync,
//! rename, directory sync); a crash leaves the old block or the new one, both whole.
//!
//! The rewrite takes the store's encryption setting: with keys, the new block has a fresh
//! data key (so no nonce of the old key is ever used again) and its message records are
//! sealed again at their new offsets, or framed with AEAD when the block is (or becomes)
//! sealed; the old block's sealed records are opened with its own key first.

use std::collections::BTreeMap;

use super::block::{self, Loc, FLAG_ENCRYPTED, HEADER_BYTES};
use super::block_key;
use super::record::{self, Decoded, Kind, Record, RECORD_BYTES_MIN};
use super::sealed;
use super::store::FileStore;
use crate::error::StoreError;
use crate::io::{read_exact_at, write_atomic, OpenMode};
use crate::seal::{DataKey, FrameIndex};

/// A rewrite's new content, before it is written.
struct Rewritten {
    /// The plain form: header, key record if encrypted, records.
    plain: Vec<u8>,
    data_start: u64,
    key: Option<DataKey>,
    /// Live messages and where their records now are.
    moved: Vec<(u64, Loc)>,
}

impl FileStore {
    /// Rewrites the first sealed block worth compacting, if any: at most one per call, so a
    /// sync pays for one block's rewrite at most. Called with every record synced. A failure
    /// leaves the old block (whole: the rename is the commit) and marks it to be left alone.
    pub(super) fn compact_one_block(&mut self) {
        let tail = self.blocks.keys().next_back().copied();
        let candidate = self.blocks.values().find(|b| {
            let records = b.plain_len.saturating_sub(b.data_start);
            Some(b.index) != tail
                && !b.keep_as_is
                && !self.scrub.pending(b.index)
                && b.dead_bytes > 0
                && b.dead_bytes * 2 >= records
        });
        let Some(index) = candidate.map(|b| b.index) else {
            return;
        };
        if self.rewrite_block(index, false).is_err() {
            if let Some(block) = self.blocks.get_mut(&index) {
                block.keep_as_is = true;
            }
        }
    }

    /// Rewrites block `index` without its dead message records, in frames if it is sealed
    /// or `seal` asks for it, encrypted when keys are configured, and moves the locations of
    /// the live ones.
    pub(super) fn rewrite_block(&mut self, index: u32, seal: bool) -> Result<(), StoreError> {
        // The old key leaves the block while the walk updates other blocks' accounting; it
        // goes back if the rewrite fails.
        let old_key = self.blocks.get_mut(&index).and_then(|b| b.key.take());
        let result = self.rewrite_with(index, seal, old_key.as_ref());
        if result.is_err() {
            if let Some(block) = self.blocks.get_mut(&index) {
                block.key = old_key;
            }
        }
        result
    }

    fn rewrite_with(
        &mut self,
        index: u32,
        seal: bool,
        old_key: Option<&DataKey>,
    ) -> Result<(), StoreError> {
        // An index describing the block as it is would no longer match it (§6).
        self.invalidate_index()?;
        let block = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "block" })?;
        let path = block.path.clone();
        let (old_start, framed) = (block.data_start, block.frames.is_some() || seal);
        let mut raw = vec![0u8; usize::try_from(block.len).unwrap_or(0)];
        read_exact_at(&*block.file, &mut raw, 0).map_err(|e| StoreError::io("read block", e))?;
        let (old, frame_damage) = sealed::plain_content(raw, old_start, old_key);
        if frame_damage {
            return Err(StoreError::Corrupt { what: "frame" });
        }
        let new = self.rewritten(index, &old, (old_start, old_key), framed)?;
        let plain_len = new.plain.len() as u64;
        let (stored, frames): (Vec<u8>, Option<FrameIndex>) = if framed {
            let (bytes, frames) =
                sealed::seal_content(&new.plain, new.data_start, new.key.as_ref())?;
            (bytes, Some(frames))
        } else {
            (new.plain, None)
        };
        write_atomic(&*self.io, &path, &stored).map_err(|e| StoreError::io("compact block", e))?;
        self.index.wrote(stored.len() as u64);
        let live_bytes = new.moved.iter().map(|(_, loc)| u64::from(loc.len)).sum();
        let file = self
            .io
            .open(&path, OpenMode::ReadWrite)
            .map_err(|e| StoreError::io("open block", e))?;
        for (seq, loc) in new.moved {
            self.inner.set_body(seq, loc);
        }
        self.uncache(index);
        if let Some(block) = self.blocks.get_mut(&index) {
            block.file = file;
            block.len = stored.len() as u64;
            block.plain_len = plain_len;
            block.frames = frames;
            block.dead_bytes = 0;
            block.live_bytes = live_bytes;
            block.data_start = new.data_start;
            block.key = new.key;
            block.rewrap = false;
        }
        // Records moved (an erase in a sealed block): the walk's offsets no longer hold.
        self.scrub.forget(index);
        Ok(())
    }

    /// The new plain content of block `index` from its old plain form `old` (records from
    /// `old_layout.0`, sealed ones opened with `old_layout.1`): live records kept, dead ones
    /// dropped. Message records are sealed again under a fresh key unless `framed`.
    fn rewritten(
        &mut self,
        index: u32,
        old: &[u8],
        old_layout: (u64, Option<&DataKey>),
        framed: bool,
    ) -> Result<Rewritten, StoreError> {
        let (old_start, old_key) = old_layout;
        let sealing = self
            .at_rest
            .as_ref()
            .map(|a| block_key::new_block_key(a, index))
            .transpose()?;
        let header = old.get(..HEADER_BYTES as usize).unwrap_or_default();
        let mut new = Vec::with_capacity(old.len() / 2);
        let key = if let Some((key, key_record)) = sealing {
            new.extend_from_slice(&block::header_with_flags(header, FLAG_ENCRYPTED)?);
            new.extend_from_slice(&key_record);
            Some(key)
        } else {
            new.extend_from_slice(header);
            None
        };
        let data_start = new.len() as u64;
        let reseal = key.as_ref().filter(|_| !framed);
        let last_tombstones = last_tombstones(old, old_start);
        let mut moved = Vec::new();
        let mut run = DeletedRun::default();
        let mut off = usize::try_from(old_start).unwrap_or(usize::MAX);
        while off < old.len() {
            let rest = old.get(off..).unwrap_or_default();
            let Decoded::Record(rec, len) = record::decode(rest) else {
                // Damage found since recovery: the block stays as it is.
                return Err(StoreError::Corrupt { what: "record" });
            };
            let here = Loc::new(index, off as u64, u32::try_from(len).unwrap_or(u32::MAX))
                .ok_or(StoreError::Corrupt { what: "record" })?;
            let stored = rest.get(..len).unwrap_or_default();
            off += len;
            let keep = match rec.kind {
                Kind::Msg if self.inner.body(rec.seq) == Some(&here) => true,
                Kind::Msg => {
                    self.record_gone(rec.seq, index);
                    run.add(rec.seq, rec.timestamp_ns, &mut new);
                    continue;
                }
                // Only the tracked one: an earlier tombstone of a sequence used again after a
                // truncate deletes nothing.
                Kind::Tombstone => {
                    self.tombstones.get(&rec.seq).is_some_and(|t| t.0 == index)
                        && last_tombstones.get(&rec.seq) == Some(&here.offset())
                }
                Kind::First => rec.seq >= self.logged_first,
                Kind::Skip | Kind::Truncate | Kind::Deleted => true,
                // The block was synced whole: its batches need no marker any more.
                Kind::Batch => false,
            };
            if !keep {
                continue;
            }
            run.flush(&mut new);
            if rec.kind != Kind::Msg {
                new.extend_from_slice(stored);
                continue;
            }
            let to = new.len() as u64;
            let len = copy_msg(stored, (here, old_key), (index, to, reseal), &mut new)?;
            let len = u32::try_from(len).map_err(|_| StoreError::MsgTooLarge)?;
            let moved_to =
                Loc::new(index, to, len).ok_or(StoreError::Corrupt { what: "record" })?;
            moved.push((rec.seq, moved_to));
        }
        run.flush(&mut new);
        Ok(Rewritten {
            plain: new,
            data_start,
            key,
            moved,
        })
    }

    /// The record of `seq` at `loc` was erased. A sealed record's subject went with its body,
    /// so a scan reads it as a `deleted` record, and its tombstone as deleting nothing (dead
    /// bytes of its block): the bookkeeping follows, so that it is what a reopen finds.
    pub(super) fn erased_sealed(&mut self, seq: u64, loc: Loc) {
        let sealed = self
            .blocks
            .get(&loc.block)
            .is_some_and(|b| b.frames.is_none() && b.key.is_some());
        if !sealed {
            return;
        }
        if let Some((tomb_block, _)) = self.tombstones.remove(&seq) {
            if let Some(block) = self.blocks.get_mut(&tomb_block) {
                block.dead_bytes += RECORD_BYTES_MIN as u64;
            }
        }
    }

    /// The record of `seq` in block `index` is being dropped: a tombstone for it in another
    /// block deletes nothing any more.
    fn record_gone(&mut self, seq: u64, index: u32) {
        // The tombstone tracked for `seq` may be for a later record of it (sequences above a
        // truncate are used again).
        if self.tombstones.get(&seq).is_none_or(|t| t.1 != index) {
            return;
        }
        let Some((tomb_block, _)) = self.tombstones.remove(&seq) else {
            return;
        };
        if tomb_block != index {
            if let Some(block) = self.blocks.get_mut(&tomb_block) {
                block.dead_bytes += RECORD_BYTES_MIN as u64;
            }
        }
    }
}

/// The offset of the last tombstone of each sequence among the records of `plain` from
/// `start` on (the walk stops at the first record that does not decode, as the rewrite does).
fn last_tombstones(plain: &[u8], start: u64) -> BTreeMap<u64, u64> {
    let mut last = BTreeMap::new();
    let mut off = usize::try_from(start).unwrap_or(usize::MAX);
    while let Some(Decoded::Record(rec, len)) = plain.get(off..).map(record::decode) {
        if rec.kind == Kind::Tombstone {
            last.insert(rec.seq, off as u64);
        }
        off += len;
    }
    last
}

/// Appends the live message record `stored` (found at `from.0`, opened with `from.1` if it is
/// sealed) to `out` at offset `to.1` of block `to.0`: sealed under `to.2` when given, plain
/// otherwise. Returns its new length.
fn copy_msg(
    stored: &[u8],
    from: (Loc, Option<&DataKey>),
    to: (u32, u64, Option<&DataKey>),
    out: &mut Vec<u8>,
) -> Result<usize, StoreError> {
    let (here, old_key) = from;
    let (index, offset, new_key) = to;
    let opened;
    let plain = if record::is_sealed(stored) {
        let key = old_key.ok_or(StoreError::WrongKey)?;
        opened = record::open_sealed(stored, key, here.block, here.offset())?;
        &opened[..]
    } else {
        stored
    };
    if let Some(key) = new_key {
        record::seal(plain, key, index, offset, out)
    } else {
        out.extend_from_slice(plain);
        Ok(plain.len())
    }
}

/// Consecutive dropped message records, written as one `Deleted` record.
#[derive(Default)]
struct DeletedRun {
    first: u64,
    count: u64,
    last_ts: i64,
}

impl DeletedRun {
    fn add(&mut self, seq: u64, timestamp_ns: i64, out: &mut Vec<u8>) {
        if self.count > 0 && self.first.checked_add(self.count) != Some(seq) {
            self.flush(out);
        }
        if self.count == 0 {
            self.first = seq;
        }
        self.count += 1;
        self.last_ts = timestamp_ns;
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.count == 0 {
            return;
        }
        let count = self.count.to_le_bytes();
        let rec = Record::empty(Kind::Deleted, self.first, self.last_ts, &count);
        let encoded = record::encode(&rec, out);
        debug_assert!(encoded.is_some(), "a deleted run always fits");
        self.count = 0;
    }
}
