//! The message record codec of `docs/store-format.md` §2: encode into a caller's buffer,
//! decode from bytes read off disk with every length checked, and tell a torn or damaged
//! record apart from a valid one (what recovery's resync needs). In an encrypted block a
//! message record's body is sealed (`SEALED_BODY`, §11): `seal` and `open_sealed` turn a
//! plain record into its stored form and back, `erase_sealed` overwrites one.

use crate::error::StoreError;
use crate::limits::{MESSAGE_BYTES_MAX, SUBJECT_BYTES_MAX};
use crate::seal::{
    fill_random, open_record_body_in_place, seal_record_body_into, DataKey, TAG_BYTES,
};
use crate::types::MsgTtl;

pub const MAGIC: [u8; 2] = *b"NR";
/// Fixed header: magic, kind, flags, length, seq, ts, subject and headers lengths, reserved,
/// header CRC.
pub const HEADER_BYTES: usize = 36;
const CRC_BYTES: usize = 4;
const TTL_BYTES: usize = 8;
/// The smallest record: a header and the record CRC.
pub const RECORD_BYTES_MIN: usize = HEADER_BYTES + CRC_BYTES;
/// Anything longer is corruption, never a buffer size: the largest message with the
/// longest subject, sealed (`TAG_BYTES`).
pub const RECORD_BYTES_MAX: usize =
    MESSAGE_BYTES_MAX + 64 * 1024 + HEADER_BYTES + CRC_BYTES + TTL_BYTES + TAG_BYTES;
const FLAG_TTL: u8 = 1;
const FLAG_ERASED: u8 = 2;
/// The body (everything between the fixed header and the CRC) is encrypted, tag after it.
const FLAG_SEALED_BODY: u8 = 4;
const FLAGS_KNOWN: u8 = FLAG_TTL | FLAG_ERASED | FLAG_SEALED_BODY;

// The largest message still fits once sealed.
const _: () = assert!(
    SUBJECT_BYTES_MAX + MESSAGE_BYTES_MAX + RECORD_BYTES_MIN + TTL_BYTES + TAG_BYTES
        <= RECORD_BYTES_MAX
);
const _: () = assert!(RECORD_BYTES_MAX < u32::MAX as usize);

/// What a record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Msg = 1,
    Skip = 2,
    Tombstone = 3,
    /// `seq` becomes the stream's last sequence; every message above it is gone.
    Truncate = 4,
    /// `seq` is the stream's first sequence: every message below it is gone (a purge,
    /// compact or limit that removed the oldest messages), in one record however many.
    First = 5,
    /// Sequences `seq ..= seq + count - 1` (the payload is the `u64` count) held messages
    /// that were removed and whose records compaction dropped; `timestamp_ns` is the last
    /// one's time. Keeps the sequences accounted for without the records or their tombstones.
    Deleted = 6,
    /// The start of an atomic batch (`super::batch`): the payload is the `u64` count of
    /// message records that follow it and the `u64` byte length they take; recovery applies
    /// them only when all of them are whole.
    Batch = 7,
}

impl Kind {
    /// The kind a valid header's kind byte names (`parse` has checked the range).
    fn from_byte(byte: u8) -> Kind {
        match byte {
            1 => Kind::Msg,
            2 => Kind::Skip,
            3 => Kind::Tombstone,
            4 => Kind::Truncate,
            5 => Kind::First,
            6 => Kind::Deleted,
            _ => Kind::Batch,
        }
    }
}

/// A record, borrowed from the buffer it was decoded from or is encoded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: Kind,
    pub erased: bool,
    /// Decoded from a `SEALED_BODY` record: `subject` and `headers` are empty, `ttl` is
    /// `None` and `payload` is the encrypted body with its tag ([`open_sealed`] gives the
    /// plain record). Never set on a record to encode.
    pub sealed: bool,
    pub seq: u64,
    pub timestamp_ns: i64,
    pub ttl: MsgTtl,
    pub subject: &'a [u8],
    pub headers: &'a [u8],
    pub payload: &'a [u8],
}

