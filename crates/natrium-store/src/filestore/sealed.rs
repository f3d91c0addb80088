//! Sealed blocks (`docs/store-format.md` §11): with `compression: s2`, a block that is no
//! longer the tail is rewritten as LZ4 frames of whole records, after its 32-byte header
//! (flags `SEALED | COMPRESSED`). Records keep their plain offsets (the first frame starts at
//! 32), so message locations, the record cache and the recovery scan work on plain offsets
//! whatever the block's form. Loading one record reads and decodes one frame, which the
//! record cache keeps, so a consumer reading in order decodes each frame once.
//! `TODO(#14)`: encryption of blocks and state files with the `seal` keys.

use bytes::Bytes;

use super::block::{self, Block, Loc, BLOCK_FILE_BYTES_MAX, HEADER_BYTES};
use super::store::FileStore;
use crate::error::StoreError;
use crate::io::{read_exact_at, write_atomic, OpenMode};
use crate::seal::{decode_frame, decode_frames, encode_records, FrameCodec, FrameIndex, Segment};

/// A block file's plain form: its header and records at their plain offsets (a damaged
/// frame's range left as zeros, which the scan treats as damage), and whether any frame was
/// damaged. A plain block is returned as it is.
pub fn plain_content(raw: Vec<u8>) -> (Vec<u8>, bool) {
    let header_len = HEADER_BYTES as usize;
    let Some(header) = raw.get(..header_len) else {
        return (raw, false);
    };
    if !block::header_is_sealed(header) {
        return (raw, false);
    }
    let decoded = decode_frames(raw.get(header_len..).unwrap_or_default(), None);
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

/// The frame index of a sealed block file's body, if the file is sealed.
pub fn frame_index(raw: &[u8]) -> Option<FrameIndex> {
    let header = raw.get(..HEADER_BYTES as usize)?;
    block::header_is_sealed(header)
        .then(|| FrameIndex::scan(raw.get(HEADER_BYTES as usize..).unwrap_or_default()))
}

impl Block {
    /// The decoded frame of a sealed block holding the record at `loc`: its plain offset and
    /// plain bytes.
    pub fn read_frame(&self, index: &FrameIndex, loc: Loc) -> Result<(u64, Bytes), StoreError> {
        let entry = index
            .find(loc.offset)
            .ok_or(StoreError::Corrupt { what: "frame" })?;
        let mut raw = vec![0u8; entry.frame_bytes as usize];
        read_exact_at(&*self.file, &mut raw, HEADER_BYTES + entry.stored_offset)
            .map_err(|e| StoreError::io("read frame", e))?;
        let (_, plain) =
            decode_frame(&raw, None).map_err(|_| StoreError::Corrupt { what: "frame" })?;
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
            .find(|b| Some(b.index) != tail && b.frames.is_none() && !b.keep_as_is)
            .map(|b| b.index);
        if let Some(index) = candidate {
            if self.seal_block(index).is_err() {
                if let Some(block) = self.blocks.get_mut(&index) {
                    block.keep_as_is = true;
                }
            }
        }
    }

    fn seal_block(&mut self, index: u32) -> Result<(), StoreError> {
        let block = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "block" })?;
        let mut plain = vec![0u8; usize::try_from(block.len).unwrap_or(0)];
        read_exact_at(&*block.file, &mut plain, 0).map_err(|e| StoreError::io("read block", e))?;
        let path = block.path.clone();
        let sealed = seal_content(&plain)?;
        write_atomic(&*self.io, &path, &sealed.0).map_err(|e| StoreError::io("seal block", e))?;
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

/// A block's plain content (header and records) in sealed form: the header with `SEALED |
/// COMPRESSED`, then LZ4 frames of its records.
pub fn seal_content(plain: &[u8]) -> Result<(Vec<u8>, FrameIndex), StoreError> {
    let header = plain
        .get(..HEADER_BYTES as usize)
        .ok_or(StoreError::Corrupt {
            what: "block header",
        })?;
    let records = plain.get(HEADER_BYTES as usize..).unwrap_or_default();
    let codec = FrameCodec {
        compress: true,
        key: None,
    };
    let body = encode_records(records, codec, HEADER_BYTES)?;
    let mut out = Vec::with_capacity(HEADER_BYTES as usize + body.bytes.len());
    out.extend_from_slice(&block::sealed_header(header)?);
    out.extend_from_slice(&body.bytes);
    Ok((out, body.index))
}
