//! Go's checks of a defaulted consumer configuration (`checkConsumerCfg`), in Go's order, each
//! with Go's error.

use nats_subject::{is_literal, is_valid_subject, subject_is_subset};

use super::config::{AckPolicy, ConsumerConfig, DeliverPolicy, PriorityPolicy};
use super::context::ConsumerContext;
use super::defaults::FLOW_CONTROL_HEARTBEAT_NS;
use crate::config::check::is_valid_asset_name;
use crate::config::stream::Retention;
use crate::errors::{table, ApiError};

/// Go's `JSMaxDescriptionLen`.
pub const DESCRIPTION_BYTES_MAX: usize = 4 * 1024;
/// Go's `JSMaxMetadataLen`: keys and values together.
pub const METADATA_BYTES_MAX: usize = 128 * 1024;
/// Go's `JSMaxNameLen`.
pub const NAME_BYTES_MAX: usize = 255;
/// Go's smallest push heartbeat (100 ms).
const HEARTBEAT_MIN_NS: i64 = 100_000_000;
/// Go's smallest `max_expires` (1 ms).
const MAX_EXPIRES_MIN_NS: i64 = 1_000_000;

fn invalid_config(text: &str) -> ApiError {
    table::STREAM_INVALID_CONFIG_F.with(&[("err", &text)])
}

/// Go's priority group names: 1 to 16 of `[a-zA-Z0-9/_=-]`.
pub fn is_valid_group_name(group: &str) -> bool {
    (1..=16).contains(&group.len())
        && group
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'=' | b'-'))
}

/// Checks a defaulted configuration.
///
/// # Errors
/// The first of Go's errors the config meets.
pub fn check_config(cfg: &ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    check_names_and_replicas(cfg, ctx)?;
    check_acks(cfg)?;
    if cfg.description.len() > DESCRIPTION_BYTES_MAX {
        return Err(table::CONSUMER_DESCRIPTION_TOO_LONG.with(&[("max", &DESCRIPTION_BYTES_MAX)]));
    }
    if cfg.is_push() {
        check_push(cfg, ctx)?;
    } else {
        check_pull(cfg, ctx)?;
    }
    check_limits(cfg, ctx)?;
    if cfg.direct {
        if !cfg.is_push() {
            return Err(table::CONSUMER_DIRECT_REQUIRES_PUSH.err());
        }
        if cfg.is_durable() {
            return Err(table::CONSUMER_DIRECT_REQUIRES_EPHEMERAL.err());
        }
    }
    check_filters(cfg)?;
    check_start(cfg)?;
    check_rest(cfg, ctx)
}

fn check_names_and_replicas(
    cfg: &ConsumerConfig,
    ctx: &ConsumerContext<'_>,
) -> Result<(), ApiError> {
    if !cfg.name.is_empty() && !is_valid_asset_name(&cfg.name) {
        return Err(invalid_config(
            r"consumer name can not contain '.', '*', '>', '\', '/'",
        ));
    }
    if !cfg.durable_name.is_empty() && !is_valid_asset_name(&cfg.durable_name) {
        return Err(invalid_config(
            r"consumer durable name can not contain '.', '*', '>', '\', '/'",
        ));
    }
    let stream_replicas = ctx.stream.num_replicas;
    if cfg.num_replicas > 0 && cfg.num_replicas > stream_replicas {
        return Err(table::CONSUMER_REPLICAS_EXCEEDS_STREAM.err());
    }
    if cfg.num_replicas < 0 {
        return Err(table::REPLICAS_COUNT_CANNOT_BE_NEGATIVE.err());
    }
    if ctx.stream.retention != Retention::Limits
        && !ctx.recovering
        && cfg.num_replicas != 0
        && cfg.num_replicas != stream_replicas
    {
        return Err(table::CONSUMER_REPLICAS_SHOULD_MATCH_STREAM.err());
    }
    Ok(())
}

fn check_acks(cfg: &ConsumerConfig) -> Result<(), ApiError> {
    if cfg.backoff.iter().any(|b| *b < 0) {
        return Err(table::CONSUMER_BACK_OFF_NEGATIVE.err());
    }
    if cfg.ack_wait < 0 {
        return Err(table::CONSUMER_ACK_WAIT_NEGATIVE.err());
    }
    if cfg.ack_policy == AckPolicy::FlowControl {
        if !cfg.is_push() {
            return Err(table::CONSUMER_ACK_FC_REQUIRES_PUSH.err());
        }
        if !cfg.flow_control {
            return Err(table::CONSUMER_ACK_FC_REQUIRES_FC.err());
        }
        if cfg.idle_heartbeat != FLOW_CONTROL_HEARTBEAT_NS {
            return Err(invalid_config(
                "flow control ack policy heartbeat needs to be 1s",
            ));
        }
        if cfg.max_ack_pending <= 0 {
            return Err(table::CONSUMER_ACK_FC_REQUIRES_MAX_ACK_PENDING.err());
        }
        if cfg.ack_wait != 0 || !cfg.backoff.is_empty() {
            return Err(table::CONSUMER_ACK_FC_REQUIRES_NO_ACK_WAIT.err());
        }
        if cfg.max_deliver > 0 {
            return Err(table::CONSUMER_ACK_FC_REQUIRES_NO_MAX_DELIVER.err());
        }
    }
    let backoffs = i64::try_from(cfg.backoff.len()).unwrap_or(i64::MAX);
    if backoffs > 0 && cfg.max_deliver != -1 && backoffs > cfg.max_deliver {
        return Err(table::CONSUMER_MAX_DELIVER_BACKOFF.err());
    }
    Ok(())
}

