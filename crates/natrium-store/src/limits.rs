//! Sizes the store checks, with the Go value each one mirrors and why.

/// Longest subject a record can hold: the record's subject length is a `u16`. Go's file
/// store has the same field width; the server's own subject limits are far below it.
pub const SUBJECT_BYTES_MAX: usize = u16::MAX as usize;

/// Largest headers + payload a message may carry: Go caps `max_payload` at 64 MiB
/// (`MAX_PAYLOAD_MAX_SIZE`), and headers count inside it.
pub const MESSAGE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Go's memory store charges each message its subject, headers and payload plus 16 bytes
/// (sequence and timestamp), `memStoreMsgSize`.
pub const MEMSTORE_MSG_OVERHEAD_BYTES: u64 = 16;

/// Go's file store record without headers: length 4 + seq 8 + ts 8 + subject length 2 +
/// hash 8 (`fileStoreMsgSizeRaw`); `FILESTORE_HEADERS_OVERHEAD_BYTES` more when it has headers.
pub const FILESTORE_MSG_OVERHEAD_BYTES: u64 = 30;

/// The headers-length field Go's file store adds when a message has headers.
pub const FILESTORE_HEADERS_OVERHEAD_BYTES: u64 = 4;

/// Most entries `DedupWindow` keeps, whatever its duration: a publisher sending unique ids
/// faster than the window drains must not grow it without bound. Past it the oldest entry
/// goes first (the duplicate check then misses ids older than the cap, a documented loss of
/// dedup rather than of memory).
pub const DEDUP_ENTRIES_MAX: usize = 1_000_000;

/// Nanoseconds per second, for TTLs given in seconds as Go's `Nats-TTL` is.
pub const NANOS_PER_SEC: i64 = 1_000_000_000;

/// Largest body of a `meta.dat` (stream or consumer configuration, opaque bytes): the
/// configuration arrives in one API request, which Go's `max_payload` ceiling (64 MiB) caps.
pub const META_BODY_BYTES_MAX: usize = MESSAGE_BYTES_MAX;

/// Largest body of an `index.dat`. Go keeps no such file; the index grows with the number of
/// blocks and subjects, so the ceiling is generous (a million subjects take a few tens of
/// MiB) and serves to refuse a damaged length, not to limit streams.
pub const INDEX_BODY_BYTES_MAX: usize = 1024 * 1024 * 1024;

/// Largest body of a consumer's `state.dat`. A pending message takes at most 30 bytes and a
/// redelivery count 20, so this holds millions of pending messages, far above Go's default
/// `max_ack_pending` of 1,000.
pub const CONSUMER_STATE_BODY_BYTES_MAX: usize = 256 * 1024 * 1024;

/// Largest body of a `sched.dat` (the message schedule index). One schedule per subject
/// takes its subject and about 20 bytes; a damaged length is refused, and a stream with more
/// schedules than this holds is rebuilt by its scan instead.
pub const SCHEDULES_BODY_BYTES_MAX: usize = 256 * 1024 * 1024;

const _: () = assert!(SUBJECT_BYTES_MAX <= u16::MAX as usize);
const _: () = assert!(MESSAGE_BYTES_MAX < u32::MAX as usize);
const _: () = assert!(CONSUMER_STATE_BODY_BYTES_MAX <= INDEX_BODY_BYTES_MAX);
