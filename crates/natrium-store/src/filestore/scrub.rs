//! The scrub (`docs/store-format.md` §6, §10): a reopen from `index.dat` takes the records
//! the index covers on trust (their blocks pass cheap checks only), so the store checks them
//! afterwards, a bounded step at a time, in the engine's idle time. Each step reads the next
//! chunk of covered bytes (a frame, for a sealed block), walks its records with their CRCs
//! checked, and holds each against the in-memory state: a live message's record must be
//! whole, at its location, of its sequence and length. A record that fails is treated as
//! recovery treats it: its message leaves the state, its sequence goes to `lost` (with its
//! bytes) and to the damage report, and its block is never rewritten. Nothing on disk
//! changes. Loads that fail their checks name their sequence (`suspects`), checked by the
//! next step whatever the scrub's progress, so a reader never meets the same damage twice.
//!
//! The walk needs no resync: live messages in sequence order are in (block, offset) order
//! (a message stored later has a later position, and a truncate removes everything above
//! it), so the next live message after `floor` is where the walk goes on after damage.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, PoisonError};

use super::block::Loc;
use super::record::{self, Decoded, Kind, Record};
use super::recover::add_seq;
use super::store::{FileStore, RecoveryReport};
use crate::error::StoreError;
use crate::io::read_exact_at;
use crate::seal::{decode_frame, DataKey};
use crate::stream::StreamStore;
use crate::types::{LostData, ScrubProgress};

/// Bytes of a plain block read at a time (a record longer than this is read whole).
const CHUNK_BYTES: u64 = 1 << 20;

/// What is left to check, and the loads that failed their checks.
#[derive(Default)]
pub struct ScrubState {
    /// Blocks whose covered bytes are not all checked: index → where the check stands.
    pending: BTreeMap<u32, Cursor>,
    /// Every live message up to this sequence was checked (or lost), or lies in a block
    /// before the one being checked.
    floor: u64,
    /// Sequences whose load failed its checks since the last step.
    pub suspects: Mutex<BTreeSet<u64>>,
    buf: Vec<u8>,
}

/// Where the check of one block stands, in plain offsets.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    next: u64,
    /// The end of the bytes the index covered.
    end: u64,
    /// The record at `next` is longer than a chunk: this many bytes are read next.
    need: u64,
}

impl ScrubState {
    /// Whether block `index` still has covered bytes to check (it is not rewritten until
    /// they are: a rewrite would carry damage over unseen).
    pub fn pending(&self, index: u32) -> bool {
        self.pending.contains_key(&index)
    }

    /// Block `index` was rewritten or removed: nothing of it is left to check.
    pub fn forget(&mut self, index: u32) {
        self.pending.remove(&index);
    }

    /// Whether a step has anything to do.
    pub fn wanted(&self) -> bool {
        !self.pending.is_empty()
            || !self
                .suspects
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
    }

    fn has_suspects(&mut self) -> bool {
        !self
            .suspects
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }
}

/// Where a walk over a buffer stopped, and how many bytes the record there needs when it
/// stopped for want of them.
struct Stop {
    at: u64,
    need: u64,
}

impl FileStore {
    /// After a reopen from the index: every block it covered is to be checked, from its
    /// first record to its covered end (the plain length, for a sealed block).
    pub(super) fn start_scrub(&mut self, covered: &[(u32, u64)]) {
        for &(index, len) in covered {
            if let Some(block) = self.blocks.get(&index) {
                let end = if block.frames.is_some() {
                    block.plain_len
                } else {
                    len
                };
                let cursor = Cursor {
                    next: block.data_start,
                    end,
                    need: 0,
                };
                self.scrub.pending.insert(index, cursor);
            }
        }
    }

    /// A load of `seq` failed its checks: the next scrub step looks at its record.
    pub(super) fn suspect(&self, seq: u64) {
        self.scrub
            .suspects
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(seq);
    }

