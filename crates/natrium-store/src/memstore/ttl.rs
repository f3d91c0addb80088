//! Per-message TTL expiries in time order. An ordered set rather than Go's hash wheel: the
//! next expiry and every due entry are found in O(log n), and memory is one entry per message
//! with a TTL, released as soon as the message goes.

use std::collections::BTreeSet;

/// (expiry time in Unix nanoseconds, sequence), ascending.
#[derive(Debug, Default)]
pub(super) struct TtlIndex {
    due: BTreeSet<(i64, u64)>,
}

impl TtlIndex {
    pub(super) fn insert(&mut self, expires_ns: i64, seq: u64) {
        self.due.insert((expires_ns, seq));
    }

    pub(super) fn remove(&mut self, expires_ns: i64, seq: u64) {
        self.due.remove(&(expires_ns, seq));
    }

    /// The earliest expiry, if any.
    pub(super) fn next(&self) -> Option<i64> {
        self.due.first().map(|(ts, _)| *ts)
    }

    /// The sequence of the earliest entry due at `now_ns` (expiry at or before it). The caller
    /// removes the message, which removes the entry.
    pub(super) fn first_due(&self, now_ns: i64) -> Option<u64> {
        self.due
            .first()
            .filter(|(ts, _)| *ts <= now_ns)
            .map(|(_, seq)| *seq)
    }

    /// The sequences of the entries due at `now_ns`, earliest expiry first.
    pub(super) fn due(&self, now_ns: i64) -> impl Iterator<Item = u64> + '_ {
        self.due
            .iter()
            .take_while(move |(ts, _)| *ts <= now_ns)
            .map(|(_, seq)| *seq)
    }

    pub(super) fn clear(&mut self) {
        self.due.clear();
    }
}
