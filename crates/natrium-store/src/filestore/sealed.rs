//! Sealed blocks (`docs/store-format.md` §11): with `compression: s2`, a block that is no
//! longer the tail is rewritten as LZ4 frames of whole records, after its 32-byte header
//! (flags `SEALED | COMPRESSED`). Records keep their plain offsets (the first frame starts at
//! 32), so message locations, the record cache and the recovery scan work on plain offsets
//! whatever the block's form. Loading one record reads and decodes one frame, which the
//! record cache keeps, so a consumer reading in order decodes each frame once. An encrypted
//! block keeps its key record after the header, its frames are AEAD under its data key, and
//! its plain form starts records at the same `data_start` (102); an encrypted tail's sealed
//! records shrink when framed, so such a block is sealed by the compaction rewrite instead.

use bytes::Bytes;

use super::block::{self, Block, Loc, BLOCK_FILE_BYTES_MAX, HEADER_BYTES};
use super::store::FileStore;
use crate::error::StoreError;
use crate::io::{read_exact_at, write_atomic, OpenMode};
use crate::seal::{
    decode_frame, decode_frames, encode_records, DataKey, FrameCodec, FrameIndex, Segment,
};

/// A block file's plain form: its header (and key record) and records at their plain
/// offsets (a damaged frame's range left as zeros, which the scan treats as damage), and
/// whether any frame was damaged. A block that is not sealed is returned as it is. Frames
/// start at `data_start`; `key` opens AEAD frames.
pub fn plain_content(raw: Vec<u8>, data_start: u64, key: Option<&DataKey>) -> (Vec<u8>, bool) {
    let Some(header) = raw.get(..HEADER_BYTES as usize) else {
        return (raw, false);
    };
    if !block::header_is_sealed(header) {
        return (raw, false);
    }
    let header_len = usize::try_from(data_start).unwrap_or(usize::MAX);
    let Some(header) = raw.get(..header_len) else {
        // Cut inside its key record: no frame to decode.
        return (raw, true);
    };
    let decoded = decode_frames(raw.get(header_len..).unwrap_or_default(), key);
    // Plain offsets come from the file: an end past what a block can hold is damage, and
    // never sizes the buffer.
    let within = |start: u64, len: u64| {
        start
            .checked_add(len)
            .filter(|end| *end <= BLOCK_FILE_BYTES_MAX)
            .and_then(|end| usize::try_from(end).ok())
    };
    let segment_end = |s: &Segment| within(s.plain_offset, s.bytes.len() as u64);
    let mut damaged = !decoded.damaged.is_empty();
    let ends = decoded.segments.iter().map(segment_end).chain(
        decoded
            .damaged
            .iter()
            .filter_map(|d| d.plain_end.map(|e| within(e, 0))),
    );
    let end = ends
        .inspect(|end| damaged |= end.is_none())
        .flatten()
        .max()
        .unwrap_or(header_len)
        .max(header_len);
    let mut plain = vec![0u8; end];
    if let Some(dst) = plain.get_mut(..header_len) {
        dst.copy_from_slice(header);
    }
    for segment in &decoded.segments {
        let Some(to) = segment_end(segment) else {
            continue;
        };
        if let Some(dst) = plain.get_mut(to - segment.bytes.len()..to) {
            dst.copy_from_slice(&segment.bytes);
        }
    }
    (plain, damaged)
}

/// The frame index of a sealed block file's body (frames from `data_start` on), if the
/// file is sealed.
pub fn frame_index(raw: &[u8], data_start: u64) -> Option<FrameIndex> {
    let header = raw.get(..HEADER_BYTES as usize)?;
    let body = usize::try_from(data_start)
        .ok()
        .and_then(|at| raw.get(at..))
        .unwrap_or_default();
    block::header_is_sealed(header).then(|| FrameIndex::scan(body))
}

