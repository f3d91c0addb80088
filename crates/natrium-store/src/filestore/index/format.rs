//! The body of `index.dat` (`docs/store-format.md` §6) as a pure codec: the stream's bounds,
//! the subject table, per block the checks that tie the index to the file and its
//! compaction accounting, the per-message table in columns, and the tombstones still
//! tracked. Decoding checks every count against the bytes left before anything is sized
//! from it, and every cross-reference (subject id, block, record span); `None` is a
//! damaged index.

use bytes::Bytes;

use crate::filestore::block::Loc;
use crate::filestore::varint::{put_uvarint, put_varint, Cursor};
use crate::memstore::{Bounds, RestoredMsg};
use crate::seal::FrameEntry;
use crate::types::MsgTtl;

/// Columns of the message table, and the bytes each message takes at least: one per column.
const COLUMNS: usize = 7;
const MSG_BYTES_MIN: usize = COLUMNS;
/// Bytes each block, frame and tombstone entry takes at least.
const BLOCK_BYTES_MIN: usize = 9;
const FRAME_BYTES_MIN: usize = 4;
const TOMBSTONE_BYTES_MIN: usize = 3;

/// What the index says of one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEntry {
    pub index: u32,
    /// The file's length the index describes.
    pub covered: u64,
    /// The length of its plain form (`covered`, unless it is sealed).
    pub plain_len: u64,
    pub data_start: u64,
    /// The header's `hdr_crc` field.
    pub header_crc: u32,
    /// The 4 bytes before `covered`, little-endian.
    pub end_check: u32,
    /// Bytes of its message records and of its tombstones that delete nothing.
    pub record_bytes: u64,
    /// Its frames, when it is sealed.
    pub frames: Vec<FrameEntry>,
}

/// The whole index but its messages, which [`encode`] reads from an iterator: held as a
/// list they took about 56 bytes each, several times the encoded index (2026-11-25: 3 M
/// messages raised peak RSS by about 200 MB while the index was written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexBody {
    /// The last sequence the log accounts for.
    pub last: u64,
    pub bounds: Bounds,
    pub subjects: Vec<Bytes>,
    /// Ascending block index.
    pub blocks: Vec<BlockEntry>,
    /// Sequence → (the tombstone's block, the record's block), ascending sequence.
    pub tombstones: Vec<(u64, (u32, u32))>,
}

/// Appends the encoded `body` to `out`, with the messages `msgs()` yields in ascending
/// sequence (it is called twice: the block runs are written before the columns).
pub fn encode<I>(body: &IndexBody, msgs: impl Fn() -> I, out: &mut Vec<u8>)
where
    I: Iterator<Item = RestoredMsg<Loc>>,
{
    put_uvarint(out, body.last);
    put_uvarint(out, body.bounds.first_seq);
    put_uvarint(out, body.bounds.last_seq);
    put_varint(out, body.bounds.last_ts);
    put_uvarint(out, body.subjects.len() as u64);
    for subject in &body.subjects {
        put_uvarint(out, subject.len() as u64);
        out.extend_from_slice(subject);
    }
    put_uvarint(out, body.blocks.len() as u64);
    for block in &body.blocks {
        encode_block(block, out);
    }
    encode_msgs(msgs, &body.blocks, out);
    put_uvarint(out, body.tombstones.len() as u64);
    let mut prev = 0;
    for (seq, (tomb, record)) in &body.tombstones {
        put_uvarint(out, seq.wrapping_sub(prev));
        put_uvarint(out, u64::from(*tomb));
        put_uvarint(out, u64::from(*record));
        prev = *seq;
    }
}

