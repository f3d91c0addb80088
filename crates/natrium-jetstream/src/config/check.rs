//! Go's defaults and checks for a stream configuration on `STREAM.CREATE` and `STREAM.UPDATE`
//! (its `checkStreamCfg`, the create handler's own refusals and `configUpdateCheck`), in Go's
//! order so that a config breaking several rules gets the error Go gives.
//!
//! What needs other streams or the account's usage (subjects overlapping another stream, a
//! name in use, resource limits) is the caller's; this module sees one config at a time.

use super::context::CheckContext;
use super::limits::{
    DELETE_MARKER_TTL_MIN_NS, DESCRIPTION_LEN_MAX, DUPLICATE_WINDOW_DEFAULT_NS, METADATA_LEN_MAX,
    NAME_LEN_MAX, REPLICAS_MAX, WINDOW_MIN_NS,
};
use super::metadata::stored_metadata;
use super::reject::{invalid, pedantic};
use super::sources::check_origins;
use super::stream::{Discard, PersistMode, Retention, Storage, StreamConfig};
use super::subjects::{check_republish, check_subjects, check_transform};
use crate::errors::{table, ApiError};

impl StreamConfig {
    /// Go's defaults filled in and the config checked, for `STREAM.CREATE`. The stored
    /// metadata (`_nats.req.level`) is set; add the dynamic keys with
    /// [`with_dynamic_metadata`](super::with_dynamic_metadata) for the response.
    ///
    /// The caller checks first that the subject's stream name equals `name` (10056), and
    /// between these checks and storing the stream, the account's limits, other streams'
    /// subjects (10065) and the name in use (10058). Go checks the account's stream count and
    /// reservations between [`StreamConfig::prepared_for_create`] and
    /// [`StreamConfig::checked_after_prepare`], the two halves of this function: a config
    /// failing both gets the account error there.
    ///
    /// # Errors
    /// Go's error for the first rule the config breaks.
    pub fn checked_for_create(self, ctx: &CheckContext) -> Result<StreamConfig, ApiError> {
        self.prepared_for_create(ctx)?.checked_after_prepare(ctx)
    }

    /// The first half of [`StreamConfig::checked_for_create`]: the stored metadata set, then
    /// the create handler's own refusals (a path in the name, sealed, mirror direct without
    /// a mirror).
    ///
    /// # Errors
    /// Go's error for the first rule the config breaks.
    pub fn prepared_for_create(mut self, ctx: &CheckContext) -> Result<StreamConfig, ApiError> {
        stored_metadata(&mut self, ctx);
        if self.name.contains(['\\', '/']) {
            return Err(table::STREAM_NAME_CONTAINS_PATH_SEPARATORS.err());
        }
        if self.sealed {
            return Err(invalid("stream configuration for create can not be sealed"));
        }
        if self.mirror_direct && self.mirror.is_none() {
            return Err(invalid("stream has no mirror but does have mirror direct"));
        }
        Ok(self)
    }

    /// The second half of [`StreamConfig::checked_for_create`]: Go's `checkStreamCfg` and the
    /// single server's replica limit.
    ///
    /// # Errors
    /// Go's error for the first rule the config breaks.
    pub fn checked_after_prepare(self, ctx: &CheckContext) -> Result<StreamConfig, ApiError> {
        let cfg = check_stream_config(self, ctx)?;
        if !ctx.clustered && cfg.num_replicas > 1 {
            return Err(table::STREAM_REPLICAS_NOT_SUPPORTED.err());
        }
        Ok(cfg)
    }

    /// For `STREAM.UPDATE` of a stream whose stored config is `old`: Go's checks of the new
    /// config, then its update rules (storage and workqueue retention are fixed, sealed and
    /// the deny flags can't be undone, the mirror can only be removed, …), then the
    /// adjustments a seal makes. The stored metadata is set as on create.
    ///
    /// Go checks the new config once before it compares the subject's stream name (10056)
    /// and looks the stream up (10059); a caller that wants that order for a config failing
    /// both calls [`check_stream_config`] first.
    ///
    /// # Errors
    /// Go's error for the first rule broken.
    pub fn checked_for_update(
        self,
        old: &StreamConfig,
        ctx: &CheckContext,
    ) -> Result<StreamConfig, ApiError> {
        let mut cfg = check_stream_config(self, ctx)?;
        stored_metadata(&mut cfg, ctx);
        let cfg = check_stream_config(cfg, ctx)?;
        super::update::check_update(cfg, old, ctx)
    }
}

