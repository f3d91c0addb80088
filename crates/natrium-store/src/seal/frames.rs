//! The body of a sealed block (`docs/store-format.md` §11): whole records grouped into
//! frames of at most 64 KiB of plain bytes (one larger record has a frame to itself), each
//! compressed with LZ4 and/or encrypted, each checked and decoded on its own so that damage
//! loses only the frames it touches. A frame:
//!
//! ```text
//!  0      2      3      4            8            12                   20         24
//!  +------+------+------+------------+------------+--------------------+----------+
//!  | 'NF' | alg  | rsvd | raw_len    | stored_len | plain_offset       | hdr_crc  |
//!  | magic| u8   | u8=0 | u32        | u32        | u64                | u32      |
//!  +------+------+------+------------+------------+--------------------+----------+
//!  24: data, stored_len bytes: [nonce 12] payload [tag 16]; then crc u32
//! ```
//!
//! - `alg`: bit 0 LZ4 (the payload is an LZ4 block of `raw_len` bytes; a frame LZ4 does not
//!   shrink is stored as is), bit 1 AEAD (the data is a random nonce, the ciphertext and the
//!   tag, under the file's data key; the AAD is the 24-byte header, which binds the frame to
//!   its plain offset, so frames cannot be swapped or moved). Other bits are zero.
//! - `plain_offset`: where the frame's first record sits in the block's plain record bytes;
//!   frames are in increasing plain order with no gaps. A decoder that lost a frame learns
//!   from the next good one exactly which plain bytes are missing.
//! - `hdr_crc`: CRC-32C of bytes `[0, 20)`; `crc`: CRC-32C of every byte before it in the
//!   frame. A damaged header is skipped by resyncing on the next offset whose magic and
//!   header CRC check out and whose plain offset is not behind the last good frame.
//!
//! Nonces are random (12 bytes from the OS per frame) rather than a counter: a sealed block
//! is written once under a fresh data key, so a counter would also be unique, but random
//! nonces stay unique if a data key ever serves more than one file (at 2^-32 odds only after
//! some 2^32 frames, 256 TiB of 64 KiB frames), and they cost 12 bytes per 64 KiB.

use std::ops::Range;

use super::cipher::{random_nonce, DataKey, NONCE_BYTES, TAG_BYTES};
use crate::error::StoreError;
use crate::filestore::record::{self, Decoded, RECORD_BYTES_MAX};

pub const FRAME_MAGIC: [u8; 2] = *b"NF";
pub const FRAME_HEADER_BYTES: usize = 24;
pub const FRAME_CRC_BYTES: usize = 4;
/// Plain bytes a frame collects before it closes: small enough that loading one record
/// decodes little, large enough for LZ4 to find repeats across 128-byte messages.
pub const FRAME_PLAIN_BYTES_TARGET: usize = 64 * 1024;
/// Largest `raw_len` read from disk: a frame holds up to the target, or one record, which
/// may be larger. Anything longer is damage, never a buffer size.
pub const FRAME_RAW_BYTES_MAX: usize = RECORD_BYTES_MAX;
const AEAD_BYTES: usize = NONCE_BYTES + TAG_BYTES;
/// Largest `stored_len`: an uncompressed, encrypted frame of the largest size.
pub const FRAME_STORED_BYTES_MAX: usize = FRAME_RAW_BYTES_MAX + AEAD_BYTES;
pub const ALG_LZ4: u8 = 1;
pub const ALG_AEAD: u8 = 2;
const ALGS_KNOWN: u8 = ALG_LZ4 | ALG_AEAD;
const HDR_CRC_AT: usize = 20;

const _: () = assert!(FRAME_PLAIN_BYTES_TARGET <= FRAME_RAW_BYTES_MAX);
const _: () =
    assert!(FRAME_HEADER_BYTES + FRAME_STORED_BYTES_MAX + FRAME_CRC_BYTES < u32::MAX as usize);

/// A frame header that passed its checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub alg: u8,
    pub raw_len: u32,
    pub stored_len: u32,
    pub plain_offset: u64,
}

