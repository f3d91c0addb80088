//! The versioning keys of a stream's metadata. `_nats.req.level` (the lowest API level that
//! understands every feature the config uses) is stored with the config; `_nats.ver` and
//! `_nats.level` describe the answering server, so they are never stored and are added only
//! to create, update and info responses (Go's `STREAM.LIST` shows the stored map).

use super::context::CheckContext;
use super::stream::{PersistMode, StreamConfig};

/// The stored key: API level the config requires.
pub const REQUIRED_LEVEL_KEY: &str = "_nats.req.level";
/// Response-only key: the server's version.
pub const SERVER_VERSION_KEY: &str = "_nats.ver";
/// Response-only key: the server's API level.
pub const SERVER_LEVEL_KEY: &str = "_nats.level";

/// The API level a config needs: each feature with the level of the release that brought it.
pub fn required_api_level(cfg: &StreamConfig) -> u32 {
    let mut level = 0;
    // Message TTLs and delete markers: 2.11.
    if cfg.allow_msg_ttl || cfg.subject_delete_marker_ttl > 0 {
        level = level.max(1);
    }
    // Counters, atomic batches, schedules and async persistence: 2.12.
    if cfg.allow_msg_counter
        || cfg.allow_atomic
        || cfg.allow_msg_schedules
        || cfg.persist_mode == PersistMode::Async
    {
        level = level.max(2);
    }
    // Fast batch publishing: 2.14.
    if cfg.allow_batched {
        level = level.max(4);
    }
    level
}

/// Drops the response-only keys a client may have sent and stores `_nats.req.level`.
pub fn stored_metadata(cfg: &mut StreamConfig, _ctx: &CheckContext) {
    cfg.metadata.remove(SERVER_VERSION_KEY);
    cfg.metadata.remove(SERVER_LEVEL_KEY);
    let level = required_api_level(cfg);
    cfg.metadata
        .insert(REQUIRED_LEVEL_KEY.to_owned(), level.to_string());
}

/// A copy of `cfg` for a create, update or info response, with the server's version and API
/// level added to its metadata.
pub fn with_dynamic_metadata(cfg: &StreamConfig, ctx: &CheckContext) -> StreamConfig {
    let mut out = cfg.clone();
    out.metadata
        .insert(SERVER_VERSION_KEY.to_owned(), ctx.server_version.to_owned());
    out.metadata
        .insert(SERVER_LEVEL_KEY.to_owned(), ctx.api_level.to_string());
    out
}