/// Go's `checkStreamCfg`: defaults filled in and every rule about one config checked.
///
/// # Errors
/// Go's error for the first rule the config breaks.
pub fn check_stream_config(
    cfg: StreamConfig,
    ctx: &CheckContext,
) -> Result<StreamConfig, ApiError> {
    check_names(&cfg)?;
    let mut cfg = cfg;
    check_replicas(&mut cfg)?;
    default_limits(&mut cfg, ctx.pedantic)?;
    check_windows(&mut cfg, ctx)?;
    check_features(&mut cfg, ctx.pedantic)?;
    check_origins(&mut cfg, ctx)?;
    check_subjects(&mut cfg)?;
    check_max_bytes(&cfg, ctx)?;
    if let Some(tr) = &cfg.subject_transform {
        check_transform(tr)?;
    }
    check_republish(&mut cfg, ctx.pedantic)?;
    if cfg
        .placement
        .as_ref()
        .is_some_and(|p| *p == super::stream::Placement::default())
    {
        cfg.placement = None;
    }
    if cfg
        .placement
        .as_ref()
        .is_some_and(|p| !p.preferred.is_empty())
    {
        return Err(invalid("preferred server not permitted in placement"));
    }
    Ok(cfg)
}

/// Go's `isValidAssetName`: stream, consumer and source names.
pub(crate) fn is_valid_asset_name(name: &str) -> bool {
    !name.is_empty() && !name.contains([' ', '\t', '\r', '\n', '\x0c', '.', '*', '>', '\\', '/'])
}

fn check_names(cfg: &StreamConfig) -> Result<(), ApiError> {
    if !is_valid_asset_name(&cfg.name) {
        return Err(invalid(
            r"stream name is required and can not contain '.', '*', '>', '\', '/'",
        ));
    }
    if cfg.name.len() > NAME_LEN_MAX {
        return Err(invalid(format!(
            "stream name is too long, maximum allowed is {NAME_LEN_MAX}"
        )));
    }
    if cfg.description.len() > DESCRIPTION_LEN_MAX {
        return Err(invalid(format!(
            "stream description is too long, maximum allowed is {DESCRIPTION_LEN_MAX}"
        )));
    }
    let metadata_len: usize = cfg.metadata.iter().map(|(k, v)| k.len() + v.len()).sum();
    if metadata_len > METADATA_LEN_MAX {
        return Err(invalid(format!(
            "stream metadata exceeds maximum size of {METADATA_LEN_MAX} bytes"
        )));
    }
    Ok(())
}

fn check_replicas(cfg: &mut StreamConfig) -> Result<(), ApiError> {
    if cfg.num_replicas == 0 {
        cfg.num_replicas = 1;
    }
    if cfg.num_replicas > REPLICAS_MAX {
        return Err(invalid(format!("maximum replicas is {REPLICAS_MAX}")));
    }
    if cfg.num_replicas < 0 {
        return Err(table::REPLICAS_COUNT_CANNOT_BE_NEGATIVE.err());
    }
    Ok(())
}

/// 0 and anything below -1 mean "no limit" and become -1; pedantic refuses below -1.
fn no_limit(value: &mut i64, field: &str, pedantic_mode: bool) -> Result<(), ApiError> {
    if *value == 0 || *value < -1 {
        if pedantic_mode && *value < -1 {
            return Err(pedantic(format!("{field} must be set to -1")));
        }
        *value = -1;
    }
    Ok(())
}

fn default_limits(cfg: &mut StreamConfig, pedantic_mode: bool) -> Result<(), ApiError> {
    no_limit(&mut cfg.max_msgs, "max_msgs", pedantic_mode)?;
    no_limit(
        &mut cfg.max_msgs_per_subject,
        "max_msgs_per_subject",
        pedantic_mode,
    )?;
    no_limit(&mut cfg.max_bytes, "max_bytes", pedantic_mode)?;
    let mut max_msg_size = i64::from(cfg.max_msg_size);
    no_limit(&mut max_msg_size, "max_msg_size", pedantic_mode)?;
    // -1 or the value as sent, both in i32's range.
    cfg.max_msg_size = i32::try_from(max_msg_size).unwrap_or(-1);
    no_limit(&mut cfg.max_consumers, "max_consumers", pedantic_mode)?;
    if cfg.max_age < 0 {
        return Err(invalid("max age can not be negative"));
    }
    if cfg.max_age != 0 && cfg.max_age < WINDOW_MIN_NS {
        return Err(invalid("max age needs to be >= 100ms"));
    }
    Ok(())
}

