//! `MemStore`: the memory implementation of [`StreamStore`]. Messages live in an ordered map
//! keyed by sequence, with a per-subject index and a TTL index beside it (`state`); this file
//! holds the trait's entry points and the sequence rules of purge, compact and truncate.

use bytes::Bytes;

use super::body::{MemBody, MsgBody};
use super::state::{MemState, Removal};
use crate::error::StoreError;
use crate::filter::Filter;
use crate::stream::StreamStore;
use crate::types::{
    MsgSizing, MsgTtl, NewMsg, SimpleState, StorageUpdateFn, StoreConfig, Stored, StoredMsg,
    StreamState, UpdateReason,
};

/// A stream kept in memory. Bytes are accounted with Go's memory-store formula. The file
/// store keeps its in-memory state in a `MemStore<Loc>`: the same index, with each message's
/// body replaced by where its record is.
pub struct MemStore<B: MsgBody = MemBody> {
    pub(super) state: MemState<B>,
}

impl MemStore {
    /// An empty store with these limits.
    pub fn new(config: StoreConfig) -> Self {
        MemStore {
            state: MemState::new(config, MsgSizing::Memory),
        }
    }
}

impl<B: MsgBody> MemStore<B> {
    /// An empty store counting bytes with `sizing` (the file store's state uses Go's
    /// file-store formula).
    pub(crate) fn with_sizing(config: StoreConfig, sizing: MsgSizing) -> Self {
        MemStore {
            state: MemState::new(config, sizing),
        }
    }

    /// Starts the removal log: every removed message (or a purge of all) is recorded until
    /// taken with [`MemStore::take_removals`].
    pub(crate) fn log_removals(&mut self) {
        self.state.removals = Some(Vec::new());
    }

    /// The removals since the last call.
    pub(crate) fn take_removals(&mut self) -> Vec<Removal<B::Trace>> {
        self.state
            .removals
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Puts back a message recovery found, with its body and the lengths its size is
    /// accounted from, without limits or checks beyond the sequence. False if `seq` is not
    /// the next one.
    #[allow(clippy::too_many_arguments)] // A message's parts, as the record holds them.
    pub(crate) fn restore_msg(
        &mut self,
        seq: u64,
        subject: &[u8],
        lengths: (usize, usize),
        timestamp_ns: i64,
        ttl: MsgTtl,
        body: B,
    ) -> bool {
        if seq != self.state.last_seq + 1 || subject.is_empty() {
            return false;
        }
        let size = self.state.sizing.size(subject.len(), lengths.0, lengths.1);
        self.state
            .insert(seq, subject, body, size, timestamp_ns, ttl);
        true
    }

    /// Sets the last message time (recovery, when the message that set it is gone).
    pub(crate) fn set_last_ts(&mut self, timestamp_ns: i64) {
        self.state.last_ts = timestamp_ns;
    }

    /// The body held for `seq` and its (interned) subject.
    pub(crate) fn locate(&self, seq: u64) -> Option<(&B, Bytes)> {
        let entry = self.state.msgs.get(seq)?;
        Some((&entry.body, self.state.subjects.name(entry.subject).clone()))
    }

    /// The body held for `seq`.
    pub(crate) fn body(&self, seq: u64) -> Option<&B> {
        self.state.msgs.get(seq).map(|e| &e.body)
    }

    /// Replaces the body held for `seq` (the file store sets a message's location once its
    /// record is written, and after compaction moves it).
    pub(crate) fn set_body(&mut self, seq: u64, body: B) {
        if let Some(entry) = self.state.msgs.get_mut(seq) {
            entry.body = body;
        }
    }

    /// Every held message's sequence and body, in order.
    pub(crate) fn bodies(&self) -> impl Iterator<Item = (u64, &B)> + '_ {
        self.state.msgs.iter().map(|(seq, e)| (seq, &e.body))
    }

    /// Every held message's sequence and body from `start` on, in order.
    pub(crate) fn bodies_from(&self, start: u64) -> impl Iterator<Item = (u64, &B)> + '_ {
        self.state
            .msgs
            .range_from(start)
            .map(|(seq, e)| (seq, &e.body))
    }

    /// Removes a message whose record turned out damaged (the file store's scrub): the
    /// callback hears of it, the removal log does not (nothing is written for it). Returns
    /// its body and accounted size.
    pub(crate) fn drop_damaged(&mut self, seq: u64) -> Option<(B, u64)> {
        let log = self.state.removals.take();
        let removed = self.state.remove(seq, UpdateReason::Removed, false);
        self.state.removals = log;
        removed
    }

    fn open(&self) -> Result<(), StoreError> {
        if self.state.closed {
            return Err(StoreError::Closed);
        }
        Ok(())
    }

    /// The sequence a store or skip call will use: `seq` if it is the next one (0 means next).
    fn next_seq(&self, seq: u64) -> Result<u64, StoreError> {
        let expected = self.state.last_seq + 1;
        if seq != 0 && seq != expected {
            return Err(StoreError::SequenceMismatch { expected, got: seq });
        }
        Ok(expected)
    }

    /// Removes the messages below `seq` one by one, reporting one total.
    fn remove_below(&mut self, seq: u64) -> u64 {
        let (mut purged, mut bytes) = (0, 0);
        while let Some(first) = self.state.msgs.first().map(|(s, _)| s).filter(|s| *s < seq) {
            if let Some((_, size)) = self.state.remove(first, UpdateReason::Compacted, true) {
                purged += 1;
                bytes += size;
            }
        }
        self.state
            .notify_bulk(purged, bytes, None, UpdateReason::Compacted);
        purged
    }
}

