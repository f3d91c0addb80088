//! Block files (`docs/store-format.md` §3): the 32-byte header, file names, and an open
//! block that records are appended to and read back from with their CRC checked. An
//! encrypted block has its key record after the header (`super::block_key`) and its records
//! from `Block::data_start` on; its message records are sealed one by one.

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};

use super::cache::{StoreCache, WINDOW_BYTES};
use super::record::{self, Decoded, Kind};
use crate::error::StoreError;
use crate::io::{read_exact_at, write_all_at, OpenMode, StorageFile, StorageIo};
use crate::seal::{DataKey, FrameIndex, KEY_RECORD_BYTES};
use crate::types::StoredMsg;

const MAGIC: [u8; 4] = *b"NBLK";
const VERSION: u16 = 1;
const CSUM_CRC32C: u8 = 1;
/// The block header's size; records of a plain block start here.
pub const HEADER_BYTES: u64 = 32;
/// Largest block file recovery reads whole; a longer file is damaged, never a buffer size.
pub const BLOCK_FILE_BYTES_MAX: u64 = 1 << 30;
/// Go's block size for limits streams, the starting point the benchmarks will tune.
pub const BLOCK_BYTES_DEFAULT: u64 = 8 * 1024 * 1024;

/// The file name of block `index`: ten zero-padded digits, so a listing sorts by index.
pub fn file_name(index: u32) -> String {
    format!("{index:010}.blk")
}

/// The block index a file name stands for, if it is a block file.
pub fn parse_name(name: &str) -> Option<u32> {
    let digits = name.strip_suffix(".blk")?;
    if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The header of a new block with `flags` (0, or [`FLAG_ENCRYPTED`]).
pub fn encode_header(index: u32, first_seq: u64, created_ns: i64, flags: u8) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut w = Vec::with_capacity(32);
    w.extend_from_slice(&MAGIC);
    w.extend_from_slice(&VERSION.to_le_bytes());
    w.push(flags);
    w.push(CSUM_CRC32C);
    w.extend_from_slice(&index.to_le_bytes());
    w.extend_from_slice(&first_seq.to_le_bytes());
    w.extend_from_slice(&created_ns.to_le_bytes());
    let crc = crc32c::crc32c(&w);
    w.extend_from_slice(&crc.to_le_bytes());
    for (dst, src) in out.iter_mut().zip(w) {
        *dst = src;
    }
    out
}

const FLAG_SEALED: u8 = 1;
const FLAG_COMPRESSED: u8 = 2;
/// The block's key record follows the header (`super::block_key`).
pub const FLAG_ENCRYPTED: u8 = 4;

/// The flags of a header whose magic and CRC check out.
pub fn header_flags(header: &[u8]) -> Option<u8> {
    header_first_seq(header)?;
    header.get(6).copied()
}

/// Whether a block header (CRC unchecked: a sealed block with a damaged header still
/// decodes) says its records are in frames.
pub fn header_is_sealed(header: &[u8]) -> bool {
    header.get(..4) == Some(&MAGIC[..]) && header.get(6).is_some_and(|f| f & FLAG_SEALED != 0)
}

/// `header` with `SEALED | COMPRESSED` set (other flags kept) and its CRC recomputed.
pub fn sealed_header(header: &[u8]) -> Result<[u8; 32], StoreError> {
    header_with_flags(header, FLAG_SEALED | FLAG_COMPRESSED)
}

/// `header` with the `set` flags added to its own and its CRC recomputed.
pub fn header_with_flags(header: &[u8], set: u8) -> Result<[u8; 32], StoreError> {
    let mut out = [0u8; 32];
    let src = header.get(..32).ok_or(StoreError::Corrupt {
        what: "block header",
    })?;
    out.copy_from_slice(src);
    if let Some(flags) = out.get_mut(6) {
        *flags |= set;
    }
    let crc = crc32c::crc32c(out.get(..28).unwrap_or_default());
    if let Some(dst) = out.get_mut(28..32) {
        dst.copy_from_slice(&crc.to_le_bytes());
    }
    Ok(out)
}