fn check_windows(cfg: &mut StreamConfig, ctx: &CheckContext) -> Result<(), ApiError> {
    let limit = ctx.duplicate_window_max.filter(|l| *l > 0);
    if cfg.duplicate_window == 0 && cfg.mirror.is_none() && cfg.sources.is_empty() {
        let mut window = DUPLICATE_WINDOW_DEFAULT_NS;
        if let Some(limit) = limit.filter(|l| window > *l) {
            if ctx.pedantic {
                return Err(pedantic(
                    "duplicate window limits are higher than current limits",
                ));
            }
            window = limit;
        }
        if cfg.max_age != 0 && cfg.max_age < window {
            if ctx.pedantic {
                return Err(pedantic("duplicate window cannot be bigger than max age"));
            }
            cfg.duplicate_window = cfg.max_age;
        } else {
            cfg.duplicate_window = window;
        }
    }
    if cfg.duplicate_window < 0 {
        return Err(invalid("duplicates window can not be negative"));
    }
    if cfg.max_age != 0 && cfg.duplicate_window > cfg.max_age {
        return Err(invalid("duplicates window can not be larger then max age"));
    }
    if let Some(limit) = limit.filter(|l| cfg.duplicate_window > *l) {
        return Err(invalid(format!(
            "duplicates window can not be larger then server limit of {}",
            natrium_gofmt::go_duration_nanos(limit)
        )));
    }
    if cfg.duplicate_window > 0 && cfg.duplicate_window < WINDOW_MIN_NS {
        return Err(invalid("duplicates window needs to be >= 100ms"));
    }
    Ok(())
}

/// Roll-ups, counters, per-subject discard, delete markers, schedules and persist mode.
fn check_features(cfg: &mut StreamConfig, pedantic_mode: bool) -> Result<(), ApiError> {
    if cfg.deny_purge && cfg.allow_rollup_hdrs {
        return Err(invalid("roll-ups require the purge permission"));
    }
    if cfg.allow_msg_counter {
        if cfg.discard == Discard::New {
            return Err(invalid("counter stream cannot use discard new"));
        }
        if cfg.allow_msg_ttl {
            return Err(invalid("counter stream cannot use message TTLs"));
        }
        if cfg.allow_msg_schedules {
            return Err(invalid("counter stream cannot use message schedules"));
        }
        if cfg.retention != Retention::Limits {
            return Err(invalid("counter stream can only use limits retention"));
        }
    }
    check_discard_new_per_subject(cfg)?;
    if cfg.subject_delete_marker_ttl > 0 {
        if cfg.subject_delete_marker_ttl < DELETE_MARKER_TTL_MIN_NS {
            return Err(invalid(
                "subject delete marker TTL must be at least 1 second",
            ));
        }
        if !cfg.allow_msg_ttl {
            if pedantic_mode {
                return Err(invalid(
                    "subject delete marker cannot be set if message TTLs are disabled",
                ));
            }
            cfg.allow_msg_ttl = true;
        }
        if !cfg.allow_rollup_hdrs {
            if pedantic_mode {
                return Err(invalid(
                    "subject delete marker cannot be set if roll-ups are disabled",
                ));
            }
            cfg.allow_rollup_hdrs = true;
            cfg.deny_purge = false;
        }
    } else if cfg.subject_delete_marker_ttl < 0 {
        return Err(invalid("subject delete marker TTL must not be negative"));
    }
    if cfg.allow_msg_schedules {
        if cfg.discard == Discard::New {
            return Err(invalid("message scheduling cannot use discard new"));
        }
        if !cfg.allow_rollup_hdrs {
            if pedantic_mode {
                return Err(invalid(
                    "message scheduling cannot be set if roll-ups are disabled",
                ));
            }
            cfg.allow_rollup_hdrs = true;
            cfg.deny_purge = false;
        }
    }
    check_persist_mode(cfg)
}

pub(crate) fn check_discard_new_per_subject(cfg: &StreamConfig) -> Result<(), ApiError> {
    if cfg.discard_new_per_subject {
        if cfg.discard != Discard::New {
            return Err(invalid(
                "discard new per subject requires discard new policy to be set",
            ));
        }
        if cfg.max_msgs_per_subject <= 0 {
            return Err(invalid(
                "discard new per subject requires max msgs per subject > 0",
            ));
        }
    }
    Ok(())
}

fn check_persist_mode(cfg: &StreamConfig) -> Result<(), ApiError> {
    if cfg.persist_mode == PersistMode::Async {
        if cfg.storage != Storage::File {
            return Err(invalid(
                "async persist mode is only supported on file storage",
            ));
        }
        if cfg.num_replicas > 1 {
            return Err(invalid(
                "async persist mode is not supported on replicated streams",
            ));
        }
        if cfg.allow_atomic {
            return Err(invalid(
                "async persist mode is not supported with atomic batch publish",
            ));
        }
    }
    Ok(())
}

fn check_max_bytes(cfg: &StreamConfig, ctx: &CheckContext) -> Result<(), ApiError> {
    if ctx.max_bytes_required && cfg.max_bytes <= 0 {
        return Err(table::STREAM_MAX_BYTES_REQUIRED.err());
    }
    if let Some(limit) = ctx.account_max_stream_bytes.filter(|l| *l > 0) {
        if cfg.max_bytes > limit {
            return Err(table::STREAM_MAX_STREAM_BYTES_EXCEEDED.err());
        }
    }
    Ok(())
}
