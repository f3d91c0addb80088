//! The `batch` record of `docs/store-format.md` §2: its payload, and the check recovery makes
//! of the message records it announces (`super::batch` writes them).

use super::record::{self, Decoded, Kind, Record, RECORD_BYTES_MIN};

/// The batch record's payload: the count of message records and the bytes they take.
const BATCH_PAYLOAD_BYTES: usize = 16;
/// The batch record's length.
pub const BATCH_RECORD_BYTES: usize = RECORD_BYTES_MIN + BATCH_PAYLOAD_BYTES;

/// The batch record's payload for `count` message records taking `region_bytes`.
pub fn batch_payload(count: u64, region_bytes: u64) -> [u8; BATCH_PAYLOAD_BYTES] {
    let mut out = [0u8; BATCH_PAYLOAD_BYTES];
    out[..8].copy_from_slice(&count.to_le_bytes());
    out[8..].copy_from_slice(&region_bytes.to_le_bytes());
    out
}

/// What recovery makes of a batch record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchCheck {
    /// Every message record it announces follows it, whole and in sequence.
    Whole,
    /// Not all of them are there: the batch ends where the bytes end (or its region holds
    /// a record that fails), and it is dropped. `region_end` is the offset (relative to the
    /// batch record) just past the bytes it announced.
    Incomplete { region_end: usize },
}

/// Checks the batch record `rec` of `len` bytes at the start of `rest` against the records
/// after it.
pub fn check_batch(rest: &[u8], rec: &Record<'_>, len: usize) -> BatchCheck {
    let word = |at: usize| {
        rec.payload
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    let (count, region) = (word(0), usize::try_from(word(8)).unwrap_or(usize::MAX));
    let region_end = len.saturating_add(region);
    let incomplete = BatchCheck::Incomplete { region_end };
    let Some(bytes) = rest.get(len..region_end) else {
        return incomplete;
    };
    let (mut off, mut seen) = (0usize, 0u64);
    while off < bytes.len() {
        match record::decode(bytes.get(off..).unwrap_or_default()) {
            Decoded::Record(r, n) if r.kind == Kind::Msg && r.seq == rec.seq + seen => {
                off += n;
                seen += 1;
            }
            _ => return incomplete,
        }
    }
    if seen == count && count > 0 {
        BatchCheck::Whole
    } else {
        incomplete
    }
}
