//! Expiry passes with subject delete markers (`super::markers`), and the markers waiting to be
//! tried again: a due message that is the last of its subject gives way to a marker stored as
//! a published message is; when that store is refused (a full stream with `discard: new`, an
//! account limit), the message stays and the marker is tried again no sooner than
//! [`RETRY_AFTER_NS`] later, as Go v2.15.2 does (its per-sequence pending map with the time of
//! the last proposal). A retry decides afresh: a message no longer last of its subject is
//! removed plainly, one already gone is forgotten.

use std::collections::BTreeMap;

use natrium_core::endpoint::Delivery;
use natrium_store::{StoreError, StreamStore};

use super::markers::{decide, Expiry, DUE_BATCH};

/// Go's wait between two proposals of one sequence's marker (2 s).
pub const RETRY_AFTER_NS: i64 = 2_000_000_000;
/// While a marker waits, the stream still looks for other due messages this often: the
/// store's next expiry is then the waiting message's, already past, and says nothing of the
/// others (Go's floor between two expiry passes, 250 ms).
pub const WAITING_POLL_NS: i64 = 250_000_000;
/// At most this many markers wait for a retry. Overflow: a further refused marker is not
/// kept for later, its message is removed without a marker (what happened before retries).
pub const RETRIES_MAX: usize = 4 * DUE_BATCH;

/// The due messages whose marker was refused, by sequence: when it may be tried again (Unix
/// ns). Only messages still in the store are kept (see [`MarkerRetries::prune`]).
#[derive(Debug, Default)]
pub struct MarkerRetries {
    retry_at: BTreeMap<u64, i64>,
}

impl MarkerRetries {
    /// Markers waiting.
    pub fn len(&self) -> usize {
        self.retry_at.len()
    }

    /// None waits.
    pub fn is_empty(&self) -> bool {
        self.retry_at.is_empty()
    }

    /// Forgets every waiting marker (the stream no longer places markers).
    pub fn clear(&mut self) {
        self.retry_at.clear();
    }

    /// `seq`'s marker was refused at `now`: it waits for a retry. False when the list is
    /// full: the caller removes the message plainly.
    pub fn refused(&mut self, seq: u64, now: i64) -> bool {
        if self.retry_at.len() >= RETRIES_MAX && !self.retry_at.contains_key(&seq) {
            return false;
        }
        self.retry_at
            .insert(seq, now.saturating_add(RETRY_AFTER_NS));
        true
    }

    /// `seq`'s marker waits and may not be tried yet at `now`.
    pub fn waiting(&self, seq: u64, now: i64) -> bool {
        self.retry_at.get(&seq).is_some_and(|&at| now < at)
    }

    /// `seq` was dealt with (marked, removed or gone).
    pub fn settled(&mut self, seq: u64) {
        self.retry_at.remove(&seq);
    }

    /// Drops the entries of messages that left the store otherwise (a delete, a purge): a
    /// waiting message stays due, so every entry at or below the last of `due` (all of them
    /// when `due` is `complete`, the store having no more) that is not in it is gone.
    pub fn prune(&mut self, due: &[u64], complete: bool) {
        let last = if complete {
            u64::MAX
        } else {
            due.last().copied().unwrap_or(0)
        };
        self.retry_at
            .retain(|seq, _| *seq > last || due.binary_search(seq).is_ok());
    }

    /// When the expiry pass should run next, from the store's next expiry `store_next`: with
    /// markers waiting, that is past (theirs), so the pass runs at the first retry or after
    /// [`WAITING_POLL_NS`], whichever comes first.
    pub fn wake(&self, store_next: Option<i64>, now: i64) -> Option<i64> {
        let Some(&first_retry) = self.retry_at.values().min() else {
            return store_next;
        };
        Some(match store_next {
            Some(next) if next <= now => first_retry.min(now.saturating_add(WAITING_POLL_NS)),
            Some(next) => next.min(first_retry),
            None => first_retry,
        })
    }
}

/// What storing a marker came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// Stored (its rollup removed the expired message), or skipped by an interest stream.
    Stored,
    /// Refused: the expired message stays until a retry.
    Refused,
}

/// What an expiry pass works on: the stream's store, its waiting markers, and a way to store a
/// marker as a published message is.
pub trait MarkerHost {
    fn store(&mut self) -> &mut dyn StreamStore;
    fn retries(&mut self) -> &mut MarkerRetries;
    fn place(&mut self, marker: &Delivery) -> Placed;
}

