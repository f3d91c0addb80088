//! Recovery (`docs/store-format.md` §10): scanning a block's bytes record by record, applying
//! each valid record to the in-memory state, resynchronising after damage, and telling a torn
//! tail apart from damage in the middle. Every length and offset comes from checked decoding.
//! A sealed record of an encrypted block is opened with the block's key before it is applied;
//! one that does not open (no key, or failed authentication) is lost like a damaged record.

use std::collections::{BTreeMap, BTreeSet};

use super::batch_record::{check_batch, BatchCheck};
use super::block::{Loc, HEADER_BYTES};
use super::record::{self, Decoded, Kind, Record, MAGIC, RECORD_BYTES_MIN};
use crate::memstore::MemStore;
use crate::seal::DataKey;
use crate::stream::StreamStore;
use crate::types::MsgSizing;

/// Where a block's valid content ends, and whether the bytes after it are a torn tail (no
/// valid record follows them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanEnd {
    pub good_end: u64,
    pub torn: bool,
    /// A record failed its checks (a torn tail aside).
    pub damaged: bool,
}

/// The state a scan rebuilds: the messages and their locations (in a memory store with no
/// limits, so replay never removes what the log does not say was removed), and the lost
/// sequence ranges.
pub struct Replay<'a> {
    pub inner: &'a mut MemStore<Loc>,
    pub lost: Vec<(u64, u64)>,
    /// Go-accounted sizes of message records whose header was valid but body was not.
    pub bad_sizes: BTreeMap<u64, u64>,
    /// The last sequence the records so far account for.
    pub last: u64,
    /// Bytes of message records applied, per block (compaction's accounting).
    pub msg_bytes: BTreeMap<u32, u64>,
    /// Tombstones met before the record of their sequence was reached: a compacted block
    /// keeps a tombstone whose message it dropped, so the gap is a deletion, not a loss.
    pub deleted_ahead: BTreeSet<u64>,
    /// Tombstones whose message record is still on disk: sequence → (tombstone's block,
    /// record's block).
    pub tombstones: BTreeMap<u64, (u32, u32)>,
    /// Bytes of records compaction may drop, per block (tombstones with nothing to delete).
    pub garbage: BTreeMap<u32, u64>,
}

