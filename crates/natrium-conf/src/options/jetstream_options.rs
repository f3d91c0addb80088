//! The server's `jetstream` settings (`jetstream { … }`, `-js`, `-sd`), as the JetStream
//! service reads them at start.

use std::time::Duration;

/// When a stream's writes reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// Natrium's default: a publish is acknowledged once its record is synced; concurrent
    /// publishes share one sync.
    #[default]
    Durable,
    /// `sync_interval: always`: Go syncs after every write; ours is the durable default.
    Always,
    /// `sync_interval: <duration>`: acknowledge once written to the OS, sync on the interval.
    Interval(Duration),
}

/// `jetstream { limits { … } }`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JetStreamLimits {
    pub max_ack_pending: i64,
    pub max_ha_assets: i64,
    pub max_request_batch: i64,
    pub duplicate_window: Option<Duration>,
    /// Consumers a stream may have when neither the stream nor its account sets a limit: 0 is
    /// Go's default ([`DEFAULT_MAX_CONSUMERS`]), negative is unlimited.
    pub default_max_consumers: i64,
    /// `limits { batch { … } }`.
    pub batch: BatchLimits,
}

/// `jetstream { limits { batch { max_inflight_per_stream, max_inflight_total, max_msgs,
/// timeout } } }`: zero (unset) keeps Go's defaults, which the JetStream crate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchLimits {
    pub max_inflight_per_stream: i64,
    pub max_inflight_total: i64,
    pub max_msgs: i64,
    pub timeout: Option<Duration>,
}

/// Go's default of `limits { default_max_consumers }` (2.15).
pub const DEFAULT_MAX_CONSUMERS: i64 = 1_000;

impl JetStreamLimits {
    /// The per-stream consumer limit in force when neither the stream nor its account sets one;
    /// `None` for unlimited.
    pub fn default_max_consumers(&self) -> Option<i64> {
        match self.default_max_consumers {
            0 => Some(DEFAULT_MAX_CONSUMERS),
            n if n > 0 => Some(n),
            _ => None,
        }
    }
}

/// Everything the `jetstream` block sets; `store_dir` and `domain` live on `ServerOptions`
/// because Go reads them with JetStream off too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JetStreamOptions {
    pub enabled: bool,
    /// Bytes; negative or zero means sized from the machine at start.
    pub max_memory: i64,
    pub max_store: i64,
    pub sync: SyncPolicy,
    pub max_buffered_msgs: i64,
    pub max_buffered_size: i64,
    pub request_queue_limit: i64,
    pub strict: bool,
    pub unique_tag: String,
    pub key: String,
    pub prev_key: String,
    /// `chacha` (default) or `aes`, lower case.
    pub cipher: String,
    pub limits: JetStreamLimits,
}

/// Go's default for `request_queue_limit`.
pub const REQUEST_QUEUE_LIMIT_DEFAULT: i64 = 10_000;

impl Default for JetStreamOptions {
    fn default() -> Self {
        Self {
            enabled: false,
            max_memory: -1,
            max_store: -1,
            sync: SyncPolicy::Durable,
            max_buffered_msgs: 0,
            max_buffered_size: 0,
            request_queue_limit: REQUEST_QUEUE_LIMIT_DEFAULT,
            strict: true,
            unique_tag: String::new(),
            key: String::new(),
            prev_key: String::new(),
            cipher: String::new(),
            limits: JetStreamLimits::default(),
        }
    }
}