/// Removes what is due at `now`, placing markers (`ttl_secs`) for the last messages of their
/// subjects; a refused marker's message waits for its retry. Runs until a pass finds nothing
/// it may act on.
pub fn expire_pass(host: &mut dyn MarkerHost, ttl_secs: i64, now: i64) -> Result<(), StoreError> {
    loop {
        let want = DUE_BATCH + host.retries().len();
        let due = host.store().due_expiries(now, want);
        host.retries().prune(&due, due.len() < want);
        let mut acted = false;
        for &seq in &due {
            if host.retries().waiting(seq, now) {
                continue;
            }
            acted = true;
            match decide(host.store(), seq, ttl_secs) {
                Expiry::Gone => {
                    host.retries().settled(seq);
                    continue;
                }
                Expiry::Remove => {}
                Expiry::Mark(marker) => {
                    if host.place(&marker) == Placed::Refused && host.retries().refused(seq, now) {
                        continue;
                    }
                }
            }
            host.retries().settled(seq);
            // Gone already when the marker's rollup took it; still there when an interest
            // stream skipped the marker or the retry list was full.
            host.store().remove_msg(seq)?;
        }
        if !acted {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use natrium_store::{DiscardPolicy, MemStore, MsgTtl, NewMsg, StoreConfig};

    const SEC: i64 = 1_000_000_000;

    /// A memory store and its waiting markers; a marker is stored with its rollup, refused
    /// as the store's limits say.
    struct Host {
        store: MemStore,
        retries: MarkerRetries,
        placed: usize,
    }

    impl MarkerHost for Host {
        fn store(&mut self) -> &mut dyn StreamStore {
            &mut self.store
        }
        fn retries(&mut self) -> &mut MarkerRetries {
            &mut self.retries
        }
        fn place(&mut self, marker: &Delivery) -> Placed {
            let headers = marker.headers.clone().unwrap_or_default();
            let new = NewMsg {
                ttl: MsgTtl::Secs(1),
                rollup: true,
                ..NewMsg::new(&marker.subject, headers, Bytes::new(), 100 * SEC)
            };
            if self.store.store_msg(new).is_err() {
                return Placed::Refused;
            }
            self.store.purge_ex(&marker.subject, 0, 1).expect("rollup");
            self.placed += 1;
            Placed::Stored
        }
    }

    /// A full stream (`max_msgs: 3`, `discard: new`) of a, b, c, where a expires by TTL at 1 s.
    fn full_host() -> Host {
        let config = StoreConfig {
            max_msgs: Some(3),
            discard: DiscardPolicy::New,
            ..StoreConfig::default()
        };
        let mut store = MemStore::new(config);
        for (subject, ttl) in [
            ("a", MsgTtl::Secs(1)),
            ("b", MsgTtl::None),
            ("c", MsgTtl::None),
        ] {
            let new = NewMsg {
                ttl,
                ..NewMsg::new(subject.as_bytes(), Bytes::new(), Bytes::from("v"), 0)
            };
            store.store_msg(new).expect("room");
        }
        Host {
            store,
            retries: MarkerRetries::default(),
            placed: 0,
        }
    }

    #[test]
    fn stream_marker_retry_keeps_the_message_and_retries_after_two_seconds() {
        let mut host = full_host();
        expire_pass(&mut host, 1, SEC).unwrap();
        assert!(host.store.load_msg(1).is_ok(), "the refused marker left it");
        assert_eq!((host.retries.len(), host.placed), (1, 0));
        assert_eq!(
            host.retries.wake(host.store.next_expiry(), SEC),
            Some(SEC + SEC / 4)
        );
        // Room is made, but the retry waits its 2 s.
        host.store.remove_msg(3).unwrap();
        expire_pass(&mut host, 1, 2 * SEC).unwrap();
        assert!(host.store.load_msg(1).is_ok());
        expire_pass(&mut host, 1, 3 * SEC).unwrap();
        assert!(
            host.store.load_msg(1).is_err(),
            "the marker's rollup took it"
        );
        assert_eq!((host.retries.len(), host.placed), (0, 1));
        let filter = natrium_store::Filter::new(b"a").unwrap();
        assert_eq!(host.store.load_last_msg(&filter).unwrap().seq, 4);
    }

    #[test]
    fn stream_marker_retry_removes_plainly_once_no_longer_last() {
        let mut host = full_host();
        expire_pass(&mut host, 1, SEC).unwrap();
        // Another message on a: the retry removes the expired one without a marker.
        host.store.remove_msg(3).unwrap();
        let new = NewMsg::new(b"a", Bytes::new(), Bytes::from("w"), 2 * SEC);
        host.store.store_msg(new).unwrap();
        expire_pass(&mut host, 1, 3 * SEC).unwrap();
        assert!(host.store.load_msg(1).is_err());
        assert_eq!((host.retries.len(), host.placed), (0, 0));
    }

    #[test]
    fn stream_marker_retry_forgets_messages_removed_otherwise() {
        let mut host = full_host();
        expire_pass(&mut host, 1, SEC).unwrap();
        host.store.remove_msg(1).unwrap();
        expire_pass(&mut host, 1, 2 * SEC).unwrap();
        assert!(host.retries.is_empty());
        assert_eq!(host.retries.wake(None, 2 * SEC), None);
    }

    #[test]
    fn stream_marker_retry_list_is_bounded() {
        let mut retries = MarkerRetries::default();
        for seq in 0..RETRIES_MAX as u64 {
            assert!(retries.refused(seq, 0));
        }
        assert!(!retries.refused(u64::MAX, 0), "full: removed plainly");
        assert!(retries.refused(0, SEC), "a retry of a waiting one is kept");
        assert!(retries.waiting(0, 2 * SEC) && !retries.waiting(1, 2 * SEC));
        // A truncated due list only speaks for the sequences up to its last.
        retries.prune(&[5, 7], false);
        assert_eq!(retries.len(), RETRIES_MAX - 6);
        retries.prune(&[], true);
        assert!(retries.is_empty());
    }

    #[test]
    fn stream_marker_retry_wake_times() {
        let mut retries = MarkerRetries::default();
        assert_eq!(retries.wake(Some(5), 0), Some(5));
        retries.refused(1, 10 * SEC);
        let retry = 12 * SEC;
        // The waiting message's expiry is past: the first retry or the poll.
        assert_eq!(
            retries.wake(Some(SEC), 10 * SEC),
            Some(10 * SEC + WAITING_POLL_NS)
        );
        assert_eq!(retries.wake(Some(SEC), retry - 1), Some(retry));
        assert_eq!(retries.wake(Some(11 * SEC), 10 * SEC), Some(11 * SEC));
        assert_eq!(retries.wake(None, 10 * SEC), Some(retry));
    }
}
