//! The reference model: a deliberately simple stream store. Every answer is computed by
//! scanning one ordered map, so it is easy to check by reading against Go's semantics; the
//! real stores must agree with it on every call.

use std::collections::{BTreeMap, BTreeSet};

use natrium_store::{
    DiscardPolicy, Filter, MsgSizing, MsgTtl, SimpleState, StoreConfig, StoreError, StreamState,
    UpdateReason,
};

#[derive(Debug, Clone)]
pub struct ModelMsg {
    pub subject: Vec<u8>,
    pub headers: Vec<u8>,
    pub payload: Vec<u8>,
    pub ts: i64,
    pub ttl: MsgTtl,
}

impl ModelMsg {
    fn size(&self, sizing: MsgSizing) -> u64 {
        sizing.size(self.subject.len(), self.headers.len(), self.payload.len())
    }
}

/// A store request, owned.
#[derive(Debug, Clone)]
pub struct ModelNew {
    pub msg: ModelMsg,
    pub rollup: bool,
}

#[derive(Debug, Default, Clone)]
pub struct Model {
    pub config: StoreConfig,
    /// Count bytes with Go's file-store formula instead of the memory store's.
    pub file_sizing: bool,
    pub msgs: BTreeMap<u64, ModelMsg>,
    pub first: u64,
    pub first_ts: i64,
    pub last: u64,
    pub last_ts: i64,
    /// Single-message removals of the last operation, with their reason.
    pub removed: Vec<(u64, UpdateReason)>,
}

impl Model {
    pub fn new(config: StoreConfig) -> Self {
        Model {
            config,
            ..Model::default()
        }
    }

    fn sizing(&self) -> MsgSizing {
        if self.file_sizing {
            MsgSizing::File
        } else {
            MsgSizing::Memory
        }
    }

    fn bytes(&self) -> u64 {
        let sizing = self.sizing();
        self.msgs.values().map(|m| m.size(sizing)).sum()
    }

    fn subject_count(&self, subject: &[u8]) -> u64 {
        self.msgs.values().filter(|m| m.subject == subject).count() as u64
    }

    fn first_of(&self, subject: &[u8]) -> Option<u64> {
        self.msgs
            .iter()
            .find(|(_, m)| m.subject == subject)
            .map(|(s, _)| *s)
    }

    pub fn remove(&mut self, seq: u64, reason: Option<UpdateReason>) -> bool {
        if self.msgs.remove(&seq).is_none() {
            return false;
        }
        if let Some(reason) = reason {
            self.removed.push((seq, reason));
        }
        if seq == self.first {
            (self.first, self.first_ts) = self
                .msgs
                .iter()
                .next()
                .map_or((self.last + 1, 0), |(s, m)| (*s, m.ts));
        }
        true
    }

    pub fn store(
        &mut self,
        new: ModelNew,
        seq: u64,
        check: bool,
    ) -> Result<(u64, i64), StoreError> {
        let m = &new.msg;
        let body = (m.headers.len() + m.payload.len()) as u64;
        if self.config.max_msg_size.is_some_and(|max| body > max) {
            return Err(StoreError::MsgTooLarge);
        }
        if check && self.config.discard == DiscardPolicy::New {
            let at_subject = self
                .config
                .max_msgs_per_subject
                .is_some_and(|max| self.subject_count(&m.subject) >= max);
            if at_subject && self.config.discard_new_per_subject && !new.rollup {
                return Err(StoreError::MaxMsgsPerSubject);
            }
            if self
                .config
                .max_msgs
                .is_some_and(|max| self.msgs.len() as u64 >= max)
                && !at_subject
            {
                return Err(StoreError::MaxMsgs);
            }
            if self
                .config
                .max_bytes
                .is_some_and(|max| self.bytes() + m.size(self.sizing()) > max)
            {
                let freed = self
                    .first_of(&m.subject)
                    .map_or(0, |s| self.msgs[&s].size(self.sizing()));
                if !at_subject || freed < m.size(self.sizing()) {
                    return Err(StoreError::MaxBytes);
                }
            }
        }
        let expected = self.last + 1;
        if seq != 0 && seq != expected {
            return Err(StoreError::SequenceMismatch { expected, got: seq });
        }
        if self.msgs.is_empty() {
            (self.first, self.first_ts) = (expected, m.ts);
        }
        (self.last, self.last_ts) = (expected, m.ts);
        let subject = m.subject.clone();
        let ts = m.ts;
        self.msgs.insert(expected, new.msg);
        if let Some(max) = self.config.max_msgs_per_subject {
            while self.subject_count(&subject) > max {
                let first = self.first_of(&subject).unwrap();
                self.remove(first, Some(UpdateReason::SubjectLimit));
            }
        }
        self.enforce_totals();
        Ok((expected, ts))
    }