/// Where a message record lives: the file store's in-memory body of a message, one per
/// stored message, so kept to 12 bytes: an offset inside a block fits 32 bits (blocks rotate
/// at a few MiB; [`Loc::new`] refuses a larger one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    pub block: u32,
    offset: u32,
    pub len: u32,
}

impl Loc {
    /// The record of `len` bytes at `offset` of block `block`; `None` when the offset does
    /// not fit.
    pub fn new(block: u32, offset: u64, len: u32) -> Option<Loc> {
        let offset = u32::try_from(offset).ok()?;
        Some(Loc { block, offset, len })
    }

    /// The record's offset in its block.
    pub fn offset(&self) -> u64 {
        u64::from(self.offset)
    }
}

impl crate::memstore::MsgBody for Loc {
    type Trace = Loc;

    /// A placeholder until the record is written (`FileStore` sets the real location).
    fn from_parts(_headers: bytes::Bytes, _payload: bytes::Bytes) -> Self {
        Loc::default()
    }

    fn parts(&self) -> (bytes::Bytes, bytes::Bytes) {
        (bytes::Bytes::new(), bytes::Bytes::new())
    }

    /// The file store erases the record on disk itself.
    fn erase(self) {}

    fn trace(&self) -> Loc {
        *self
    }
}

/// The `first_seq` of a block header that passes its magic and CRC checks.
pub fn header_first_seq(header: &[u8]) -> Option<u64> {
    let stored = u32::from_le_bytes(header.get(28..32)?.try_into().ok()?);
    if header.get(..4)? != MAGIC || crc32c::crc32c(header.get(..28)?) != stored {
        return None;
    }
    Some(u64::from_le_bytes(header.get(12..20)?.try_into().ok()?))
}

/// An open block file and the length of its valid content.
pub struct Block {
    pub index: u32,
    pub path: PathBuf,
    pub file: Box<dyn StorageFile>,
    /// Bytes of valid content: appends go here.
    pub len: u64,
    /// Message records in this block that the stream still holds. A block other than the
    /// tail with none is removed once it is the oldest (`FileStore::drop_dead_blocks`).
    pub live: u64,
    /// Bytes of those live message records.
    pub live_bytes: u64,
    /// Bytes of message records whose message the stream no longer holds: what compaction
    /// would give back.
    pub dead_bytes: u64,
    /// Recovery found damage in it, or a rewrite failed: never rewritten (damaged bytes stay
    /// on disk as evidence, `docs/store-format.md` §10).
    pub keep_as_is: bool,
    /// Its frames, when it is sealed (`super::sealed`): `len` is then the file's length, and
    /// `plain_len` the length of its plain content, which offsets and accounting use.
    pub frames: Option<FrameIndex>,
    pub plain_len: u64,
    /// Where records start, in the file and in the plain form: after the header, and the
    /// key record when the block is encrypted.
    pub data_start: u64,
    /// The block's data key, when it is encrypted and its key record opened.
    pub key: Option<DataKey>,
    /// Created by this process: only such an encrypted block takes sealed records, since
    /// offsets past the end an earlier process left may have held records lost in a crash
    /// (a nonce must never serve twice, `docs/store-format.md` §11).
    pub created_here: bool,
    /// Its key record opened only with `prev_key`: rewritten under `key` after a sync.
    pub rewrap: bool,
}

impl Block {
    /// Counts one message record of `len` bytes dying.
    pub fn kill(&mut self, len: u32) {
        self.live = self.live.saturating_sub(1);
        self.live_bytes = self.live_bytes.saturating_sub(u64::from(len));
        self.dead_bytes += u64::from(len);
    }
}

