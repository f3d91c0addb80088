//! The API's inbox: the sink behind the `$JS.API.>` subscription of every JetStream account.
//!
//! Like Go, requests for `$JS.API.DIRECT.GET…` and `$JS.API.CONSUMER.MSG.NEXT.…` are not the
//! API's: streams and consumers answer them on their own subscriptions, so the inbox refuses
//! them and a request nobody else takes gets the requester's 503 (no responders).
//!
//! Overflow rule (Go's): when `request_queue_limit` requests wait, every waiting request is
//! dropped at once (their requesters time out and retry), a warning is logged and the API
//! thread publishes an `API.LIMIT_REACHED` advisory in the system account. A backlog that
//! old would only be answered after its requesters gave up.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use natrium_core::account::{Account, SubRef};
use natrium_core::endpoint::{Delivery, Sink, SinkAccept, Subscription};
use parking_lot::{Condvar, Mutex};

/// Subjects under `$JS.API.>` the API leaves to streams and consumers (byte prefixes, as Go
/// compares them).
const NOT_FOR_THE_API: [&[u8]; 2] = [b"$JS.API.DIRECT.GET", b"$JS.API.CONSUMER.MSG.NEXT."];

/// The sink; the API thread takes requests with [`ApiInbox::next`].
pub struct ApiInbox {
    queue: Mutex<Waiting>,
    ready: Condvar,
    limit: usize,
    cid: u64,
}

#[derive(Default)]
struct Waiting {
    requests: VecDeque<Delivery>,
    /// Requests dropped by the overflow rule and not yet advised.
    dropped: u64,
    /// JetStream was turned off: nothing more is taken.
    closed: bool,
}

/// What the API thread takes next: a request, and the number of requests dropped since the
/// last take (for the advisory); at least one of them.
pub struct Next {
    pub request: Option<Delivery>,
    pub dropped: u64,
}

impl ApiInbox {
    /// An inbox holding at most `limit` waiting requests (`request_queue_limit`).
    pub fn new(cid: u64, limit: usize) -> Arc<Self> {
        Arc::new(Self {
            queue: Mutex::new(Waiting::default()),
            ready: Condvar::new(),
            limit: limit.max(1),
            cid,
        })
    }

    /// Waits for the next request (on the API thread); `None` once closed.
    pub fn next(&self) -> Option<Next> {
        let mut waiting = self.queue.lock();
        loop {
            if waiting.closed {
                return None;
            }
            let request = waiting.requests.pop_front();
            if request.is_some() || waiting.dropped > 0 {
                let dropped = std::mem::take(&mut waiting.dropped);
                return Some(Next { request, dropped });
            }
            self.ready.wait(&mut waiting);
        }
    }

    /// Stops taking requests (JetStream turned off): waiting ones are dropped and the API
    /// thread ends.
    pub fn close(&self) {
        let mut waiting = self.queue.lock();
        waiting.closed = true;
        waiting.requests.clear();
        drop(waiting);
        self.ready.notify_all();
    }
}

impl Sink for ApiInbox {
    fn cid(&self) -> u64 {
        self.cid
    }

    fn wants_request_info(&self) -> bool {
        true
    }

    fn deliver(&self, msg: Delivery) -> SinkAccept {
        if NOT_FOR_THE_API.iter().any(|p| msg.subject.starts_with(p)) {
            return SinkAccept::Dropped;
        }
        let mut waiting = self.queue.lock();
        if waiting.closed {
            return SinkAccept::Dropped;
        }
        waiting.requests.push_back(msg);
        let pending = waiting.requests.len();
        if pending >= self.limit {
            waiting.requests.clear();
            waiting.dropped += pending as u64;
            drop(waiting);
            self.ready.notify_one();
            tracing::warn!("JetStream API queue limit reached, dropping {pending} requests");
            return SinkAccept::Dropped;
        }
        drop(waiting);
        self.ready.notify_one();
        SinkAccept::Accepted
    }
}

/// The API's subscriptions, one per account, by sid.
#[derive(Default)]
pub struct ApiSubs {
    subs: BTreeMap<u64, (Arc<Account>, Arc<Subscription>)>,
}