fn check_push(cfg: &ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    let deliver = cfg.deliver_subject.as_bytes();
    if !is_literal(deliver) {
        return Err(table::CONSUMER_DELIVER_TO_WILDCARDS.err());
    }
    if !is_valid_subject(deliver) {
        return Err(table::CONSUMER_INVALID_DELIVER_SUBJECT.err());
    }
    if ctx
        .stream
        .subjects
        .iter()
        .any(|s| subject_is_subset(deliver, s.as_bytes()))
    {
        return Err(table::CONSUMER_DELIVER_CYCLE.err());
    }
    if cfg.max_waiting != 0 {
        return Err(table::CONSUMER_PUSH_MAX_WAITING.err());
    }
    if cfg.max_ack_pending > 0 && cfg.ack_policy == AckPolicy::None {
        return Err(table::CONSUMER_MAX_PENDING_ACK_POLICY_REQUIRED.err());
    }
    if cfg.idle_heartbeat > 0 && cfg.idle_heartbeat < HEARTBEAT_MIN_NS {
        return Err(table::CONSUMER_SMALL_HEARTBEAT.err());
    }
    Ok(())
}

fn check_pull(cfg: &ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    if cfg.ack_policy == AckPolicy::None && ctx.stream.retention == Retention::WorkQueue {
        return Err(table::CONSUMER_PULL_REQUIRES_ACK.err());
    }
    if cfg.rate_limit_bps > 0 {
        return Err(table::CONSUMER_PULL_WITH_RATE_LIMIT.err());
    }
    if cfg.max_waiting < 0 {
        return Err(table::CONSUMER_MAX_WAITING_NEGATIVE.err());
    }
    if cfg.idle_heartbeat > 0 {
        return Err(table::CONSUMER_HB_REQUIRES_PUSH.err());
    }
    if cfg.flow_control {
        return Err(table::CONSUMER_FC_REQUIRES_PUSH.err());
    }
    if cfg.max_batch < 0 {
        return Err(table::CONSUMER_MAX_REQUEST_BATCH_NEGATIVE.err());
    }
    if cfg.max_expires != 0 && cfg.max_expires < MAX_EXPIRES_MIN_NS {
        return Err(table::CONSUMER_MAX_REQUEST_EXPIRES_TOO_SMALL.err());
    }
    let limit = ctx.server_max_request_batch;
    if limit > 0 && cfg.max_batch > limit {
        return Err(table::CONSUMER_MAX_REQUEST_BATCH_EXCEEDED_F.with(&[("limit", &limit)]));
    }
    Ok(())
}

fn check_limits(cfg: &ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    let stream_limits = &ctx.stream.consumer_limits;
    for limit in [
        ctx.server_max_ack_pending,
        ctx.account.max_ack_pending,
        stream_limits.max_ack_pending,
    ] {
        if limit > 0 && cfg.max_ack_pending > limit {
            return Err(table::CONSUMER_MAX_PENDING_ACK_EXCESS.with(&[("limit", &limit)]));
        }
    }
    let threshold = stream_limits.inactive_threshold;
    if threshold > 0 && cfg.inactive_threshold > threshold {
        let limit = natrium_gofmt::go_duration_nanos(threshold);
        return Err(table::CONSUMER_INACTIVE_THRESHOLD_EXCESS.with(&[("limit", &limit)]));
    }
    Ok(())
}

fn check_filters(cfg: &ConsumerConfig) -> Result<(), ApiError> {
    if !cfg.filter_subject.is_empty() && !cfg.filter_subjects.is_empty() {
        return Err(table::CONSUMER_DUPLICATE_FILTER_SUBJECTS.err());
    }
    if !cfg.filter_subject.is_empty() && !is_valid_subject(cfg.filter_subject.as_bytes()) {
        return Err(invalid_config("invalid subject"));
    }
    if cfg.filter_subjects.iter().any(String::is_empty) {
        return Err(table::CONSUMER_EMPTY_FILTER.err());
    }
    let filters = cfg.filters();
    for (outer, subject) in filters.iter().enumerate() {
        if !is_valid_subject(subject.as_bytes()) {
            return Err(invalid_config("invalid subject"));
        }
        for (inner, other) in filters.iter().enumerate() {
            if inner != outer && subject_is_subset(subject.as_bytes(), other.as_bytes()) {
                return Err(table::CONSUMER_OVERLAPPING_SUBJECT_FILTERS.err());
            }
        }
    }
    Ok(())
}