impl Block {
    /// Creates block `index` in `dir` with its header, synced, and syncs the directory so
    /// the file's existence is as durable as what is later appended to it.
    /// With `sealing` (a fresh data key and its key record, `super::block_key`), the block is
    /// encrypted, and the key record is written with the header.
    pub fn create(
        io: &dyn StorageIo,
        dir: &Path,
        index: u32,
        first_seq: u64,
        sealing: Option<(DataKey, [u8; KEY_RECORD_BYTES])>,
    ) -> Result<Block, StoreError> {
        let path = dir.join(file_name(index));
        let flags = if sealing.is_some() { FLAG_ENCRYPTED } else { 0 };
        let mut head = encode_header(index, first_seq, 0, flags).to_vec();
        let key = sealing.map(|(key, record)| {
            head.extend_from_slice(&record);
            key
        });
        let file = io
            .open(&path, OpenMode::Truncate)
            .map_err(|e| StoreError::io("create block", e))?;
        write_all_at(&*file, &head, 0).map_err(|e| StoreError::io("write block header", e))?;
        file.sync_data()
            .map_err(|e| StoreError::io("sync block", e))?;
        io.sync_dir(dir)
            .map_err(|e| StoreError::io("sync directory", e))?;
        let data_start = head.len() as u64;
        Ok(Block {
            index,
            path,
            file,
            len: data_start,
            live: 0,
            live_bytes: 0,
            dead_bytes: 0,
            keep_as_is: false,
            frames: None,
            plain_len: data_start,
            data_start,
            key,
            created_here: true,
            rewrap: false,
        })
    }

    /// Appends encoded records; returns the offset they start at.
    pub fn append(&mut self, bytes: &[u8]) -> Result<u64, StoreError> {
        let at = self.len;
        write_all_at(&*self.file, bytes, at).map_err(|e| StoreError::io("append", e))?;
        self.len += bytes.len() as u64;
        self.plain_len = self.len;
        Ok(at)
    }

    /// Reads the message record at `loc` back, checking its CRCs, kind and sequence.
    /// The message at `loc`: from the cache when it holds the record (no read, no
    /// allocation: headers and payload are views of the cached bytes, sliced while the cache
    /// is locked), else read into one buffer. `subject` is the stream's interned copy,
    /// checked against the record's.
    pub fn load(
        &self,
        loc: Loc,
        seq: u64,
        subject: Bytes,
        cache: &std::sync::Mutex<StoreCache>,
        budget: u64,
    ) -> Result<StoredMsg, StoreError> {
        let mut cache = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (record, checked) = if let Some((segment, at, checked)) = cache.find(loc) {
            let record = segment.get(at.clone()).unwrap_or_default();
            if !record::is_sealed(record) {
                return msg_from(segment, at, checked, seq, subject);
            }
            (segment.slice(at), checked)
        } else {
            let sealed = self.frames.is_some();
            let (start, segment) = match &self.frames {
                Some(frames) => self.read_frame(frames, loc)?,
                None => self.read_window(loc)?,
            };
            let from = usize::try_from(loc.offset().saturating_sub(start)).unwrap_or(usize::MAX);
            let to = from.saturating_add(loc.len as usize);
            if loc.offset() < start || to > segment.len() {
                return Err(StoreError::Corrupt { what: "record" });
            }
            let record = segment.slice(from..to);
            if sealed {
                cache.insert_frame(self.index, start, segment, budget);
            } else {
                let verified = verify_from(&segment, from);
                cache.insert_window(self.index, start, segment, verified, budget);
            }
            (record, sealed)
        };
        drop(cache);
        if record::is_sealed(&record) {
            let key = self.key.as_ref().ok_or(StoreError::WrongKey)?;
            let plain = Bytes::from(record::open_sealed(&record, key, self.index, loc.offset())?);
            return msg_from(&plain, 0..plain.len(), true, seq, subject);
        }
        msg_from(&record, 0..record.len(), checked, seq, subject)
    }

    fn read_window(&self, loc: Loc) -> Result<(u64, Bytes), StoreError> {
        let start = loc.offset() - loc.offset() % WINDOW_BYTES;
        let end = (start + WINDOW_BYTES)
            .max(loc.offset() + u64::from(loc.len))
            .min(self.plain_len.max(loc.offset() + u64::from(loc.len)));
        let mut buf = BytesMut::zeroed(usize::try_from(end - start).unwrap_or(0));
        read_exact_at(&*self.file, &mut buf, start).map_err(|e| StoreError::io("read block", e))?;
        Ok((start, buf.freeze()))
    }
}

/// The span of `window` from `from` on whose records pass their CRCs, record after record,
/// up to the first that does not (or does not end within the window).
fn verify_from(window: &[u8], from: usize) -> std::ops::Range<usize> {
    let mut end = from;
    while let Some(Decoded::Record(_, len)) = window.get(end..).map(record::decode) {
        end += len;
    }
    from..end
}

