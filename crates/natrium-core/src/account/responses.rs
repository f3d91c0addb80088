//! An exporting account's response table (generic over the account type it points back at, so
//! that the account can hold it without a cycle): for each request imported from another account,
//! the reply subject its responders see (`_R_.<account prefix>.<random>`, the shape Go uses)
//! and where a response to it goes (the requesting account and its original reply subject).
//!
//! Entries end as Go's do: a singleton after its first response, a streamed or chunked one
//! after an empty response (the end-of-stream marker; later responses are dropped), any after its export's response threshold without a response, and any whose
//! response (or request) could not be delivered. Expired entries are swept a few at a time on
//! every new request, oldest first; the table is also bounded by [`RESPONSES_MAX`], and when
//! full the oldest entry is dropped (its late response is then discarded, as an expired one
//! would be). The lock is held for O(1) work per operation, never across an await.

use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use natrium_auth::account::ResponseType;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

/// Most pending responses per exporting account. A requester flooding requests at a service
/// that never answers would otherwise keep one entry per request for the whole threshold.
pub const RESPONSES_MAX: usize = 100_000;

/// Expired entries examined per new request: enough to keep pace with the request rate.
const SWEEP_PER_INSERT: usize = 4;

/// Go's alphabet for the random parts of reply subjects.
const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Length of each random part (`_R_.xxxxxx.yyyyyy`), as in Go.
const RANDOM_LEN: usize = 6;

/// Where a response goes.
#[derive(Debug)]
pub struct Pending<A> {
    pub requester: Weak<A>,
    /// The requester's own reply subject.
    pub reply: Box<[u8]>,
    pub kind: ResponseType,
    pub threshold: Duration,
    /// The request, or the last response of a streamed or chunked reply.
    pub last: Instant,
}

impl<A> Pending<A> {
    fn expired(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.last) > self.threshold
    }
}

/// Where one response goes: the requester's account and its reply subject. (A target within
/// this server, not a cluster route.)
#[derive(Debug)]
pub struct ResponseTarget<A> {
    pub requester: Arc<A>,
    pub reply: Box<[u8]>,
}

struct Inner<A> {
    map: FxHashMap<Box<[u8]>, Pending<A>>,
    /// Reply subjects in the order they were handed out, for sweeping and eviction. May hold
    /// subjects already removed from `map`; those are skipped.
    order: VecDeque<Box<[u8]>>,
}

pub struct Responses<A> {
    /// `_R_.` and this account's random part, then `.`.
    prefix: Box<[u8]>,
    inner: Mutex<Inner<A>>,
}

fn random_part(out: &mut Vec<u8>) {
    let mut n = fastrand::u64(..);
    for _ in 0..RANDOM_LEN {
        out.push(DIGITS.get((n % 62) as usize).copied().unwrap_or(b'0'));
        n /= 62;
    }
}

impl<A> Responses<A> {
    pub fn new() -> Self {
        let mut prefix = b"_R_.".to_vec();
        random_part(&mut prefix);
        prefix.push(b'.');
        Self {
            prefix: prefix.into(),
            inner: Mutex::new(Inner {
                map: FxHashMap::default(),
                order: VecDeque::new(),
            }),
        }
    }

    /// Whether `subject` could be one of this table's reply subjects.
    #[inline]
    pub fn owns(&self, subject: &[u8]) -> bool {
        subject.len() == self.prefix.len() + RANDOM_LEN && subject.starts_with(&self.prefix)
    }

    /// Records a request and returns the reply subject to hand the responders.
    pub fn register(&self, pending: Pending<A>) -> Box<[u8]> {
        let now = pending.last;
        let mut inner = self.inner.lock();
        inner.sweep(now);
        while inner.map.len() >= RESPONSES_MAX {
            if !inner.evict_oldest() {
                break;
            }
        }
        let key: Box<[u8]> = loop {
            let mut key = self.prefix.to_vec();
            random_part(&mut key);
            if !inner.map.contains_key(key.as_slice()) {
                break key.into();
            }
        };
        inner.order.push_back(key.clone());
        inner.map.insert(key.clone(), pending);
        key
    }

