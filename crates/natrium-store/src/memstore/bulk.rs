//! Restoring a store's whole in-memory state at once, and reading it out, for the file
//! store's index (`docs/store-format.md` §6): messages come in sequence order and go
//! straight into the sequence map's chunks, each subject's chain is linked through the
//! position of its last message, and the subject table is taken whole with its ids, so a
//! message costs no hash lookup and no map search.

use bytes::Bytes;

use super::body::MsgBody;
use super::seqmap::SeqMapBuilder;
use super::state::Entry;
use super::store::MemStore;
use crate::types::{MsgTtl, SimpleState};

/// One message of a bulk restore; `subject` is its position in the subject table (its id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RestoredMsg<B> {
    pub seq: u64,
    pub subject: u32,
    pub timestamp_ns: i64,
    /// The accounted size (Go's formula, fixed when the message was stored).
    pub size: u64,
    pub ttl: MsgTtl,
    pub body: B,
}

/// The stream's sequence bounds beside its messages: the first sequence (used when no
/// message is held), the last sequence and the last time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub first_seq: u64,
    pub last_seq: u64,
    pub last_ts: i64,
}

impl<B: MsgBody> MemStore<B> {
    /// Fills an empty store with `msgs` (ascending sequences, each subject a position in
    /// `subjects`, which become the ids) and `bounds`. False, with the store left fit only to
    /// be dropped, if the input does not hold together: the store was not empty, sequences
    /// do not increase within `1..=bounds.last_seq`, or a subject is out of the table, empty
    /// or listed twice.
    pub(crate) fn restore_bulk(
        &mut self,
        subjects: Vec<Bytes>,
        msgs: impl Iterator<Item = RestoredMsg<B>>,
        bounds: Bounds,
    ) -> bool {
        if !self.state.msgs.is_empty() || self.state.last_seq != 0 {
            return false;
        }
        let state = &mut self.state;
        // Per subject: its state and the position of its last message.
        let mut per_subject = vec![(SimpleState::default(), (0, 0)); subjects.len()];
        let mut map: SeqMapBuilder<Entry<B>> = SeqMapBuilder::default();
        let mut first: Option<(u64, i64)> = None;
        let mut last_seq = 0;
        for msg in msgs {
            if msg.seq <= last_seq || msg.seq > bounds.last_seq {
                return false;
            }
            last_seq = msg.seq;
            first.get_or_insert((msg.seq, msg.timestamp_ns));
            let Some((subject, last_at)) = per_subject.get_mut(msg.subject as usize) else {
                return false;
            };
            let prev = subject.last;
            if prev != 0 {
                if let Some(prev_entry) = map.get_mut(*last_at) {
                    prev_entry.next = state.links.link_next(prev, prev_entry.next, msg.seq);
                }
            } else {
                subject.first = msg.seq;
            }
            subject.msgs += 1;
            subject.last = msg.seq;
            if let Some(expires) = msg.ttl.expires_at(msg.timestamp_ns) {
                state.ttl.insert(expires, msg.seq);
            }
            let seq = msg.seq;
            let mut entry =
                Entry::restored(msg.body, msg.timestamp_ns, msg.subject, msg.size, msg.ttl);
            entry.prev = state.links.link_prev(seq, entry.prev, prev);
            state.bytes += entry.size();
            match map.push(seq, entry) {
                Some(at) => *last_at = at,
                None => return false,
            }
        }
        let states = per_subject.into_iter().map(|(s, _)| s).collect();
        if !state.subjects.restore(subjects, states) {
            return false;
        }
        state.msgs = map.build();
        (state.first_seq, state.first_ts) = first.unwrap_or((bounds.first_seq, 0));
        state.last_seq = bounds.last_seq;
        state.last_ts = bounds.last_ts;
        true
    }

    /// With no message left, the first sequence is the one after the last (as removing the
    /// last message leaves it): a bulk restore that left messages out.
    pub(crate) fn restart_first(&mut self) {
        if self.state.msgs.is_empty() {
            self.state.first_seq = self.state.last_seq + 1;
            self.state.first_ts = 0;
        }
    }

    /// Every id's subject in id order (empty for an id not in use), and every message's
    /// sequence, subject id, time, accounted size, TTL and body, in sequence order.
    pub(crate) fn snapshot(&self) -> (Vec<Bytes>, Vec<RestoredMsg<B::Trace>>) {
        (self.subject_table(), self.restored_msgs().collect())
    }

    /// Every id's subject in id order (empty for an id not in use).
    pub(crate) fn subject_table(&self) -> Vec<Bytes> {
        self.state.subjects.table()
    }

    /// Every message as a bulk restore takes it, in sequence order, read as it goes.
    pub(crate) fn restored_msgs(&self) -> impl Iterator<Item = RestoredMsg<B::Trace>> + '_ {
        self.state.msgs.iter().map(|(seq, e)| RestoredMsg {
            seq,
            subject: e.subject,
            timestamp_ns: e.timestamp_ns,
            size: e.size(),
            ttl: e.ttl(),
            body: e.body.trace(),
        })
    }
}