    /// One step: the suspects, then up to about `budget` bytes of covered records.
    pub(super) fn scrub_step(&mut self, budget: u64) -> Result<ScrubProgress, StoreError> {
        let mut found = RecoveryReport::default();
        self.check_suspects(&mut found)?;
        let mut bytes = 0;
        while bytes < budget {
            let Some((&index, &cursor)) = self.scrub.pending.first_key_value() else {
                break;
            };
            let framed = match self.blocks.get(&index) {
                Some(block) if cursor.next < cursor.end => block.frames.is_some(),
                _ => {
                    self.scrub.forget(index);
                    continue;
                }
            };
            self.skip_floor_to(index);
            let checked = if framed {
                self.scrub_frame(index, cursor, &mut found)
            } else {
                self.scrub_chunk(index, cursor, &mut found)
            };
            if checked.is_err() {
                // A block that cannot be read is not retried step after step.
                self.scrub.forget(index);
            }
            let (read, stop) = checked?;
            bytes += read;
            if let Some(c) = self.scrub.pending.get_mut(&index) {
                c.next = stop.at;
                c.need = stop.need;
            }
        }
        Ok(ScrubProgress {
            done: self.scrub.pending.is_empty() && !self.scrub.has_suspects(),
            bytes,
            damaged: found.damaged_files,
        })
    }

