//! Read-only questions to the memory store: loads by sequence, filter and time, per-filter
//! counts, and the state snapshot. Each picks between the per-subject index and a scan of
//! the message range, whichever touches fewer entries.

use std::collections::HashSet;

use bytes::Bytes;

use super::body::MsgBody;
use super::state::{Entry, MemState};
use super::subjects::SubjectId;
use crate::error::StoreError;
use crate::filter::Filter;
use crate::types::{SimpleState, StoredMsg, StreamState};

/// Above this many subjects a wildcard lookup scans messages rather than subjects when the
/// message range is shorter (Go's memstore uses the same kind of cut-over).
const SUBJECT_SCAN_SUBJECTS_MAX: usize = 256;

/// Up to this many matching subjects, a wildcard's next message is found subject by subject.
const PER_SUBJECT_LOOKUPS_MAX: usize = 16;

/// A hop along a subject's chain (a lookup by sequence) costs about this many entries of an
/// in-order scan.
const CHAIN_HOP_COST: u64 = 8;

impl<B: MsgBody> MemState<B> {
    pub(super) fn load(&self, seq: u64) -> Result<StoredMsg, StoreError> {
        match self.msgs.get(seq) {
            Some(entry) => Ok(self.to_msg(seq, entry)),
            None if seq <= self.last_seq => Err(StoreError::NotFound),
            None => Err(StoreError::Eof),
        }
    }

    /// The first matching message at or after `start`.
    pub(super) fn next_matching(&self, filter: &Filter, start: u64) -> Option<(u64, &Entry<B>)> {
        let start = start.max(self.first_seq);
        if start > self.last_seq || self.msgs.is_empty() {
            return None;
        }
        if filter.is_all() {
            return self.msgs.range_from(start).next();
        }
        if let Some(literal) = filter.as_literal() {
            return self.next_literal(literal, start);
        }
        let range = self.last_seq - start + 1;
        let subjects = self.subjects.len() as u64;
        let (mut lo, mut hi) = (start, self.last_seq);
        if subjects <= SUBJECT_SCAN_SUBJECTS_MAX as u64 || subjects < range / 2 {
            // The matching subjects still at or after `start`: with few of them, the earliest
            // next message of each is the answer; with more, their span bounds the scan.
            let mut few = [(0, SimpleState::default()); PER_SUBJECT_LOOKUPS_MAX];
            let (mut count, mut min_first, mut max_last) = (0usize, u64::MAX, 0);
            self.subjects.for_each_matching_id(filter, |id, s| {
                if s.last >= start {
                    if let Some(slot) = few.get_mut(count) {
                        *slot = (id, *s);
                    }
                    count += 1;
                    min_first = min_first.min(s.first.max(start));
                    max_last = max_last.max(s.last);
                }
            });
            if count == 0 {
                return None;
            }
            if count <= PER_SUBJECT_LOOKUPS_MAX {
                return few
                    .iter()
                    .take(count)
                    .filter_map(|(id, s)| self.next_on_subject(*id, s, start))
                    .min_by_key(|(seq, _)| *seq);
            }
            (lo, hi) = (min_first, max_last);
        }
        self.msgs
            .range(lo, hi)
            .find(|(_, e)| self.subjects.matches(filter, e.subject))
    }

    /// The first message on one literal subject at or after `start`.
    fn next_literal(&self, subject: &[u8], start: u64) -> Option<(u64, &Entry<B>)> {
        let id = self.subjects.id(subject)?;
        let state = self.subjects.get(subject)?;
        self.next_on_subject(id, state, start)
    }

    /// The first message of subject `id` (whose state is `state`) at or after `start`: its
    /// first, the successor of the message just before `start` (a consumer walking one
    /// subject), a walk along the subject's chain from its nearer end, or a scan of the
    /// sequences from `start`, whichever the subject's density makes cheaper.
    fn next_on_subject(
        &self,
        id: SubjectId,
        state: &SimpleState,
        start: u64,
    ) -> Option<(u64, &Entry<B>)> {
        if start > state.last {
            return None;
        }
        if start <= state.first {
            return self.msgs.get(state.first).map(|e| (state.first, e));
        }
        if let Some(prev) = self.msgs.get(start - 1).filter(|e| e.subject == id) {
            let next = self.links.next(start - 1, prev.next);
            return self.msgs.get(next).map(|e| (next, e));
        }
        // Expected costs, in map entries visited: a scan meets a match about every
        // span/msgs sequences; a chain hop costs about CHAIN_HOP_COST scanned entries.
        let span = state.last - state.first + 1;
        let scan = span / state.msgs.max(1);
        let ahead = state.msgs.saturating_mul(state.last - start) / span;
        let behind = state.msgs.saturating_mul(start - state.first) / span;
        if ahead.min(behind).saturating_mul(CHAIN_HOP_COST) >= scan {
            return self
                .msgs
                .range(start, state.last)
                .find(|(_, e)| e.subject == id);
        }
        if ahead <= behind {
            // Back from the last message while the previous one is still at or after start.
            let mut seq = state.last;
            loop {
                let entry = self.msgs.get(seq)?;
                let prev = self.links.prev(seq, entry.prev);
                if prev < start || prev == 0 {
                    return Some((seq, entry));
                }
                seq = prev;
            }
        }
        let mut seq = state.first;
        loop {
            let entry = self.msgs.get(seq)?;
            if seq >= start {
                return Some((seq, entry));
            }
            seq = self.links.next(seq, entry.next);
        }
    }

