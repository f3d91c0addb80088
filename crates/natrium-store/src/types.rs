//! The values the store takes and returns: messages in and out, stream and subject state,
//! limits, and the storage-update events.

use std::time::Duration;

use bytes::Bytes;

use crate::limits::{
    FILESTORE_HEADERS_OVERHEAD_BYTES, FILESTORE_MSG_OVERHEAD_BYTES, MEMSTORE_MSG_OVERHEAD_BYTES,
};

/// A message's own time to live, as JetStream's `Nats-TTL` header gives it (the API layer
/// parses the header; the store never does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MsgTtl {
    /// No TTL of its own: only the stream's `max_age` applies.
    #[default]
    None,
    /// Never expires, not even by `max_age` (Go's `Nats-TTL: never`, stored as -1).
    Never,
    /// Expires this many seconds after its timestamp.
    Secs(u64),
}

impl MsgTtl {
    /// The absolute expiry time in Unix nanoseconds, when there is one. Saturates instead of
    /// overflowing: a TTL of centuries simply never comes due.
    pub fn expires_at(self, timestamp_ns: i64) -> Option<i64> {
        match self {
            MsgTtl::Secs(secs) => {
                let ns = i64::try_from(secs).unwrap_or(i64::MAX);
                Some(timestamp_ns.saturating_add(ns.saturating_mul(crate::limits::NANOS_PER_SEC)))
            }
            MsgTtl::None | MsgTtl::Never => None,
        }
    }
}

/// A message to store. The store keeps `headers` and `payload` as given (no copy), so they
/// should own their bytes rather than view a large read buffer they would keep alive.
#[derive(Debug, Clone)]
pub struct NewMsg<'a> {
    /// A literal subject (no wildcards); copied only the first time the store sees it.
    pub subject: &'a [u8],
    /// The NATS/1.0 header block, or empty.
    pub headers: Bytes,
    /// The payload.
    pub payload: Bytes,
    /// The message time in Unix nanoseconds. The caller owns the clock.
    pub timestamp_ns: i64,
    /// The message's own TTL.
    pub ttl: MsgTtl,
    /// The message rolls its subject up (`Nats-Rollup: sub`): `discard_new_per_subject` lets it
    /// through because the caller purges the subject right after.
    pub rollup: bool,
}

impl<'a> NewMsg<'a> {
    /// A message with no TTL and no rollup.
    pub fn new(subject: &'a [u8], headers: Bytes, payload: Bytes, timestamp_ns: i64) -> Self {
        NewMsg {
            subject,
            headers,
            payload,
            timestamp_ns,
            ttl: MsgTtl::None,
            rollup: false,
        }
    }
}

/// What a successful store returns: the sequence assigned and the timestamp recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub seq: u64,
    pub timestamp_ns: i64,
}

/// A stored message as loaded. Cloning shares the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMsg {
    pub seq: u64,
    pub timestamp_ns: i64,
    pub subject: Bytes,
    pub headers: Bytes,
    pub payload: Bytes,
}

/// Messages and first/last sequences for one subject or one filter (Go's `SimpleState`).
/// All zero when nothing matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimpleState {
    pub msgs: u64,
    pub first: u64,
    pub last: u64,
}

/// Messages that recovery found damaged: exact sequence ranges (inclusive) and their bytes
/// where the store could tell them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LostData {
    pub ranges: Vec<(u64, u64)>,
    pub bytes: u64,
}

/// A block file recovery (or the scrub after it) found damaged, and the sequences lost in it
/// (ranges a later tombstone showed deleted are still listed: the file is what the report is
/// about).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedFile {
    /// The file's path relative to the stream's directory, e.g. `msgs/0000000003.blk`.
    pub file: String,
    pub lost: Vec<(u64, u64)>,
}

/// What one step of [`crate::StreamStore::scrub`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScrubProgress {
    /// Nothing is left to check (until a load fails its checks).
    pub done: bool,
    /// Bytes read by this step.
    pub bytes: u64,
    /// Damage this step found, file by file: the same report recovery gives at open.
    pub damaged: Vec<DamagedFile>,
}