    fn enforce_totals(&mut self) {
        if self.config.discard != DiscardPolicy::Old {
            return;
        }
        while self
            .config
            .max_msgs
            .is_some_and(|max| self.msgs.len() as u64 > max)
        {
            self.remove(self.first, Some(UpdateReason::Limit));
        }
        while self.config.max_bytes.is_some_and(|max| self.bytes() > max) {
            self.remove(self.first, Some(UpdateReason::Limit));
        }
    }

    pub fn update_config(&mut self, config: StoreConfig) {
        self.config = config;
        self.enforce_totals();
        if let Some(max) = self.config.max_msgs_per_subject {
            let subjects: BTreeSet<Vec<u8>> =
                self.msgs.values().map(|m| m.subject.clone()).collect();
            for subject in subjects {
                while self.subject_count(&subject) > max {
                    let first = self.first_of(&subject).unwrap();
                    self.remove(first, Some(UpdateReason::SubjectLimit));
                }
            }
        }
    }

    pub fn skip(&mut self, seq: u64, num: u64, now: i64) -> Result<u64, StoreError> {
        let expected = self.last + 1;
        if seq != 0 && seq != expected {
            return Err(StoreError::SequenceMismatch { expected, got: seq });
        }
        if num == 0 {
            return Ok(expected);
        }
        self.last = expected + num - 1;
        if self.last_ts == 0 {
            self.last_ts = now;
        }
        if self.msgs.is_empty() {
            (self.first, self.first_ts) = (self.last + 1, 0);
        }
        Ok(expected)
    }

    pub fn purge(&mut self) -> u64 {
        let n = self.msgs.len() as u64;
        self.msgs.clear();
        (self.first, self.first_ts) = (self.last + 1, 0);
        n
    }

    pub fn purge_ex(&mut self, subject: &[u8], seq: u64, keep: u64) -> u64 {
        if seq == 1 {
            return 0;
        }
        let filter = Filter::new(subject).unwrap();
        if filter.is_all() && keep == 0 && seq == 0 {
            return self.purge();
        }
        if filter.is_all() && seq > 1 {
            return self.compact(seq);
        }
        let matching: Vec<u64> = self
            .msgs
            .iter()
            .filter(|(_, m)| filter.matches(&m.subject))
            .map(|(s, _)| *s)
            .collect();
        let n = matching.len() as u64;
        if n == 0 || (keep > 0 && keep >= n) {
            return 0;
        }
        let max = if keep > 0 { n - keep } else { u64::MAX };
        let upper = if seq >= 1 { seq - 1 } else { u64::MAX };
        let mut purged = 0;
        for s in matching.into_iter().filter(|s| *s <= upper) {
            if purged >= max {
                break;
            }
            self.remove(s, None);
            purged += 1;
        }
        purged
    }

    pub fn compact(&mut self, seq: u64) -> u64 {
        if seq == 0 {
            return self.purge();
        }
        if self.first > seq {
            return 0;
        }
        if seq <= self.last {
            let below: Vec<u64> = self.msgs.range(..seq).map(|(s, _)| *s).collect();
            for s in &below {
                self.remove(*s, None);
            }
            return below.len() as u64;
        }
        let n = self.purge();
        (self.first, self.last) = (seq, seq - 1);
        n
    }

    pub fn truncate(&mut self, seq: u64) {
        let above: Vec<u64> = self.msgs.range(seq + 1..).map(|(s, _)| *s).collect();
        for s in above {
            self.msgs.remove(&s);
        }
        if let Some(m) = self.msgs.get(&seq) {
            self.last_ts = m.ts;
        }
        self.last = seq;
        if seq == 0 {
            self.last_ts = 0;
        }
        if self.msgs.is_empty() {
            (self.first, self.first_ts) = (if seq == 0 { 0 } else { seq + 1 }, 0);
        }
    }