impl FrameHeader {
    /// Checks the header at the start of `bytes`: magic, reserved byte, known alg bits, the
    /// header CRC, lengths within their ceilings and consistent with the alg.
    pub fn parse(bytes: &[u8]) -> Option<FrameHeader> {
        let h = bytes.get(..FRAME_HEADER_BYTES)?;
        let crc = u32::from_le_bytes(h.get(HDR_CRC_AT..)?.try_into().ok()?);
        if h.get(..2)? != FRAME_MAGIC || crc32c::crc32c(h.get(..HDR_CRC_AT)?) != crc {
            return None;
        }
        let alg = *h.get(2)?;
        if alg & !ALGS_KNOWN != 0 || *h.get(3)? != 0 {
            return None;
        }
        let header = FrameHeader {
            alg,
            raw_len: u32::from_le_bytes(h.get(4..8)?.try_into().ok()?),
            stored_len: u32::from_le_bytes(h.get(8..12)?.try_into().ok()?),
            plain_offset: u64::from_le_bytes(h.get(12..20)?.try_into().ok()?),
        };
        header.consistent().then_some(header)
    }

    fn consistent(&self) -> bool {
        let raw = self.raw_len as usize;
        let overhead = if self.alg & ALG_AEAD != 0 {
            AEAD_BYTES
        } else {
            0
        };
        let Some(payload) = (self.stored_len as usize).checked_sub(overhead) else {
            return false;
        };
        let sized = if self.alg & ALG_LZ4 != 0 {
            payload >= 1 && payload < raw
        } else {
            payload == raw
        };
        sized
            && (1..=FRAME_RAW_BYTES_MAX).contains(&raw)
            && self
                .plain_offset
                .checked_add(u64::from(self.raw_len))
                .is_some()
    }

    fn encode(&self) -> [u8; FRAME_HEADER_BYTES] {
        let mut h = [0u8; FRAME_HEADER_BYTES];
        let fields = FRAME_MAGIC
            .into_iter()
            .chain([self.alg, 0])
            .chain(self.raw_len.to_le_bytes())
            .chain(self.stored_len.to_le_bytes())
            .chain(self.plain_offset.to_le_bytes());
        for (dst, src) in h.iter_mut().zip(fields) {
            *dst = src;
        }
        let crc = crc32c::crc32c(h.get(..HDR_CRC_AT).unwrap_or_default());
        for (dst, src) in h.iter_mut().skip(HDR_CRC_AT).zip(crc.to_le_bytes()) {
            *dst = src;
        }
        h
    }

    /// The whole frame's size: header, data and CRC.
    pub fn frame_bytes(&self) -> usize {
        FRAME_HEADER_BYTES + self.stored_len as usize + FRAME_CRC_BYTES
    }

    /// The plain bytes the frame holds (`parse` checked that the end does not overflow).
    pub fn plain_range(&self) -> Range<u64> {
        self.plain_offset..self.plain_offset + u64::from(self.raw_len)
    }
}

/// How frames are written: compressed or not, encrypted under a data key or not.
#[derive(Debug, Clone, Copy, Default)]
pub struct FrameCodec<'a> {
    pub compress: bool,
    pub key: Option<&'a DataKey>,
}

/// Where one frame sits: in plain offsets, and in bytes from the start of the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameEntry {
    pub plain_offset: u64,
    pub raw_len: u32,
    pub stored_offset: u64,
    /// The whole frame, header and CRC included: what to read to decode it alone.
    pub frame_bytes: u32,
}

impl FrameEntry {
    fn new(header: &FrameHeader, stored_offset: u64) -> FrameEntry {
        FrameEntry {
            plain_offset: header.plain_offset,
            raw_len: header.raw_len,
            stored_offset,
            frame_bytes: header.frame_bytes() as u32,
        }
    }

    pub fn plain_range(&self) -> Range<u64> {
        self.plain_offset..self.plain_offset + u64::from(self.raw_len)
    }
}

/// Plain offset to frame: which frame to read and decode to load one record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameIndex {
    entries: Vec<FrameEntry>,
}

impl FrameIndex {
    /// The index of a body's frames from their headers and CRCs (no data decoded or
    /// decrypted); damaged frames are left out.
    pub fn scan(body: &[u8]) -> FrameIndex {
        let mut index = FrameIndex::default();
        for step in Walker::new(body) {
            if let Step::Frame { at, header } = step {
                index.entries.push(FrameEntry::new(&header, at as u64));
            }
        }
        index
    }

    /// Adds the next frame (for an index built by reading headers from a file); `false`,
    /// and nothing added, if it does not follow the last entry in both orders.
    pub fn push(&mut self, entry: FrameEntry) -> bool {
        let follows = self.entries.last().is_none_or(|last| {
            entry.plain_offset >= last.plain_range().end
                && entry.stored_offset >= last.stored_offset + u64::from(last.frame_bytes)
        });
        if follows {
            self.entries.push(entry);
        }
        follows
    }