impl Block {
    /// The decoded frame of a sealed block holding the record at `loc`: its plain offset and
    /// plain bytes.
    pub fn read_frame(&self, index: &FrameIndex, loc: Loc) -> Result<(u64, Bytes), StoreError> {
        let entry = index
            .find(loc.offset())
            .ok_or(StoreError::Corrupt { what: "frame" })?;
        let mut raw = vec![0u8; entry.frame_bytes as usize];
        read_exact_at(&*self.file, &mut raw, self.data_start + entry.stored_offset)
            .map_err(|e| StoreError::io("read frame", e))?;
        let (_, plain) = decode_frame(&raw, self.key.as_ref())
            .map_err(|_| StoreError::Corrupt { what: "frame" })?;
        Ok((entry.plain_offset, Bytes::from(plain)))
    }
}

impl FileStore {
    /// With compression on, seals the oldest plain block that is not the tail (at most one
    /// per call, so a sync pays for one rewrite at most). Called with every record synced.
    /// A failure leaves the plain block (the rename is the commit) and marks it to be left
    /// alone.
    pub(super) fn seal_one_block(&mut self) {
        if !self.options.compress {
            return;
        }
        let tail = self.blocks.keys().next_back().copied();
        let candidate = self
            .blocks
            .values()
            .find(|b| {
                Some(b.index) != tail
                    && b.frames.is_none()
                    && !b.keep_as_is
                    && !self.scrub.pending(b.index)
            })
            .map(|b| (b.index, b.key.is_none()));
        if let Some((index, plain)) = candidate {
            // A plain block sealed without keys keeps its record offsets; otherwise the
            // rewrite moves records (sealed records shrink) under a fresh data key.
            let sealed = if plain && self.at_rest.is_none() {
                self.seal_block(index)
            } else {
                self.rewrite_block(index, true)
            };
            if sealed.is_err() {
                if let Some(block) = self.blocks.get_mut(&index) {
                    block.keep_as_is = true;
                }
            }
        }
    }

    fn seal_block(&mut self, index: u32) -> Result<(), StoreError> {
        self.invalidate_index()?;
        let block = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "block" })?;
        let mut plain = vec![0u8; usize::try_from(block.len).unwrap_or(0)];
        read_exact_at(&*block.file, &mut plain, 0).map_err(|e| StoreError::io("read block", e))?;
        let path = block.path.clone();
        let sealed = seal_content(&plain, HEADER_BYTES, None)?;
        write_atomic(&*self.io, &path, &sealed.0).map_err(|e| StoreError::io("seal block", e))?;
        self.index.wrote(sealed.0.len() as u64);
        let file = self
            .io
            .open(&path, OpenMode::ReadWrite)
            .map_err(|e| StoreError::io("open block", e))?;
        if let Some(block) = self.blocks.get_mut(&index) {
            block.file = file;
            block.len = sealed.0.len() as u64;
            block.frames = Some(sealed.1);
        }
        self.uncache(index);
        Ok(())
    }
}

/// A block's plain content (header, key record if any, and records from `data_start` on)
/// in sealed form: the header with `SEALED | COMPRESSED` (other flags kept), the key record,
/// then LZ4 frames of the records, AEAD under `key` when given. Frames start at plain
/// offset `data_start`, so record locations in the plain form hold.
pub fn seal_content(
    plain: &[u8],
    data_start: u64,
    key: Option<&DataKey>,
) -> Result<(Vec<u8>, FrameIndex), StoreError> {
    let at = usize::try_from(data_start).unwrap_or(usize::MAX);
    let (Some(header), Some(key_record)) = (
        plain.get(..HEADER_BYTES as usize),
        plain.get(HEADER_BYTES as usize..at),
    ) else {
        return Err(StoreError::Corrupt {
            what: "block header",
        });
    };
    let records = plain.get(at..).unwrap_or_default();
    let codec = FrameCodec {
        compress: true,
        key,
    };
    let body = encode_records(records, codec, data_start)?;
    let mut out = Vec::with_capacity(at + body.bytes.len());
    out.extend_from_slice(&block::sealed_header(header)?);
    out.extend_from_slice(key_record);
    out.extend_from_slice(&body.bytes);
    Ok((out, body.index))
}
