//! Rebuilding a stream's schedules when it opens. The store's schedule index
//! (`StreamStore::read_schedule_index`, `docs/store-format.md` §6a) names the schedule
//! messages and their next fires up to a sequence; only those messages and the ones after it
//! are read, instead of every message (a million messages of 128 B took 190 ms to scan,
//! 2026-11-25). A damaged index, or one ahead of the stream (its tail was lost), is not used:
//! the whole stream is scanned, as when there is none. Go logs the same two warnings.
//!
//! Each indexed schedule is decided from its message as the scan would (a repeating one skips
//! the fires missed while down, a past `@at` fires at once), then takes the index's next fire
//! if that is still ahead (the one a fire stored): what the scan makes of the schedule message
//! and the fires after it.

use bytes::Bytes;
use natrium_store::{Filter, StreamStore};

use super::fields::ScheduleFields;
use super::scheduler::note;
use super::timers::Timers;

/// Takes the schedules of the store's index into `timers`; returns the first sequence the
/// index does not account for (the stream's first without a usable index).
pub(super) fn from_index(
    timers: &mut Timers,
    stream: &str,
    store: &dyn StreamStore,
    now_ns: i64,
) -> u64 {
    let state = store.fast_state();
    let index = match store.read_schedule_index() {
        Ok(Some(index)) if index.next_seq <= state.last_seq.saturating_add(1) => Some(index),
        Ok(Some(index)) => {
            tracing::warn!(
                "Filestore [{stream}] Error decoding message scheduling state: it covers up to \
                 sequence {}, past the last {}",
                index.next_seq - 1,
                state.last_seq
            );
            None
        }
        // None written yet (a first start, a memory store): scanned without a warning.
        Ok(None) => return 0,
        Err(err) => {
            tracing::warn!("Filestore [{stream}] Error decoding message scheduling state: {err}");
            None
        }
    };
    let start = index
        .as_ref()
        .map_or(0, |index| index.next_seq)
        .max(state.first_seq);
    if state.msgs > 0 && start <= state.last_seq {
        tracing::warn!(
            "Filestore [{stream}] Message scheduling state is outdated; attempting to recover \
             using linear scan (seq {start} to {})",
            state.last_seq
        );
    }
    let Some(index) = index else {
        return start;
    };
    for entry in &index.entries {
        // A schedule message removed since (or a sequence reused after a truncate) is skipped.
        let Ok(msg) = store.load_msg(entry.seq) else {
            continue;
        };
        if msg.subject != entry.subject || msg.headers.is_empty() {
            continue;
        }
        let fields = ScheduleFields::read(&msg.headers);
        let ts = msg.timestamp_ns;
        let _ = note(timers, msg.seq, &msg.subject, &fields, ts, now_ns, true);
        if let Some(at) = entry.at_ns.filter(|at| *at > now_ns) {
            timers.update(&msg.subject, at);
        }
    }
    start
}

/// Reads the messages from `start` on into `timers`; returns the `@at` schedules that fired
/// before a crash (their subject and the fire's sequence), whose purge is to be completed.
pub(super) fn scan(
    timers: &mut Timers,
    store: &dyn StreamStore,
    start: u64,
    now_ns: i64,
) -> Vec<(Bytes, u64)> {
    let mut fired = Vec::new();
    let mut seq = start;
    while let Ok(msg) = store.load_next_msg(&Filter::all(), seq) {
        seq = msg.seq + 1;
        if msg.headers.is_empty() {
            // A plain message ends its subject's schedule.
            timers.remove_subject(&msg.subject);
            continue;
        }
        let fields = ScheduleFields::read(&msg.headers);
        let ts = msg.timestamp_ns;
        if let Some(scheduler) = note(timers, msg.seq, &msg.subject, &fields, ts, now_ns, true) {
            fired.push((scheduler, msg.seq));
        }
    }
    fired
}

#[cfg(test)]
#[path = "recover_tests.rs"]
mod tests;
