//! What the consumer configuration checks read about the stream, the server and the account,
//! gathered by the caller so the checks stay pure.

use natrium_auth::account::JsAccountLimits;

use crate::config::StreamConfig;

/// The facts a consumer config is checked against.
pub struct ConsumerContext<'a> {
    /// The stream's configuration (its `consumer_limits`, subjects, retention, replicas).
    pub stream: &'a StreamConfig,
    /// `jetstream { limits { max_ack_pending } }` (0 unset).
    pub server_max_ack_pending: i64,
    /// `jetstream { limits { max_request_batch } }` (0 unset).
    pub server_max_request_batch: i64,
    /// The account's JetStream limits.
    pub account: JsAccountLimits,
    /// The request's `pedantic` flag: refuse instead of adjusting.
    pub pedantic: bool,
    /// A recovered consumer skips the check of its replicas against an interest stream's.
    pub recovering: bool,
}