fn check_start(cfg: &ConsumerConfig) -> Result<(), ApiError> {
    let bad_start = |policy: &str, start: &str| {
        let text = format!(
            "consumer delivery policy is deliver {policy}, but optional start {start} is also set"
        );
        table::CONSUMER_INVALID_POLICY.with(&[("err", &text)])
    };
    let not_set = |policy: &str, what: &str| {
        let text =
            format!("consumer delivery policy is deliver {policy}, but optional {what} is not set");
        table::CONSUMER_INVALID_POLICY.with(&[("err", &text)])
    };
    let (seq, time) = (cfg.opt_start_seq > 0, cfg.opt_start_time.is_some());
    let plain = |policy: &str| {
        if seq {
            return Err(bad_start(policy, "sequence"));
        }
        if time {
            return Err(bad_start(policy, "time"));
        }
        Ok(())
    };
    match cfg.deliver_policy {
        DeliverPolicy::All => plain("all"),
        DeliverPolicy::Last => plain("last"),
        DeliverPolicy::New => plain("new"),
        DeliverPolicy::LastPerSubject => {
            plain("last per subject")?;
            if cfg.filter_subject.is_empty() && cfg.filter_subjects.is_empty() {
                return Err(not_set("last per subject", "filter subject"));
            }
            Ok(())
        }
        DeliverPolicy::ByStartSequence => {
            if !seq {
                return Err(not_set("by start sequence", "start sequence"));
            }
            if time {
                return Err(bad_start("by start sequence", "time"));
            }
            Ok(())
        }
        DeliverPolicy::ByStartTime => {
            if !time {
                return Err(not_set("by start time", "start time"));
            }
            if seq {
                return Err(bad_start("by start time", "start sequence"));
            }
            Ok(())
        }
    }
}

/// Go's `strconv.Atoi` of `sample_freq` without a trailing `%`: the error text when it fails.
fn sampling_error(freq: &str) -> Option<String> {
    let digits = freq.strip_suffix('%').unwrap_or(freq);
    match digits.parse::<i64>() {
        Ok(n) if n >= 0 => None,
        // Go reports the negative value with a nil error.
        Ok(_) => Some("<nil>".to_owned()),
        Err(e) => {
            let why = if matches!(
                e.kind(),
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow
            ) {
                "value out of range"
            } else {
                "invalid syntax"
            };
            Some(format!(
                "strconv.Atoi: parsing {}: {why}",
                natrium_gofmt::go_quote(digits)
            ))
        }
    }
}

fn check_rest(cfg: &ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    if !cfg.sample_freq.is_empty() {
        if let Some(err) = sampling_error(&cfg.sample_freq) {
            return Err(table::CONSUMER_INVALID_SAMPLING.with(&[("err", &err)]));
        }
    }
    if cfg.flow_control && cfg.idle_heartbeat == 0 {
        return Err(table::CONSUMER_WITH_FLOW_CONTROL_NEEDS_HEARTBEATS.err());
    }
    if cfg.is_durable() && !cfg.name.is_empty() && cfg.name != cfg.durable_name {
        return Err(table::CONSUMER_CREATE_DURABLE_AND_NAME_MISMATCH.err());
    }
    let metadata: usize = cfg.metadata.iter().map(|(k, v)| k.len() + v.len()).sum();
    if metadata > METADATA_BYTES_MAX {
        let limit = format!("{}KB", METADATA_BYTES_MAX / 1024);
        return Err(table::CONSUMER_METADATA_LENGTH.with(&[("limit", &limit)]));
    }
    if cfg.priority_policy == PriorityPolicy::None {
        if !cfg.priority_groups.is_empty() {
            return Err(table::CONSUMER_PRIORITY_GROUP_WITH_POLICY_NONE.err());
        }
        if cfg.priority_timeout > 0 {
            return Err(table::CONSUMER_PINNED_TTL_WITHOUT_PRIORITY_POLICY_NONE.err());
        }
    } else {
        if cfg.is_push() {
            return Err(table::CONSUMER_PUSH_WITH_PRIORITY_GROUP.err());
        }
        if cfg.priority_groups.is_empty() {
            return Err(table::CONSUMER_PRIORITY_POLICY_WITHOUT_GROUP.err());
        }
        for group in &cfg.priority_groups {
            if group.is_empty() {
                return Err(table::CONSUMER_EMPTY_GROUP_NAME.err());
            }
            if !is_valid_group_name(group) {
                return Err(table::CONSUMER_INVALID_GROUP_NAME.err());
            }
        }
    }
    let preferred = ctx.stream.placement.as_ref().map(|p| p.preferred.as_str());
    if preferred.is_some_and(|p| !p.is_empty()) {
        return Err(invalid_config(
            "preferred server not permitted in placement",
        ));
    }
    Ok(())
}