    pub(super) fn last_matching(&self, filter: &Filter) -> Option<(u64, &Entry<B>)> {
        let seq = if filter.is_all() {
            self.msgs.last()?.0
        } else {
            let mut last = 0;
            self.subjects
                .for_each_matching(filter, |_, s| last = last.max(s.last));
            last
        };
        self.msgs.get(seq).map(|e| (seq, e))
    }

    /// Messages at or after `start` on one subject, and the first of them, walking the
    /// subject's chain back from its last message.
    fn subject_tail(&self, state: &SimpleState, start: u64) -> (u64, u64) {
        let (mut count, mut first, mut seq) = (0, 0, state.last);
        while seq >= start && seq != 0 {
            let Some(entry) = self.msgs.get(seq) else {
                break;
            };
            count += 1;
            first = seq;
            seq = self.links.prev(seq, entry.prev);
        }
        (count, first)
    }

    pub(super) fn filtered(&self, start: u64, filter: &Filter) -> SimpleState {
        let start = start.max(self.first_seq);
        if start > self.last_seq || self.msgs.is_empty() {
            return SimpleState::default();
        }
        if filter.is_all() && start <= self.first_seq {
            // The last message, not `last_seq`, which may be a skipped sequence.
            let last = self.msgs.last().map_or(0, |(seq, _)| seq);
            return SimpleState {
                msgs: self.msgs.len() as u64,
                first: self.first_seq,
                last,
            };
        }
        let range = self.last_seq - start + 1;
        if filter.as_literal().is_none() && (self.subjects.len() as u64) > range {
            return self.filtered_by_scan(start, filter);
        }
        let mut out = SimpleState::default();
        self.subjects.for_each_matching(filter, |_, s| {
            let (msgs, first) = if start <= s.first {
                (s.msgs, s.first)
            } else if start <= s.last {
                self.subject_tail(s, start)
            } else {
                return;
            };
            out.msgs += msgs;
            out.first = if out.first == 0 {
                first
            } else {
                out.first.min(first)
            };
            out.last = out.last.max(s.last);
        });
        out
    }

    fn filtered_by_scan(&self, start: u64, filter: &Filter) -> SimpleState {
        let mut out = SimpleState::default();
        for (seq, entry) in self.msgs.range_from(start) {
            if self.subjects.matches(filter, entry.subject) {
                out.msgs += 1;
                if out.first == 0 {
                    out.first = seq;
                }
                out.last = seq;
            }
        }
        out
    }

    /// Matching subjects whose last message is at or after `start`.
    pub(super) fn subjects_pending(&self, start: u64, filter: &Filter) -> u64 {
        let start = start.max(self.first_seq);
        if start > self.last_seq || self.msgs.is_empty() {
            return 0;
        }
        let range = self.last_seq - start + 1;
        if (self.subjects.len() as u64) <= range || filter.as_literal().is_some() {
            let mut count = 0;
            self.subjects
                .for_each_matching(filter, |_, s| count += u64::from(s.last >= start));
            return count;
        }
        let mut seen = HashSet::new();
        for (_, entry) in self.msgs.range_from(start) {
            if self.subjects.matches(filter, entry.subject) {
                seen.insert(entry.subject);
            }
        }
        seen.len() as u64
    }

    pub(super) fn subjects_state(&self, filter: &Filter) -> Vec<(Bytes, SimpleState)> {
        let mut out = Vec::new();
        self.subjects
            .for_each_matching(filter, |subject, s| out.push((subject.clone(), *s)));
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Binary search over sequences, stepping over gaps, assuming times grow with sequences
    /// (the stream layer stamps them so); O(log² n) on the ordered map.
    pub(super) fn seq_from_time(&self, timestamp_ns: i64) -> u64 {
        let mut answer = self.last_seq + 1;
        if self.msgs.is_empty() {
            return answer;
        }
        let (mut lo, mut hi) = (self.first_seq, self.last_seq);
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            let Some((seq, entry)) = self.msgs.range(mid, hi).next() else {
                if mid == 0 {
                    break;
                }
                hi = mid - 1;
                continue;
            };
            if entry.timestamp_ns >= timestamp_ns {
                answer = seq;
                if mid == 0 {
                    break;
                }
                hi = mid - 1;
            } else {
                lo = seq + 1;
            }
        }
        answer
    }

    pub(super) fn snapshot(&self, with_deleted: bool) -> StreamState {
        let msgs = self.msgs.len() as u64;
        let num_deleted = if msgs == 0 {
            0
        } else {
            self.last_seq - self.first_seq + 1 - msgs
        };
        let mut deleted = Vec::new();
        if with_deleted && num_deleted > 0 {
            deleted.reserve(usize::try_from(num_deleted).unwrap_or(0));
            let mut expect = self.first_seq;
            for seq in self.msgs.keys() {
                deleted.extend(expect..seq);
                expect = seq + 1;
            }
            deleted.extend(expect..=self.last_seq);
        }
        StreamState {
            msgs,
            bytes: self.bytes,
            first_seq: self.first_seq,
            first_ts: self.first_ts,
            last_seq: self.last_seq,
            last_ts: self.last_ts,
            num_subjects: self.subjects.len() as u64,
            num_deleted,
            deleted,
            lost: None,
        }
    }
}