impl Replay<'_> {
    /// Applies one valid record found at `loc`.
    fn apply(&mut self, rec: &Record<'_>, loc: Loc) {
        match rec.kind {
            Kind::Msg => {
                if !self.fill_gap(rec.seq) {
                    return;
                }
                let lengths = (rec.headers.len(), rec.payload.len());
                let (ts, ttl) = (rec.timestamp_ns, rec.ttl);
                if self
                    .inner
                    .restore_msg(rec.seq, rec.subject, lengths, ts, ttl, loc)
                {
                    *self.msg_bytes.entry(loc.block).or_default() += u64::from(loc.len);
                    self.last = rec.seq;
                }
            }
            Kind::Skip | Kind::Deleted => {
                let count = rec.payload.try_into().map_or(0, u64::from_le_bytes);
                if count == 0 || !self.fill_gap(rec.seq) {
                    return;
                }
                if self
                    .inner
                    .skip_msgs(rec.seq, count, rec.timestamp_ns)
                    .is_ok()
                {
                    self.last = rec.seq.saturating_add(count - 1);
                    if rec.kind == Kind::Deleted {
                        // Those messages were stored: the last of them set the last time.
                        self.inner.set_last_ts(rec.timestamp_ns);
                    }
                }
            }
            Kind::Tombstone if rec.seq == 0 => {
                let _ = self.inner.purge();
            }
            Kind::Tombstone if rec.seq > self.last => {
                self.deleted_ahead.insert(rec.seq);
            }
            Kind::Tombstone => {
                match self.inner.body(rec.seq).copied() {
                    // Its message record is on disk: the tombstone keeps it deleted.
                    Some(target) if matches!(self.inner.remove_msg(rec.seq), Ok(true)) => {
                        self.tombstones.insert(rec.seq, (loc.block, target.block));
                    }
                    // Nothing left for it to delete: garbage for compaction.
                    _ => *self.garbage.entry(loc.block).or_default() += u64::from(loc.len),
                }
                subtract_point(&mut self.lost, rec.seq);
            }
            Kind::Truncate => {
                // Tombstones above it delete nothing the truncate does not (and their
                // sequences may be used again).
                let above: Vec<u64> = self
                    .tombstones
                    .range(rec.seq.saturating_add(1)..)
                    .map(|(seq, _)| *seq)
                    .collect();
                for seq in above {
                    if let Some((tomb, _)) = self.tombstones.remove(&seq) {
                        *self.garbage.entry(tomb).or_default() += RECORD_BYTES_MIN as u64;
                    }
                }
                let _ = self.inner.truncate(rec.seq);
                self.inner.set_last_ts(rec.timestamp_ns);
                truncate_ranges(&mut self.lost, rec.seq);
                self.deleted_ahead.split_off(&rec.seq.saturating_add(1));
                self.last = rec.seq;
            }
            // Checked whole by the scan (`super::batch`): its records apply one by one.
            Kind::Batch => *self.garbage.entry(loc.block).or_default() += u64::from(loc.len),
            Kind::First => {
                self.start_at(rec.seq);
                // The stream's last time when the record was written: the message that set
                // it may be in a block removed since.
                self.inner.set_last_ts(rec.timestamp_ns);
            }
        }
    }

    /// An erased sealed message record: its subject went with its body, so it is applied as
    /// the `Deleted` record of its one sequence (the tombstone after it confirms it), and
    /// its bytes are garbage for compaction.
    fn apply_erased(&mut self, seq: u64, timestamp_ns: i64, loc: Loc) {
        let count = 1u64.to_le_bytes();
        self.apply(
            &Record::empty(Kind::Deleted, seq, timestamp_ns, &count),
            loc,
        );
        *self.garbage.entry(loc.block).or_default() += u64::from(loc.len);
    }

    /// The message record of `seq` is whole but cannot be read (a sealed record that does not
    /// open): the sequence is lost, and held as skipped so the stream's sequences stay whole.
    fn lose(&mut self, seq: u64) {
        if !self.fill_gap(seq) {
            return;
        }
        match self.lost.last_mut() {
            Some(range) if range.1.checked_add(1) == Some(seq) => range.1 = seq,
            _ => self.lost.push((seq, seq)),
        }
        if self.inner.skip_msgs(seq, 1, 0).is_ok() {
            self.last = seq;
        }
    }

    /// Everything below `first` is gone: removed, not lost.
    pub fn start_at(&mut self, first: u64) {
        if first == 0 {
            return;
        }
        let _ = self.inner.compact(first);
        self.lost.retain(|&(_, b)| b >= first);
        for range in &mut self.lost {
            range.0 = range.0.max(first);
        }
        self.last = self.last.max(first - 1);
    }

    /// At the start of each block. The sequences below a block's first were all in older
    /// blocks, so any not accounted for yet are lost (or deleted, when a tombstone said so).
    /// The oldest block's `first_seq` says where the stream starts: older blocks were removed
    /// as dead. A damaged header tells nothing; the records still describe themselves.
    pub fn enter_block(&mut self, block: &[u8], oldest: bool) {
        let header = block.get(..HEADER_BYTES as usize).unwrap_or_default();
        let Some(first_seq) = super::block::header_first_seq(header) else {
            return;
        };
        if oldest {
            if first_seq > 1 {
                self.start_at(first_seq);
            }
        } else if first_seq > self.last.saturating_add(1) {
            self.fill_gap(first_seq);
        }
    }

    /// Before a message or skip at `seq`: sequences between the last accounted one and `seq`
    /// were in records that could not be read, so they are lost (and held as skipped, so the
    /// stream's sequences stay whole). False when `seq` is not ahead of the last one: a stale
    /// record that resync landed on, ignored.
    fn fill_gap(&mut self, seq: u64) -> bool {
        let next = self.last.saturating_add(1);
        if seq < next {
            return false;
        }
        if seq > next {
            self.lost.push((next, seq - 1));
            let ahead: Vec<u64> = self.deleted_ahead.range(next..seq).copied().collect();
            for deleted in ahead {
                self.deleted_ahead.remove(&deleted);
                subtract_point(&mut self.lost, deleted);
            }
            if self.inner.skip_msgs(next, seq - next, 0).is_ok() {
                self.last = seq - 1;
            }
        }
        true
    }
}

