//! The memory store's data and the two primitives that change it, `insert` and `remove`, which
//! keep the message map, the per-subject index, the TTL index and the totals in agreement.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::subjects::Subjects;
use super::ttl::TtlIndex;
use crate::types::{
    MsgSizing, MsgTtl, StorageUpdate, StorageUpdateFn, StoreConfig, StoredMsg, UpdateReason,
};

/// One stored message. `prev_same`/`next_same` link the messages of one subject in sequence
/// order (0 for none), so removing a subject's first or last message finds its successor in
/// O(log n) instead of scanning, and per-subject first/last stay exact.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) subject: Bytes,
    pub(super) headers: Bytes,
    pub(super) payload: Bytes,
    pub(super) timestamp_ns: i64,
    pub(super) ttl: MsgTtl,
    pub(super) size: u64,
    pub(super) prev_same: u64,
    pub(super) next_same: u64,
}

impl Entry {
    pub(super) fn to_msg(&self, seq: u64) -> StoredMsg {
        StoredMsg {
            seq,
            timestamp_ns: self.timestamp_ns,
            subject: self.subject.clone(),
            headers: self.headers.clone(),
            payload: self.payload.clone(),
        }
    }

    /// The accounted size, fixed when the message was stored (its bodies may not be held).
    pub(super) fn size(&self) -> u64 {
        self.size
    }
}

/// Everything the memory store holds.
pub(super) struct MemState {
    pub(super) config: StoreConfig,
    /// Go's byte formula for this store kind (the file store reuses this state).
    pub(super) sizing: MsgSizing,
    /// Whether headers and payloads are held. The file store keeps them on disk only, and
    /// loads them by sequence (`MemStore::without_bodies`).
    pub(super) keep_bodies: bool,
    /// Messages by sequence: ordered, so first/last and range scans are cheap.
    pub(super) msgs: BTreeMap<u64, Entry>,
    pub(super) subjects: Subjects,
    pub(super) ttl: TtlIndex,
    /// First sequence; `last_seq + 1` when empty (0 for a new store, as in Go).
    pub(super) first_seq: u64,
    pub(super) first_ts: i64,
    pub(super) last_seq: u64,
    pub(super) last_ts: i64,
    pub(super) bytes: u64,
    pub(super) updates: Option<StorageUpdateFn>,
    pub(super) closed: bool,
}

impl MemState {
    pub(super) fn new(config: StoreConfig, sizing: MsgSizing) -> Self {
        MemState {
            config,
            sizing,
            keep_bodies: true,
            msgs: BTreeMap::new(),
            subjects: Subjects::default(),
            ttl: TtlIndex::default(),
            first_seq: 0,
            first_ts: 0,
            last_seq: 0,
            last_ts: 0,
            bytes: 0,
            updates: None,
            closed: false,
        }
    }

    /// Tells the registered callback.
    pub(super) fn notify(&mut self, update: &StorageUpdate<'_>) {
        if let Some(callback) = self.updates.as_mut() {
            callback(update);
        }
    }

    /// Appends a message at `seq`, which the caller checked is `last_seq + 1`.
    pub(super) fn insert(
        &mut self,
        seq: u64,
        subject: &[u8],
        headers: Bytes,
        payload: Bytes,
        timestamp_ns: i64,
        ttl: MsgTtl,
    ) {
        debug_assert_eq!(seq, self.last_seq + 1);
        let (subject, prev_same) = self.subjects.push(subject, seq);
        if let Some(prev) = self.msgs.get_mut(&prev_same) {
            prev.next_same = seq;
        }
        let size = self
            .sizing
            .size(subject.len(), headers.len(), payload.len());
        let (headers, payload) = if self.keep_bodies {
            (headers, payload)
        } else {
            (Bytes::new(), Bytes::new())
        };
        let entry = Entry {
            subject,
            headers,
            payload,
            size,
            timestamp_ns,
            ttl,
            prev_same,
            next_same: 0,
        };
        if self.msgs.is_empty() {
            self.first_seq = seq;
            self.first_ts = timestamp_ns;
        }
        if let Some(expires) = ttl.expires_at(timestamp_ns) {
            self.ttl.insert(expires, seq);
        }
        self.bytes += size;
        self.last_seq = seq;
        self.last_ts = timestamp_ns;
        let subject = entry.subject.clone();
        self.msgs.insert(seq, entry);
        self.notify(&StorageUpdate {
            msgs: 1,
            bytes: size as i64,
            seq,
            subject: &subject,
            reason: UpdateReason::Stored,
        });
    }

    /// Removes the message at `seq` and returns it with its accounted size; `reason` goes to
    /// the callback unless `quiet` (bulk removals report one total instead).
    pub(super) fn remove(
        &mut self,
        seq: u64,
        reason: UpdateReason,
        quiet: bool,
    ) -> Option<(Entry, u64)> {
        let entry = self.msgs.remove(&seq)?;
        if let Some(prev) = self.msgs.get_mut(&entry.prev_same) {
            prev.next_same = entry.next_same;
        }
        if let Some(next) = self.msgs.get_mut(&entry.next_same) {
            next.prev_same = entry.prev_same;
        }
        self.subjects
            .remove(&entry.subject, seq, entry.prev_same, entry.next_same);
        if let Some(expires) = entry.ttl.expires_at(entry.timestamp_ns) {
            self.ttl.remove(expires, seq);
        }
        let size = entry.size();
        debug_assert!(size <= self.bytes, "byte accounting underflow");
        self.bytes = self.bytes.saturating_sub(size);
        if seq == self.first_seq {
            self.advance_first();
        }
        if !quiet {
            self.notify(&StorageUpdate {
                msgs: -1,
                bytes: -(size as i64),
                seq,
                subject: &entry.subject,
                reason,
            });
        }
        Some((entry, size))
    }

    /// Moves the first sequence to the first message left, or past the last when none is.
    fn advance_first(&mut self) {
        if let Some((seq, entry)) = self.msgs.first_key_value() {
            self.first_seq = *seq;
            self.first_ts = entry.timestamp_ns;
        } else {
            self.first_seq = self.last_seq + 1;
            self.first_ts = 0;
        }
    }

    /// Drops every message at once (purge, compact past the end), reporting one total.
    pub(super) fn clear(&mut self, reason: UpdateReason) -> u64 {
        let purged = self.msgs.len() as u64;
        let bytes = self.bytes;
        self.msgs = BTreeMap::new();
        self.subjects.clear();
        self.ttl.clear();
        self.bytes = 0;
        self.first_seq = self.last_seq + 1;
        self.first_ts = 0;
        if purged > 0 {
            self.notify(&StorageUpdate {
                msgs: -(purged as i64),
                bytes: -(bytes as i64),
                seq: 0,
                subject: &[],
                reason,
            });
        }
        purged
    }

    /// Reports a bulk removal of `purged` messages and `bytes`: one total, or the single
    /// message's sequence and subject when there was one (as Go's purge does).
    pub(super) fn notify_bulk(
        &mut self,
        purged: u64,
        bytes: u64,
        single: Option<(u64, &[u8])>,
        reason: UpdateReason,
    ) {
        if purged == 0 {
            return;
        }
        let (seq, subject) = match single {
            Some((seq, subject)) if purged == 1 => (seq, subject),
            _ => (0, &[][..]),
        };
        self.notify(&StorageUpdate {
            msgs: -(purged as i64),
            bytes: -(bytes as i64),
            seq,
            subject,
            reason,
        });
    }
}
