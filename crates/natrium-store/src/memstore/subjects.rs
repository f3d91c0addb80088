//! The per-subject index: for every subject with messages, how many it has and its first and
//! last sequences. Subjects are interned under a small id: a message holds the 4-byte id, not
//! the subject, and storing on a known subject allocates nothing. An id is reused once its
//! subject has no messages left.

use std::collections::HashMap;

use bytes::Bytes;
use foldhash::quality::RandomState;

use crate::filter::Filter;
use crate::types::SimpleState;

/// An interned subject.
pub(super) type SubjectId = u32;

/// One subject's slot: the subject and its state.
#[derive(Debug)]
struct Slot {
    subject: Bytes,
    state: SimpleState,
}

/// Subject → id → state. Randomly seeded: subjects come from publishers.
#[derive(Debug, Default)]
pub(super) struct Subjects {
    ids: HashMap<Bytes, SubjectId, RandomState>,
    slots: Vec<Option<Slot>>,
    free: Vec<SubjectId>,
}

impl Subjects {
    /// The id of a subject with messages.
    pub(super) fn id(&self, subject: &[u8]) -> Option<SubjectId> {
        self.ids.get(subject).copied()
    }

    /// The subject of an id in use (empty if the id is not in use).
    pub(super) fn name(&self, id: SubjectId) -> &Bytes {
        static EMPTY: Bytes = Bytes::new();
        self.slot(id).map_or(&EMPTY, |s| &s.subject)
    }

    fn slot(&self, id: SubjectId) -> Option<&Slot> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    /// The state of one literal subject.
    pub(super) fn get(&self, subject: &[u8]) -> Option<&SimpleState> {
        self.id(subject)
            .and_then(|id| self.slot(id))
            .map(|s| &s.state)
    }

    /// Whether the subject of `id` matches `filter`.
    pub(super) fn matches(&self, filter: &Filter, id: SubjectId) -> bool {
        filter.matches(self.name(id))
    }

    /// Number of subjects with messages.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Records a new last message on `subject` and returns its id and the previous last
    /// sequence of that subject (0 if it had none), for the message chain.
    pub(super) fn push(&mut self, subject: &[u8], seq: u64) -> (SubjectId, u64) {
        if let Some(id) = self.id(subject) {
            if let Some(Some(slot)) = self.slots.get_mut(id as usize) {
                let prev = slot.state.last;
                slot.state.msgs += 1;
                slot.state.last = seq;
                return (id, prev);
            }
        }
        let subject = Bytes::copy_from_slice(subject);
        let slot = Slot {
            subject: subject.clone(),
            state: SimpleState {
                msgs: 1,
                first: seq,
                last: seq,
            },
        };
        let id = if let Some(id) = self.free.pop() {
            if let Some(free) = self.slots.get_mut(id as usize) {
                *free = Some(slot);
            }
            id
        } else {
            // Subjects are bounded by messages, and a stream's messages by u32 ids' range
            // long before memory: an id past u32 is unreachable in practice.
            let id = SubjectId::try_from(self.slots.len()).unwrap_or(SubjectId::MAX);
            self.slots.push(Some(slot));
            id
        };
        self.ids.insert(subject, id);
        (id, 0)
    }

    /// Replaces an empty index with `table`'s subjects under their positions as ids, with
    /// their states; a subject with no messages leaves its id free. False if a subject with
    /// messages is empty or listed twice.
    pub(super) fn restore(&mut self, table: Vec<Bytes>, states: Vec<SimpleState>) -> bool {
        *self = Subjects::default();
        for (at, (subject, state)) in table.into_iter().zip(states).enumerate() {
            let Ok(id) = SubjectId::try_from(at) else {
                return false;
            };
            if state.msgs == 0 {
                self.slots.push(None);
                self.free.push(id);
                continue;
            }
            if subject.is_empty() || self.ids.insert(subject.clone(), id).is_some() {
                return false;
            }
            self.slots.push(Some(Slot { subject, state }));
        }
        true
    }

    /// Every id's subject, in id order; an id not in use is empty (the file store's index).
    pub(super) fn table(&self) -> Vec<Bytes> {
        self.slots
            .iter()
            .map(|s| s.as_ref().map(|s| s.subject.clone()).unwrap_or_default())
            .collect()
    }

    /// Removes message `seq` of subject `id`, whose neighbours on the same subject are `prev`
    /// and `next` (0 for none).
    pub(super) fn remove(&mut self, id: SubjectId, seq: u64, prev: u64, next: u64) {
        let Some(entry) = self.slots.get_mut(id as usize) else {
            debug_assert!(false, "removed message on an unindexed subject");
            return;
        };
        let Some(slot) = entry.as_mut() else {
            debug_assert!(false, "removed message on a free subject id");
            return;
        };
        let state = &mut slot.state;
        if state.msgs <= 1 {
            self.ids.remove(&slot.subject);
            *entry = None;
            self.free.push(id);
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
            if let Some(slot) = self.id(literal).and_then(|id| self.slot(id)) {
                f(&slot.subject, &slot.state);
            }
            return;
        }
        for slot in self.slots.iter().flatten() {
            if filter.matches(&slot.subject) {
                f(&slot.subject, &slot.state);
            }
        }
    }

    /// As `for_each_matching`, with each subject's id.
    pub(super) fn for_each_matching_id(
        &self,
        filter: &Filter,
        mut f: impl FnMut(SubjectId, &SimpleState),
    ) {
        if let Some(literal) = filter.as_literal() {
            if let Some(id) = self.id(literal) {
                if let Some(slot) = self.slot(id) {
                    f(id, &slot.state);
                }
            }
            return;
        }
        for (id, slot) in self.slots.iter().enumerate() {
            if let Some(slot) = slot.as_ref().filter(|s| filter.matches(&s.subject)) {
                f(
                    SubjectId::try_from(id).unwrap_or(SubjectId::MAX),
                    &slot.state,
                );
            }
        }
    }

    /// Forgets every subject.
    pub(super) fn clear(&mut self) {
        *self = Subjects::default();
    }
}