impl<'a> Record<'a> {
    /// A record with no subject, headers or TTL (skip, tombstone, truncate, first, deleted).
    pub fn empty(kind: Kind, seq: u64, timestamp_ns: i64, payload: &'a [u8]) -> Record<'a> {
        Record {
            kind,
            erased: false,
            sealed: false,
            seq,
            timestamp_ns,
            ttl: MsgTtl::None,
            subject: &[],
            headers: &[],
            payload,
        }
    }
}

/// The outcome of decoding at one offset.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// A valid record of this many bytes.
    Record(Record<'a>, usize),
    /// The bytes end inside a record whose header is valid (a torn tail, or a short read).
    Incomplete,
    /// The header fails its checks: no length can be trusted, resync from the next byte.
    BadHeader,
    /// The header is valid but the record's CRC is not: the sequence is known, and the scan
    /// can go on after `len` bytes.
    BadRecord { seq: u64, len: usize },
}

/// Appends the encoding of `record` to `out`. Returns `None` (and appends nothing) when a
/// part is over its limit, which callers check before this.
pub fn encode(record: &Record<'_>, out: &mut Vec<u8>) -> Option<usize> {
    let ttl = match record.ttl {
        MsgTtl::None => None,
        MsgTtl::Never => Some(-1),
        MsgTtl::Secs(s) => Some(i64::try_from(s).unwrap_or(i64::MAX)),
    };
    if record.sealed {
        return None;
    }
    let subject_len = u16::try_from(record.subject.len()).ok()?;
    let headers_len = u32::try_from(record.headers.len()).ok()?;
    let len = RECORD_BYTES_MIN
        + ttl.map_or(0, |_| TTL_BYTES)
        + record.subject.len()
        + record.headers.len()
        + record.payload.len();
    if len > RECORD_BYTES_MAX {
        return None;
    }
    let start = out.len();
    out.reserve(len);
    out.extend_from_slice(&MAGIC);
    out.push(record.kind as u8);
    let mut flags = if ttl.is_some() { FLAG_TTL } else { 0 };
    if record.erased {
        flags |= FLAG_ERASED;
    }
    out.push(flags);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&record.seq.to_le_bytes());
    out.extend_from_slice(&record.timestamp_ns.to_le_bytes());
    out.extend_from_slice(&subject_len.to_le_bytes());
    out.extend_from_slice(&headers_len.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    let header_crc = crc32c::crc32c(out.get(start..)?);
    out.extend_from_slice(&header_crc.to_le_bytes());
    if let Some(ttl) = ttl {
        out.extend_from_slice(&ttl.to_le_bytes());
    }
    out.extend_from_slice(record.subject);
    out.extend_from_slice(record.headers);
    out.extend_from_slice(record.payload);
    let crc = crc32c::crc32c(out.get(start..)?);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len() - start, len);
    Some(len)
}

