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

/// At recovery, Go's `checkForOrphanMsgs` (here for work queues too): a consumer's ack floor
/// can reach the disk before the removals its acks made (a kill -9 in between), so the
/// messages at or below each consumer's ack floor that match its filter are released again,
/// and removed when no consumer still needs them.
pub fn release_acked(stream: &Stream) {
    if stream.core.lock().config.retention == Retention::Limits {
        return;
    }
    let consumers: Vec<Arc<Consumer>> = stream.consumers.lock().values().cloned().collect();
    let mut seqs = Vec::new();
    for c in &consumers {
        let (filter, floor) = {
            let core = c.core.lock();
            if core.config.direct {
                continue;
            }
            (store_filter(&core.config), core.delivery.ack_floor.stream)
        };
        let core = stream.core.lock();
        let store = core.ingest.store.as_ref();
        let mut seq = store.fast_state().first_seq;
        while seq <= floor {
            match store.load_next_msg(&filter, seq) {
                Ok(msg) if msg.seq <= floor => {
                    seqs.push(msg.seq);
                    seq = msg.seq + 1;
                }
                _ => break,
            }
        }
    }
    release(stream, &mut seqs);
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
