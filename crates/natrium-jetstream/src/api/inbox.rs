//! The API's inbox: the sink behind the `$JS.API.>` subscription of every JetStream account.
//!
//! Like Go, requests for `$JS.API.DIRECT.GET…` and `$JS.API.CONSUMER.MSG.NEXT.…` are not the
//! API's: streams and consumers answer them on their own subscriptions, so the inbox refuses
//! them and a request nobody else takes gets the requester's 503 (no responders).
//!
//! Overflow rule: past `INTERNAL_INBOX_MSGS_MAX` waiting requests new ones are dropped and
//! counted (the requester times out and retries), as for any internal client.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use natrium_core::account::{Account, SubRef};
use natrium_core::endpoint::{Delivery, Sink, SinkAccept, Subscription};
use natrium_core::limits::INTERNAL_INBOX_MSGS_MAX;
use tokio::sync::mpsc;

/// Subjects under `$JS.API.>` the API leaves to streams and consumers (byte prefixes, as Go
/// compares them).
const NOT_FOR_THE_API: [&[u8]; 2] = [b"$JS.API.DIRECT.GET", b"$JS.API.CONSUMER.MSG.NEXT."];

/// The sink; requests arrive on the receiver [`ApiInbox::new`] returns.
pub struct ApiInbox {
    tx: mpsc::Sender<Delivery>,
    cid: u64,
    dropped: AtomicU64,
}

impl ApiInbox {
    pub fn new(cid: u64) -> (Arc<Self>, mpsc::Receiver<Delivery>) {
        let (tx, rx) = mpsc::channel(INTERNAL_INBOX_MSGS_MAX);
        let inbox = Arc::new(Self {
            tx,
            cid,
            dropped: AtomicU64::new(0),
        });
        (inbox, rx)
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
        if self.tx.try_send(msg).is_ok() {
            return SinkAccept::Accepted;
        }
        let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            tracing::warn!("JetStream API queue is full: request dropped ({dropped} so far)");
        }
        SinkAccept::Dropped
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
        let sub = Arc::new(Subscription::for_sink(sink, sid, subject.as_bytes(), None));
        if account.subscribe(SubRef(Arc::clone(&sub))).is_ok() {
            self.subs.insert(sid, (Arc::clone(account), sub));
        }
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
        let (inbox, mut rx) = ApiInbox::new(1);
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
        assert_eq!(rx.try_recv().unwrap().subject, &b"$JS.API.DIRECT.BOGUS"[..]);
    }
}