    /// The frame holding plain offset `plain_offset`, if any.
    pub fn find(&self, plain_offset: u64) -> Option<FrameEntry> {
        let after = self
            .entries
            .partition_point(|e| e.plain_offset <= plain_offset);
        let entry = *self.entries.get(after.checked_sub(1)?)?;
        entry.plain_range().contains(&plain_offset).then_some(entry)
    }

    pub fn entries(&self) -> &[FrameEntry] {
        &self.entries
    }
}

/// A sealed body and the index of its frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedBody {
    pub bytes: Vec<u8>,
    pub index: FrameIndex,
}

/// Packs whole records into frames.
#[derive(Debug)]
pub struct FrameWriter<'a> {
    codec: FrameCodec<'a>,
    out: Vec<u8>,
    pending: Vec<u8>,
    pending_offset: u64,
    index: FrameIndex,
}

impl<'a> FrameWriter<'a> {
    /// A writer whose first record sits at plain offset `plain_base` (for instance the
    /// offset records had in the plain block, so record locations survive sealing).
    pub fn new(codec: FrameCodec<'a>, plain_base: u64) -> FrameWriter<'a> {
        FrameWriter {
            codec,
            out: Vec::new(),
            pending: Vec::with_capacity(FRAME_PLAIN_BYTES_TARGET),
            pending_offset: plain_base,
            index: FrameIndex::default(),
        }
    }

    /// Adds one whole record (or any bytes that must stay in one frame).
    pub fn push_record(&mut self, record: &[u8]) -> Result<(), StoreError> {
        if record.len() > FRAME_RAW_BYTES_MAX {
            return Err(StoreError::Corrupt {
                what: "record to seal (over the record size limit)",
            });
        }
        if !self.pending.is_empty() && self.pending.len() + record.len() > FRAME_PLAIN_BYTES_TARGET
        {
            self.flush()?;
        }
        self.pending.extend_from_slice(record);
        Ok(())
    }

    /// Closes the last frame; returns the body and its index.
    pub fn finish(mut self) -> Result<SealedBody, StoreError> {
        self.flush()?;
        Ok(SealedBody {
            bytes: self.out,
            index: self.index,
        })
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let at = self.out.len();
        let header = write_frame(
            &self.codec,
            self.pending_offset,
            &self.pending,
            &mut self.out,
        )?;
        let pushed = self.index.push(FrameEntry::new(&header, at as u64));
        debug_assert!(pushed, "frames are written in order");
        self.pending_offset = header.plain_range().end;
        self.pending.clear();
        Ok(())
    }
}

/// Seals a block's plain record bytes (records back to back, as after the block header),
/// cutting frames only between records. Bytes that are not a record (damage the block
/// already had) are carried over as they are, a byte at a time, so that the records around
/// them still start frames whole and recovery finds the same records after sealing.
pub fn encode_records(
    plain: &[u8],
    codec: FrameCodec<'_>,
    plain_base: u64,
) -> Result<SealedBody, StoreError> {
    let mut writer = FrameWriter::new(codec, plain_base);
    let mut rest = plain;
    while !rest.is_empty() {
        let len = match record::decode(rest) {
            Decoded::Record(_, len) | Decoded::BadRecord { len, .. } => len,
            Decoded::Incomplete => rest.len(),
            Decoded::BadHeader => 1,
        };
        let (head, tail) = rest.split_at(len.min(rest.len()));
        writer.push_record(head)?;
        rest = tail;
    }
    writer.finish()
}

fn write_frame(
    codec: &FrameCodec<'_>,
    plain_offset: u64,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> Result<FrameHeader, StoreError> {
    let start = out.len();
    out.resize(start + FRAME_HEADER_BYTES, 0);
    let sealing = match codec.key {
        Some(key) => {
            let nonce = random_nonce()?;
            out.extend_from_slice(&nonce);
            Some((key, nonce))
        }
        None => None,
    };
    let payload_at = out.len();
    let mut alg = 0;
    if codec.compress && compress_onto(raw, out) {
        alg |= ALG_LZ4;
    } else {
        out.extend_from_slice(raw);
    }
    let overhead = if sealing.is_some() {
        alg |= ALG_AEAD;
        AEAD_BYTES
    } else {
        0
    };
    let header = FrameHeader {
        alg,
        raw_len: raw.len() as u32,
        stored_len: (out.len() - payload_at + overhead) as u32,
        plain_offset,
    };
    let encoded = header.encode();
    if let Some(slot) = out.get_mut(start..start + FRAME_HEADER_BYTES) {
        slot.copy_from_slice(&encoded);
    }
    if let Some((key, nonce)) = sealing {
        key.seal_tail(&nonce, &encoded, out, payload_at)?;
    }
    let crc = crc32c::crc32c(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(FrameHeader::parse(&encoded), Some(header));
    debug_assert_eq!(out.len() - start, header.frame_bytes());
    Ok(header)
}

/// Appends the LZ4 block of `raw` to `out` if it is smaller than `raw`; `false` (and `out`
/// unchanged) if not.
fn compress_onto(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let at = out.len();
    out.resize(at + lz4_flex::block::get_maximum_output_size(raw.len()), 0);
    let written = out
        .get_mut(at..)
        .map(|dst| lz4_flex::block::compress_into(raw, dst));
    match written {
        Some(Ok(n)) if n < raw.len() => {
            out.truncate(at + n);
            true
        }
        _ => {
            out.truncate(at);
            false
        }
    }
}

/// Why a frame was not decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DamageReason {
    /// No valid header here: the bytes up to the next valid frame are skipped.
    Header,
    /// A valid header whose frame runs past the end of the bytes (a cut file).
    Cut,
    /// The frame's CRC does not match.
    Crc,
    /// The frame is encrypted and no data key was given.
    NoKey,
    /// The CRC matched but authenticated decryption failed (tampering, or a wrong key).
    Decrypt,
    /// The CRC matched but the LZ4 data does not decode to `raw_len` bytes.
    Decompress,
}

/// Bytes that did not decode: where they are stored and which plain bytes they held, where
/// known (a damaged first frame has no known plain start; damage running to the end has
/// no known plain end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Offsets from the start of the frames.
    pub stored: Range<u64>,
    pub plain_start: Option<u64>,
    pub plain_end: Option<u64>,
    pub reason: DamageReason,
}

/// The plain bytes of one good frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub plain_offset: u64,
    pub stored_offset: u64,
    pub bytes: Vec<u8>,
}