impl<B: MsgBody> StreamStore for MemStore<B> {
    fn store_msg(&mut self, msg: NewMsg<'_>) -> Result<Stored, StoreError> {
        self.store_raw_msg(msg, 0, true)
    }

    fn store_raw_msg(
        &mut self,
        msg: NewMsg<'_>,
        seq: u64,
        discard_new_check: bool,
    ) -> Result<Stored, StoreError> {
        self.open()?;
        self.state.check_size(&msg)?;
        if discard_new_check {
            self.state.check_discard_new(&msg)?;
        }
        let seq = self.next_seq(seq)?;
        let NewMsg {
            subject,
            headers,
            payload,
            timestamp_ns,
            ttl,
            ..
        } = msg;
        let size = self
            .state
            .sizing
            .size(subject.len(), headers.len(), payload.len());
        let body = B::from_parts(headers, payload);
        self.state
            .insert(seq, subject, body, size, timestamp_ns, ttl);
        self.state.enforce_after_store(subject);
        Ok(Stored { seq, timestamp_ns })
    }

    fn store_batch(&mut self, msgs: &[NewMsg<'_>]) -> Result<Vec<Stored>, StoreError> {
        self.open()?;
        self.check_batch(msgs)?;
        self.store_checked_batch(msgs)
    }

    fn skip_msg(&mut self, seq: u64, now_ns: i64) -> Result<u64, StoreError> {
        self.open()?;
        let seq = self.next_seq(seq)?;
        self.skip_to(seq, now_ns);
        Ok(seq)
    }

    fn skip_msgs(&mut self, seq: u64, num: u64, now_ns: i64) -> Result<(), StoreError> {
        self.open()?;
        let seq = self.next_seq(seq)?;
        if num == 0 {
            return Ok(());
        }
        let last = seq
            .checked_add(num - 1)
            .ok_or(StoreError::SequenceMismatch {
                expected: seq,
                got: u64::MAX,
            })?;
        self.skip_to(last, now_ns);
        Ok(())
    }

    fn sync(&mut self) -> Result<u64, StoreError> {
        self.open()?;
        Ok(self.state.last_seq)
    }

    fn load_msg(&self, seq: u64) -> Result<StoredMsg, StoreError> {
        self.open()?;
        self.state.load(seq)
    }

    fn load_next_msg(&self, filter: &Filter, start: u64) -> Result<StoredMsg, StoreError> {
        self.open()?;
        let (seq, entry) = self
            .state
            .next_matching(filter, start)
            .ok_or(StoreError::Eof)?;
        Ok(self.state.to_msg(seq, entry))
    }

    fn load_last_msg(&self, filter: &Filter) -> Result<StoredMsg, StoreError> {
        self.open()?;
        let (seq, entry) = self
            .state
            .last_matching(filter)
            .ok_or(StoreError::NotFound)?;
        Ok(self.state.to_msg(seq, entry))
    }

    fn subject_for_seq(&self, seq: u64) -> Result<Bytes, StoreError> {
        self.open()?;
        self.state
            .msgs
            .get(seq)
            .map(|e| self.state.subjects.name(e.subject).clone())
            .ok_or(StoreError::NotFound)
    }

    fn remove_msg(&mut self, seq: u64) -> Result<bool, StoreError> {
        self.open()?;
        Ok(self
            .state
            .remove(seq, UpdateReason::Removed, false)
            .is_some())
    }

    fn erase_msg(&mut self, seq: u64) -> Result<bool, StoreError> {
        self.open()?;
        let Some((body, _)) = self.state.remove(seq, UpdateReason::Erased, false) else {
            return Ok(false);
        };
        body.erase();
        Ok(true)
    }

    fn purge(&mut self) -> Result<u64, StoreError> {
        self.open()?;
        Ok(self.state.clear(UpdateReason::Purged))
    }

    fn purge_ex(&mut self, subject: &[u8], seq: u64, keep: u64) -> Result<u64, StoreError> {
        self.open()?;
        if seq == 1 {
            return Ok(0);
        }
        let filter = Filter::new(subject)?;
        if filter.is_all() {
            if keep == 0 && seq == 0 {
                return self.purge();
            }
            if seq > 1 {
                return self.compact(seq);
            }
        }
        let matching = self.state.filtered(0, &filter);
        if matching.msgs == 0 || keep >= matching.msgs && keep > 0 {
            return Ok(0);
        }
        let max_purge = if keep > 0 {
            matching.msgs - keep
        } else {
            u64::MAX
        };
        let last = if seq >= 1 { seq - 1 } else { matching.last };
        Ok(self.purge_matching(&filter, matching.first, last, max_purge))
    }

    fn compact(&mut self, seq: u64) -> Result<u64, StoreError> {
        self.open()?;
        if seq == 0 {
            return self.purge();
        }
        if self.state.first_seq > seq {
            return Ok(0);
        }
        if seq <= self.state.last_seq {
            return Ok(self.remove_below(seq));
        }
        // Past the end: empty the store and restart its sequences at `seq`.
        let purged = self.state.clear(UpdateReason::Compacted);
        self.state.last_seq = seq - 1;
        self.state.first_seq = seq;
        Ok(purged)
    }

    fn truncate(&mut self, seq: u64) -> Result<(), StoreError> {
        self.open()?;
        let (mut purged, mut bytes) = (0, 0);
        while let Some(last) = self.state.msgs.last().map(|(s, _)| s).filter(|s| *s > seq) {
            if let Some((_, size)) = self.state.remove(last, UpdateReason::Truncated, true) {
                purged += 1;
                bytes += size;
            }
        }
        self.state
            .notify_bulk(purged, bytes, None, UpdateReason::Truncated);
        if let Some(entry) = self.state.msgs.get(seq) {
            self.state.last_ts = entry.timestamp_ns;
        }
        self.state.last_seq = seq;
        if seq == 0 {
            self.state.last_ts = 0;
        }
        if self.state.msgs.is_empty() {
            self.state.first_seq = if seq == 0 { 0 } else { seq + 1 };
            self.state.first_ts = 0;
        }
        Ok(())
    }

    fn seq_from_time(&self, timestamp_ns: i64) -> u64 {
        self.state.seq_from_time(timestamp_ns)
    }

    fn filtered_state(&self, start: u64, filter: &Filter) -> SimpleState {
        self.state.filtered(start, filter)
    }

    fn subjects_state(&self, filter: &Filter) -> Vec<(Bytes, SimpleState)> {
        self.state.subjects_state(filter)
    }

    fn num_pending(&self, start: u64, filter: &Filter, last_per_subject: bool) -> (u64, u64) {
        let total = if last_per_subject {
            self.state.subjects_pending(start, filter)
        } else {
            self.state.filtered(start, filter).msgs
        };
        (total, self.state.last_seq)
    }

    fn state(&self) -> StreamState {
        self.state.snapshot(true)
    }

    fn fast_state(&self) -> StreamState {
        self.state.snapshot(false)
    }

    fn config(&self) -> &StoreConfig {
        &self.state.config
    }

    fn update_config(&mut self, config: StoreConfig) -> Result<(), StoreError> {
        self.open()?;
        self.state.config = config;
        self.state.enforce_totals();
        self.state.enforce_all_subjects();
        Ok(())
    }

    fn register_storage_updates(&mut self, callback: StorageUpdateFn) {
        self.state.updates = Some(callback);
    }

    fn expire_due(&mut self, now_ns: i64) -> Result<u64, StoreError> {
        self.open()?;
        Ok(self.state.expire(now_ns))
    }

    fn due_expiries(&self, now_ns: i64, max: usize) -> Vec<u64> {
        self.state.due(now_ns, max)
    }

    fn next_expiry(&self) -> Option<i64> {
        self.state.next_expiry()
    }

    fn stop(&mut self) -> Result<(), StoreError> {
        self.state.closed = true;
        Ok(())
    }
}

impl<B: MsgBody> MemStore<B> {
    /// Uses sequences up to `last` without messages. The last time is set only if unset.
    fn skip_to(&mut self, last: u64, now_ns: i64) {
        self.state.last_seq = last;
        if self.state.last_ts == 0 {
            self.state.last_ts = now_ns;
        }
        if self.state.msgs.is_empty() {
            self.state.first_seq = last + 1;
            self.state.first_ts = 0;
        }
    }

    /// Purges matching messages in `first..=last`, at most `max_purge` of them, oldest first.
    fn purge_matching(&mut self, filter: &Filter, first: u64, last: u64, max_purge: u64) -> u64 {
        let (mut purged, mut bytes, mut single) = (0, 0, None);
        let mut cursor = first;
        while purged < max_purge {
            let Some((seq, _)) = self.state.next_matching(filter, cursor) else {
                break;
            };
            if seq > last {
                break;
            }
            cursor = seq + 1;
            if single.is_none() {
                single = self.subject_for_seq(seq).ok().map(|subject| (seq, subject));
            }
            if let Some((_, size)) = self.state.remove(seq, UpdateReason::Purged, true) {
                purged += 1;
                bytes += size;
            }
        }
        let single_ref = single.as_ref().map(|(s, subj)| (*s, subj.as_ref()));
        self.state
            .notify_bulk(purged, bytes, single_ref, UpdateReason::Purged);
        purged
    }
}