    /// Checks the next chunk of plain block `index`; returns the bytes read and where the
    /// walk stopped.
    fn scrub_chunk(
        &mut self,
        index: u32,
        cursor: Cursor,
        found: &mut RecoveryReport,
    ) -> Result<(u64, Stop), StoreError> {
        let block = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "block" })?;
        let len = CHUNK_BYTES.max(cursor.need).min(cursor.end - cursor.next);
        let mut buf = std::mem::take(&mut self.scrub.buf);
        buf.clear();
        buf.resize(usize::try_from(len).unwrap_or(0), 0);
        let read = read_exact_at(&*block.file, &mut buf, cursor.next)
            .map_err(|e| StoreError::io("read block", e));
        // The key leaves the block while the walk updates its accounting.
        let key = self.take_key(index);
        let stop = read.map(|()| {
            let more = cursor.next + len < cursor.end;
            self.walk(
                index,
                (&buf, cursor.next),
                (cursor.end, more),
                key.as_ref(),
                found,
            )
        });
        self.put_key(index, key);
        if buf.capacity() as u64 <= CHUNK_BYTES {
            self.scrub.buf = buf;
        }
        Ok((len, stop?))
    }

    /// Checks the next frame of sealed block `index`: a frame that does not decode loses
    /// every live message in it.
    fn scrub_frame(
        &mut self,
        index: u32,
        cursor: Cursor,
        found: &mut RecoveryReport,
    ) -> Result<(u64, Stop), StoreError> {
        let block = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "block" })?;
        let frames = block
            .frames
            .as_ref()
            .map(crate::seal::FrameIndex::entries)
            .unwrap_or_default();
        let Some(entry) = frames
            .iter()
            .find(|e| e.plain_range().end > cursor.next)
            .copied()
        else {
            let stop = Stop {
                at: cursor.end,
                need: 0,
            };
            return Ok((0, stop));
        };
        let mut raw = vec![0u8; entry.frame_bytes as usize];
        read_exact_at(
            &*block.file,
            &mut raw,
            block.data_start + entry.stored_offset,
        )
        .map_err(|e| StoreError::io("read frame", e))?;
        let key = self.take_key(index);
        let range = entry.plain_range();
        if let Ok((_, plain)) = decode_frame(&raw, key.as_ref()) {
            let end = range.end.min(cursor.end);
            self.walk(
                index,
                (&plain, range.start),
                (end, false),
                key.as_ref(),
                found,
            );
        } else {
            self.note_damage(index, found);
            while let Some((seq, loc)) = self.next_live(index) {
                if loc.offset() >= range.end {
                    break;
                }
                self.lose_damaged(seq, found);
            }
        }
        self.put_key(index, key);
        let stop = Stop {
            at: range.end,
            need: 0,
        };
        Ok((u64::from(entry.frame_bytes), stop))
    }

    fn take_key(&mut self, index: u32) -> Option<DataKey> {
        self.blocks.get_mut(&index).and_then(|b| b.key.take())
    }

    fn put_key(&mut self, index: u32, key: Option<DataKey>) {
        if let Some(block) = self.blocks.get_mut(&index) {
            block.key = key;
        }
    }

    /// Walks the records of `chunk` (its bytes and the plain offset they start at) up to
    /// `end`, `more` when bytes follow the chunk before `end`; checks every live message
    /// met against the state and loses those whose record fails.
    fn walk(
        &mut self,
        index: u32,
        chunk: (&[u8], u64),
        limit: (u64, bool),
        key: Option<&DataKey>,
        found: &mut RecoveryReport,
    ) -> Stop {
        let (buf, base) = chunk;
        let (end, more) = limit;
        let buf_end = base + buf.len() as u64;
        let mut off = base;
        while off < end.min(buf_end) {
            let live = self.next_live(index);
            if let Some((seq, _)) = live.filter(|(_, l)| l.offset() < off) {
                // Passed over without being read: its record is not where the state says.
                self.note_damage(index, found);
                self.lose_damaged(seq, found);
                continue;
            }
            let rest = usize::try_from(off - base)
                .ok()
                .and_then(|at| buf.get(at..))
                .unwrap_or_default();
            let at_live = live.filter(|(_, l)| l.offset() == off);
            match record::decode(rest) {
                Decoded::Record(rec, len) => {
                    let rec_end = off + len as u64;
                    if let Some((seq, loc)) = at_live {
                        let stored = rest.get(..len).unwrap_or_default();
                        if !holds(&rec, stored, (seq, loc), key) {
                            self.note_damage(index, found);
                            self.lose_damaged(seq, found);
                        }
                        self.scrub.floor = seq;
                    } else if let Some((_, loc)) = live.filter(|(_, l)| l.offset() < rec_end) {
                        // A record across the start of a live one: not what the index saw.
                        self.note_damage(index, found);
                        off = loc.offset();
                        continue;
                    }
                    off = rec_end;
                }
                Decoded::Incomplete if more => {
                    let declared = record::declared_len(rest).map_or(0, |n| n as u64);
                    let need = at_live.map_or(declared, |(_, l)| u64::from(l.len).max(declared));
                    return Stop { at: off, need };
                }
                Decoded::Incomplete | Decoded::BadRecord { .. } | Decoded::BadHeader => {
                    self.note_damage(index, found);
                    off = match live {
                        Some((seq, loc)) if loc.offset() == off => {
                            self.lose_damaged(seq, found);
                            self.scrub.floor = seq;
                            off + u64::from(loc.len)
                        }
                        // The walk goes on at the next live record; what lies between
                        // holds no message the stream serves.
                        Some((_, loc)) => loc.offset().min(end),
                        None => end,
                    };
                }
            }
        }
        Stop {
            at: off.min(end),
            need: 0,
        }
    }

    /// The first live message above `floor`, if it is in block `index`.
    fn next_live(&self, index: u32) -> Option<(u64, Loc)> {
        let (seq, loc) = self.inner.bodies_from(self.scrub.floor + 1).next()?;
        (loc.block == index).then_some((seq, *loc))
    }

    /// Moves `floor` past the live messages of blocks before `index` (those appended after
    /// the index was written, which recovery scanned).
    fn skip_floor_to(&mut self, index: u32) {
        let mut floor = self.scrub.floor;
        for (seq, loc) in self.inner.bodies_from(floor + 1) {
            if loc.block >= index {
                break;
            }
            floor = seq;
        }
        self.scrub.floor = floor;
    }

    /// Checks the records of the messages whose loads failed.
    fn check_suspects(&mut self, found: &mut RecoveryReport) -> Result<(), StoreError> {
        let suspects = std::mem::take(
            self.scrub
                .suspects
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for seq in suspects {
            let Some(loc) = self.inner.body(seq).copied() else {
                continue;
            };
            if !self.record_holds(seq, loc)? {
                self.note_damage(loc.block, found);
                self.lose_damaged(seq, found);
            }
        }
        Ok(())
    }

    /// Whether the record of live message `seq` at `loc` passes its checks.
    fn record_holds(&self, seq: u64, loc: Loc) -> Result<bool, StoreError> {
        let Some(block) = self.blocks.get(&loc.block) else {
            return Ok(false);
        };
        let (start, bytes) = if let Some(frames) = &block.frames {
            match block.read_frame(frames, loc) {
                Ok((start, plain)) => (start, plain.to_vec()),
                Err(StoreError::Corrupt { .. }) => return Ok(false),
                Err(e) => return Err(e),
            }
        } else {
            let mut buf = vec![0u8; loc.len as usize];
            read_exact_at(&*block.file, &mut buf, loc.offset())
                .map_err(|e| StoreError::io("read block", e))?;
            (loc.offset(), buf)
        };
        let rest = usize::try_from(loc.offset().saturating_sub(start))
            .ok()
            .and_then(|at| bytes.get(at..))
            .unwrap_or_default();
        Ok(match record::decode(rest) {
            Decoded::Record(rec, len) => {
                let stored = rest.get(..len).unwrap_or_default();
                holds(&rec, stored, (seq, loc), block.key.as_ref())
            }
            _ => false,
        })
    }

    /// Block `index` holds damage: noted in the report, and never rewritten.
    fn note_damage(&mut self, index: u32, found: &mut RecoveryReport) {
        if let Some(block) = self.blocks.get_mut(&index) {
            block.keep_as_is = true;
        }
        self.report.note(index, &[], true);
        found.note(index, &[], true);
    }

    /// The record of live message `seq` failed: the message is lost, as recovery loses it
    /// (its record's bytes count as neither live nor dead, as a scan finds them).
    fn lose_damaged(&mut self, seq: u64, found: &mut RecoveryReport) {
        let Some((loc, size)) = self.inner.drop_damaged(seq) else {
            return;
        };
        if let Some(block) = self.blocks.get_mut(&loc.block) {
            block.live = block.live.saturating_sub(1);
            block.live_bytes = block.live_bytes.saturating_sub(u64::from(loc.len));
        }
        // A lost first message moves the first sequence, as it does in a scan.
        let first = self.inner.fast_state().first_seq;
        if seq < first {
            self.logged_first = self.logged_first.max(first);
        }
        let lost = self.lost.get_or_insert_with(LostData::default);
        add_seq(&mut lost.ranges, seq);
        lost.bytes += size;
        self.report.note_lost(loc.block, seq);
        found.note_lost(loc.block, seq);
    }
}

/// Whether `rec`, decoded with its CRCs checked from `stored`, is the record of live message
/// `seq` at `loc` (a sealed one must also open, as recovery requires).
fn holds(rec: &Record<'_>, stored: &[u8], live: (u64, Loc), key: Option<&DataKey>) -> bool {
    let (seq, loc) = live;
    let matches = rec.kind == Kind::Msg && rec.seq == seq && stored.len() == loc.len as usize;
    if !matches || rec.erased {
        return false;
    }
    !rec.sealed
        || key.is_some_and(|k| record::open_sealed(stored, k, loc.block, loc.offset()).is_ok())
}

#[cfg(test)]
mod tests {
    use crate::filestore::recover::add_seq;

    #[test]
    fn store_scrub_add_seq_joins_neighbours() {
        let mut r = Vec::new();
        for seq in [5, 7, 3, 6, 9, 4, 1] {
            add_seq(&mut r, seq);
        }
        assert_eq!(r, vec![(1, 1), (3, 7), (9, 9)]);
        add_seq(&mut r, 5);
        add_seq(&mut r, 2);
        assert_eq!(r, vec![(1, 7), (9, 9)]);
    }
}