/// A snapshot of a stream's state (Go's `StreamState` less the consumer count, which the
/// stream layer knows). Times are Unix nanoseconds; 0 means unset (Go's zero time).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamState {
    pub msgs: u64,
    /// Bytes as Go accounts them (see [`MsgSizing`]), not bytes in memory or on disk.
    pub bytes: u64,
    pub first_seq: u64,
    pub first_ts: i64,
    pub last_seq: u64,
    pub last_ts: i64,
    pub num_subjects: u64,
    /// Sequences in `first_seq..=last_seq` that hold no message.
    pub num_deleted: u64,
    /// Those sequences, ascending. Empty in [`crate::StreamStore::fast_state`].
    pub deleted: Vec<u64>,
    pub lost: Option<LostData>,
}

/// What happens when a limit is reached (Go's `DiscardPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiscardPolicy {
    /// Remove the oldest messages to make room.
    #[default]
    Old,
    /// Refuse the new message.
    New,
}

/// The limits a store enforces. `None` is unlimited (Go's -1 or 0; the API layer maps them).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreConfig {
    pub max_msgs: Option<u64>,
    pub max_bytes: Option<u64>,
    pub max_age: Option<Duration>,
    pub max_msgs_per_subject: Option<u64>,
    /// Largest headers + payload accepted, in bytes.
    pub max_msg_size: Option<u64>,
    pub discard: DiscardPolicy,
    /// With `discard: new`, also refuse a message whose subject is at `max_msgs_per_subject`.
    pub discard_new_per_subject: bool,
}

/// How a store counts a message's bytes: Go's formulas, so that `stream info` and `max_bytes`
/// agree with the Go server to the byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgSizing {
    /// `memStoreMsgSize`: subject + headers + payload + 16.
    Memory,
    /// `fileStoreMsgSize`: 22 + subject + payload + 8, plus 4 + headers when there are headers.
    File,
}

impl MsgSizing {
    /// The accounted size of a message with these part lengths.
    pub fn size(self, subject: usize, headers: usize, payload: usize) -> u64 {
        let parts = subject as u64 + headers as u64 + payload as u64;
        match self {
            MsgSizing::Memory => parts + MEMSTORE_MSG_OVERHEAD_BYTES,
            MsgSizing::File if headers == 0 => parts + FILESTORE_MSG_OVERHEAD_BYTES,
            MsgSizing::File => {
                parts + FILESTORE_MSG_OVERHEAD_BYTES + FILESTORE_HEADERS_OVERHEAD_BYTES
            }
        }
    }
}

/// Why messages left (or entered) the store, for the storage-update callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateReason {
    Stored,
    Removed,
    Erased,
    /// `max_msgs` or `max_bytes` with `discard: old`.
    Limit,
    /// `max_msgs_per_subject`.
    SubjectLimit,
    /// `max_age`.
    MaxAge,
    /// The message's own TTL.
    Ttl,
    Purged,
    Compacted,
    Truncated,
}

/// One change of the stored messages and bytes (Go's `StorageUpdateHandler` arguments).
/// Single-message changes carry the sequence and subject; bulk ones (purge, compact) carry
/// totals with `seq` 0 and an empty subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageUpdate<'a> {
    pub msgs: i64,
    pub bytes: i64,
    pub seq: u64,
    pub subject: &'a [u8],
    pub reason: UpdateReason,
}

/// The callback a store calls on every change. It runs inside the store call, so it must be
/// short and must not call back into the store (the `&mut` borrow makes that impossible).
pub type StorageUpdateFn = Box<dyn FnMut(&StorageUpdate<'_>) + Send>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_sizing_matches_go_formulas() {
        // memStoreMsgSize("foo", nil, "hello") = 3 + 0 + 5 + 16.
        assert_eq!(MsgSizing::Memory.size(3, 0, 5), 24);
        assert_eq!(MsgSizing::Memory.size(3, 10, 5), 34);
        // fileStoreMsgSizeRaw: 22 + slen + mlen + 8 without headers.
        assert_eq!(MsgSizing::File.size(3, 0, 5), 38);
        // 22 + slen + 4 + hlen + mlen + 8 with headers.
        assert_eq!(MsgSizing::File.size(3, 10, 5), 52);
    }

    #[test]
    fn store_ttl_expiry_saturates() {
        assert_eq!(MsgTtl::Secs(2).expires_at(1), Some(2_000_000_001));
        assert_eq!(MsgTtl::Secs(u64::MAX).expires_at(5), Some(i64::MAX));
        assert_eq!(MsgTtl::Never.expires_at(5), None);
        assert_eq!(MsgTtl::None.expires_at(5), None);
    }
}
