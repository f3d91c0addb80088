//! Limits: the `discard: new` refusals before a store, the `discard: old` and per-subject
//! removals after it, and expiry by `max_age` and per-message TTL.

use super::body::MsgBody;
use super::state::MemState;
use crate::error::StoreError;
use crate::limits::MESSAGE_BYTES_MAX;
use crate::types::{DiscardPolicy, MsgTtl, NewMsg, UpdateReason};

impl<B: MsgBody> MemState<B> {
    /// Size checks every store makes, whatever the discard policy.
    pub(super) fn check_size(&self, msg: &NewMsg<'_>) -> Result<(), StoreError> {
        let body = msg.headers.len().saturating_add(msg.payload.len());
        let over_config = self
            .config
            .max_msg_size
            .is_some_and(|max| body as u64 > max);
        if body > MESSAGE_BYTES_MAX || over_config {
            return Err(StoreError::MsgTooLarge);
        }
        if msg.subject.is_empty() || msg.subject.len() > crate::limits::SUBJECT_BYTES_MAX {
            return Err(StoreError::InvalidSubject);
        }
        Ok(())
    }

    /// Go's `discard: new` checks: refuse when a limit is reached, unless the message replaces
    /// the oldest on a subject already at `max_msgs_per_subject` (it frees its own room).
    pub(super) fn check_discard_new(&self, msg: &NewMsg<'_>) -> Result<(), StoreError> {
        if self.config.discard != DiscardPolicy::New {
            return Ok(());
        }
        let subject = self.subjects.get(msg.subject);
        let at_subject_limit = match (subject, self.config.max_msgs_per_subject) {
            (Some(s), Some(max)) => s.msgs >= max,
            _ => false,
        };
        if at_subject_limit && self.config.discard_new_per_subject && !msg.rollup {
            return Err(StoreError::MaxMsgsPerSubject);
        }
        if self
            .config
            .max_msgs
            .is_some_and(|max| self.msgs.len() as u64 >= max)
            && !at_subject_limit
        {
            return Err(StoreError::MaxMsgs);
        }
        let size = self
            .sizing
            .size(msg.subject.len(), msg.headers.len(), msg.payload.len());
        if let Some(max) = self.config.max_bytes {
            if self.bytes.saturating_add(size) > max {
                // At the subject limit the subject's oldest message goes; refuse unless it
                // frees at least as many bytes as the new one takes.
                let freed = subject
                    .and_then(|s| self.msgs.get(s.first))
                    .map_or(0, super::state::Entry::size);
                if !at_subject_limit || freed < size {
                    return Err(StoreError::MaxBytes);
                }
            }
        }
        Ok(())
    }

    /// After storing on `subject`: per-subject limit, then `max_msgs`, then `max_bytes`, in
    /// Go's order (the order decides which messages go).
    pub(super) fn enforce_after_store(&mut self, subject: &[u8]) {
        self.enforce_subject(subject);
        self.enforce_totals();
    }

    /// Removes a subject's oldest messages down to `max_msgs_per_subject`.
    pub(super) fn enforce_subject(&mut self, subject: &[u8]) {
        let Some(max) = self.config.max_msgs_per_subject else {
            return;
        };
        while let Some(state) = self.subjects.get(subject).filter(|s| s.msgs > max) {
            let first = state.first;
            if self
                .remove(first, UpdateReason::SubjectLimit, false)
                .is_none()
            {
                debug_assert!(false, "subject index names a missing message");
                return;
            }
        }
    }

    /// Applies `max_msgs_per_subject` to every subject (after a config change).
    pub(super) fn enforce_all_subjects(&mut self) {
        let Some(max) = self.config.max_msgs_per_subject else {
            return;
        };
        let mut over = Vec::new();
        self.subjects
            .for_each_matching(&crate::filter::Filter::all(), |subject, s| {
                if s.msgs > max {
                    over.push(subject.clone());
                }
            });
        for subject in over {
            self.enforce_subject(&subject);
        }
    }

    /// `discard: old`: removes the oldest messages while over `max_msgs` or `max_bytes`.
    pub(super) fn enforce_totals(&mut self) {
        if self.config.discard != DiscardPolicy::Old {
            return;
        }
        if let Some(max) = self.config.max_msgs {
            while self.msgs.len() as u64 > max {
                if self
                    .remove(self.first_seq, UpdateReason::Limit, false)
                    .is_none()
                {
                    debug_assert!(false, "first sequence holds no message");
                    return;
                }
            }
        }
        if let Some(max) = self.config.max_bytes {
            while self.bytes > max {
                if self
                    .remove(self.first_seq, UpdateReason::Limit, false)
                    .is_none()
                {
                    debug_assert!(false, "first sequence holds no message");
                    return;
                }
            }
        }
    }

    /// Removes messages older than `max_age` (in sequence order, stopping at the first young
    /// one; `MsgTtl::Never` messages are passed over) and messages past their TTL.
    pub(super) fn expire(&mut self, now_ns: i64) -> u64 {
        let mut removed = 0;
        if let Some(cutoff) = self.age_cutoff(now_ns) {
            let mut cursor = self.first_seq;
            while let Some((seq, entry)) = self.msgs.range_from(cursor).next() {
                if entry.timestamp_ns > cutoff {
                    break;
                }
                cursor = seq + 1;
                if entry.ttl() != MsgTtl::Never
                    && self.remove(seq, UpdateReason::MaxAge, false).is_some()
                {
                    removed += 1;
                }
            }
        }
        while let Some(seq) = self.ttl.first_due(now_ns) {
            if self.remove(seq, UpdateReason::Ttl, false).is_none() {
                debug_assert!(false, "TTL index names a missing message");
                break;
            }
            removed += 1;
        }
        removed
    }

    /// Up to `max` of the sequences `expire` would remove at `now_ns`, ascending, removing
    /// nothing (JetStream places a delete marker instead of removing some of them).
    pub(super) fn due(&self, now_ns: i64, max: usize) -> Vec<u64> {
        let mut due = Vec::new();
        if let Some(cutoff) = self.age_cutoff(now_ns) {
            for (seq, entry) in self.msgs.range_from(self.first_seq) {
                if due.len() >= max || entry.timestamp_ns > cutoff {
                    break;
                }
                if entry.ttl() != MsgTtl::Never {
                    due.push(seq);
                }
            }
        }
        due.extend(self.ttl.due(now_ns).take(max));
        due.sort_unstable();
        due.dedup();
        due.truncate(max);
        due
    }

    /// Messages at or before this time are past `max_age`.
    fn age_cutoff(&self, now_ns: i64) -> Option<i64> {
        let age = self.config.max_age?;
        let age_ns = i64::try_from(age.as_nanos()).unwrap_or(i64::MAX);
        Some(now_ns.saturating_sub(age_ns))
    }

    /// When `expire` next has work: the oldest expirable message's age limit or the first TTL.
    pub(super) fn next_expiry(&self) -> Option<i64> {
        let by_age = self.config.max_age.and_then(|age| {
            let age_ns = i64::try_from(age.as_nanos()).unwrap_or(i64::MAX);
            let (_, oldest) = self.msgs.iter().find(|(_, e)| e.ttl() != MsgTtl::Never)?;
            Some(oldest.timestamp_ns.saturating_add(age_ns))
        });
        match (by_age, self.ttl.next()) {
            (Some(a), Some(t)) => Some(a.min(t)),
            (a, t) => a.or(t),
        }
    }
}