    pub fn expire(&mut self, now: i64) -> u64 {
        let mut n = 0;
        if let Some(age) = self.config.max_age {
            let cutoff = now - age.as_nanos() as i64;
            let candidates: Vec<(u64, i64, MsgTtl)> =
                self.msgs.iter().map(|(s, m)| (*s, m.ts, m.ttl)).collect();
            for (seq, ts, ttl) in candidates {
                if ts > cutoff {
                    break;
                }
                if ttl != MsgTtl::Never && self.remove(seq, Some(UpdateReason::MaxAge)) {
                    n += 1;
                }
            }
        }
        let mut due: Vec<(i64, u64)> = self
            .msgs
            .iter()
            .filter_map(|(s, m)| m.ttl.expires_at(m.ts).map(|e| (e, *s)))
            .filter(|(e, _)| *e <= now)
            .collect();
        due.sort_unstable();
        for (_, seq) in due {
            self.remove(seq, Some(UpdateReason::Ttl));
            n += 1;
        }
        n
    }

    pub fn next_expiry(&self) -> Option<i64> {
        let by_age = self.config.max_age.and_then(|age| {
            let m = self.msgs.values().find(|m| m.ttl != MsgTtl::Never)?;
            Some(m.ts + age.as_nanos() as i64)
        });
        let by_ttl = self
            .msgs
            .values()
            .filter_map(|m| m.ttl.expires_at(m.ts))
            .min();
        [by_age, by_ttl].into_iter().flatten().min()
    }

    pub fn load(&self, seq: u64) -> Result<(u64, &ModelMsg), StoreError> {
        match self.msgs.get(&seq) {
            Some(m) => Ok((seq, m)),
            None if seq <= self.last => Err(StoreError::NotFound),
            None => Err(StoreError::Eof),
        }
    }

    pub fn load_next(&self, filter: &Filter, start: u64) -> Result<(u64, &ModelMsg), StoreError> {
        self.msgs
            .range(start.max(self.first)..)
            .find(|(_, m)| filter.matches(&m.subject))
            .map(|(s, m)| (*s, m))
            .ok_or(StoreError::Eof)
    }

    pub fn load_last(&self, filter: &Filter) -> Result<(u64, &ModelMsg), StoreError> {
        self.msgs
            .iter()
            .rev()
            .find(|(_, m)| filter.matches(&m.subject))
            .map(|(s, m)| (*s, m))
            .ok_or(StoreError::NotFound)
    }

    pub fn filtered(&self, start: u64, filter: &Filter) -> SimpleState {
        let mut out = SimpleState::default();
        for (s, m) in self.msgs.range(start..) {
            if filter.matches(&m.subject) {
                out.msgs += 1;
                if out.first == 0 {
                    out.first = *s;
                }
                out.last = *s;
            }
        }
        out
    }

    pub fn num_pending(&self, start: u64, filter: &Filter, last_per_subject: bool) -> (u64, u64) {
        let in_range = self
            .msgs
            .range(start..)
            .filter(|(_, m)| filter.matches(&m.subject));
        let total = if last_per_subject {
            in_range
                .map(|(_, m)| m.subject.clone())
                .collect::<BTreeSet<_>>()
                .len() as u64
        } else {
            in_range.count() as u64
        };
        (total, self.last)
    }

    pub fn subjects_state(&self, filter: &Filter) -> Vec<(Vec<u8>, SimpleState)> {
        let mut map: BTreeMap<Vec<u8>, SimpleState> = BTreeMap::new();
        for (s, m) in &self.msgs {
            if filter.matches(&m.subject) {
                let e = map.entry(m.subject.clone()).or_default();
                e.msgs += 1;
                if e.first == 0 {
                    e.first = *s;
                }
                e.last = *s;
            }
        }
        map.into_iter().collect()
    }

    pub fn seq_from_time(&self, ts: i64) -> u64 {
        self.msgs
            .iter()
            .find(|(_, m)| m.ts >= ts)
            .map_or(self.last + 1, |(s, _)| *s)
    }

    pub fn state(&self) -> StreamState {
        let msgs = self.msgs.len() as u64;
        let deleted: Vec<u64> = if msgs == 0 {
            Vec::new()
        } else {
            (self.first..=self.last)
                .filter(|s| !self.msgs.contains_key(s))
                .collect()
        };
        let subjects: BTreeSet<&Vec<u8>> = self.msgs.values().map(|m| &m.subject).collect();
        StreamState {
            msgs,
            bytes: self.bytes(),
            first_seq: self.first,
            first_ts: self.first_ts,
            last_seq: self.last,
            last_ts: self.last_ts,
            num_subjects: subjects.len() as u64,
            num_deleted: deleted.len() as u64,
            deleted,
            lost: None,
        }
    }
}