impl Replay<'_> {
    /// The bytes of the lost messages, as far as their headers told them.
    pub fn lost_bytes(&self) -> u64 {
        self.bad_sizes
            .iter()
            .filter(|(seq, _)| self.lost.iter().any(|&(a, b)| a <= **seq && **seq <= b))
            .map(|(_, size)| size)
            .sum()
    }
}

/// Scans block `block` whose plain form (the whole file, or the decoded frames at their plain
/// offsets) from offset `base` on is `buf`, applying its records to `replay`. `layout` is
/// where its records start (at or after `base`) and, if it is encrypted, its data key.
pub fn scan_block(
    buf: &[u8],
    base: u64,
    block: u32,
    layout: (u64, Option<&DataKey>),
    replay: &mut Replay<'_>,
) -> ScanEnd {
    let (start, key) = layout;
    let start = usize::try_from(start.saturating_sub(base)).unwrap_or(usize::MAX);
    let mut off = start;
    let mut good_end = start.min(buf.len());
    let mut damaged = false;
    while off < buf.len() {
        let rest = buf.get(off..).unwrap_or_default();
        let resume = match record::decode(rest) {
            Decoded::Record(rec, len) => {
                if rec.kind == Kind::Batch && batch_torn(buf, off, (&rec, len), replay.last) {
                    // A batch not wholly written: the tail ends before it.
                    return ScanEnd {
                        good_end: base + off as u64,
                        torn: true,
                        damaged,
                    };
                }
                let len32 = u32::try_from(len).unwrap_or(u32::MAX);
                let Some(loc) = Loc::new(block, base + off as u64, len32) else {
                    // No block grows this large: what follows is not ours to read.
                    return ScanEnd {
                        good_end: base + off as u64,
                        torn: false,
                        damaged: true,
                    };
                };
                if !apply_stored(replay, &rec, rest.get(..len).unwrap_or_default(), loc, key) {
                    // A sealed record that does not open is whole on disk: lost, and kept
                    // (a torn tail is never cut before it).
                    damaged = true;
                }
                off += len;
                good_end = off;
                continue;
            }
            Decoded::Incomplete => None,
            Decoded::BadRecord { seq, len } => {
                damaged = true;
                if let Some((Kind::Msg, subject, headers, payload)) = record::declared_parts(rest) {
                    let size = MsgSizing::File.size(subject, headers, payload);
                    replay.bad_sizes.insert(seq, size);
                    // Its sequence is known: lost now, so that a truncate record after it
                    // does not hide the loss.
                    replay.lose(seq);
                }
                resync(buf, off.saturating_add(len), replay.last)
            }
            Decoded::BadHeader => {
                damaged = true;
                resync(buf, off + 1, replay.last)
            }
        };
        match resume {
            Some(next) => off = next,
            None => {
                return ScanEnd {
                    good_end: base + good_end as u64,
                    torn: true,
                    damaged,
                }
            }
        }
    }
    ScanEnd {
        good_end: base + good_end as u64,
        torn: false,
        damaged,
    }
}

