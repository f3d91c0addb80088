//! The message record codec of `docs/store-format.md` §2: encode into a caller's buffer,
//! decode from bytes read off disk with every length checked, and tell a torn or damaged
//! record apart from a valid one (what recovery's resync needs).

use crate::limits::{MESSAGE_BYTES_MAX, SUBJECT_BYTES_MAX};
use crate::types::MsgTtl;

pub const MAGIC: [u8; 2] = *b"NR";
/// Fixed header: magic, kind, flags, length, seq, ts, subject and headers lengths, reserved,
/// header CRC.
pub const HEADER_BYTES: usize = 36;
const CRC_BYTES: usize = 4;
const TTL_BYTES: usize = 8;
/// The smallest record: a header and the record CRC.
pub const RECORD_BYTES_MIN: usize = HEADER_BYTES + CRC_BYTES;
/// Anything longer is corruption, never a buffer size.
pub const RECORD_BYTES_MAX: usize =
    MESSAGE_BYTES_MAX + 64 * 1024 + HEADER_BYTES + CRC_BYTES + TTL_BYTES;
const FLAG_TTL: u8 = 1;
const FLAG_ERASED: u8 = 2;
const FLAGS_KNOWN: u8 = FLAG_TTL | FLAG_ERASED;

const _: () = assert!(
    SUBJECT_BYTES_MAX + MESSAGE_BYTES_MAX + RECORD_BYTES_MIN + TTL_BYTES <= RECORD_BYTES_MAX
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
            _ => Kind::Deleted,
        }
    }
}

/// A record, borrowed from the buffer it was decoded from or is encoded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: Kind,
    pub erased: bool,
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
    let payload = len.checked_sub(RECORD_BYTES_MIN + ttl + subject + headers)?;
    let kind = Kind::from_byte(*header.get(2)?);
    Some((kind, subject, headers, payload))
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
    let fixed = RECORD_BYTES_MIN + ttl + subject_len + headers_len;
    let sane = (1..=6).contains(&kind) && flags & !FLAGS_KNOWN == 0 && u16_at(header, 30)? == 0;
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
        seq,
        timestamp_ns: u64_at(covered, 16)? as i64,
        ttl,
        subject,
        headers,
        payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ttl: MsgTtl) -> Record<'static> {
        Record {
            kind: Kind::Msg,
            erased: false,
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
