//! Where a subscription's messages go. An [`Endpoint`] is either a socket client's mailbox (the
//! client fast path: a frame template per publish, the sid per delivery, one writer wake-up
//! per batch) or an in-process [`Sink`], which receives each message typed ([`Delivery`]):
//! no `MSG` frame is formatted for it and none is parsed back.
//!
//! A sink chooses its own overflow rule and documents it; [`Sink::deliver`] returns what it
//! did. A sink that must never drop (a stream capturing messages) takes every message and
//! answers [`SinkAccept::AcceptedStall`] past its mark, which makes the publisher wait for
//! [`Sink::until_ready`] before its next read batch, as a full socket client does; one that may
//! drop (an API request queue) drops, counts and says [`SinkAccept::Dropped`]. A sink is never
//! closed as a slow consumer.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::account::Account;
use crate::client::ClientHandle;

/// A subscription's receiver.
#[derive(Clone)]
pub enum Endpoint {
    /// A client connection: frames go into its outbound buffer.
    Client(Arc<ClientHandle>),
    /// An in-process subscriber and its own number for this subscription.
    Sink(Arc<dyn Sink>, u64),
}

impl Endpoint {
    /// The connection id deliveries are made to (echo and no-responders rules compare it).
    #[inline]
    pub fn cid(&self) -> u64 {
        match self {
            Self::Client(client) => client.cid,
            Self::Sink(sink, _) => sink.cid(),
        }
    }

    /// The client, for a socket endpoint.
    #[inline]
    pub fn client(&self) -> Option<&Arc<ClientHandle>> {
        match self {
            Self::Client(client) => Some(client),
            Self::Sink(..) => None,
        }
    }
}

/// One subscription: a client's SUB, or an in-process subscriber's.
pub struct Subscription {
    /// Where its messages go.
    pub endpoint: Endpoint,
    pub subject: Box<[u8]>,
    pub queue: Option<Box<[u8]>>,
    pub sid: Box<[u8]>,
    /// Auto-unsubscribe limit; 0 means none.
    pub max_msgs: AtomicU64,
    pub delivered: AtomicU64,
    /// For a wildcard or queue subscription that may cover subjects its client's
    /// permissions deny: the permissions each delivery is checked against.
    pub deny_filter: Option<Arc<natrium_auth::ClientPermissions>>,
}

impl Subscription {
    /// A subscription of an in-process sink: `sid` is the sink's own number for it.
    pub fn for_sink(sink: Arc<dyn Sink>, sid: u64, subject: &[u8], queue: Option<&[u8]>) -> Self {
        Subscription {
            endpoint: Endpoint::Sink(sink, sid),
            subject: subject.into(),
            queue: queue.map(Into::into),
            sid: sid.to_string().into_bytes().into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
            deny_filter: None,
        }
    }
}

/// Outcome of counting one delivery against a subscription's auto-unsubscribe limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryQuota {
    Deliver,
    /// Deliver, and this was the last one: the subscription must be removed.
    DeliverLast,
    /// The limit was already reached (a concurrent publisher took the last one).
    Exhausted,
}

impl Subscription {
    #[inline]
    pub fn take_delivery(&self) -> DeliveryQuota {
        // Every delivery is counted (monitoring reports it as the subscription's `msgs`, and
        // Go's auto-unsubscribe counts from the first delivery too). A relaxed add on the
        // subscription's own atomic costs about what the `max_msgs` load next to it does; a
        // per-delivery lock or a channel to a stats task would cost far more.
        let n = self.delivered.fetch_add(1, Ordering::Relaxed) + 1;
        let max = self.max_msgs.load(Ordering::Relaxed);
        if max == 0 {
            return DeliveryQuota::Deliver;
        }
        match n.cmp(&max) {
            std::cmp::Ordering::Less => DeliveryQuota::Deliver,
            std::cmp::Ordering::Equal => DeliveryQuota::DeliverLast,
            std::cmp::Ordering::Greater => DeliveryQuota::Exhausted,
        }
    }
}

/// Who published a message: the client and the account it published in. The server's own
/// publishes have none.
#[derive(Clone)]
pub struct Origin {
    pub account: Arc<Account>,
    pub client: Arc<ClientHandle>,
}

/// One message as an in-process subscriber receives it. The parts are shared: a publish that
/// reaches several sinks is copied once.
#[derive(Clone)]
pub struct Delivery {
    pub subject: Bytes,
    pub reply: Option<Bytes>,
    /// The header block as published; for a sink that asks ([`Sink::wants_request_info`]) it
    /// carries the publisher's identity in `Nats-Request-Info`, any forged one replaced.
    pub headers: Option<Bytes>,
    pub payload: Bytes,
    /// The sink's own number for the subscription that took it.
    pub sid: u64,
    /// Who published it.
    pub origin: Option<Origin>,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("subject", &self.subject)
            .field("reply", &self.reply)
            .field("sid", &self.sid)
            .field("payload_len", &self.payload.len())
            .finish_non_exhaustive()
    }
}

/// What a sink did with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkAccept {
    Accepted,
    /// Taken, and the sink is past its mark: the publisher waits for [`Sink::until_ready`].
    AcceptedStall,
    /// Not taken, by the sink's own rule (it counted and reported the drop).
    Dropped,
}