fn encode_block(block: &BlockEntry, out: &mut Vec<u8>) {
    for value in [
        u64::from(block.index),
        block.covered,
        block.plain_len,
        block.data_start,
        u64::from(block.header_crc),
        u64::from(block.end_check),
        block.record_bytes,
        block.frames.len() as u64,
    ] {
        put_uvarint(out, value);
    }
    let (mut plain_end, mut stored_end) = (block.data_start, 0);
    for frame in &block.frames {
        put_uvarint(out, frame.plain_offset.wrapping_sub(plain_end));
        put_uvarint(out, u64::from(frame.raw_len));
        put_uvarint(out, frame.stored_offset.wrapping_sub(stored_end));
        put_uvarint(out, u64::from(frame.frame_bytes));
        plain_end = frame.plain_range().end;
        stored_end = frame.stored_offset + u64::from(frame.frame_bytes);
    }
}

fn encode_msgs<I>(msgs: impl Fn() -> I, blocks: &[BlockEntry], out: &mut Vec<u8>)
where
    I: Iterator<Item = RestoredMsg<Loc>>,
{
    let runs = runs(msgs());
    let count: usize = runs.iter().map(|(_, len)| len).sum();
    put_uvarint(out, count as u64);
    put_uvarint(out, runs.len() as u64);
    for (block, len) in &runs {
        put_uvarint(out, u64::from(*block));
        put_uvarint(out, *len as u64);
    }
    let mut cols: [Vec<u8>; COLUMNS] = Default::default();
    let [seqs, subjects, times, offsets, lens, sizes, ttls] = &mut cols;
    let (mut prev_seq, mut prev_ts, mut end, mut block) = (0u64, 0i64, 0u64, None);
    for m in msgs() {
        put_uvarint(seqs, m.seq.wrapping_sub(prev_seq));
        put_uvarint(subjects, u64::from(m.subject));
        put_varint(times, m.timestamp_ns.wrapping_sub(prev_ts));
        if block != Some(m.body.block) {
            block = Some(m.body.block);
            end = data_start(blocks, m.body.block).unwrap_or(0);
        }
        put_varint(offsets, m.body.offset().wrapping_sub(end) as i64);
        put_uvarint(lens, u64::from(m.body.len));
        put_varint(sizes, u64::from(m.body.len).wrapping_sub(m.size) as i64);
        put_uvarint(ttls, ttl_code(m.ttl));
        (prev_seq, prev_ts) = (m.seq, m.timestamp_ns);
        end = m.body.offset() + u64::from(m.body.len);
    }
    for col in &cols {
        put_uvarint(out, col.len() as u64);
    }
    for col in &cols {
        out.extend_from_slice(col);
    }
}

/// Runs of consecutive messages in one block: (block, count).
fn runs(msgs: impl Iterator<Item = RestoredMsg<Loc>>) -> Vec<(u32, usize)> {
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for m in msgs {
        match runs.last_mut() {
            Some((block, len)) if *block == m.body.block => *len += 1,
            _ => runs.push((m.body.block, 1)),
        }
    }
    runs
}

fn data_start(blocks: &[BlockEntry], index: u32) -> Option<u64> {
    let at = blocks.binary_search_by_key(&index, |b| b.index).ok()?;
    blocks.get(at).map(|b| b.data_start)
}

fn ttl_code(ttl: MsgTtl) -> u64 {
    match ttl {
        MsgTtl::None => 0,
        MsgTtl::Never => 1,
        MsgTtl::Secs(secs) => secs.saturating_add(2),
    }
}

fn ttl_from(code: u64) -> MsgTtl {
    match code {
        0 => MsgTtl::None,
        1 => MsgTtl::Never,
        secs => MsgTtl::Secs(secs - 2),
    }
}

/// A decoded index whose messages are decoded as they are read.
pub(crate) struct DecodedIndex<'a> {
    pub last: u64,
    pub bounds: Bounds,
    pub subjects: Vec<Bytes>,
    pub blocks: Vec<BlockEntry>,
    pub msgs: MsgRows<'a>,
    pub tombstones: Vec<(u64, (u32, u32))>,
}

