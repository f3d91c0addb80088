//! A stream's scheduler, owned by its ingest: what each stored message changes in the
//! schedules, the messages due schedules produce, and the rebuild from the store when the
//! stream opens (or starts allowing schedules).
//!
//! Exactly once across a crash: the schedules are rebuilt from the stored messages in order,
//! the produced ones included. A produced `Nats-Schedule-Next: purge` after an `@at` schedule
//! means it fired (the purge of the schedule may not have been written): the schedule is
//! dropped and its purge completed. A produced time still ahead is taken as the next fire.
//! Otherwise the next fire follows Go: from the schedule's stored time, skipping ahead of
//! now for repeating schedules (fires missed while down are not made up), at once for an
//! `@at` whose time has passed.

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use natrium_store::{Filter, ScheduleIndex, StoreError, StreamStore};

use super::fields::{ScheduleFields, PURGE};
use super::pattern::{parse_rfc3339, Next};
use super::timers::Timers;
use crate::config::StreamConfig;
use crate::errors::ApiError;

/// The scheduler of one stream; empty (and free) unless it allows schedules.
#[derive(Debug, Default)]
pub struct Scheduler {
    timers: Option<Timers>,
    /// The message being ingested was produced by a schedule (Go's "sourced" flag: the
    /// publish checks do not apply to it).
    pub producing: bool,
    /// The schedule index the store last took (not written again while it is the same).
    saved: Option<ScheduleIndex>,
}

/// A due schedule's message, and what to do if it is not stored.
pub struct Fire {
    pub schedule_seq: u64,
    pub schedule_subject: Bytes,
    pub next: Next,
    pub delivery: Delivery,
}

impl Scheduler {
    /// The publish checks (`super::publish`); `Ok(Some(block))` is the header block to store.
    pub fn check(
        &self,
        config: &StreamConfig,
        store: &dyn StreamStore,
        msg: &Delivery,
        now_ns: i64,
    ) -> Result<Option<Bytes>, ApiError> {
        let block = msg.headers.as_deref().unwrap_or_default();
        if self.producing || !super::fields::mentions_schedule(block) {
            return Ok(None);
        }
        let edited = super::publish::check(config, store, &msg.subject, block, now_ns)?;
        Ok(edited.map(Bytes::from))
    }

    /// Builds the schedules from the store when the stream allows them and has none yet (from
    /// its schedule index and the messages after it, `super::recover`); drops them when it
    /// does not.
    pub fn ensure(&mut self, config: &StreamConfig, store: &mut dyn StreamStore, now_ns: i64) {
        if !config.allow_msg_schedules {
            self.timers = None;
            self.saved = None;
            return;
        }
        if self.timers.is_some() {
            return;
        }
        let mut timers = Timers::default();
        let start = super::recover::from_index(&mut timers, &config.name, store, now_ns);
        let fired = super::recover::scan(&mut timers, store, start, now_ns);
        // An `@at` that fired before a crash may still have its schedule message.
        for (subject, before) in fired {
            if let Err(err) = store.purge_ex(&subject, before, 0) {
                tracing::warn!("JetStream failed to purge a fired message schedule: {err}");
            }
        }
        self.timers = Some(timers);
    }

    /// What a stored message changes: a schedule (re)placed, a subject's schedule replaced
    /// by a plain message, the next fire of a repeating schedule noted, a fired `@at`
    /// schedule purged (when the stream allows purges).
    pub fn on_stored(
        &mut self,
        config: &StreamConfig,
        store: &mut dyn StreamStore,
        (seq, subject, block): (u64, &[u8], &[u8]),
        now_ns: i64,
    ) -> Result<(), StoreError> {
        if !config.allow_msg_schedules {
            return Ok(());
        }
        self.ensure(config, store, now_ns);
        let Some(timers) = self.timers.as_mut() else {
            return Ok(());
        };
        let fields = ScheduleFields::read(block);
        let purge = note(timers, seq, subject, &fields, now_ns, now_ns, false);
        if let Some(scheduler) = purge {
            if config.allow_rollup_hdrs && !config.deny_purge {
                store.purge_ex(&scheduler, 0, 0)?;
                timers.remove_subject(&scheduler);
            }
        }
        Ok(())
    }

    /// The messages of the schedules due at `now_ns`, in schedule order; a schedule whose
    /// message is gone or no longer valid is dropped.
    pub fn fire(&mut self, store: &dyn StreamStore, now_ns: i64) -> Vec<Fire> {
        let Some(timers) = self.timers.as_mut() else {
            return Vec::new();
        };
        let mut fires = Vec::new();
        for (seq, at_ns) in timers.take_due(now_ns) {
            match due_message(store, seq, at_ns, now_ns) {
                Some(fire) => fires.push(fire),
                None => timers.remove_seq(seq),
            }
        }
        fires
    }

