//! The checks a published message's schedule headers get, in Go v2.15.2's order and with its
//! errors: a schedule (`Nats-Schedule` and its companions) on a stream that allows them,
//! with a valid pattern, zone, TTL, rollup, target and source; and the scheduler headers
//! (`Nats-Scheduler`, `Nats-Schedule-Next`) that clients may only use to purge a schedule.
//! An accepted schedule is stored with `Nats-Rollup: sub` (added when absent), so a newer
//! schedule on the same subject replaces the older one.

use natrium_store::{Filter, StreamStore};
use nats_subject::{is_valid_publish_subject, subjects_collide};

use super::fields::{Invalid, ScheduleFields, PURGE, SCHEDULE};
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::stream::headers::ROLLUP;

/// Checks a published (not scheduler-produced) message's headers; `Ok(Some(block))` is the
/// block to store instead (the rollup added).
pub fn check(
    config: &StreamConfig,
    store: &dyn StreamStore,
    subject: &[u8],
    block: &[u8],
    now_ns: i64,
) -> Result<Option<Vec<u8>>, ApiError> {
    let fields = ScheduleFields::read(block);
    let allowed = config.allow_msg_schedules;
    let disabled = || table::MESSAGE_SCHEDULES_DISABLED.err();
    let next = fields.next(now_ns, now_ns);
    if !allowed && !matches!(next, Ok(None)) {
        return Err(disabled());
    }
    let edited = match next {
        Err(Invalid::TimeZone) => return Err(table::MESSAGE_SCHEDULES_TIME_ZONE_INVALID.err()),
        Err(_) => return Err(table::MESSAGE_SCHEDULES_PATTERN_INVALID.err()),
        Ok(None) => None,
        Ok(Some(_)) => schedule(config, subject, block, &fields)?,
    };
    check_scheduler(allowed, store, subject, &fields)?;
    Ok(edited)
}

/// A schedule's companions (Go checks them in this order).
fn schedule(
    config: &StreamConfig,
    subject: &[u8],
    block: &[u8],
    fields: &ScheduleFields<'_>,
) -> Result<Option<Vec<u8>>, ApiError> {
    let ttl = fields
        .ttl()
        .map_err(|_| table::MESSAGE_SCHEDULES_TTL_INVALID.err())?;
    let rollup_invalid = || table::MESSAGE_SCHEDULES_ROLLUP_INVALID.err();
    if ScheduleFields::text(fields.rollup).is_some_and(|r| r != b"sub") {
        return Err(rollup_invalid());
    }
    if ttl.is_some() && !config.allow_msg_ttl {
        return Err(table::MESSAGE_TTL_DISABLED.err());
    }
    let target_invalid = || table::MESSAGE_SCHEDULES_TARGET_INVALID.err();
    let target = ScheduleFields::text(fields.target).ok_or_else(target_invalid)?;
    if !is_valid_publish_subject(target) || target == subject {
        return Err(target_invalid());
    }
    let source_invalid = || table::MESSAGE_SCHEDULES_SOURCE_INVALID.err();
    let source = ScheduleFields::text(fields.source);
    if let Some(source) = source {
        if source == target || source == subject || !is_valid_publish_subject(source) {
            return Err(source_invalid());
        }
    }
    let in_stream = |s: &[u8]| {
        config
            .subjects
            .iter()
            .any(|own| subjects_collide(own.as_bytes(), s))
    };
    if !in_stream(target) {
        return Err(target_invalid());
    }
    if source.is_some_and(|s| !in_stream(s)) {
        return Err(source_invalid());
    }
    let rollup = nats_proto::headers::Headers::parse(block)
        .ok()
        .and_then(|h| h.get(ROLLUP))
        .filter(|r| !r.is_empty());
    match rollup {
        None => Ok(Some(super::produce::append_field(block, ROLLUP, b"sub"))),
        Some(r) if r.eq_ignore_ascii_case(b"sub") => Ok(None),
        Some(_) => Err(rollup_invalid()),
    }
}

/// `Nats-Schedule-Next` from a client may only be `purge`, with `Nats-Scheduler` naming
/// another subject that holds a schedule (or nothing); `Nats-Scheduler` alone is refused.
fn check_scheduler(
    allowed: bool,
    store: &dyn StreamStore,
    subject: &[u8],
    fields: &ScheduleFields<'_>,
) -> Result<(), ApiError> {
    let invalid = || table::MESSAGE_SCHEDULES_SCHEDULER_INVALID.err();
    let scheduler = ScheduleFields::text(fields.scheduler);
    let Some(next) = ScheduleFields::text(fields.next) else {
        return if scheduler.is_some() {
            Err(invalid())
        } else {
            Ok(())
        };
    };
    if next != PURGE {
        return Err(invalid());
    }
    let scheduler = scheduler.ok_or_else(invalid)?;
    if scheduler == subject || !is_valid_publish_subject(scheduler) {
        return Err(invalid());
    }
    if !allowed {
        return Err(table::MESSAGE_SCHEDULES_DISABLED.err());
    }
    let last = Filter::new(scheduler)
        .ok()
        .and_then(|f| store.load_last_msg(&f).ok());
    if let Some(last) = last {
        let pattern = nats_proto::headers::Headers::parse(&last.headers)
            .ok()
            .and_then(|h| h.get(SCHEDULE));
        if pattern.is_none_or(<[u8]>::is_empty) {
            return Err(invalid());
        }
    }
    Ok(())
}
