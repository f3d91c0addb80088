//! The headers of an atomic batch message, read as Go reads them (exact names, the value
//! after the colon and its spaces).

use nats_proto::headers::Headers;

pub const BATCH_ID: &[u8] = b"Nats-Batch-Id";
pub const BATCH_SEQ: &[u8] = b"Nats-Batch-Sequence";
pub const BATCH_COMMIT: &[u8] = b"Nats-Batch-Commit";
pub const REQUIRED_API_LEVEL: &[u8] = b"Nats-Required-Api-Level";

/// The longest batch id Go takes.
pub const BATCH_ID_BYTES_MAX: usize = 64;

/// What `Nats-Batch-Commit` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// No commit: the message is staged.
    No,
    /// `1`: this message is the batch's last, and commits it.
    One,
    /// `eob`: the batch ends before this message, which is not stored.
    Eob,
    /// Any other value: the batch is refused.
    Invalid,
}

/// A batch message's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeaders<'a> {
    pub id: &'a [u8],
    /// `Nats-Batch-Sequence`, when it is a number.
    pub seq: Option<u64>,
    pub commit: Commit,
    /// `Nats-Required-Api-Level` is present (it is removed before the message is staged).
    pub api_level: bool,
    /// ... and asks for a level above ours, or is not a number.
    pub api_level_refused: bool,
}

/// The batch id of a message that belongs to an atomic batch (a non-empty `Nats-Batch-Id`).
pub fn atomic_id(headers: Option<&[u8]>) -> Option<&[u8]> {
    let block = headers.filter(|b| !b.is_empty())?;
    let parsed = Headers::parse(block).ok()?;
    parsed.get(BATCH_ID).filter(|v| !v.is_empty())
}

impl<'a> BatchHeaders<'a> {
    /// Reads a block [`atomic_id`] found an id in.
    pub fn read(block: &'a [u8]) -> Option<Self> {
        let parsed = Headers::parse(block).ok()?;
        let id = parsed.get(BATCH_ID).filter(|v| !v.is_empty())?;
        let seq = parsed.get(BATCH_SEQ).and_then(go_uint);
        let commit = match parsed.get(BATCH_COMMIT) {
            None => Commit::No,
            Some(b"eob") => Commit::Eob,
            Some(b"1") => Commit::One,
            Some(_) => Commit::Invalid,
        };
        let level = parsed.get(REQUIRED_API_LEVEL).filter(|v| !v.is_empty());
        let api_level_refused = level.is_some_and(|v| {
            std::str::from_utf8(v)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .is_none_or(|n| n > i64::from(crate::config::API_LEVEL))
        });
        Some(Self {
            id,
            seq,
            commit,
            api_level: level.is_some(),
            api_level_refused,
        })
    }
}

/// Go's `parseUint64`: ASCII digits only, no sign, no overflow.
fn go_uint(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_batch_headers_read() {
        let block = b"NATS/1.0\r\nNats-Batch-Id: b1\r\nNats-Batch-Sequence: 3\r\n\
                      Nats-Batch-Commit: eob\r\n\r\n";
        let h = BatchHeaders::read(block).unwrap();
        assert_eq!((h.id, h.seq, h.commit), (&b"b1"[..], Some(3), Commit::Eob));
        let block = b"NATS/1.0\r\nNats-Batch-Id: b1\r\nNats-Batch-Sequence: -1\r\n\
                      Nats-Batch-Commit: 2\r\nNats-Required-Api-Level: 9\r\n\r\n";
        let h = BatchHeaders::read(block).unwrap();
        assert_eq!((h.seq, h.commit), (None, Commit::Invalid));
        assert!(h.api_level && h.api_level_refused);
        assert_eq!(atomic_id(Some(b"NATS/1.0\r\nNats-Batch-Id:\r\n\r\n")), None);
        assert_eq!(atomic_id(None), None);
    }
}
