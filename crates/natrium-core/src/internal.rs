//! Internal clients: the server's own subscribers and publishers inside an account, such as
//! the system account's request handlers and event publisher.
//!
//! An internal client is a [`ClientHandle`] like any other, so deliveries to it go through the
//! same outbound buffer, with the same stall and slow-consumer rules, and the publish path
//! needs no special case. Its writer task, instead of writing to a socket, reads the `MSG`
//! frames back and hands each message to the owner over a bounded channel (overflow: the
//! message is dropped and logged; see `INTERNAL_INBOX_MSGS_MAX`). It is never registered as a
//! connection, so monitoring's connection lists do not show it.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use nats_proto::server_msg::{parse_msg_frame, MsgParsed};
use tokio::sync::mpsc;

use crate::account::{Account, SubRef};
use crate::client::io::OutSink;
use crate::client::{ClientHandle, ClosedReason, Subscription};
use crate::deliver::{Message, Publisher};
use crate::limits::{INTERNAL_INBOX_MSGS_MAX, INTERNAL_PENDING_BYTES_MAX};
use crate::Server;

/// One message delivered to an internal subscription.
#[derive(Debug, Clone)]
pub struct InboundMsg {
    pub subject: String,
    pub reply: Option<String>,
    pub payload: Bytes,
}

/// The owner's side of an internal client. Dropping it closes the client and removes its
/// subscriptions.
pub struct InternalClient {
    account: Arc<Account>,
    handle: Arc<ClientHandle>,
    publisher: Publisher,
    subs: Vec<Arc<Subscription>>,
}

/// Reads delivered frames back into messages for the owner.
struct InboxSink {
    tx: mpsc::Sender<InboundMsg>,
    cid: u64,
}

impl OutSink for InboxSink {
    async fn write_batch(&mut self, batch: &[u8]) -> io::Result<()> {
        let mut rest = batch;
        loop {
            match parse_msg_frame(rest) {
                Ok(MsgParsed::Frame { frame, consumed }) => {
                    let msg = InboundMsg {
                        subject: String::from_utf8_lossy(frame.subject).into_owned(),
                        reply: frame.reply.map(|r| String::from_utf8_lossy(r).into_owned()),
                        payload: Bytes::copy_from_slice(frame.payload),
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
    /// Starts an internal client in `account`; messages for its subscriptions arrive on the
    /// returned receiver.
    pub fn start(server: &Server, account: Arc<Account>) -> (Self, mpsc::Receiver<InboundMsg>) {
        let shared = &server.shared;
        let cid = shared.next_cid();
        let addr = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let closing = shared.shutdown.child_token();
        let handle = Arc::new(ClientHandle::new(
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
        let client = Self {
            account,
            handle,
            publisher: Publisher::new(cid, Arc::clone(&shared.stats)),
            subs: Vec::new(),
        };
        (client, rx)
    }

    /// Subscribes to `subject`; `false` if the subject is not a valid subscription subject.
    pub fn subscribe(&mut self, subject: &str) -> bool {
        let sid = (self.subs.len() + 1).to_string();
        let sub = Arc::new(Subscription {
            client: Arc::clone(&self.handle),
            subject: subject.as_bytes().into(),
            queue: None,
            sid: sid.as_bytes().into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
            deny_filter: None,
        });
        let inserted =
            self.account
                .sublist
                .insert(subject.as_bytes(), None, SubRef(Arc::clone(&sub)));
        if inserted.is_err() {
            return false;
        }
        self.handle
            .subs
            .lock()
            .insert(sid.as_bytes().into(), Arc::clone(&sub));
        self.subs.push(sub);
        true
    }

    /// Publishes one message into the account, as a client's PUB would.
    pub fn publish(&mut self, subject: &str, reply: Option<&str>, payload: &[u8]) {
        let msg = Message {
            subject: subject.as_bytes(),
            reply: reply.map(str::as_bytes),
            headers: None,
            payload,
        };
        self.publisher.publish(&self.account, &msg);
        // As in Go, the server's own publishes are not counted as messages received; what
        // they deliver to clients is counted as sent.
        self.publisher.batch.in_msgs = 0;
        self.publisher.batch.in_bytes = 0;
        self.publisher.flush();
    }

    /// Whether a publish to `subject` could reach anyone: a matching subscription in the
    /// account, or any link from it to other accounts (those are not looked into). A `false`
    /// lets the owner skip building a message nobody would receive.
    pub fn has_interest(&self, subject: &str) -> bool {
        if self.account.links().is_some() {
            return true;
        }
        let result = self.account.sublist.matches(subject.as_bytes());
        !(result.plain.is_empty() && result.queues.is_empty())
    }

    /// How many subscriptions this client holds (counted in the account's totals).
    pub fn num_subscriptions(&self) -> usize {
        self.subs.len()
    }
}

impl Drop for InternalClient {
    fn drop(&mut self) {
        for sub in self.subs.drain(..) {
            let _ = self
                .account
                .sublist
                .remove(&sub.subject, None, &SubRef(Arc::clone(&sub)));
        }
        self.handle.close(ClosedReason::ServerShutdown);
    }
}