fn u16_at(buf: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(buf.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(buf: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(buf.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes the record at the start of `buf`.
pub fn decode(buf: &[u8]) -> Decoded<'_> {
    let Some(header) = buf.get(..HEADER_BYTES) else {
        return if buf
            .get(..2)
            .is_none_or(|m| m == MAGIC.get(..m.len()).unwrap_or_default())
        {
            Decoded::Incomplete
        } else {
            Decoded::BadHeader
        };
    };
    match parse(header) {
        Some((len, _)) if buf.len() < len => Decoded::Incomplete,
        Some((len, seq)) => body(buf.get(..len).unwrap_or_default(), seq),
        None => Decoded::BadHeader,
    }
}

/// The kind and part lengths (subject, headers, payload) that a valid fixed header at the
/// start of `buf` declares: what recovery can tell of a record whose body fails its CRC.
pub fn declared_parts(buf: &[u8]) -> Option<(Kind, usize, usize, usize)> {
    let header = buf.get(..HEADER_BYTES)?;
    let (len, _) = parse(header)?;
    let flags = *header.get(3)?;
    let subject = usize::from(u16_at(header, 24)?);
    let headers = u32_at(header, 26)? as usize;
    let ttl = if flags & FLAG_TTL != 0 { TTL_BYTES } else { 0 };
    let tag = if flags & FLAG_SEALED_BODY != 0 {
        TAG_BYTES
    } else {
        0
    };
    let payload = len.checked_sub(RECORD_BYTES_MIN + ttl + tag + subject + headers)?;
    let kind = Kind::from_byte(*header.get(2)?);
    Some((kind, subject, headers, payload))
}

/// The length a valid fixed header at the start of `buf` declares for its record.
pub fn declared_len(buf: &[u8]) -> Option<usize> {
    parse(buf.get(..HEADER_BYTES)?).map(|(len, _)| len)
}

/// Checks the fixed header; returns the record length and sequence.
fn parse(header: &[u8]) -> Option<(usize, u64)> {
    let stored_crc = u32_at(header, 32)?;
    if header.get(..2)? != MAGIC || crc32c::crc32c(header.get(..32)?) != stored_crc {
        return None;
    }
    parse_fields(header)
}

/// Decodes a record whose CRCs were checked before (bytes the record cache verified when it
/// read them): every length is still checked, the CRCs are not computed again.
pub fn decode_trusted(buf: &[u8]) -> Option<Record<'_>> {
    let (len, seq) = parse_fields(buf.get(..HEADER_BYTES)?)?;
    split_record(buf.get(..len.checked_sub(CRC_BYTES)?)?, seq)
}

/// The fixed header's fields, checked for sense but not for their CRC.
fn parse_fields(header: &[u8]) -> Option<(usize, u64)> {
    if header.get(..2)? != MAGIC {
        return None;
    }
    let kind = *header.get(2)?;
    let flags = *header.get(3)?;
    let len = u32_at(header, 4)? as usize;
    let subject_len = usize::from(u16_at(header, 24)?);
    let headers_len = u32_at(header, 26)? as usize;
    let ttl = if flags & FLAG_TTL != 0 { TTL_BYTES } else { 0 };
    let tag = if flags & FLAG_SEALED_BODY != 0 {
        TAG_BYTES
    } else {
        0
    };
    let fixed = RECORD_BYTES_MIN + ttl + tag + subject_len + headers_len;
    let sane = (1..=7).contains(&kind) && flags & !FLAGS_KNOWN == 0 && u16_at(header, 30)? == 0;
    if !sane || len < fixed || len > RECORD_BYTES_MAX {
        return None;
    }
    Some((len, u64_at(header, 8)?))
}

/// Checks the record CRC and splits the body of a record whose header passed `parse`.
fn body(rec: &[u8], seq: u64) -> Decoded<'_> {
    let len = rec.len();
    let split = len
        .checked_sub(CRC_BYTES)
        .and_then(|n| Some((rec.get(..n)?, u32_at(rec, n)?)));
    let Some((covered, crc)) = split else {
        return Decoded::BadHeader;
    };
    if crc32c::crc32c(covered) != crc {
        return Decoded::BadRecord { seq, len };
    }
    split_record(covered, seq).map_or(Decoded::BadRecord { seq, len }, |r| Decoded::Record(r, len))
}

fn split_record(covered: &[u8], seq: u64) -> Option<Record<'_>> {
    let kind = Kind::from_byte(*covered.get(2)?);
    let flags = *covered.get(3)?;
    if flags & FLAG_SEALED_BODY != 0 {
        return Some(Record {
            kind,
            erased: flags & FLAG_ERASED != 0,
            sealed: true,
            seq,
            timestamp_ns: u64_at(covered, 16)? as i64,
            ttl: MsgTtl::None,
            subject: &[],
            headers: &[],
            payload: covered.get(HEADER_BYTES..)?,
        });
    }
    let subject_len = usize::from(u16_at(covered, 24)?);
    let headers_len = u32_at(covered, 26)? as usize;
    let mut at = HEADER_BYTES;
    let ttl = if flags & FLAG_TTL != 0 {
        at += TTL_BYTES;
        match u64_at(covered, HEADER_BYTES)? as i64 {
            -1 => MsgTtl::Never,
            s => MsgTtl::Secs(u64::try_from(s).ok()?),
        }
    } else {
        MsgTtl::None
    };
    let subject = covered.get(at..at + subject_len)?;
    let headers = covered.get(at + subject_len..at + subject_len + headers_len)?;
    let payload = covered.get(at + subject_len + headers_len..)?;
    Some(Record {
        kind,
        erased: flags & FLAG_ERASED != 0,
        sealed: false,
        seq,
        timestamp_ns: u64_at(covered, 16)? as i64,
        ttl,
        subject,
        headers,
        payload,
    })
}

/// Whether the record at the start of `buf` says its body is sealed (its header unchecked).
pub fn is_sealed(buf: &[u8]) -> bool {
    buf.get(3).is_some_and(|f| f & FLAG_SEALED_BODY != 0)
}

/// `header` (a fixed header) with `flags` and `len`, and its CRC recomputed.
fn header_with(header: &[u8], flags: u8, len: usize) -> Option<[u8; HEADER_BYTES]> {
    let mut out: [u8; HEADER_BYTES] = header.get(..HEADER_BYTES)?.try_into().ok()?;
    *out.get_mut(3)? = flags;
    out.get_mut(4..8)?
        .copy_from_slice(&u32::try_from(len).ok()?.to_le_bytes());
    let crc = crc32c::crc32c(out.get(..32)?);
    out.get_mut(32..)?.copy_from_slice(&crc.to_le_bytes());
    Some(out)
}