/// A future a publisher waits on.
pub type ReadyFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// An in-process subscriber.
pub trait Sink: Send + Sync {
    /// The connection id this sink's deliveries count as (echo, no-responders).
    fn cid(&self) -> u64;

    /// Whether deliveries carry the publisher's identity in a `Nats-Request-Info` header (the
    /// system services answer who asked from it).
    fn wants_request_info(&self) -> bool {
        false
    }

    /// Takes one message. Called on the publisher's task: it must not block; the sink applies
    /// its overflow rule here.
    fn deliver(&self, msg: Delivery) -> SinkAccept;

    /// Resolves once the sink is below its mark again (see [`SinkAccept::AcceptedStall`]).
    fn until_ready(&self) -> ReadyFuture<'_> {
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use parking_lot::Mutex;
    use tokio::sync::Notify;

    use super::Subscription;
    use super::*;
    use crate::account::SubRef;
    use crate::deliver::{Message, Publisher};
    use crate::stats::ServerStats;

    /// Keeps what it is given; past `mark` messages it asks the publisher to wait.
    struct Capture {
        got: Mutex<Vec<Delivery>>,
        mark: usize,
        drained: Notify,
        ready: AtomicBool,
    }

    impl Sink for Capture {
        fn cid(&self) -> u64 {
            77
        }

        fn deliver(&self, msg: Delivery) -> SinkAccept {
            let mut got = self.got.lock();
            got.push(msg);
            if got.len() > self.mark {
                self.ready.store(false, Ordering::SeqCst);
                SinkAccept::AcceptedStall
            } else {
                SinkAccept::Accepted
            }
        }

        fn until_ready(&self) -> ReadyFuture<'_> {
            Box::pin(async move {
                while !self.ready.load(Ordering::SeqCst) {
                    self.drained.notified().await;
                }
            })
        }
    }

    fn subscribe(account: &Account, sink: Arc<dyn Sink>, subject: &str) {
        let sub = Arc::new(Subscription {
            endpoint: Endpoint::Sink(sink, 5),
            subject: subject.as_bytes().into(),
            queue: None,
            sid: b"5".as_slice().into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
            deny_filter: None,
        });
        account.subscribe(SubRef(sub)).unwrap();
    }

    fn msg(payload: &[u8]) -> Message<'_> {
        Message {
            subject: b"orders.new",
            reply: Some(b"_INBOX.1"),
            headers: Some(b"NATS/1.0\r\nK: v\r\n\r\n"),
            payload,
        }
    }

    #[tokio::test]
    async fn endpoint_sink_gets_typed_messages_and_stalls_its_publisher() {
        let account = Arc::new(Account::new("A", false));
        let sink = Arc::new(Capture {
            got: Mutex::new(Vec::new()),
            mark: 1,
            drained: Notify::new(),
            ready: AtomicBool::new(true),
        });
        subscribe(&account, Arc::clone(&sink) as Arc<dyn Sink>, "orders.>");
        let mut publisher = Publisher::new(1, Arc::new(ServerStats::default()));
        assert_eq!(publisher.publish(&account, &msg(b"one")), 1);
        assert!(!publisher.must_stall());
        assert_eq!(publisher.publish(&account, &msg(b"two")), 1);
        assert!(
            publisher.must_stall(),
            "past its mark the sink holds the publisher"
        );
        {
            let got = sink.got.lock();
            let first = got.first().unwrap();
            assert_eq!(&first.subject[..], b"orders.new");
            assert_eq!(first.reply.as_deref(), Some(&b"_INBOX.1"[..]));
            assert_eq!(
                first.headers.as_deref(),
                Some(&b"NATS/1.0\r\nK: v\r\n\r\n"[..])
            );
            assert_eq!((&first.payload[..], first.sid), (&b"one"[..], 5));
        }
        let waiting = tokio::spawn(async move {
            publisher.stall_if_needed().await;
            publisher
        });
        tokio::task::yield_now().await;
        sink.ready.store(true, Ordering::SeqCst);
        sink.drained.notify_waiters();
        let publisher = waiting.await.unwrap();
        assert!(!publisher.must_stall());
    }

    #[tokio::test]
    async fn endpoint_internal_inbox_drops_and_counts_when_full() {
        let server = crate::Server::new(crate::CoreConfig::default()).unwrap();
        let account = server.account("$G").unwrap();
        let (mut client, mut inbox) =
            crate::internal::InternalClient::start(&server, Arc::clone(&account));
        assert!(client.subscribe("orders.>"));
        let mut publisher = Publisher::new(1, Arc::new(ServerStats::default()));
        let extra = 5;
        for _ in 0..crate::limits::INTERNAL_INBOX_MSGS_MAX + extra {
            publisher.publish(&account, &msg(b"x"));
        }
        assert!(
            !publisher.must_stall(),
            "an inbox never holds its publisher"
        );
        assert_eq!(client.dropped(), extra as u64);
        let first = inbox.recv().await.unwrap();
        assert_eq!(&first.subject[..], b"orders.new");
    }
}
