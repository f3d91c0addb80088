//! The memory store's data and the two primitives that change it, `insert` and `remove`, which
//! keep the message map, the per-subject index, the TTL index and the totals in agreement.

use bytes::Bytes;

use super::body::MsgBody;
use super::links::{FarLinks, Link};
use super::seqmap::SeqMap;
use super::subjects::{SubjectId, Subjects};
use super::ttl::TtlIndex;
use crate::types::{
    MsgSizing, MsgTtl, StorageUpdate, StorageUpdateFn, StoreConfig, StoredMsg, UpdateReason,
};

/// One stored message, kept small: a stream holds millions. `prev`/`next` link the messages
/// of one subject in sequence order ([`FarLinks`] reads them), so removing a subject's first
/// or last message finds its successor in O(1) instead of scanning, and per-subject
/// first/last stay exact.
#[derive(Debug)]
pub(super) struct Entry<B> {
    pub(super) body: B,
    pub(super) timestamp_ns: i64,
    pub(super) prev: Link,
    pub(super) next: Link,
    pub(super) subject: SubjectId,
    /// The accounted size, fixed when the message was stored (its body may not be held).
    size: u32,
    ttl: TtlCode,
}

impl<B> Entry<B> {
    /// An entry restored in bulk (`super::bulk`), which links it to its subject's chain.
    pub(super) fn restored(
        body: B,
        timestamp_ns: i64,
        subject: SubjectId,
        size: u64,
        ttl: MsgTtl,
    ) -> Self {
        Entry {
            body,
            timestamp_ns,
            prev: Link::NONE,
            next: Link::NONE,
            subject,
            size: u32::try_from(size).unwrap_or(u32::MAX),
            ttl: TtlCode::new(ttl),
        }
    }

    pub(super) fn size(&self) -> u64 {
        u64::from(self.size)
    }

    pub(super) fn ttl(&self) -> MsgTtl {
        self.ttl.get()
    }
}

/// A [`MsgTtl`] in 4 bytes: 0 none, `u32::MAX` never, otherwise seconds + 1 (saturating at
/// about 136 years: a TTL that long never comes due either way).
#[derive(Debug, Clone, Copy)]
struct TtlCode(u32);

impl TtlCode {
    const NEVER: u32 = u32::MAX;

    fn new(ttl: MsgTtl) -> Self {
        TtlCode(match ttl {
            MsgTtl::None => 0,
            MsgTtl::Never => Self::NEVER,
            MsgTtl::Secs(secs) => u32::try_from(secs)
                .unwrap_or(u32::MAX)
                .saturating_add(1)
                .min(Self::NEVER - 1),
        })
    }

    fn get(self) -> MsgTtl {
        match self.0 {
            0 => MsgTtl::None,
            Self::NEVER => MsgTtl::Never,
            code => MsgTtl::Secs(u64::from(code) - 1),
        }
    }
}

/// One entry of the removal log: a message and what its body left behind, or every message
/// at once (a purge).
#[derive(Debug, Clone, Copy)]
pub enum Removal<T> {
    One(u64, T),
    All,
}

/// Everything the memory store holds.
pub(super) struct MemState<B: MsgBody> {
    pub(super) config: StoreConfig,
    /// Go's byte formula for this store kind (the file store reuses this state).
    pub(super) sizing: MsgSizing,
    /// Messages by sequence.
    pub(super) msgs: SeqMap<Entry<B>>,
    /// The subject links too far apart for an entry's [`Link`].
    pub(super) links: FarLinks,
    pub(super) subjects: Subjects,
    pub(super) ttl: TtlIndex,
    /// First sequence; `last_seq + 1` when empty (0 for a new store, as in Go).
    pub(super) first_seq: u64,
    pub(super) first_ts: i64,
    pub(super) last_seq: u64,
    pub(super) last_ts: i64,
    pub(super) bytes: u64,
    pub(super) updates: Option<StorageUpdateFn>,
    /// Every removal, when the owner asked for the log (the file store, to know which records
    /// died); drained by the owner after each change.
    pub(super) removals: Option<Vec<Removal<B::Trace>>>,
    pub(super) closed: bool,
}

impl<B: MsgBody> MemState<B> {
    pub(super) fn new(config: StoreConfig, sizing: MsgSizing) -> Self {
        MemState {
            config,
            sizing,
            msgs: SeqMap::default(),
            links: FarLinks::default(),
            subjects: Subjects::default(),
            ttl: TtlIndex::default(),
            first_seq: 0,
            first_ts: 0,
            last_seq: 0,
            last_ts: 0,
            bytes: 0,
            updates: None,
            removals: None,
            closed: false,
        }
    }