/// Appends the stored form of the plain record `plain` (as [`encode`] wrote it) for offset
/// `offset` of the block `nonce_prefix` whose data key is `key`: its body sealed, nonce
/// `nonce_prefix | offset`, the new fixed header as the AAD, `record_len` grown by the tag,
/// fresh CRCs over the stored bytes. Returns the stored length.
pub fn seal(
    plain: &[u8],
    key: &DataKey,
    nonce_prefix: u32,
    offset: u64,
    out: &mut Vec<u8>,
) -> Result<usize, StoreError> {
    const BAD: StoreError = StoreError::Corrupt {
        what: "record to seal",
    };
    let (len, _) = plain.get(..HEADER_BYTES).and_then(parse).ok_or(BAD)?;
    let flags = *plain.get(3).ok_or(BAD)?;
    if flags & (FLAG_SEALED_BODY | FLAG_ERASED) != 0 {
        return Err(BAD);
    }
    let body = plain.get(HEADER_BYTES..len - CRC_BYTES).ok_or(BAD)?;
    let sealed_len = len + TAG_BYTES;
    if sealed_len > RECORD_BYTES_MAX {
        return Err(StoreError::MsgTooLarge);
    }
    let header = header_with(plain, flags | FLAG_SEALED_BODY, sealed_len).ok_or(BAD)?;
    let start = out.len();
    out.reserve(sealed_len);
    out.extend_from_slice(&header);
    seal_record_body_into(key, nonce_prefix, offset, &header, body, out)?;
    let crc = crc32c::crc32c(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len() - start, sealed_len);
    Ok(sealed_len)
}

/// The plain record (as [`encode`] writes it, CRCs fresh) of the sealed record `stored` at
/// `offset` of block `nonce_prefix`: `Decrypt` if the key, place or any byte differs from
/// what was sealed, `Corrupt` if the header makes no sense or the record is erased. The
/// fixed header's CRCs need no check first: the AEAD authenticates every byte.
pub fn open_sealed(
    stored: &[u8],
    key: &DataKey,
    nonce_prefix: u32,
    offset: u64,
) -> Result<Vec<u8>, StoreError> {
    const BAD: StoreError = StoreError::Corrupt {
        what: "sealed record",
    };
    let header = stored.get(..HEADER_BYTES).ok_or(BAD)?;
    let (len, _) = parse_fields(header).ok_or(BAD)?;
    let flags = *header.get(3).ok_or(BAD)?;
    if flags & FLAG_SEALED_BODY == 0 || flags & FLAG_ERASED != 0 {
        return Err(BAD);
    }
    // `parse_fields` checked that the length holds the header, tag and CRC.
    let tag_at = len - CRC_BYTES - TAG_BYTES;
    let data = stored.get(HEADER_BYTES..tag_at).ok_or(BAD)?;
    let tag = stored.get(tag_at..len - CRC_BYTES).ok_or(BAD)?;
    let plain_len = len - TAG_BYTES;
    let plain_header = header_with(header, flags & !FLAG_SEALED_BODY, plain_len).ok_or(BAD)?;
    let mut out = Vec::with_capacity(plain_len);
    out.extend_from_slice(&plain_header);
    out.extend_from_slice(data);
    let body = out.get_mut(HEADER_BYTES..).unwrap_or_default();
    open_record_body_in_place(key, nonce_prefix, offset, header, body, tag)?;
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert!(matches!(decode(&out), Decoded::Record(..)));
    Ok(out)
}