impl ApiSubs {
    /// Subscribes `subject` (`$JS.API.>`, or the domain's form) in `account` through `inbox`.
    pub fn subscribe(&mut self, inbox: &Arc<ApiInbox>, account: &Arc<Account>, subject: &str) {
        let sid = self.subs.len() as u64 + 1;
        let sink: Arc<dyn Sink> = Arc::clone(inbox) as Arc<dyn Sink>;
        if let Some(sub) = crate::sink_sub::subscribe(account, &sink, sid, subject, None) {
            self.subs.insert(sid, (Arc::clone(account), sub));
        }
    }

    /// Subscribes the API's subjects in `account`: `$JS.API.>`, and with a domain
    /// `$JS.<domain>.API.>`, which reaches the same API.
    pub fn subscribe_api(&mut self, inbox: &Arc<ApiInbox>, account: &Arc<Account>, domain: &str) {
        self.subscribe(inbox, account, "$JS.API.>");
        if !domain.is_empty() {
            self.subscribe(inbox, account, &format!("$JS.{domain}.API.>"));
        }
    }

    /// Whether the API is subscribed in `account` (this very account object).
    pub fn covers(&self, account: &Arc<Account>) -> bool {
        self.subs.values().any(|(a, _)| Arc::ptr_eq(a, account))
    }

    /// The account of subscription `sid`.
    pub fn account_of(&self, sid: u64) -> Option<&Arc<Account>> {
        self.subs.get(&sid).map(|(account, _)| account)
    }
}

impl Drop for ApiSubs {
    fn drop(&mut self) {
        for (account, sub) in std::mem::take(&mut self.subs).into_values() {
            let _ = account.unsubscribe(&SubRef(sub));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_inbox_leaves_direct_gets_to_streams() {
        let inbox = ApiInbox::new(1, 10);
        let msg = |subject: &'static [u8]| Delivery {
            subject: bytes::Bytes::from_static(subject),
            reply: None,
            headers: None,
            payload: bytes::Bytes::new(),
            sid: 1,
            origin: None,
        };
        assert_eq!(
            inbox.deliver(msg(b"$JS.API.DIRECT.GET.S")),
            SinkAccept::Dropped
        );
        assert_eq!(
            inbox.deliver(msg(b"$JS.API.CONSUMER.MSG.NEXT.S.C")),
            SinkAccept::Dropped
        );
        assert_eq!(
            inbox.deliver(msg(b"$JS.API.DIRECT.BOGUS")),
            SinkAccept::Accepted
        );
        let next = inbox.next().unwrap();
        assert_eq!(next.request.unwrap().subject, &b"$JS.API.DIRECT.BOGUS"[..]);
        assert_eq!(next.dropped, 0);
    }

    #[test]
    fn api_inbox_drops_every_waiting_request_at_the_limit() {
        let inbox = ApiInbox::new(1, 3);
        let msg = || Delivery {
            subject: bytes::Bytes::from_static(b"$JS.API.INFO"),
            reply: None,
            headers: None,
            payload: bytes::Bytes::new(),
            sid: 1,
            origin: None,
        };
        assert_eq!(inbox.deliver(msg()), SinkAccept::Accepted);
        assert_eq!(inbox.deliver(msg()), SinkAccept::Accepted);
        assert_eq!(inbox.deliver(msg()), SinkAccept::Dropped);
        let next = inbox.next().unwrap();
        assert!(next.request.is_none());
        assert_eq!(next.dropped, 3);
        assert_eq!(inbox.deliver(msg()), SinkAccept::Accepted);
        let next = inbox.next().unwrap();
        assert!(next.request.is_some());
        assert_eq!(next.dropped, 0);
    }

    #[test]
    fn api_inbox_closed_takes_nothing_more() {
        let inbox = ApiInbox::new(1, 3);
        let msg = Delivery {
            subject: bytes::Bytes::from_static(b"$JS.API.INFO"),
            reply: None,
            headers: None,
            payload: bytes::Bytes::new(),
            sid: 1,
            origin: None,
        };
        assert_eq!(inbox.deliver(msg.clone()), SinkAccept::Accepted);
        inbox.close();
        assert!(inbox.next().is_none());
        assert_eq!(inbox.deliver(msg), SinkAccept::Dropped);
    }
}
