//! The server's batch limits (`jetstream { limits { batch { … } } }`), set once when
//! JetStream starts and read by every stream's batches: Go reads them from the server's
//! options at each use, so one process-wide copy serves, like the server-wide count of open
//! batches it bounds. Zero (unset) keeps the default of the kind of batch asking.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use natrium_conf::options::BatchLimits;

/// Go's `streamDefaultMaxBatchTimeout`: a batch with no message for this long is dropped.
pub const TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);

static INFLIGHT_PER_STREAM: AtomicU64 = AtomicU64::new(0);
static INFLIGHT_TOTAL: AtomicU64 = AtomicU64::new(0);
static MAX_MSGS: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds.
static TIMEOUT: AtomicU64 = AtomicU64::new(0);

/// Takes the configured limits (negative is unset, as zero).
pub fn set(limits: &BatchLimits) {
    let positive = |n: i64| u64::try_from(n).unwrap_or(0);
    INFLIGHT_PER_STREAM.store(positive(limits.max_inflight_per_stream), Ordering::Relaxed);
    INFLIGHT_TOTAL.store(positive(limits.max_inflight_total), Ordering::Relaxed);
    MAX_MSGS.store(positive(limits.max_msgs), Ordering::Relaxed);
    let timeout = limits
        .timeout
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    TIMEOUT.store(timeout, Ordering::Relaxed);
}

fn or(limit: &AtomicU64, default: usize) -> usize {
    match limit.load(Ordering::Relaxed) {
        0 => default,
        n => usize::try_from(n).unwrap_or(usize::MAX),
    }
}

/// Open batches a stream may have (`max_inflight_per_stream`).
pub fn inflight_per_stream(default: usize) -> usize {
    or(&INFLIGHT_PER_STREAM, default)
}

/// Open batches the server may have (`max_inflight_total`).
pub fn inflight_total(default: usize) -> usize {
    or(&INFLIGHT_TOTAL, default)
}

/// Messages an atomic batch may have (`max_msgs`).
pub fn max_msgs(default: u64) -> u64 {
    match MAX_MSGS.load(Ordering::Relaxed) {
        0 => default,
        n => n,
    }
}

/// How long a batch may go without a message (`timeout`).
pub fn timeout() -> Duration {
    match TIMEOUT.load(Ordering::Relaxed) {
        0 => TIMEOUT_DEFAULT,
        n => Duration::from_nanos(n),
    }
}
