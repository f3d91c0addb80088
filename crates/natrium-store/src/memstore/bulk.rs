//! Restoring a store's whole in-memory state at once, and reading it out, for the file
//! store's index (`docs/store-format.md` §6): the subject table is interned once, each
//! subject's chain is linked from two arrays, and entries are appended to the sequence map
//! in order, so a message costs no hash lookup and no map search.

use bytes::Bytes;

use super::body::MsgBody;
use super::state::Entry;
use super::store::MemStore;
use crate::types::{MsgTtl, SimpleState};

/// One message of a bulk restore; `subject` indexes the table given with it.
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
    /// Fills an empty store with `msgs` (ascending sequences, each subject an index into
    /// `subjects`) and `bounds`. False, with the store left unusable for anything but being
    /// dropped, if the input does not hold together: the store was not empty, sequences do
    /// not increase or pass `bounds.last_seq`, or a subject is out of the table, empty or
    /// listed twice.
    pub(crate) fn restore_bulk(
        &mut self,
        subjects: &[Bytes],
        msgs: Vec<RestoredMsg<B>>,
        bounds: Bounds,
    ) -> bool {
        if !self.state.msgs.is_empty() || self.state.last_seq != 0 {
            return false;
        }
        let Some((links, per_subject)) = link_subjects(subjects.len(), &msgs, bounds) else {
            return false;
        };
        // Table position → id; only subjects with messages are interned.
        let mut ids = vec![u32::MAX; subjects.len()];
        for (at, state) in per_subject.into_iter().enumerate() {
            if state.msgs == 0 {
                continue;
            }
            let (Some(name), Some(slot)) = (subjects.get(at), ids.get_mut(at)) else {
                return false;
            };
            match self.state.subjects.restore(name.clone(), state) {
                Some(id) => *slot = id,
                None => return false,
            }
        }
        let state = &mut self.state;
        if let Some(first) = msgs.first() {
            state.first_seq = first.seq;
            state.first_ts = first.timestamp_ns;
        } else {
            state.first_seq = bounds.first_seq;
            state.first_ts = 0;
        }
        for (msg, link) in msgs.into_iter().zip(links) {
            let id = ids.get(msg.subject as usize).copied().unwrap_or(u32::MAX);
            let entry = Entry::restored(msg.body, msg.timestamp_ns, id, link, msg.size, msg.ttl);
            if let Some(expires) = msg.ttl.expires_at(msg.timestamp_ns) {
                state.ttl.insert(expires, msg.seq);
            }
            state.bytes += entry.size();
            if !state.msgs.push_back(msg.seq, entry) {
                return false;
            }
        }
        state.last_seq = bounds.last_seq;
        state.last_ts = bounds.last_ts;
        true
    }

    /// Every id's subject in id order (empty for an id not in use), and every message's
    /// sequence, subject id, time, accounted size, TTL and body, in sequence order.
    pub(crate) fn snapshot(&self) -> (Vec<Bytes>, Vec<RestoredMsg<B::Trace>>) {
        let msgs = self
            .state
            .msgs
            .iter()
            .map(|(seq, e)| RestoredMsg {
                seq,
                subject: e.subject,
                timestamp_ns: e.timestamp_ns,
                size: e.size(),
                ttl: e.ttl(),
                body: e.body.trace(),
            })
            .collect();
        (self.state.subjects.table(), msgs)
    }
}

/// Each message's (previous, next) sequence on its subject, and each subject's state;
/// `None` if sequences do not increase within `1..=bounds.last_seq` or a subject index is
/// out of the table.
fn link_subjects<B>(
    table_len: usize,
    msgs: &[RestoredMsg<B>],
    bounds: Bounds,
) -> Option<(Vec<(u64, u64)>, Vec<SimpleState>)> {
    let mut per_subject = vec![SimpleState::default(); table_len];
    let mut links = Vec::with_capacity(msgs.len());
    let mut last_seq = 0;
    for msg in msgs {
        if msg.seq <= last_seq || msg.seq > bounds.last_seq {
            return None;
        }
        last_seq = msg.seq;
        let state = per_subject.get_mut(msg.subject as usize)?;
        links.push((state.last, 0));
        if state.msgs == 0 {
            state.first = msg.seq;
        }
        state.msgs += 1;
        state.last = msg.seq;
    }
    let mut next = vec![0u64; table_len];
    for (msg, link) in msgs.iter().zip(links.iter_mut()).rev() {
        let slot = next.get_mut(msg.subject as usize)?;
        link.1 = *slot;
        *slot = msg.seq;
    }
    Some((links, per_subject))
}