/// Every good frame's plain bytes, in order, and every damaged stretch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecodedFrames {
    pub segments: Vec<Segment>,
    pub damaged: Vec<Damage>,
}

/// Decodes every frame of a sealed body. Never fails as a whole and never panics: a damaged
/// frame is reported in `damaged` and the next good frame decodes as usual.
pub fn decode_frames(body: &[u8], key: Option<&DataKey>) -> DecodedFrames {
    let mut out = DecodedFrames::default();
    for step in Walker::new(body) {
        match step {
            Step::Damage(damage) => out.damaged.push(damage),
            Step::Frame { at, header } => {
                match decode_frame(body.get(at..).unwrap_or_default(), key) {
                    Ok((_, bytes)) => out.segments.push(Segment {
                        plain_offset: header.plain_offset,
                        stored_offset: at as u64,
                        bytes,
                    }),
                    Err(reason) => out.damaged.push(Damage {
                        stored: at as u64..(at + header.frame_bytes()) as u64,
                        plain_start: Some(header.plain_range().start),
                        plain_end: Some(header.plain_range().end),
                        reason,
                    }),
                }
            }
        }
    }
    out
}

/// Decodes the frame at the start of `bytes` (later bytes are not looked at): its header
/// and plain bytes. The header, the frame's length against `bytes` and the CRC are checked
/// before any buffer is sized.
pub fn decode_frame(
    bytes: &[u8],
    key: Option<&DataKey>,
) -> Result<(FrameHeader, Vec<u8>), DamageReason> {
    let header = FrameHeader::parse(bytes).ok_or(DamageReason::Header)?;
    let frame = bytes.get(..header.frame_bytes()).ok_or(DamageReason::Cut)?;
    let Some(covered) = crc_checked(frame) else {
        return Err(DamageReason::Crc);
    };
    let data = covered.get(FRAME_HEADER_BYTES..).unwrap_or_default();
    let opened;
    let payload = if header.alg & ALG_AEAD != 0 {
        let key = key.ok_or(DamageReason::NoKey)?;
        let (nonce, sealed) = data.split_at(NONCE_BYTES.min(data.len()));
        let nonce: &[u8; NONCE_BYTES] = nonce.try_into().map_err(|_| DamageReason::Crc)?;
        let aad = covered.get(..FRAME_HEADER_BYTES).unwrap_or_default();
        opened = key.open(nonce, aad, sealed).ok_or(DamageReason::Decrypt)?;
        &opened[..]
    } else {
        data
    };
    let plain = if header.alg & ALG_LZ4 != 0 {
        let mut plain = vec![0u8; header.raw_len as usize];
        match lz4_flex::block::decompress_into(payload, &mut plain) {
            Ok(n) if n == plain.len() => plain,
            _ => return Err(DamageReason::Decompress),
        }
    } else {
        payload.to_vec()
    };
    debug_assert_eq!(plain.len(), header.raw_len as usize);
    Ok((header, plain))
}

