//! Go's rules for changing a stored stream configuration (`configUpdateCheck`), applied to a
//! new config that already passed the single-config checks.

use super::check::check_discard_new_per_subject;
use super::context::CheckContext;
use super::reject::invalid;
use super::stream::{Discard, Retention, StreamConfig};
use crate::errors::{table, ApiError};

/// The update rules, then the adjustments a seal makes.
pub(crate) fn check_update(
    mut cfg: StreamConfig,
    old: &StreamConfig,
    ctx: &CheckContext,
) -> Result<StreamConfig, ApiError> {
    if cfg.name != old.name {
        return Err(invalid("stream configuration name must match original"));
    }
    if !ctx.clustered && cfg.num_replicas > 1 {
        return Err(table::STREAM_REPLICAS_NOT_SUPPORTED.err());
    }
    if cfg.storage != old.storage {
        return Err(invalid(
            "stream configuration update can not change storage type",
        ));
    }
    // Limits and interest convert into each other; a work queue's acknowledged state does not.
    if cfg.retention != old.retention
        && (old.retention == Retention::WorkQueue || cfg.retention == Retention::WorkQueue)
    {
        return Err(invalid(
            "stream configuration update can not change retention policy to/from workqueue",
        ));
    }
    if !cfg.sealed && old.sealed {
        return Err(invalid(
            "stream configuration update can not unseal a sealed stream",
        ));
    }
    if !cfg.deny_delete && old.deny_delete {
        return Err(invalid(
            "stream configuration update can not cancel deny message deletes",
        ));
    }
    if !cfg.deny_purge && old.deny_purge {
        return Err(invalid(
            "stream configuration update can not cancel deny purge",
        ));
    }
    // Removing the mirror promotes it to a normal stream; any other change is refused.
    if cfg.mirror.is_some() && cfg.mirror != old.mirror {
        return Err(table::STREAM_MIRROR_NOT_UPDATABLE.err());
    }
    check_discard_new_per_subject(&cfg)?;
    check_feature_changes(&cfg, old)?;
    if cfg.sealed {
        cfg.max_age = 0;
        cfg.discard = Discard::New;
        cfg.deny_delete = true;
        cfg.deny_purge = true;
        cfg.allow_rollup_hdrs = false;
    }
    Ok(cfg)
}

/// Features whose stored messages depend on them can't be switched off (or on, for counters).
fn check_feature_changes(cfg: &StreamConfig, old: &StreamConfig) -> Result<(), ApiError> {
    if old.allow_msg_ttl && !cfg.allow_msg_ttl {
        return Err(invalid("message TTL status can not be disabled"));
    }
    if cfg.allow_msg_counter != old.allow_msg_counter {
        return Err(invalid(
            "stream configuration update can not change message counter setting",
        ));
    }
    if old.allow_msg_schedules && !cfg.allow_msg_schedules {
        return Err(invalid("message schedules can not be disabled"));
    }
    if old.persist_mode != cfg.persist_mode {
        return Err(invalid(
            "stream configuration update can not change persist mode",
        ));
    }
    Ok(())
}