    pub(super) fn to_msg(&self, seq: u64, entry: &Entry<B>) -> StoredMsg {
        let (headers, payload) = entry.body.parts();
        StoredMsg {
            seq,
            timestamp_ns: entry.timestamp_ns,
            subject: self.subjects.name(entry.subject).clone(),
            headers,
            payload,
        }
    }

    /// Tells the registered callback.
    pub(super) fn notify(&mut self, update: &StorageUpdate<'_>) {
        if let Some(callback) = self.updates.as_mut() {
            callback(update);
        }
    }

    /// Appends a message at `seq`, which the caller checked is `last_seq + 1`, with its
    /// accounted size.
    pub(super) fn insert(
        &mut self,
        seq: u64,
        subject: &[u8],
        body: B,
        size: u64,
        timestamp_ns: i64,
        ttl: MsgTtl,
    ) {
        debug_assert_eq!(seq, self.last_seq + 1);
        let (id, prev_same) = self.subjects.push(subject, seq);
        if let Some(prev) = self.msgs.get_mut(prev_same) {
            prev.next = self.links.link_next(prev_same, prev.next, seq);
        }
        let entry = Entry {
            body,
            timestamp_ns,
            prev: self.links.link_prev(seq, Link::NONE, prev_same),
            next: Link::NONE,
            subject: id,
            size: u32::try_from(size).unwrap_or(u32::MAX),
            ttl: TtlCode::new(ttl),
        };
        if self.msgs.is_empty() {
            self.first_seq = seq;
            self.first_ts = timestamp_ns;
        }
        if let Some(expires) = ttl.expires_at(timestamp_ns) {
            self.ttl.insert(expires, seq);
        }
        self.bytes += entry.size();
        self.last_seq = seq;
        self.last_ts = timestamp_ns;
        let size = entry.size();
        self.msgs.insert(seq, entry);
        if self.updates.is_some() {
            let subject = self.subjects.name(id).clone();
            self.notify(&StorageUpdate {
                msgs: 1,
                bytes: size as i64,
                seq,
                subject: &subject,
                reason: UpdateReason::Stored,
            });
        }
    }

    /// Removes the message at `seq` and returns its body and accounted size; `reason` goes to
    /// the callback unless `quiet` (bulk removals report one total instead).
    pub(super) fn remove(
        &mut self,
        seq: u64,
        reason: UpdateReason,
        quiet: bool,
    ) -> Option<(B, u64)> {
        let entry = self.msgs.remove(seq)?;
        let prev_same = self.links.prev(seq, entry.prev);
        let next_same = self.links.next(seq, entry.next);
        self.links.forget(seq, entry.prev, entry.next);
        if let Some(prev) = self.msgs.get_mut(prev_same) {
            prev.next = self.links.link_next(prev_same, prev.next, next_same);
        }
        if let Some(next) = self.msgs.get_mut(next_same) {
            next.prev = self.links.link_prev(next_same, next.prev, prev_same);
        }
        let subject = if quiet || self.updates.is_none() {
            Bytes::new()
        } else {
            self.subjects.name(entry.subject).clone()
        };
        self.subjects
            .remove(entry.subject, seq, prev_same, next_same);
        if let Some(expires) = entry.ttl().expires_at(entry.timestamp_ns) {
            self.ttl.remove(expires, seq);
        }
        let size = entry.size();
        debug_assert!(size <= self.bytes, "byte accounting underflow");
        self.bytes = self.bytes.saturating_sub(size);
        if seq == self.first_seq {
            self.advance_first();
        }
        if let Some(log) = self.removals.as_mut() {
            log.push(Removal::One(seq, entry.body.trace()));
        }
        if !quiet {
            self.notify(&StorageUpdate {
                msgs: -1,
                bytes: -(size as i64),
                seq,
                subject: &subject,
                reason,
            });
        }
        Some((entry.body, size))
    }

    /// Moves the first sequence to the first message left, or past the last when none is.
    fn advance_first(&mut self) {
        if let Some((seq, entry)) = self.msgs.first() {
            self.first_seq = seq;
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
        self.msgs = SeqMap::default();
        self.links.clear();
        self.subjects.clear();
        self.ttl.clear();
        self.bytes = 0;
        self.first_seq = self.last_seq + 1;
        self.first_ts = 0;
        if let Some(log) = self.removals.as_mut() {
            log.push(Removal::All);
        }
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