/// The erased form of the sealed record `stored` (CRCs checked): its body and tag replaced
/// by random bytes, `ERASED` set, fresh CRCs. Encrypting zeros again at the same offset
/// would reuse the record's nonce (`docs/store-format.md` §8).
pub fn erase_sealed(stored: &[u8]) -> Result<Vec<u8>, StoreError> {
    const BAD: StoreError = StoreError::Corrupt { what: "record" };
    let Decoded::Record(rec, len) = decode(stored) else {
        return Err(BAD);
    };
    if !rec.sealed {
        return Err(BAD);
    }
    let flags = *stored.get(3).ok_or(BAD)?;
    let mut out = vec![0u8; len];
    let header = header_with(stored, flags | FLAG_ERASED, len).ok_or(BAD)?;
    out.get_mut(..HEADER_BYTES)
        .ok_or(BAD)?
        .copy_from_slice(&header);
    fill_random(out.get_mut(HEADER_BYTES..len - CRC_BYTES).ok_or(BAD)?)?;
    let crc = crc32c::crc32c(out.get(..len - CRC_BYTES).ok_or(BAD)?);
    out.get_mut(len - CRC_BYTES..)
        .ok_or(BAD)?
        .copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ttl: MsgTtl) -> Record<'static> {
        Record {
            kind: Kind::Msg,
            erased: false,
            sealed: false,
            seq: 42,
            timestamp_ns: 1_700_000_000_000_000_000,
            ttl,
            subject: b"orders.new",
            headers: b"NATS/1.0\r\nA: b\r\n\r\n",
            payload: b"hello",
        }
    }

    #[test]
    fn store_record_round_trip() {
        for ttl in [MsgTtl::None, MsgTtl::Never, MsgTtl::Secs(30)] {
            let mut buf = Vec::new();
            let len = encode(&sample(ttl), &mut buf).unwrap();
            assert_eq!(len, buf.len());
            assert_eq!(decode(&buf), Decoded::Record(sample(ttl), len));
        }
        let mut buf = Vec::new();
        let skip = Record {
            kind: Kind::Skip,
            subject: b"",
            headers: b"",
            payload: b"",
            ..sample(MsgTtl::None)
        };
        assert_eq!(encode(&skip, &mut buf), Some(RECORD_BYTES_MIN));
    }

    #[test]
    fn store_record_sealed_round_trip_and_erase() {
        use crate::seal::Cipher;
        for cipher in [Cipher::ChaCha, Cipher::Aes] {
            let key = DataKey::generate(cipher).unwrap();
            for ttl in [MsgTtl::None, MsgTtl::Secs(30)] {
                let mut plain = Vec::new();
                encode(&sample(ttl), &mut plain).unwrap();
                let mut stored = Vec::new();
                let len = seal(&plain, &key, 3, 4096, &mut stored).unwrap();
                assert_eq!((len, stored.len()), (plain.len() + 16, plain.len() + 16));
                assert!(is_sealed(&stored) && !is_sealed(&plain));
                assert!(!stored.windows(5).any(|w| w == b"hello"));
                // The CRCs cover the stored bytes: recovery checks them without the key.
                let Decoded::Record(rec, n) = decode(&stored) else {
                    panic!("sealed record does not decode");
                };
                assert!(rec.sealed && !rec.erased && rec.seq == 42 && n == len);
                assert_eq!(declared_parts(&stored), declared_parts(&plain));
                assert_eq!(open_sealed(&stored, &key, 3, 4096).unwrap(), plain);
                for (prefix, offset) in [(4, 4096), (3, 4097)] {
                    assert!(open_sealed(&stored, &key, prefix, offset).is_err());
                }
                let other = DataKey::generate(cipher).unwrap();
                assert!(open_sealed(&stored, &other, 3, 4096).is_err());
                assert!(seal(&stored, &key, 3, 4096, &mut Vec::new()).is_err());
                let erased = erase_sealed(&stored).unwrap();
                let Decoded::Record(rec, _) = decode(&erased) else {
                    panic!("erased record does not decode");
                };
                assert!(rec.sealed && rec.erased && rec.seq == 42);
                assert!(open_sealed(&erased, &key, 3, 4096).is_err());
            }
        }
    }

    #[test]
    fn store_record_every_truncation_is_incomplete() {
        let mut buf = Vec::new();
        encode(&sample(MsgTtl::Secs(5)), &mut buf).unwrap();
        for cut in 0..buf.len() {
            assert_eq!(decode(&buf[..cut]), Decoded::Incomplete, "cut at {cut}");
        }
    }

    #[test]
    fn store_record_every_bit_flip_is_detected() {
        let mut buf = Vec::new();
        let len = encode(&sample(MsgTtl::None), &mut buf).unwrap();
        for byte in 0..len {
            for bit in 0..8 {
                let mut bad = buf.clone();
                bad[byte] ^= 1 << bit;
                match decode(&bad) {
                    Decoded::BadHeader => assert!(byte < HEADER_BYTES, "byte {byte}"),
                    Decoded::BadRecord { seq, len: l } => assert_eq!((seq, l), (42, len)),
                    other => panic!("flip at {byte}.{bit} decoded as {other:?}"),
                }
            }
        }
    }
}
