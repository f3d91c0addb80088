//! Internal clients: the server's own subscribers and publishers, such as the system
//! account's request handlers and event publisher.
//!
//! An internal client subscribes through an in-process sink (`crate::endpoint`): each message
//! arrives typed on a bounded channel, with no `MSG` frame formatted for it and none parsed
//! back, and carries the publisher's identity in a `Nats-Request-Info` header so that a
//! request handler knows who asked. Overflow rule: when the owner falls
//! `INTERNAL_INBOX_MSGS_MAX` messages behind, new ones are dropped, counted and logged (the
//! requester times out and retries, as with Go's internal send queue); the publisher is never
//! stalled and the client is never cut as a slow consumer. It has no connection, so
//! monitoring's connection lists do not show it.
//!
//! One internal client may subscribe in several accounts, as the system services answer some
//! requests in every account (Go imports them from the system account); each message says
//! which subscription took it, and [`InternalClient::account_of`] which account that is in.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::account::{Account, SubRef};
use crate::deliver::{Message, Publisher};
use crate::endpoint::Subscription;
use crate::endpoint::{Delivery, Sink, SinkAccept};
use crate::limits::INTERNAL_INBOX_MSGS_MAX;
use crate::stats::ServerStats;
use crate::Server;

/// One message delivered to an internal subscription: the subject, reply, header block (with
/// `Nats-Request-Info` saying who published it) and payload, and `sid`, the subscription that
/// took it (see [`InternalClient::account_of`]).
pub type InboundMsg = Delivery;

/// The owner's side of an internal client. Dropping it removes its subscriptions.
pub struct InternalClient {
    /// Where [`InternalClient::subscribe`] and [`InternalClient::publish`] act.
    home: Arc<Account>,
    inbox: Arc<Inbox>,
    publisher: Publisher,
    stats: Arc<ServerStats>,
    subs: BTreeMap<u64, (Arc<Account>, Arc<Subscription>)>,
    next_sid: u64,
    /// See [`InternalClient::set_request_info`].
    own_info: Option<bytes::Bytes>,
}

/// The sink behind an internal client's subscriptions.
struct Inbox {
    tx: mpsc::Sender<InboundMsg>,
    cid: u64,
    /// Messages dropped because the owner was `INTERNAL_INBOX_MSGS_MAX` behind.
    dropped: AtomicU64,
}

impl Sink for Inbox {
    fn cid(&self) -> u64 {
        self.cid
    }

    fn wants_request_info(&self) -> bool {
        true
    }

    fn deliver(&self, msg: Delivery) -> SinkAccept {
        if self.tx.try_send(msg).is_ok() {
            return SinkAccept::Accepted;
        }
        // Full (or the owner is gone): drop, count, and say so once per power of two.
        let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            tracing::warn!(
                "Internal client cid:{} dropped a message: its queue is full ({dropped} so far)",
                self.cid
            );
        }
        SinkAccept::Dropped
    }
}

impl InternalClient {
    /// Starts an internal client at home in `account`; messages for its subscriptions arrive
    /// on the returned receiver.
    pub fn start(server: &Server, account: Arc<Account>) -> (Self, mpsc::Receiver<InboundMsg>) {
        let shared = &server.shared;
        let cid = shared.next_cid();
        let (tx, rx) = mpsc::channel(INTERNAL_INBOX_MSGS_MAX);
        let inbox = Arc::new(Inbox {
            tx,
            cid,
            dropped: AtomicU64::new(0),
        });
        let stats = Arc::clone(&shared.stats);
        let client = Self {
            home: account,
            inbox,
            publisher: Publisher::new(cid, Arc::clone(&stats)),
            stats,
            subs: BTreeMap::new(),
            next_sid: 1,
            own_info: None,
        };
        (client, rx)
    }

    /// The connection id the client publishes and receives as.
    pub fn cid(&self) -> u64 {
        self.inbox.cid
    }

    /// Gives the client an identity (a `Nats-Request-Info` JSON body) that the sinks asking
    /// who published receive with its messages, as Go's internal clients of a kind other than
    /// `SYSTEM` describe themselves (a JetStream stream's requests to the API, for one).
    pub fn set_request_info(&mut self, info: &[u8]) {
        self.own_info = Some(bytes::Bytes::copy_from_slice(info));
        self.publisher.set_own_info(self.own_info.clone());
    }

    /// Messages dropped so far because the owner fell behind.
    pub fn dropped(&self) -> u64 {
        self.inbox.dropped.load(Ordering::Relaxed)
    }

    /// Subscribes to `subject` in the home account; `false` if the subject is not a valid
    /// subscription subject.
    pub fn subscribe(&mut self, subject: &str) -> bool {
        let home = Arc::clone(&self.home);
        self.subscribe_in(&home, subject).is_some()
    }