    /// Where a response on `subject` goes, if anywhere. A singleton's entry ends here, and a
    /// streamed or chunked one's on an empty response (`last_chunk`), which is still delivered.
    pub fn route(
        &self,
        subject: &[u8],
        last_chunk: bool,
        now: Instant,
    ) -> Option<ResponseTarget<A>> {
        let mut inner = self.inner.lock();
        let entry = inner.map.get_mut(subject)?;
        let ends = match entry.kind {
            ResponseType::Singleton => true,
            ResponseType::Streamed | ResponseType::Chunked => last_chunk,
        };
        if entry.expired(now) || ends {
            let pending = inner.map.remove(subject)?;
            if pending.expired(now) {
                return None;
            }
            return Some(ResponseTarget {
                requester: pending.requester.upgrade()?,
                reply: pending.reply,
            });
        }
        entry.last = now;
        Some(ResponseTarget {
            requester: entry.requester.upgrade()?,
            reply: entry.reply.clone(),
        })
    }

    /// Drops an entry whose request or response could not be delivered.
    pub fn cancel(&self, subject: &[u8]) {
        self.inner.lock().map.remove(subject);
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map.len()
    }

    /// The pending responses, for monitoring: reply subject handed out, requesting account,
    /// (named by `name_of`) and the requester's own reply subject.
    pub fn snapshot(&self, name_of: impl Fn(&A) -> String) -> Vec<(String, String, String)> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        self.inner
            .lock()
            .map
            .iter()
            .map(|(key, p)| {
                let requester = p.requester.upgrade().map(|a| name_of(&a));
                (text(key), requester.unwrap_or_default(), text(&p.reply))
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<A> Default for Responses<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A> Inner<A> {
    /// Removes up to [`SWEEP_PER_INSERT`] expired entries from the oldest end.
    fn sweep(&mut self, now: Instant) {
        for _ in 0..SWEEP_PER_INSERT {
            let Some(front) = self.order.front() else {
                return;
            };
            match self.map.get(front) {
                Some(p) if !p.expired(now) => return,
                _ => {
                    if let Some(key) = self.order.pop_front() {
                        self.map.remove(&key);
                    }
                }
            }
        }
        // Keep the order queue from growing past the live entries by much.
        if self.order.len() > self.map.len() * 2 + RESPONSES_MAX / 16 {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
    }

    fn evict_oldest(&mut self) -> bool {
        while let Some(key) = self.order.pop_front() {
            if self.map.remove(&key).is_some() {
                tracing::debug!("Dropping oldest pending service response: table full");
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::account::Account;

    fn pending(requester: &Arc<Account>, kind: ResponseType, now: Instant) -> Pending<Account> {
        Pending {
            requester: Arc::downgrade(requester),
            reply: b"_INBOX.x".as_slice().into(),
            kind,
            threshold: Duration::from_secs(2),
            last: now,
        }
    }

    #[test]
    fn account_responses_singleton_stream_chunked() {
        let b = Arc::new(Account::new("B", false));
        let table = Responses::new();
        let now = Instant::now();
        let single = table.register(pending(&b, ResponseType::Singleton, now));
        assert!(single.starts_with(b"_R_.") && table.owns(&single));
        assert_eq!(single.len(), 17);
        let r = table.route(&single, false, now).map(|r| r.reply);
        assert_eq!(r.as_deref(), Some(&b"_INBOX.x"[..]));
        assert!(table.route(&single, false, now).is_none());
        let stream = table.register(pending(&b, ResponseType::Streamed, now));
        assert!(table.route(&stream, false, now).is_some());
        assert!(table.route(&stream, true, now).is_some());
        assert!(table.route(&stream, false, now).is_none());
        let expiring = table.register(pending(&b, ResponseType::Streamed, now));
        let later = now + Duration::from_secs(3);
        assert!(table.route(&expiring, false, later).is_none());
        let chunked = table.register(pending(&b, ResponseType::Chunked, now));
        assert!(table.route(&chunked, false, now).is_some());
        assert!(table.route(&chunked, true, now).is_some());
        assert!(table.route(&chunked, false, now).is_none());
        assert!(table.is_empty());
    }

    #[test]
    fn account_responses_expire_and_cancel() {
        let b = Arc::new(Account::new("B", false));
        let table = Responses::new();
        let now = Instant::now();
        let old = table.register(pending(&b, ResponseType::Singleton, now));
        let kept = table.register(pending(&b, ResponseType::Singleton, now));
        table.cancel(&kept);
        let later = now + Duration::from_secs(5);
        let _ = table.register(pending(&b, ResponseType::Singleton, later));
        assert_eq!(table.len(), 1);
        assert!(table.route(&old, false, later).is_none());
    }
}
