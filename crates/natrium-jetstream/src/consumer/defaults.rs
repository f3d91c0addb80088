//! Go's defaults of a consumer configuration (`setConsumerConfigDefaults`): negative values
//! clamped (or refused in pedantic mode), pull and ack defaults, the stream's
//! `consumer_limits` and the server's and account's limits filled in.

use super::config::{AckPolicy, ConsumerConfig, PriorityPolicy};
use super::context::ConsumerContext;
use crate::errors::{table, ApiError};

/// Go's `JSWaitQueueDefaultMax`: waiting pull requests of a pull consumer.
pub const MAX_WAITING_DEFAULT: i64 = 512;
/// Go's `JsAckWaitDefault` (30 s).
pub const ACK_WAIT_DEFAULT_NS: i64 = 30_000_000_000;
/// Go's `JsDefaultMaxAckPending`.
pub const MAX_ACK_PENDING_DEFAULT: i64 = 1000;
/// Go's `JsDefaultPinnedTTL` (2 min).
pub const PINNED_TTL_DEFAULT_NS: i64 = 120_000_000_000;
/// Go's `JsDeleteWaitTimeDefault` (5 s): an ephemeral's inactive threshold.
pub const EPHEMERAL_INACTIVE_DEFAULT_NS: i64 = 5_000_000_000;
/// Go's `sourceHealthHB` (1 s): the heartbeat a flow-control-acked consumer must use.
pub const FLOW_CONTROL_HEARTBEAT_NS: i64 = 1_000_000_000;

fn pedantic(text: &str) -> ApiError {
    table::PEDANTIC.with(&[("err", &text)])
}

/// Clamps a negative field to `floor`, or refuses it in pedantic mode with `text`.
fn clamp(
    value: &mut i64,
    below: i64,
    floor: i64,
    strict: bool,
    text: &str,
) -> Result<(), ApiError> {
    if *value < below {
        if strict {
            return Err(pedantic(text));
        }
        *value = floor;
    }
    Ok(())
}

/// Applies Go's defaults in Go's order.
///
/// # Errors
/// 10157 in pedantic mode where Go would have changed a value.
pub fn set_defaults(cfg: &mut ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    let strict = ctx.pedantic;
    if cfg.max_deliver == 0 || cfg.max_deliver < -1 {
        if strict && cfg.max_deliver < -1 {
            return Err(pedantic("max_deliver must be set to -1"));
        }
        cfg.max_deliver = -1;
    }
    clamp(
        &mut cfg.max_waiting,
        0,
        0,
        strict,
        "max_waiting must not be negative",
    )?;
    clamp(
        &mut cfg.max_ack_pending,
        -1,
        -1,
        strict,
        "max_ack_pending must be set to -1",
    )?;
    clamp(
        &mut cfg.max_batch,
        0,
        0,
        strict,
        "max_batch must not be negative",
    )?;
    clamp(
        &mut cfg.max_expires,
        0,
        0,
        strict,
        "max_expires must not be negative",
    )?;
    clamp(
        &mut cfg.max_bytes,
        0,
        0,
        strict,
        "max_bytes must not be negative",
    )?;
    clamp(
        &mut cfg.idle_heartbeat,
        0,
        0,
        strict,
        "idle_heartbeat must not be negative",
    )?;
    let text = "inactive_threshold must not be negative";
    clamp(&mut cfg.inactive_threshold, 0, 0, strict, text)?;
    let text = "priority_timeout must not be negative";
    clamp(&mut cfg.priority_timeout, 0, 0, strict, text)?;
    fill_defaults(cfg, ctx)
}

/// The defaults Go fills in once negative values are gone.
fn fill_defaults(cfg: &mut ConsumerConfig, ctx: &ConsumerContext<'_>) -> Result<(), ApiError> {
    let strict = ctx.pedantic;
    if !cfg.is_push() && cfg.max_waiting == 0 {
        cfg.max_waiting = MAX_WAITING_DEFAULT;
    }
    if cfg.ack_wait == 0 && matches!(cfg.ack_policy, AckPolicy::Explicit | AckPolicy::All) {
        cfg.ack_wait = ACK_WAIT_DEFAULT_NS;
    }
    if let Some(&first) = cfg.backoff.first() {
        if strict && cfg.ack_wait != first {
            return Err(pedantic("first backoff value has to equal batch AckWait"));
        }
        cfg.ack_wait = first;
    }
    let limits = &ctx.stream.consumer_limits;
    if cfg.max_ack_pending == 0 {
        if strict && limits.max_ack_pending > 0 {
            return Err(pedantic(
                "max_ack_pending must be set if it's configured in stream limits",
            ));
        }
        cfg.max_ack_pending = limits.max_ack_pending;
    }
    if cfg.inactive_threshold == 0 {
        if strict && limits.inactive_threshold > 0 {
            return Err(pedantic(
                "inactive_threshold must be set if it's configured in stream limits",
            ));
        }
        cfg.inactive_threshold = limits.inactive_threshold;
    }
    if cfg.max_ack_pending == 0 && cfg.ack_policy != AckPolicy::None {
        let mut pending = MAX_ACK_PENDING_DEFAULT;
        for limit in [ctx.server_max_ack_pending, ctx.account.max_ack_pending] {
            if limit > 0 && limit < pending {
                pending = limit;
            }
        }
        cfg.max_ack_pending = pending;
    }
    if !cfg.is_push() && cfg.max_batch == 0 && ctx.server_max_request_batch > 0 {
        if strict {
            return Err(pedantic(
                "max_request_batch must be set if it's JetStream limits are set",
            ));
        }
        cfg.max_batch = ctx.server_max_request_batch;
    }
    if cfg.priority_policy == PriorityPolicy::PinnedClient && cfg.priority_timeout == 0 {
        cfg.priority_timeout = PINNED_TTL_DEFAULT_NS;
    }
    if cfg.ack_policy == AckPolicy::FlowControl && !strict {
        cfg.flow_control = true;
        cfg.idle_heartbeat = FLOW_CONTROL_HEARTBEAT_NS;
    }
    Ok(())
}