/// The message of the plain record at `at` in `segment`, checked against what the index says
/// is there (kind and sequence), and its CRCs unless `checked`.
fn msg_from(
    segment: &Bytes,
    at: std::ops::Range<usize>,
    checked: bool,
    seq: u64,
    subject: Bytes,
) -> Result<StoredMsg, StoreError> {
    let record = segment.get(at.clone()).unwrap_or_default();
    let decoded = if checked {
        record::decode_trusted(record)
    } else {
        match record::decode(record) {
            Decoded::Record(r, _) => Some(r),
            _ => None,
        }
    };
    // The sequence names the record: the index learnt the subject from this record, so
    // comparing it again (a `memcmp` per load) would only catch a bug of our own.
    let Some(r) = decoded.filter(|r| r.kind == Kind::Msg && r.seq == seq) else {
        return Err(StoreError::Corrupt { what: "record" });
    };
    debug_assert_eq!(r.subject, &subject[..]);
    let (headers, payload, timestamp_ns) = (
        span(segment, r.headers),
        span(segment, r.payload),
        r.timestamp_ns,
    );
    Ok(StoredMsg {
        seq,
        timestamp_ns,
        subject,
        headers: segment.slice(headers),
        payload: segment.slice(payload),
    })
}

/// Where `part`, a slice of `whole`, sits in it.
fn span(whole: &[u8], part: &[u8]) -> std::ops::Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

impl Block {
    /// Overwrites the headers and payload of the message record at `loc` with zeros in
    /// place, marking it `ERASED` with fresh CRCs, and syncs (`docs/store-format.md` §8). The
    /// caller has synced the tombstone first, so a crash midway leaves a record that fails
    /// its CRC but is covered by the tombstone: deleted, not lost. A sealed record's whole
    /// body and tag are overwritten with random bytes instead (zeros encrypted again at the
    /// same offset would reuse its nonce).
    pub fn erase(&self, loc: Loc, seq: u64) -> Result<(), StoreError> {
        let mut buf = vec![0u8; loc.len as usize];
        read_exact_at(&*self.file, &mut buf, loc.offset())
            .map_err(|e| StoreError::io("read record", e))?;
        let Decoded::Record(rec, _) = record::decode(&buf) else {
            return Err(StoreError::Corrupt { what: "record" });
        };
        if rec.kind != Kind::Msg || rec.seq != seq {
            return Err(StoreError::Corrupt { what: "record" });
        }
        if rec.sealed {
            let out = record::erase_sealed(&buf)?;
            return self.overwrite(&out, loc);
        }
        let headers = vec![0u8; rec.headers.len()];
        let payload = vec![0u8; rec.payload.len()];
        let erased = record::Record {
            erased: true,
            headers: &headers,
            payload: &payload,
            ..rec
        };
        let mut out = Vec::with_capacity(buf.len());
        if record::encode(&erased, &mut out) != Some(buf.len()) {
            return Err(StoreError::Corrupt {
                what: "record length",
            });
        }
        self.overwrite(&out, loc)
    }

    /// Writes the erased form of the record at `loc` over it, and syncs.
    fn overwrite(&self, out: &[u8], loc: Loc) -> Result<(), StoreError> {
        write_all_at(&*self.file, out, loc.offset()).map_err(|e| StoreError::io("erase", e))?;
        self.file
            .sync_data()
            .map_err(|e| StoreError::io("sync erase", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_block_names_round_trip() {
        assert_eq!(file_name(7), "0000000007.blk");
        assert_eq!(parse_name("0000000007.blk"), Some(7));
        assert_eq!(parse_name("7.blk"), None);
        assert_eq!(parse_name("0000000007.blk.tmp"), None);
        assert_eq!(parse_name("00000000x7.blk"), None);
    }

    #[test]
    fn store_block_header_layout() {
        let h = encode_header(3, 9, 0, 0);
        assert_eq!(&h[..4], b"NBLK");
        assert_eq!(crc32c::crc32c(&h[..28]).to_le_bytes(), h[28..32]);
    }
}