    /// Subscribes to `subject` in `account`; returns the subscription's sid, or `None` if the
    /// subject is not a valid subscription subject.
    pub fn subscribe_in(&mut self, account: &Arc<Account>, subject: &str) -> Option<u64> {
        let sid = self.next_sid;
        let sink: Arc<dyn Sink> = Arc::clone(&self.inbox) as Arc<dyn Sink>;
        let sub = Arc::new(Subscription::for_sink(sink, sid, subject.as_bytes(), None));
        if account.subscribe(SubRef(Arc::clone(&sub))).is_err() {
            return None;
        }
        self.next_sid += 1;
        self.subs.insert(sid, (Arc::clone(account), sub));
        Some(sid)
    }

    /// Removes subscription `sid`.
    pub fn unsubscribe(&mut self, sid: u64) {
        if let Some((account, sub)) = self.subs.remove(&sid) {
            remove_sub(&account, &sub);
        }
    }

    /// The account subscription `sid` is in.
    pub fn account_of(&self, sid: u64) -> Option<&Arc<Account>> {
        self.subs.get(&sid).map(|(account, _)| account)
    }

    /// Publishes one message into the home account, as a client's PUB would.
    pub fn publish(&mut self, subject: &str, reply: Option<&str>, payload: &[u8]) {
        let home = Arc::clone(&self.home);
        self.publish_in(&home, subject, reply, payload);
    }

    /// Publishes one message into `account`.
    pub fn publish_in(
        &mut self,
        account: &Arc<Account>,
        subject: &str,
        reply: Option<&str>,
        payload: &[u8],
    ) {
        let msg = Message {
            subject: subject.as_bytes(),
            reply: reply.map(str::as_bytes),
            headers: None,
            payload,
        };
        self.send(account, &msg);
    }

    /// Publishes one message with a header block (`NATS/1.0` …) into `account`.
    pub fn publish_with_headers(
        &mut self,
        account: &Arc<Account>,
        subject: &str,
        headers: &[u8],
        payload: &[u8],
    ) {
        let msg = Message {
            subject: subject.as_bytes(),
            reply: None,
            headers: Some(headers),
            payload,
        };
        self.send(account, &msg);
    }

    /// Publishes one request (a reply subject and a header block, both optional) into
    /// `account`, as a client's HPUB would.
    pub fn publish_request(
        &mut self,
        account: &Arc<Account>,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&[u8]>,
        payload: &[u8],
    ) {
        let msg = Message {
            subject: subject.as_bytes(),
            reply: reply.map(str::as_bytes),
            headers,
            payload,
        };
        self.send(account, &msg);
    }

    /// Delivers one message to the subscribers of `route` in `account`, who receive it on
    /// `subject` with `reply` and an optional header block (a JetStream delivery: routed to
    /// a pull request's reply subject, seen on the stored subject with the ack subject).
    pub fn deliver_routed(&mut self, account: &Arc<Account>, route: &[u8], msg: &Message<'_>) {
        self.send_with(account, msg, Some(route));
    }

    fn send(&mut self, account: &Arc<Account>, msg: &Message<'_>) {
        self.send_with(account, msg, None);
    }

    fn send_with(&mut self, account: &Arc<Account>, msg: &Message<'_>, route: Option<&[u8]>) {
        // A publisher's match cache belongs to one account: elsewhere, use a fresh one
        // (these are replies to requests, a handful at a time).
        let mut other;
        let publisher = if Arc::ptr_eq(account, &self.home) {
            &mut self.publisher
        } else {
            other = Publisher::new(self.inbox.cid, Arc::clone(&self.stats));
            other.set_own_info(self.own_info.clone());
            &mut other
        };
        match route {
            Some(route) => publisher.publish_routed(account, route, msg),
            None => publisher.publish(account, msg),
        };
        // As in Go, the server's own publishes are not counted as messages received; what
        // they deliver to clients is counted as sent.
        publisher.batch.in_msgs = 0;
        publisher.batch.in_bytes = 0;
        publisher.flush();
    }

    /// Whether a publish to `subject` in the home account could reach anyone: a matching
    /// subscription there, or any link from it to other accounts (those are not looked into).
    /// A `false` lets the owner skip building a message nobody would receive.
    pub fn has_interest(&self, subject: &str) -> bool {
        if self.home.links().is_some() {
            return true;
        }
        let result = self.home.sublist.matches(subject.as_bytes());
        !(result.plain.is_empty() && result.queues.is_empty())
    }

    /// How many subscriptions this client holds (counted in their accounts' totals).
    pub fn num_subscriptions(&self) -> usize {
        self.subs.len()
    }
}

fn remove_sub(account: &Account, sub: &Arc<Subscription>) {
    let _ = account.unsubscribe(&SubRef(Arc::clone(sub)));
}

impl Drop for InternalClient {
    fn drop(&mut self) {
        for (account, sub) in std::mem::take(&mut self.subs).into_values() {
            remove_sub(&account, &sub);
        }
    }
}