/// Decodes a body; `None` if it is damaged or has bytes left over. The message rows are
/// checked as they are read ([`MsgRows::failed`]).
pub(crate) fn decode(bytes: &[u8]) -> Option<DecodedIndex<'_>> {
    let mut cur = Cursor::new(bytes);
    let last = cur.uvarint()?;
    let bounds = Bounds {
        first_seq: cur.uvarint()?,
        last_seq: cur.uvarint()?,
        last_ts: cur.varint()?,
    };
    let count = counted(&mut cur, 1)?;
    let mut subjects = Vec::with_capacity(count);
    for _ in 0..count {
        let len = usize::try_from(cur.uvarint()?).ok()?;
        subjects.push(Bytes::copy_from_slice(cur.bytes(len)?));
    }
    let count = counted(&mut cur, BLOCK_BYTES_MIN)?;
    let mut blocks: Vec<BlockEntry> = Vec::with_capacity(count);
    for _ in 0..count {
        let block = decode_block(&mut cur)?;
        if blocks.last().is_some_and(|b| b.index >= block.index) {
            return None;
        }
        blocks.push(block);
    }
    let msgs = MsgRows::new(&mut cur, &blocks, subjects.len())?;
    let count = counted(&mut cur, TOMBSTONE_BYTES_MIN)?;
    let mut tombstones = Vec::with_capacity(count);
    let mut prev = 0u64;
    for i in 0..count {
        let gap = cur.uvarint()?;
        if i > 0 && gap == 0 {
            return None;
        }
        prev = prev.checked_add(gap)?;
        let tomb = u32::try_from(cur.uvarint()?).ok()?;
        let record = u32::try_from(cur.uvarint()?).ok()?;
        tombstones.push((prev, (tomb, record)));
    }
    (cur.remaining() == 0).then_some(DecodedIndex {
        last,
        bounds,
        subjects,
        blocks,
        msgs,
        tombstones,
    })
}

/// A count of entries of at least `min_bytes` each, checked against the bytes left.
fn counted(cur: &mut Cursor<'_>, min_bytes: usize) -> Option<usize> {
    let count = usize::try_from(cur.uvarint()?).ok()?;
    (count <= cur.remaining() / min_bytes).then_some(count)
}

fn decode_block(cur: &mut Cursor<'_>) -> Option<BlockEntry> {
    let index = u32::try_from(cur.uvarint()?).ok()?;
    let covered = cur.uvarint()?;
    let plain_len = cur.uvarint()?;
    let data_start = cur.uvarint()?;
    let header_crc = u32::try_from(cur.uvarint()?).ok()?;
    let end_check = u32::try_from(cur.uvarint()?).ok()?;
    let record_bytes = cur.uvarint()?;
    if data_start > covered.min(plain_len) {
        return None;
    }
    let count = counted(cur, FRAME_BYTES_MIN)?;
    let mut frames = Vec::with_capacity(count);
    let (mut plain_end, mut stored_end) = (data_start, 0u64);
    for _ in 0..count {
        let plain_offset = plain_end.checked_add(cur.uvarint()?)?;
        let raw_len = u32::try_from(cur.uvarint()?).ok()?;
        let stored_offset = stored_end.checked_add(cur.uvarint()?)?;
        let frame_bytes = u32::try_from(cur.uvarint()?).ok()?;
        plain_end = plain_offset.checked_add(u64::from(raw_len))?;
        stored_end = stored_offset.checked_add(u64::from(frame_bytes))?;
        if plain_end > plain_len || data_start.checked_add(stored_end)? > covered {
            return None;
        }
        frames.push(FrameEntry {
            plain_offset,
            raw_len,
            stored_offset,
            frame_bytes,
        });
    }
    Some(BlockEntry {
        index,
        covered,
        plain_len,
        data_start,
        header_crc,
        end_check,
        record_bytes,
        frames,
    })
}

