//! Compaction (`docs/store-format.md` §9): a sealed block whose dead records (removed
//! messages, tombstones that delete nothing any more) take at least half of it is rewritten
//! without them. Each run of dropped message records becomes one `Deleted` record, so their
//! sequences stay accounted for; a tombstone is kept only while its message record is still
//! on disk in another block; a `First` record only if it is the latest. Skips and truncates
//! stay. The new content replaces the old by the atomic write rule (temporary file, sync,
//! rename, directory sync); a crash leaves the old block or the new one, both whole.

use super::block::{Loc, HEADER_BYTES};
use super::record::{self, Decoded, Kind, Record, RECORD_BYTES_MIN};
use super::sealed;
use super::store::FileStore;
use crate::error::StoreError;
use crate::io::{read_exact_at, write_atomic, OpenMode};

impl FileStore {
    /// Rewrites the first sealed block worth compacting, if any: at most one per call, so a
    /// sync pays for one block's rewrite at most. Called with every record synced. A failure
    /// leaves the old block (whole: the rename is the commit) and marks it to be left alone.
    pub(super) fn compact_one_block(&mut self) {
        let tail = self.blocks.keys().next_back().copied();
        let candidate = self.blocks.values().find(|b| {
            let records = b.plain_len.saturating_sub(HEADER_BYTES);
            Some(b.index) != tail
                && !b.keep_as_is
                && b.dead_bytes > 0
                && b.dead_bytes * 2 >= records
        });
        let Some(index) = candidate.map(|b| b.index) else {
            return;
        };
        if self.rewrite_block(index).is_err() {
            if let Some(block) = self.blocks.get_mut(&index) {
                block.keep_as_is = true;
            }
        }
    }

    /// Rewrites block `index` without its dead message records and moves the locations of
    /// the live ones.
    pub(super) fn rewrite_block(&mut self, index: u32) -> Result<(), StoreError> {
        let block = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "block" })?;
        let path = block.path.clone();
        let mut raw = vec![0u8; usize::try_from(block.len).unwrap_or(0)];
        read_exact_at(&*block.file, &mut raw, 0).map_err(|e| StoreError::io("read block", e))?;
        let sealed_before = block.frames.is_some();
        let (old, frame_damage) = sealed::plain_content(raw);
        if frame_damage {
            return Err(StoreError::Corrupt { what: "frame" });
        }
        let header_len = usize::try_from(HEADER_BYTES).unwrap_or(usize::MAX);
        let mut new = Vec::with_capacity(old.len() / 2);
        new.extend_from_slice(old.get(..header_len).unwrap_or_default());
        let mut moved = Vec::new();
        let mut run = DeletedRun::default();
        let mut off = header_len;
        while off < old.len() {
            let rest = old.get(off..).unwrap_or_default();
            let Decoded::Record(rec, len) = record::decode(rest) else {
                // Damage found since recovery: the block stays as it is.
                return Err(StoreError::Corrupt { what: "record" });
            };
            let here = Loc {
                block: index,
                offset: off as u64,
                len: u32::try_from(len).unwrap_or(u32::MAX),
            };
            off += len;
            let keep = match rec.kind {
                Kind::Msg if self.inner.body(rec.seq) == Some(&here) => true,
                Kind::Msg => {
                    self.record_gone(rec.seq, index);
                    run.add(rec.seq, rec.timestamp_ns, &mut new);
                    continue;
                }
                Kind::Tombstone => self.tombstones.get(&rec.seq).is_some_and(|t| t.0 == index),
                Kind::First => rec.seq >= self.logged_first,
                Kind::Skip | Kind::Truncate | Kind::Deleted => true,
            };
            if keep {
                run.flush(&mut new);
                if rec.kind == Kind::Msg {
                    let to = Loc {
                        offset: new.len() as u64,
                        ..here
                    };
                    moved.push((rec.seq, to));
                }
                new.extend_from_slice(rest.get(..len).unwrap_or_default());
            }
        }
        run.flush(&mut new);
        let plain_len = new.len() as u64;
        let (stored, frames) = if sealed_before {
            let (bytes, index) = sealed::seal_content(&new)?;
            (bytes, Some(index))
        } else {
            (new, None)
        };
        write_atomic(&*self.io, &path, &stored).map_err(|e| StoreError::io("compact block", e))?;
        let file = self
            .io
            .open(&path, OpenMode::ReadWrite)
            .map_err(|e| StoreError::io("open block", e))?;
        for (seq, loc) in moved {
            self.inner.set_body(seq, loc);
        }
        self.uncache(index);
        if let Some(block) = self.blocks.get_mut(&index) {
            block.file = file;
            block.len = stored.len() as u64;
            block.plain_len = plain_len;
            block.frames = frames;
            block.dead_bytes = 0;
        }
        Ok(())
    }

    /// The record of `seq` in block `index` is being dropped: a tombstone for it in another
    /// block deletes nothing any more.
    fn record_gone(&mut self, seq: u64, index: u32) {
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