/// Whether the batch record `rec` of `len` bytes at `off` starts a batch that was never
/// wholly written: some of its records are missing or fail, and no valid record follows
/// the bytes it announced (so nothing was written after it). A damaged batch that later
/// records follow was written whole and damaged since: its records are scanned one by one.
fn batch_torn(buf: &[u8], off: usize, (rec, len): (&Record<'_>, usize), last: u64) -> bool {
    let rest = buf.get(off..).unwrap_or_default();
    match check_batch(rest, rec, len) {
        BatchCheck::Whole => false,
        BatchCheck::Incomplete { region_end } => {
            let after = off.saturating_add(region_end);
            after >= buf.len() || resync(buf, after, last).is_none()
        }
    }
}

/// Applies the valid record `rec` (stored as `stored` at `loc`), opening it first if it is
/// sealed; `false` if it is sealed and does not open, and nothing was applied (its size,
/// from the header, is noted for the lost bytes).
fn apply_stored(
    replay: &mut Replay<'_>,
    rec: &Record<'_>,
    stored: &[u8],
    loc: Loc,
    key: Option<&DataKey>,
) -> bool {
    if !rec.sealed {
        replay.apply(rec, loc);
        return true;
    }
    if rec.erased {
        if rec.kind == Kind::Msg {
            replay.apply_erased(rec.seq, rec.timestamp_ns, loc);
        }
        return true;
    }
    let opened = key.and_then(|k| record::open_sealed(stored, k, loc.block, loc.offset()).ok());
    if let Some(plain) = opened.as_deref().and_then(record::decode_trusted) {
        replay.apply(&plain, loc);
        return true;
    }
    if let Some((Kind::Msg, subject, headers, payload)) = record::declared_parts(stored) {
        let size = MsgSizing::File.size(subject, headers, payload);
        replay.bad_sizes.insert(rec.seq, size);
        replay.lose(rec.seq);
    }
    false
}

/// The next offset at or after `from` where a whole valid record starts that can follow a
/// log accounting for sequences up to `last`: a message or skip above it, a tombstone at or
/// below it. The sequence test keeps a record that happens to sit inside a payload (a stream
/// holding another stream's blocks) from being taken for the next one, in most cases.
fn resync(buf: &[u8], from: usize, last: u64) -> Option<usize> {
    let tail = buf.get(from..)?;
    tail.windows(MAGIC.len())
        .enumerate()
        .filter(|(_, w)| *w == MAGIC)
        .map(|(i, _)| from + i)
        .find(
            |&at| match record::decode(buf.get(at..).unwrap_or_default()) {
                Decoded::Record(rec, _) => match rec.kind {
                    Kind::Msg | Kind::Skip | Kind::Deleted | Kind::Batch => rec.seq > last,
                    Kind::Tombstone => rec.seq <= last,
                    Kind::Truncate | Kind::First => true,
                },
                _ => false,
            },
        )
}

/// Adds `seq` to the ascending inclusive `ranges`, joining a neighbour it touches.
pub fn add_seq(ranges: &mut Vec<(u64, u64)>, seq: u64) {
    let at = ranges.partition_point(|&(_, b)| b < seq);
    if ranges.get(at).is_some_and(|&(a, _)| a <= seq) {
        return;
    }
    let joins_prev = at > 0 && ranges.get(at - 1).is_some_and(|r| r.1 + 1 == seq);
    let joins_next = ranges.get(at).is_some_and(|r| r.0 == seq + 1);
    match (joins_prev, joins_next) {
        (true, true) => {
            let next_end = ranges.get(at).map_or(seq, |r| r.1);
            ranges.remove(at);
            if let Some(prev) = ranges.get_mut(at - 1) {
                prev.1 = next_end;
            }
        }
        (true, false) => {
            if let Some(prev) = ranges.get_mut(at - 1) {
                prev.1 = seq;
            }
        }
        (false, true) => {
            if let Some(next) = ranges.get_mut(at) {
                next.0 = seq;
            }
        }
        (false, false) => ranges.insert(at, (seq, seq)),
    }
}

/// Removes `seq` from the inclusive `ranges`: a tombstone says it was deleted, not lost.
fn subtract_point(ranges: &mut Vec<(u64, u64)>, seq: u64) {
    let Some(i) = ranges.iter().position(|&(a, b)| a <= seq && seq <= b) else {
        return;
    };
    let (a, b) = ranges.remove(i);
    if seq < b {
        ranges.insert(i, (seq + 1, b));
    }
    if a < seq {
        ranges.insert(i, (a, seq - 1));
    }
}

/// Drops what lies above `last` (a truncate removed those sequences).
fn truncate_ranges(ranges: &mut Vec<(u64, u64)>, last: u64) {
    ranges.retain(|&(a, _)| a <= last);
    for range in ranges.iter_mut() {
        range.1 = range.1.min(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_recover_lost_ranges_subtract() {
        let mut r = vec![(3, 7)];
        subtract_point(&mut r, 5);
        assert_eq!(r, vec![(3, 4), (6, 7)]);
        subtract_point(&mut r, 3);
        subtract_point(&mut r, 7);
        assert_eq!(r, vec![(4, 4), (6, 6)]);
        subtract_point(&mut r, 4);
        assert_eq!(r, vec![(6, 6)]);
        truncate_ranges(&mut r, 5);
        assert!(r.is_empty());
    }
}