/// The message table, read row by row from its seven columns. Any row that does not hold
/// together (a column cut short, a subject id or block not listed, a record outside its
/// block's plain form) ends the rows and sets `failed`.
pub(crate) struct MsgRows<'a> {
    cols: [Cursor<'a>; COLUMNS],
    /// (block index, data start, plain length) of each listed block, ascending index.
    blocks: Vec<(u32, u64, u64)>,
    runs: std::vec::IntoIter<(u32, usize)>,
    /// The current run's block (data start, plain length) and messages left in it.
    run: Option<(u32, u64, u64, usize)>,
    subjects: usize,
    left: usize,
    prev_seq: u64,
    prev_ts: i64,
    end: u64,
    pub failed: bool,
}

impl<'a> MsgRows<'a> {
    fn new(cur: &mut Cursor<'a>, blocks: &[BlockEntry], subjects: usize) -> Option<Self> {
        let count = counted(cur, MSG_BYTES_MIN)?;
        let run_count = counted(cur, 2)?;
        let mut runs = Vec::with_capacity(run_count);
        let mut total = 0usize;
        for _ in 0..run_count {
            let block = u32::try_from(cur.uvarint()?).ok()?;
            let len = usize::try_from(cur.uvarint()?).ok()?;
            total = total.checked_add(len)?;
            runs.push((block, len));
        }
        let mut lens = [0usize; COLUMNS];
        for len in &mut lens {
            *len = usize::try_from(cur.uvarint()?).ok()?;
        }
        let cols = lens.map(|len| cur.bytes(len).map(Cursor::new));
        if total != count || cols.iter().any(Option::is_none) {
            return None;
        }
        Some(MsgRows {
            cols: cols.map(|c| c.unwrap_or(Cursor::new(&[]))),
            blocks: blocks
                .iter()
                .map(|b| (b.index, b.data_start, b.plain_len))
                .collect(),
            runs: runs.into_iter(),
            run: None,
            subjects,
            left: count,
            prev_seq: 0,
            prev_ts: 0,
            end: 0,
            failed: false,
        })
    }

    fn row(&mut self) -> Option<RestoredMsg<Loc>> {
        let (block, data_start, plain_len, in_run) = match self.run {
            Some(run) if run.3 > 0 => run,
            _ => {
                let (block, len) = self.runs.next()?;
                let at = self.blocks.binary_search_by_key(&block, |b| b.0).ok()?;
                let &(_, data_start, plain_len) = self.blocks.get(at)?;
                self.end = data_start;
                (block, data_start, plain_len, len)
            }
        };
        self.run = Some((block, data_start, plain_len, in_run.checked_sub(1)?));
        let [seqs, subjects, times, offsets, lens, sizes, ttls] = &mut self.cols;
        let seq = self.prev_seq.checked_add(seqs.uvarint()?)?;
        let subject = u32::try_from(subjects.uvarint()?).ok()?;
        let timestamp_ns = self.prev_ts.wrapping_add(times.varint()?);
        let offset = self.end.checked_add_signed(offsets.varint()?)?;
        let len = u32::try_from(lens.uvarint()?).ok()?;
        let size = u64::from(len).wrapping_sub(sizes.varint()? as u64);
        let ttl = ttl_from(ttls.uvarint()?);
        self.end = offset.checked_add(u64::from(len))?;
        if subject as usize >= self.subjects || offset < data_start || self.end > plain_len {
            return None;
        }
        (self.prev_seq, self.prev_ts) = (seq, timestamp_ns);
        Some(RestoredMsg {
            seq,
            subject,
            timestamp_ns,
            size,
            ttl,
            body: Loc::new(block, offset, len)?,
        })
    }
}

impl Iterator for MsgRows<'_> {
    type Item = RestoredMsg<Loc>;

    fn next(&mut self) -> Option<RestoredMsg<Loc>> {
        if self.left == 0 || self.failed {
            return None;
        }
        self.left -= 1;
        let row = self.row();
        // Every column ends with the last row.
        let leftover = self.left == 0 && self.cols.iter().any(|c| c.remaining() > 0);
        self.failed = row.is_none() || leftover;
        row
    }
}
