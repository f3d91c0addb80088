//! Interest and work-queue retention: a message acknowledged by a consumer is removed from
//! the stream once no consumer still needs it (Go's `ackMsg` and `noInterest`). Runs after a
//! round, with no consumer locked: each consumer is locked in turn, then the stream's store.

use std::sync::Arc;

use natrium_store::Filter;

use crate::config::stream::Retention;

use super::running::{store_filter, Consumer};
use crate::stream::Stream;

/// The filters of an interest stream's consumers (none: nothing is kept), or `None` when
/// the stream keeps messages by other rules. Go counts every consumer here, internal ones
/// too (`noInterest` at publish).
pub fn interest_filters(stream: &Stream) -> Option<Vec<Filter>> {
    if stream.core.lock().config.retention != Retention::Interest {
        return None;
    }
    let consumers: Vec<Arc<Consumer>> = stream.consumers.lock().values().cloned().collect();
    Some(
        consumers
            .iter()
            .map(|c| store_filter(&c.core.lock().config))
            .collect(),
    )
}

/// Removes the messages at `seqs` that no consumer of `stream` needs any more (each removal
/// reaches the engine through the stream's signal, like any other, for consumers that still
/// hold it pending: Go's `decStreamPending`).
pub fn release(stream: &Stream, seqs: &mut Vec<u64>) {
    if seqs.is_empty() {
        return;
    }
    seqs.sort_unstable();
    seqs.dedup();
    let consumers: Vec<Arc<Consumer>> = stream.consumers.lock().values().cloned().collect();
    for seq in seqs.drain(..) {
        if !consumers.iter().any(|c| needs(stream, c, seq)) {
            let removed = stream.core.lock().ingest.store.remove_msg(seq);
            if let Err(err) = removed {
                tracing::debug!("JetStream could not remove acknowledged message {seq}: {err}");
            }
        }
    }
}

/// Messages below `below` a consumer of an interest stream was reset past: those no
/// consumer needs any more go, as Go's reset checks the interest stream's state. Walked in
/// bounded steps, each taking the locks afresh.
pub fn release_below(stream: &Stream, below: u64) {
    const STEP: u64 = 4096;
    if stream.core.lock().config.retention != Retention::Interest {
        return;
    }
    let mut seq = stream
        .core
        .lock()
        .ingest
        .store
        .fast_state()
        .first_seq
        .max(1);
    let mut seqs = Vec::new();
    while seq < below {
        let end = below.min(seq.saturating_add(STEP));
        seqs.extend(seq..end);
        release(stream, &mut seqs);
        seq = end;
    }
}

/// Whether consumer `c` still needs the message at `seq` (its filter matches it and it is
/// not acknowledged there).
fn needs(stream: &Stream, c: &Consumer, seq: u64) -> bool {
    let core = c.core.lock();
    if core.config.direct {
        return false;
    }
    let filter: Filter = store_filter(&core.config);
    if !filter.is_all() {
        let subject = stream.core.lock().ingest.store.subject_for_seq(seq);
        match subject {
            Ok(subject) if filter.matches(&subject) => {}
            _ => return false,
        }
    }
    core.delivery
        .need_ack(core.config.ack_policy, seq, core.next_seq)
}
