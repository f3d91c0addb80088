//! The versioning keys of a consumer's metadata (as for streams: `_nats.req.level` stored,
//! `_nats.ver` and `_nats.level` only in responses) and Go's rules for what an update may
//! change (`checkNewConsumerConfig`).

use super::config::{AckPolicy, ConsumerConfig, PriorityPolicy};
use crate::config::metadata::{REQUIRED_LEVEL_KEY, SERVER_LEVEL_KEY, SERVER_VERSION_KEY};
use crate::config::{API_LEVEL, SERVER_VERSION};
use crate::errors::{table, ApiError};

/// The API level a consumer config needs: pause and priority groups came with 2.11, the
/// flow-control ack policy with 2.14.
pub fn required_api_level(cfg: &ConsumerConfig) -> u32 {
    let mut level = 0;
    if cfg.pause_until.is_some_and(|t| !t.is_zero()) {
        level = 1;
    }
    if cfg.priority_policy != PriorityPolicy::None
        || cfg.priority_timeout != 0
        || !cfg.priority_groups.is_empty()
    {
        level = level.max(1);
    }
    if cfg.ack_policy == AckPolicy::FlowControl {
        level = level.max(4);
    }
    level
}

/// Drops the response-only keys and stores `_nats.req.level` (Go's
/// `setStaticConsumerMetadata`).
pub fn set_static_metadata(cfg: &mut ConsumerConfig) {
    cfg.metadata.remove(SERVER_VERSION_KEY);
    cfg.metadata.remove(SERVER_LEVEL_KEY);
    let level = required_api_level(cfg);
    cfg.metadata
        .insert(REQUIRED_LEVEL_KEY.to_owned(), level.to_string());
}

/// A copy for a create or info response with the server's version and level added.
pub fn with_dynamic_metadata(cfg: &ConsumerConfig) -> ConsumerConfig {
    let mut out = cfg.clone();
    out.metadata
        .insert(SERVER_VERSION_KEY.to_owned(), SERVER_VERSION.to_owned());
    out.metadata
        .insert(SERVER_LEVEL_KEY.to_owned(), API_LEVEL.to_string());
    out
}

/// Takes `_nats.req.level` from `prev` (or drops it) so a comparison ignores versioning.
pub fn copy_metadata(cfg: &mut ConsumerConfig, prev: &ConsumerConfig) {
    cfg.metadata.remove(SERVER_VERSION_KEY);
    cfg.metadata.remove(SERVER_LEVEL_KEY);
    match prev.metadata.get(REQUIRED_LEVEL_KEY) {
        Some(level) => {
            cfg.metadata
                .insert(REQUIRED_LEVEL_KEY.to_owned(), level.clone());
        }
        None => {
            cfg.metadata.remove(REQUIRED_LEVEL_KEY);
        }
    }
}

/// An update's refusal: plain texts become Go's 10012 `consumer create` error.
fn refused(text: &str) -> ApiError {
    table::CONSUMER_CREATE.with(&[("err", &text)])
}

/// What an update may not change; `bound` says whether the old deliver subject has
/// subscribers.
///
/// # Errors
/// 10012 with Go's text, 10013 or 10116.
pub fn check_update(
    old: &ConsumerConfig,
    new: &ConsumerConfig,
    bound: impl FnOnce(&str) -> bool,
) -> Result<(), ApiError> {
    if old == new {
        return Ok(());
    }
    let fixed: [(bool, &str); 6] = [
        (
            old.deliver_policy != new.deliver_policy,
            "deliver policy can not be updated",
        ),
        (
            old.mem_storage != new.mem_storage,
            "storage type can not be updated",
        ),
        (old.direct != new.direct, "direct can not be updated"),
        (old.sourcing != new.sourcing, "sourcing can not be updated"),
        (
            old.opt_start_seq != new.opt_start_seq,
            "start sequence can not be updated",
        ),
        (
            old.opt_start_time.map(|t| t.unix_nanos())
                != new.opt_start_time.map(|t| t.unix_nanos()),
            "start time can not be updated",
        ),
    ];
    if let Some((_, text)) = fixed.iter().find(|(changed, _)| *changed) {
        return Err(refused(text));
    }
    let fixed: [(bool, &str); 4] = [
        (
            old.ack_policy != new.ack_policy,
            "ack policy can not be updated",
        ),
        (
            old.replay_policy != new.replay_policy,
            "replay policy can not be updated",
        ),
        (
            old.idle_heartbeat != new.idle_heartbeat,
            "heart beats can not be updated",
        ),
        (
            old.flow_control != new.flow_control,
            "flow control can not be updated",
        ),
    ];
    if let Some((_, text)) = fixed.iter().find(|(changed, _)| *changed) {
        return Err(refused(text));
    }
    if old.deliver_subject != new.deliver_subject {
        if old.deliver_subject.is_empty() {
            return Err(refused("can not update pull consumer to push based"));
        }
        if new.deliver_subject.is_empty() {
            return Err(refused("can not update push consumer to pull based"));
        }
        if bound(&old.deliver_subject) {
            return Err(table::CONSUMER_NAME_EXIST.err());
        }
    }
    if old.max_waiting != new.max_waiting {
        return Err(refused("max waiting can not be updated"));
    }
    let backoffs = i64::try_from(new.backoff.len()).unwrap_or(i64::MAX);
    if backoffs > 0 && new.max_deliver != -1 && backoffs > new.max_deliver {
        return Err(table::CONSUMER_MAX_DELIVER_BACKOFF.err());
    }
    Ok(())
}
