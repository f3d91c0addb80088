//! Internal clients: the server's own subscribers and publishers, such as the system
//! account's request handlers and event publisher.
//!
//! An internal client is a [`ClientHandle`] like any other, so deliveries to it go through the
//! same outbound buffer, with the same stall and slow-consumer rules, and the publish path
//! needs no special case beyond one flag: each delivery to an internal client carries the
//! publisher's identity in a `Nats-Request-Info` header (see `crate::deliver`), so that a
//! request handler knows who asked. Its writer task, instead of writing to a socket, reads the
//! `MSG`/`HMSG` frames back and hands each message to the owner over a bounded channel
//! (overflow: the message is dropped and logged; see `INTERNAL_INBOX_MSGS_MAX`). It is never
//! registered as a connection, so monitoring's connection lists do not show it.
//!
//! One internal client may subscribe in several accounts, as the system services answer some
//! requests in every account (Go imports them from the system account); each message says
//! which subscription took it, and [`InternalClient::account_of`] which account that is in.

use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nats_proto::server_msg::{parse_msg_frame, MsgParsed};
use tokio::sync::mpsc;

use crate::account::{Account, SubRef};
use crate::client::io::OutSink;
use crate::client::{ClientHandle, ClosedReason, Subscription};
use crate::deliver::{Message, Publisher};
use crate::limits::{INTERNAL_INBOX_MSGS_MAX, INTERNAL_PENDING_BYTES_MAX};
use crate::stats::ServerStats;
use crate::Server;

/// One message delivered to an internal subscription.
#[derive(Debug, Clone)]
pub struct InboundMsg {
    pub subject: String,
    pub reply: Option<String>,
    /// The header block; `Nats-Request-Info` in it says who published the message.
    pub headers: Option<Bytes>,
    pub payload: Bytes,
    /// The subscription that took it (see [`InternalClient::account_of`]); 0 if unreadable.
    pub sid: u64,
}

/// The owner's side of an internal client. Dropping it closes the client and removes its
/// subscriptions.
pub struct InternalClient {
    /// Where [`InternalClient::subscribe`] and [`InternalClient::publish`] act.
    home: Arc<Account>,
    handle: Arc<ClientHandle>,
    publisher: Publisher,
    stats: Arc<ServerStats>,
    subs: BTreeMap<u64, (Arc<Account>, Arc<Subscription>)>,
    next_sid: u64,
}

/// Reads delivered frames back into messages for the owner.
struct InboxSink {
    tx: mpsc::Sender<InboundMsg>,
    cid: u64,
}

fn sid_number(sid: &[u8]) -> u64 {
    std::str::from_utf8(sid)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

impl OutSink for InboxSink {
    async fn write_batch(&mut self, batch: &[u8], _stall: Duration) -> io::Result<()> {
        let mut rest = batch;
        loop {
            match parse_msg_frame(rest) {
                Ok(MsgParsed::Frame { frame, consumed }) => {
                    let msg = InboundMsg {
                        subject: String::from_utf8_lossy(frame.subject).into_owned(),
                        reply: frame.reply.map(|r| String::from_utf8_lossy(r).into_owned()),
                        headers: frame.headers.map(Bytes::copy_from_slice),
                        payload: Bytes::copy_from_slice(frame.payload),
                        sid: sid_number(frame.sid),
                    };
                    if self.tx.try_send(msg).is_err() {
                        tracing::warn!(
                            "Internal client cid:{} dropped a message: its queue is full",
                            self.cid
                        );
                    }
                    rest = rest.get(consumed..).unwrap_or_default();
                }
                // The buffer only ever holds whole frames, written by the publish path.
                Ok(MsgParsed::Incomplete) | Err(_) => return Ok(()),
            }
        }
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl InternalClient {
    /// Starts an internal client at home in `account`; messages for its subscriptions arrive
    /// on the returned receiver.
    pub fn start(server: &Server, account: Arc<Account>) -> (Self, mpsc::Receiver<InboundMsg>) {
        let shared = &server.shared;
        let cid = shared.next_cid();
        let addr = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let closing = shared.shutdown.child_token();
        let handle = Arc::new(ClientHandle::new_internal(
            cid,
            addr,
            INTERNAL_PENDING_BYTES_MAX,
            closing,
        ));
        let (tx, rx) = mpsc::channel(INTERNAL_INBOX_MSGS_MAX);
        let sink = InboxSink { tx, cid };
        let writer = crate::client::writer::run_writer(
            Arc::clone(&handle),
            sink,
            server.config().write_deadline,
        );
        shared.tracker.spawn(writer);
        let stats = Arc::clone(&shared.stats);
        let client = Self {
            home: account,
            handle,
            publisher: Publisher::new(cid, Arc::clone(&stats)),
            stats,
            subs: BTreeMap::new(),
            next_sid: 1,
        };
        (client, rx)
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
        let sid_text = sid.to_string();
        let sub = Arc::new(Subscription {
            client: Arc::clone(&self.handle),
            subject: subject.as_bytes().into(),
            queue: None,
            sid: sid_text.as_bytes().into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
            deny_filter: None,
        });
        let inserted = account
            .sublist
            .insert(subject.as_bytes(), None, SubRef(Arc::clone(&sub)));
        if inserted.is_err() {
            return None;
        }
        self.next_sid += 1;
        self.handle
            .subs
            .lock()
            .insert(sid_text.as_bytes().into(), Arc::clone(&sub));
        self.subs.insert(sid, (Arc::clone(account), sub));
        Some(sid)
    }

    /// Removes subscription `sid`.
    pub fn unsubscribe(&mut self, sid: u64) {
        if let Some((account, sub)) = self.subs.remove(&sid) {
            remove_sub(&self.handle, &account, &sub);
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

    fn send(&mut self, account: &Arc<Account>, msg: &Message<'_>) {
        // A publisher's match cache belongs to one account: elsewhere, use a fresh one
        // (these are replies to requests, a handful at a time).
        let mut other;
        let publisher = if Arc::ptr_eq(account, &self.home) {
            &mut self.publisher
        } else {
            other = Publisher::new(self.handle.cid, Arc::clone(&self.stats));
            &mut other
        };
        publisher.publish(account, msg);
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

fn remove_sub(handle: &ClientHandle, account: &Account, sub: &Arc<Subscription>) {
    let _ = account
        .sublist
        .remove(&sub.subject, None, &SubRef(Arc::clone(sub)));
    handle.subs.lock().remove(&sub.sid);
}

impl Drop for InternalClient {
    fn drop(&mut self) {
        for (account, sub) in std::mem::take(&mut self.subs).into_values() {
            remove_sub(&self.handle, &account, &sub);
        }
        self.handle.close(ClosedReason::ServerShutdown);
    }
}
