//! Go's limits on a stream configuration's sizes and durations.

/// Longest stream name in bytes (Go's `JSMaxNameLen`).
pub const NAME_LEN_MAX: usize = 255;
/// Longest description in bytes (`JSMaxDescriptionLen`).
pub const DESCRIPTION_LEN_MAX: usize = 4 * 1024;
/// Most bytes of metadata keys and values together (`JSMaxMetadataLen`).
pub const METADATA_LEN_MAX: usize = 128 * 1024;
/// Most replicas a stream may ask for (`StreamMaxReplicas`).
pub const REPLICAS_MAX: i64 = 5;
/// The duplicate window a stream gets when it names none: two minutes.
pub const DUPLICATE_WINDOW_DEFAULT_NS: i64 = 120 * NS_PER_SECOND;
/// The shortest non-zero `max_age` and `duplicate_window`: 100 ms.
pub const WINDOW_MIN_NS: i64 = 100_000_000;
/// The shortest non-zero `subject_delete_marker_ttl`: one second.
pub const DELETE_MARKER_TTL_MIN_NS: i64 = NS_PER_SECOND;

const NS_PER_SECOND: i64 = 1_000_000_000;

const _: () = assert!(WINDOW_MIN_NS < DUPLICATE_WINDOW_DEFAULT_NS);