    /// After a fire was ingested. Not stored (refused by a limit, say): a repeating schedule
    /// moves on to its next fire, an `@at` one waits for the next start (Go keeps it in flight
    /// until then). Taken without being stored (an interest stream where no consumer wants
    /// it): an `@at` schedule is purged all the same, as Go does.
    pub fn settle(
        &mut self,
        fire: &Fire,
        taken: bool,
        config: &StreamConfig,
        store: &mut dyn StreamStore,
    ) {
        let Some(timers) = self.timers.as_mut() else {
            return;
        };
        if !timers.is_in_flight(&fire.schedule_subject, fire.schedule_seq) {
            return;
        }
        if fire.next.repeat {
            timers.update(&fire.schedule_subject, fire.next.at_ns);
            return;
        }
        if !taken {
            // Left in flight: the schedule index says so, and the next start fires it.
            return;
        }
        timers.remove_subject(&fire.schedule_subject);
        if config.allow_rollup_hdrs && !config.deny_purge {
            if let Err(err) = store.purge_ex(&fire.schedule_subject, 0, 0) {
                tracing::warn!("JetStream failed to purge a fired message schedule: {err}");
            }
        }
    }

    /// Gives the store the schedules, accounting for every message stored so far
    /// (`StreamStore::write_schedule_index`), unless it already has them: called after a sync,
    /// when the stream is quiet and before it stops.
    pub fn save_index(&mut self, stream: &str, store: &mut dyn StreamStore) {
        let Some(timers) = self.timers.as_ref() else {
            return;
        };
        let index = ScheduleIndex {
            next_seq: store.fast_state().last_seq.saturating_add(1),
            entries: timers.entries(),
        };
        if self.saved.as_ref() == Some(&index) {
            return;
        }
        match store.write_schedule_index(&index) {
            Ok(true) => self.saved = Some(index),
            Ok(false) => {}
            Err(err) => {
                tracing::warn!(
                    "Filestore [{stream}] Error writing message scheduling state: {err}"
                );
            }
        }
    }

    /// When the stream's task should wake to fire schedules (Unix ns).
    pub fn arm(&mut self, now_ns: i64) -> Option<i64> {
        self.timers.as_mut()?.arm(now_ns)
    }

    /// A schedule was added or moved since [`Self::arm`].
    pub fn take_changed(&mut self) -> bool {
        self.timers.as_mut().is_some_and(Timers::take_changed)
    }
}

/// One message's effect on the schedules (`ts_ns` is when it was stored); returns the
/// subject of a schedule to purge (a produced `purge`). `recovering` takes a produced next
/// fire only while it is ahead of now.
pub(super) fn note(
    timers: &mut Timers,
    seq: u64,
    subject: &[u8],
    fields: &ScheduleFields<'_>,
    ts_ns: i64,
    now_ns: i64,
    recovering: bool,
) -> Option<Bytes> {
    let scheduler = ScheduleFields::text(fields.scheduler);
    match fields.next(ts_ns, now_ns) {
        Ok(Some(next)) => timers.add(seq, subject, next.at_ns),
        _ if scheduler.is_none() => timers.remove_subject(subject),
        _ => {}
    }
    let (scheduler, next) = (scheduler?, ScheduleFields::text(fields.next)?);
    if next == PURGE {
        if recovering {
            // Only a schedule this fire came from: a later one on the subject is kept.
            let pending = timers.len();
            timers.remove_subject(scheduler);
            return (timers.len() < pending).then(|| Bytes::copy_from_slice(scheduler));
        }
        return Some(Bytes::copy_from_slice(scheduler));
    }
    let at = std::str::from_utf8(next).ok().and_then(parse_rfc3339)?.0;
    if !recovering || at > now_ns {
        timers.update(scheduler, at);
    }
    None
}

/// The fire of the schedule message `seq` due at `at_ns`, if it still holds a valid one.
fn due_message(store: &dyn StreamStore, seq: u64, at_ns: i64, now_ns: i64) -> Option<Fire> {
    let schedule = store.load_msg(seq).ok()?;
    let fields = ScheduleFields::read(&schedule.headers);
    ScheduleFields::text(fields.pattern)?;
    let next = fields.next(at_ns, now_ns).ok()??;
    fields.ttl().ok()?;
    let target = ScheduleFields::text(fields.target)?;
    let source = ScheduleFields::text(fields.source)
        .and_then(|s| Filter::new(s).ok())
        .and_then(|f| store.load_last_msg(&f).ok());
    let delivery = super::produce::produce(&schedule, &fields, target, source.as_ref(), &next);
    Some(Fire {
        schedule_seq: seq,
        schedule_subject: schedule.subject.clone(),
        next,
        delivery,
    })
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
