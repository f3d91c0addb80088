//! The per-subject index: for every subject with messages, how many it has and its first and
//! last sequences. Subjects are interned: every message on a subject shares this index's
//! `Bytes`, so storing on a known subject allocates nothing for the subject.

use std::collections::HashMap;

use bytes::Bytes;
use foldhash::quality::RandomState;

use crate::filter::Filter;
use crate::types::SimpleState;

/// One subject's entry: the interned subject (handed to each message) and its state.
#[derive(Debug)]
struct Entry {
    subject: Bytes,
    state: SimpleState,
}

/// Subject → its state. Randomly seeded: subjects come from publishers.
#[derive(Debug, Default)]
pub(super) struct Subjects {
    map: HashMap<Bytes, Entry, RandomState>,
}

impl Subjects {
    /// The state of one literal subject.
    pub(super) fn get(&self, subject: &[u8]) -> Option<&SimpleState> {
        self.map.get(subject).map(|e| &e.state)
    }

    /// Number of subjects with messages.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// Records a new last message on `subject` and returns the interned subject and the
    /// previous last sequence of that subject (0 if it had none), for the message chain.
    pub(super) fn push(&mut self, subject: &[u8], seq: u64) -> (Bytes, u64) {
        if let Some(entry) = self.map.get_mut(subject) {
            let prev = entry.state.last;
            entry.state.msgs += 1;
            entry.state.last = seq;
            return (entry.subject.clone(), prev);
        }
        let subject = Bytes::copy_from_slice(subject);
        let state = SimpleState {
            msgs: 1,
            first: seq,
            last: seq,
        };
        self.map.insert(
            subject.clone(),
            Entry {
                subject: subject.clone(),
                state,
            },
        );
        (subject, 0)
    }

    /// Removes message `seq` of `subject`, whose neighbours on the same subject are `prev`
    /// and `next` (0 for none).
    pub(super) fn remove(&mut self, subject: &[u8], seq: u64, prev: u64, next: u64) {
        let Some(Entry { state, .. }) = self.map.get_mut(subject) else {
            debug_assert!(false, "removed message on an unindexed subject");
            return;
        };
        if state.msgs <= 1 {
            self.map.remove(subject);
            return;
        }
        state.msgs -= 1;
        if state.first == seq {
            state.first = next;
        }
        if state.last == seq {
            state.last = prev;
        }
        debug_assert!(state.first != 0 && state.last != 0 && state.first <= state.last);
    }

    /// Calls `f` with every subject matching `filter` and its state, in no particular order.
    /// A literal filter is one lookup; a wildcard one visits every subject.
    pub(super) fn for_each_matching(
        &self,
        filter: &Filter,
        mut f: impl FnMut(&Bytes, &SimpleState),
    ) {
        if let Some(literal) = filter.as_literal() {
            if let Some(entry) = self.map.get(literal) {
                f(&entry.subject, &entry.state);
            }
            return;
        }
        for entry in self.map.values() {
            if filter.matches(&entry.subject) {
                f(&entry.subject, &entry.state);
            }
        }
    }

    /// Forgets every subject.
    pub(super) fn clear(&mut self) {
        self.map = HashMap::default();
    }
}