/// The bytes a whole frame's CRC covers, if it matches.
fn crc_checked(frame: &[u8]) -> Option<&[u8]> {
    let (covered, crc) = frame.split_at(frame.len().checked_sub(FRAME_CRC_BYTES)?);
    let stored = u32::from_le_bytes(crc.try_into().ok()?);
    (crc32c::crc32c(covered) == stored).then_some(covered)
}

/// One step of a walk over a body's frames.
enum Step {
    Frame { at: usize, header: FrameHeader },
    Damage(Damage),
}

/// Walks a body frame by frame, checking each frame's CRC, and turns every stretch without
/// a valid frame into one `Damage` that ends where the next valid frame starts.
struct Walker<'b> {
    body: &'b [u8],
    at: usize,
    /// The plain end of the last frame (or the start of the next, after damage).
    plain_end: Option<u64>,
}

impl<'b> Walker<'b> {
    fn new(body: &'b [u8]) -> Walker<'b> {
        Walker {
            body,
            at: 0,
            plain_end: None,
        }
    }

    /// A frame whose header is valid, that fits in the body and is not behind the last.
    fn frame_at(&self, at: usize) -> Option<FrameHeader> {
        let header = FrameHeader::parse(self.body.get(at..)?)?;
        let fits = at
            .checked_add(header.frame_bytes())
            .is_some_and(|end| end <= self.body.len());
        let ordered = self.plain_end.is_none_or(|e| header.plain_offset >= e);
        (fits && ordered).then_some(header)
    }

    fn next_frame_from(&self, from: usize) -> usize {
        let mut at = from;
        while at < self.body.len() {
            if self.frame_at(at).is_some() {
                return at;
            }
            // Skip to the next byte that can start a magic.
            at = self
                .body
                .get(at + 1..)
                .and_then(|rest| rest.iter().position(|b| *b == FRAME_MAGIC[0]))
                .map_or(self.body.len(), |skip| at + 1 + skip);
        }
        self.body.len()
    }
}

impl Iterator for Walker<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        let start = self.at;
        if start >= self.body.len() {
            return None;
        }
        if let Some(header) = self.frame_at(start) {
            if let Some(end) = self.plain_end.filter(|e| header.plain_offset > *e) {
                // Plain bytes missing with no stored bytes: a frame was cut out whole.
                self.plain_end = Some(header.plain_offset);
                return Some(Step::Damage(Damage {
                    stored: start as u64..start as u64,
                    plain_start: Some(end),
                    plain_end: Some(header.plain_offset),
                    reason: DamageReason::Header,
                }));
            }
            let end = start + header.frame_bytes();
            self.plain_end = Some(header.plain_range().end);
            if self.body.get(start..end).and_then(crc_checked).is_some() {
                self.at = end;
                return Some(Step::Frame { at: start, header });
            }
            // The header is trusted, but bytes inside the frame may have been lost or added,
            // so the next frame may not start at its end: resync inside it if not.
            let next = if self.frame_at(end).is_some() {
                end
            } else {
                self.next_frame_from(start + 1)
            };
            self.at = next;
            return Some(Step::Damage(Damage {
                stored: start as u64..next as u64,
                plain_start: Some(header.plain_offset),
                plain_end: Some(header.plain_range().end),
                reason: DamageReason::Crc,
            }));
        }
        let cut = FrameHeader::parse(self.body.get(start..).unwrap_or_default())
            .filter(|h| start + h.frame_bytes() > self.body.len());
        let next = self.next_frame_from(start + 1);
        let next_plain = self.frame_at(next).map(|h| h.plain_offset);
        let damage = Damage {
            stored: start as u64..next as u64,
            plain_start: self.plain_end.or(cut.map(|h| h.plain_offset)),
            plain_end: next_plain,
            reason: if cut.is_some() {
                DamageReason::Cut
            } else {
                DamageReason::Header
            },
        };
        self.at = next;
        self.plain_end = next_plain.or(self.plain_end);
        Some(Step::Damage(damage))
    }
}
