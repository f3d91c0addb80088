//! Stand-in until the stream configuration checks land: the response metadata keys.

use super::context::CheckContext;
use super::StreamConfig;

/// A copy of `cfg` with the server's version and API level in its metadata.
pub fn with_dynamic_metadata(cfg: &StreamConfig, ctx: &CheckContext) -> StreamConfig {
    let mut out = cfg.clone();
    out.metadata
        .insert("_nats.ver".to_owned(), ctx.server_version.to_owned());
    out.metadata
        .insert("_nats.level".to_owned(), ctx.api_level.to_string());
    out
}
