//! What the stream configuration checks need to know about the server, the account and the
//! request, gathered by the caller so the checks themselves stay pure.

use std::fmt;
use std::sync::Arc;

use super::stream::StreamConfig;

/// The JetStream API level this server implements (Go's `JSApiLevel`).
pub const API_LEVEL: u32 = 5;
/// The Go server version Natrium answers as.
pub const SERVER_VERSION: &str = "2.15.2";

/// Finds another stream of the account by name (its stored config), for the checks that look
/// at a mirror's or a source's origin: the maximum message size, inherited direct gets and
/// source cycles.
pub type StreamLookup = Arc<dyn Fn(&str) -> Option<StreamConfig> + Send + Sync>;

/// The server, account and request facts the stream checks read.
#[derive(Clone)]
pub struct CheckContext {
    /// Core `max_payload`. Go does not compare `max_msg_size` with it when a stream is created
    /// (only each publish is checked against both), so the checks leave it unused.
    pub max_msg_size_server: i64,
    /// `jetstream { limits { duplicate_window } }` in nanoseconds, if set.
    pub duplicate_window_max: Option<i64>,
    /// The account's `max_bytes_required`.
    pub max_bytes_required: bool,
    /// The account's per-stream byte limit for the config's storage, if set.
    pub account_max_stream_bytes: Option<i64>,
    pub api_level: u32,
    pub server_version: &'static str,
    /// The request's `pedantic` flag: refuse instead of adjusting a config.
    pub pedantic: bool,
    /// Whether the server runs clustered; a single server refuses `num_replicas` over 1.
    pub clustered: bool,
    /// The account's other streams, if the caller can see them.
    pub stream_lookup: Option<StreamLookup>,
}

impl Default for CheckContext {
    fn default() -> Self {
        Self {
            max_msg_size_server: 1024 * 1024,
            duplicate_window_max: None,
            max_bytes_required: false,
            account_max_stream_bytes: None,
            api_level: API_LEVEL,
            server_version: SERVER_VERSION,
            pedantic: false,
            clustered: false,
            stream_lookup: None,
        }
    }
}

impl CheckContext {
    /// The stored config of the account's stream `name`, when the caller provided a lookup.
    pub fn lookup(&self, name: &str) -> Option<StreamConfig> {
        self.stream_lookup.as_ref().and_then(|f| f(name))
    }
}

impl fmt::Debug for CheckContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckContext")
            .field("max_msg_size_server", &self.max_msg_size_server)
            .field("duplicate_window_max", &self.duplicate_window_max)
            .field("max_bytes_required", &self.max_bytes_required)
            .field("account_max_stream_bytes", &self.account_max_stream_bytes)
            .field("api_level", &self.api_level)
            .field("server_version", &self.server_version)
            .field("pedantic", &self.pedantic)
            .field("clustered", &self.clustered)
            .field("stream_lookup", &self.stream_lookup.is_some())
            .finish()
    }
}
