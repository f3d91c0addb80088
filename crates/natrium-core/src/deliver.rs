//! Routing a publish: look up the matching subscriptions (through a per-publisher cache),
//! queue one frame per delivery into each subscriber's outbound buffer, pick one member per
//! queue group, and answer a request nobody listens to with a 503 when the requester asked.
//!
//! A [`Publisher`] belongs to one connection's read task (or an internal client) and batches
//! its side effects: writers are woken once per read batch, statistics are added once per
//! batch, and a publisher that filled a subscriber's buffer stalls once per batch.
//!
//! A publish in an account linked to others (exports and imports) then goes on to them:
//! [`cross`] holds that part. Clients that did not ask for headers get messages with headers
//! as plain `MSG`s carrying the payload alone, as Go delivers them.
//!
//! A traced message (see [`trace`]) takes the same path with a tracer held in the publisher.

mod cross;
mod internal;
pub mod trace;

use std::sync::Arc;

use bytes::Bytes;

use nats_proto::headers::write_no_responders;
use nats_proto::MsgFrameTemplate;
use nats_subject::MatchResult;
use rustc_hash::FxHashMap;

use crate::account::{Account, SubRef};
use crate::client::{ClientHandle, Enqueued};
use crate::endpoint::{DeliveryQuota, Endpoint, Origin, Sink};
use crate::limits::{
    CLIENT_MATCH_CACHE_ENTRIES, OUTBOUND_STALL_BYTES_MAX, PENDING_FLUSH_TARGETS_MAX,
    PUBLISHER_STALL_FAR_BEHIND_MAX, PUBLISHER_STALL_MAX,
};
use crate::stats::{BatchStats, ServerStats};

/// One publish as parsed: borrowed from the read buffer.
pub struct Message<'a> {
    pub subject: &'a [u8],
    pub reply: Option<&'a [u8]>,
    pub headers: Option<&'a [u8]>,
    pub payload: &'a [u8],
}

pub struct Publisher {
    cid: u64,
    echo: bool,
    no_responders: bool,
    stats: Arc<ServerStats>,
    /// Matches in the publisher's own account.
    cache: MatchCache,
    /// Matches in the one other account this publisher last delivered into through a link
    /// (a stream import's importer, a service's exporter), kept alive by the handle here.
    foreign: Option<Box<(Arc<Account>, MatchCache)>>,
    template: MsgFrameTemplate,
    /// The current message as a plain `MSG`, for clients without headers; built on demand.
    plain: MsgFrameTemplate,
    plain_ready: bool,
    pending_flush: Vec<Arc<ClientHandle>>,
    stalled: Vec<Arc<ClientHandle>>,
    /// Sinks past their mark in this batch: the publisher waits for them as for `stalled`.
    stalled_sinks: Vec<Arc<dyn Sink>>,
    /// The current message's parts as shared bytes, made at its first delivery to a sink.
    sink_parts: Option<SinkParts>,
    finished_subs: Vec<SubRef>,
    pub batch: BatchStats,
    /// The publishing client and its account: the account's counters get the batch, and
    /// requests crossing into other accounts say who asked. Unset for internal publishers.
    origin: Option<Origin>,
    /// Deliveries of this batch counted for another account than the origin's.
    foreign_out: BatchStats,
    /// The `Nats-Request-Info` an internal publisher gives itself (it has no origin), for the
    /// sinks that ask who published (`InternalClient::set_request_info`).
    own_info: Option<bytes::Bytes>,
    /// The server's name, which a client's detailed `Nats-Request-Info` carries (Go's
    /// `ClientInfo.Server`).
    server: Option<Arc<str>>,
    /// Reused for subjects rewritten on their way to another account.
    scratch: Vec<u8>,
    /// The trace of the message being published, if it is traced.
    trace: Option<Box<trace::MsgTracer>>,
}

/// The current message's parts as shared bytes (see `Publisher::sink_parts`).
struct SinkParts {
    subject: Bytes,
    reply: Option<Bytes>,
    headers: Option<Bytes>,
    payload: Bytes,
}

impl SinkParts {
    fn of(msg: &Message<'_>) -> Self {
        Self {
            subject: Bytes::copy_from_slice(msg.subject),
            reply: msg.reply.map(Bytes::copy_from_slice),
            headers: msg.headers.map(Bytes::copy_from_slice),
            payload: Bytes::copy_from_slice(msg.payload),
        }
    }
}

/// A publisher's own cache of one account's matches, bounded and dropped whenever the
/// account's index changes (its generation), so it never answers with a stale result.
#[derive(Default)]
struct MatchCache {
    entries: FxHashMap<Box<[u8]>, Arc<MatchResult<SubRef>>>,
    generation: u64,
}

impl MatchCache {
    fn lookup(&mut self, account: &Account, subject: &[u8]) -> Arc<MatchResult<SubRef>> {
        let generation = account.sublist.generation();
        if generation != self.generation {
            self.entries.clear();
            self.generation = generation;
        }
        if let Some(hit) = self.entries.get(subject) {
            return Arc::clone(hit);
        }
        let result = account.sublist.matches(subject);
        if self.entries.len() >= CLIENT_MATCH_CACHE_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(subject.into(), Arc::clone(&result));
        result
    }
}

impl Publisher {
    pub fn new(cid: u64, stats: Arc<ServerStats>) -> Self {
        Self {
            cid,
            echo: true,
            no_responders: false,
            stats,
            cache: MatchCache::default(),
            foreign: None,
            template: MsgFrameTemplate::default(),
            plain: MsgFrameTemplate::default(),
            plain_ready: false,
            pending_flush: Vec::new(),
            stalled: Vec::new(),
            stalled_sinks: Vec::new(),
            sink_parts: None,
            finished_subs: Vec::new(),
            batch: BatchStats::default(),
            origin: None,
            foreign_out: BatchStats::default(),
            own_info: None,
            server: None,
            scratch: Vec::new(),
            trace: None,
        }
    }

    /// Names the publishing client and the account it logged into.
    pub fn set_origin(&mut self, account: Arc<Account>, client: Arc<ClientHandle>) {
        self.origin = Some(Origin { account, client });
    }

    /// Sets the identity an internal publisher gives itself (a `Nats-Request-Info` JSON body).
    pub fn set_own_info(&mut self, info: Option<bytes::Bytes>) {
        self.own_info = info;
    }

    /// Names the server in the detailed identity of the publishing client.
    pub fn set_server_name(&mut self, name: Arc<str>) {
        self.server = Some(name);
    }

    /// Applies the CONNECT flags that change routing.
    pub fn set_flags(&mut self, echo: bool, no_responders: bool) {
        self.echo = echo;
        self.no_responders = no_responders;
    }

    fn lookup(&mut self, account: &Account, subject: &[u8]) -> Arc<MatchResult<SubRef>> {
        self.cache.lookup(account, subject)
    }

    /// As [`Publisher::lookup`], for another account than the publisher's.
    fn lookup_foreign(
        &mut self,
        account: &Arc<Account>,
        subject: &[u8],
    ) -> Arc<MatchResult<SubRef>> {
        match &mut self.foreign {
            Some(slot) if Arc::ptr_eq(&slot.0, account) => slot.1.lookup(account, subject),
            slot => {
                let mut cache = MatchCache::default();
                let result = cache.lookup(account, subject);
                *slot = Some(Box::new((Arc::clone(account), cache)));
                result
            }
        }
    }

    /// Routes one message; returns how many subscriptions it was queued to, in this account
    /// and in others it is linked to.
    pub fn publish(&mut self, account: &Arc<Account>, msg: &Message<'_>) -> usize {
        let payload_len = msg.headers.map_or(0, <[u8]>::len) + msg.payload.len();
        self.batch.in_msgs += 1;
        self.batch.in_bytes += payload_len as u64;
        let result = self.lookup(account, msg.subject);
        let mut delivered = if result.plain.is_empty() && result.queues.is_empty() {
            0
        } else {
            self.set_template(msg, payload_len);
            let n = self.deliver_matches(&result, msg, payload_len);
            if !self.finished_subs.is_empty() {
                self.remove_finished(account);
            }
            n
        };
        if let Some(links) = account.links() {
            delivered += self.cross_account(account, &links, msg, None, 0);
        }
        if delivered == 0 && self.no_responders {
            if let Some(reply) = msg.reply {
                self.send_no_responders(account, msg.subject, reply);
            }
        }
        delivered
    }

    /// Delivers `msg` to the subscriptions matching `route` rather than its own subject, which
    /// the receivers see (a JetStream delivery: routed to a pull request's reply subject,
    /// seen with the stored message's subject, as Go's `pa.deliver` does). No 503 is sent.
    pub fn publish_routed(
        &mut self,
        account: &Arc<Account>,
        route: &[u8],
        msg: &Message<'_>,
    ) -> usize {
        let payload_len = msg.headers.map_or(0, <[u8]>::len) + msg.payload.len();
        self.batch.in_msgs += 1;
        self.batch.in_bytes += payload_len as u64;
        let result = self.lookup(account, route);
        let mut delivered = if result.plain.is_empty() && result.queues.is_empty() {
            0
        } else {
            self.set_template(msg, payload_len);
            let n = self.deliver_matches(&result, msg, payload_len);
            if !self.finished_subs.is_empty() {
                self.remove_finished(account);
            }
            n
        };
        if let Some(links) = account.links() {
            // Requests and responses in other accounts go by the routed subject; stream
            // importers see the message's own subject, as here.
            let routed = Message {
                subject: route,
                ..*msg
            };
            delivered += self.cross_account(account, &links, &routed, Some(msg.subject), 0);
        }
        delivered
    }

    fn set_template(&mut self, msg: &Message<'_>, payload_len: usize) {
        match msg.headers {
            Some(h) => self
                .template
                .set_hmsg(msg.subject, msg.reply, h.len(), payload_len),
            None => self.template.set_msg(msg.subject, msg.reply, payload_len),
        }
        self.plain_ready = false;
        self.sink_parts = None;
    }

    /// Queues `msg` to every plain subscription of `result` and one member of each queue
    /// group; the template must already describe `msg`.
    fn deliver_matches(
        &mut self,
        result: &MatchResult<SubRef>,
        msg: &Message<'_>,
        payload_len: usize,
    ) -> usize {
        let mut delivered = 0;
        for sub in &result.plain {
            if self.deliver(sub, msg, payload_len) {
                delivered += 1;
            }
        }
        for group in &result.queues {
            let members = group.members.len();
            if members == 0 {
                continue;
            }
            let start = fastrand::usize(..members);
            for i in 0..members {
                let Some(sub) = group.members.get((start + i) % members) else {
                    continue;
                };
                if self.deliver(sub, msg, payload_len) {
                    delivered += 1;
                    break;
                }
            }
        }
        delivered
    }

    #[inline]
    fn deliver(&mut self, sub: &SubRef, msg: &Message<'_>, payload_len: usize) -> bool {
        if self.trace.is_some() {
            return self.deliver_traced(sub, msg, payload_len);
        }
        self.deliver_plain(sub, msg, payload_len)
    }

    /// Queues `msg` to `sub` unless its client does not take it (no echo, a denied subject,
    /// an auto-unsubscribe limit reached).
    #[inline]
    fn deliver_plain(&mut self, sub: &SubRef, msg: &Message<'_>, payload_len: usize) -> bool {
        if !self.echo && sub.endpoint.cid() == self.cid {
            return false;
        }
        // A wildcard subscription may cover subjects its client may not receive.
        if let Some(filter) = &sub.deny_filter {
            if filter.delivery_denied(msg.subject, sub.queue.as_deref()) {
                return false;
            }
        }
        match sub.take_delivery() {
            DeliveryQuota::Deliver => {}
            DeliveryQuota::DeliverLast => self.finished_subs.push(sub.clone()),
            DeliveryQuota::Exhausted => return false,
        }
        self.enqueue(sub, msg, payload_len)
    }

    /// Queues the frame of `msg` for `sub`'s client (or hands it to its sink), whose delivery
    /// is decided.
    #[inline]
    fn enqueue(&mut self, sub: &SubRef, msg: &Message<'_>, payload_len: usize) -> bool {
        let target = match &sub.endpoint {
            Endpoint::Client(client) => client,
            Endpoint::Sink(sink, sid) => return self.deliver_to_sink(sink, *sid, msg),
        };
        // Go strips headers for clients that did not ask for them.
        let stripped = msg.headers.is_some() && !target.accepts_headers();
        if stripped && !self.plain_ready {
            self.plain
                .set_msg(msg.subject, msg.reply, msg.payload.len());
            self.plain_ready = true;
        }
        let (template, headers, len) = if stripped {
            (&self.plain, &[][..], msg.payload.len())
        } else {
            (&self.template, msg.headers.unwrap_or_default(), payload_len)
        };
        let parts: [&[u8]; 6] = [
            template.prefix(),
            &sub.sid,
            template.suffix(),
            headers,
            msg.payload,
            b"\r\n",
        ];
        let queued = target.out.enqueue_msg(&parts, len);
        self.after_enqueue(target, queued, len, msg.reply)
    }

    /// The bookkeeping of one frame queued (or not) to `target`: stall and slow consumer
    /// handling, the reply permission, statistics, the writer to wake. True if delivered.
    #[inline]
    fn after_enqueue(
        &mut self,
        target: &Arc<ClientHandle>,
        queued: Enqueued,
        len: usize,
        reply: Option<&[u8]>,
    ) -> bool {
        match queued {
            Enqueued::Queued => {}
            Enqueued::QueuedStall => {
                if !self.stalled.iter().any(|c| Arc::ptr_eq(c, target)) {
                    self.stalled.push(Arc::clone(target));
                }
            }
            Enqueued::SlowConsumer => {
                // Counted when the subscriber's task ends, as a close by a protocol reply is.
                target.close_slow_consumer();
                return false;
            }
            Enqueued::Closed => return false,
        }
        if let Some(reply) = reply {
            if let Some(responses) = target.responses() {
                responses.record(reply);
            }
        }
        self.batch.out_msgs += 1;
        self.batch.out_bytes += len as u64;
        if self
            .pending_flush
            .last()
            .is_none_or(|last| !Arc::ptr_eq(last, target))
        {
            self.pending_flush.push(Arc::clone(target));
            if self.pending_flush.len() >= PENDING_FLUSH_TARGETS_MAX {
                self.flush();
            }
        }
        true
    }

    /// Removes subscriptions that reached their auto-unsubscribe limit, from the index of
    /// their client's account (`account` for clients not logged into one).
    fn remove_finished(&mut self, account: &Account) {
        for sub in self.finished_subs.drain(..) {
            // Only clients' subscriptions have auto-unsubscribe limits.
            let Some(client) = sub.endpoint.client() else {
                continue;
            };
            let own = client.account();
            let _ = own.as_deref().unwrap_or(account).unsubscribe(&sub);
            let mut subs = client.subs.lock();
            if subs.get(&sub.sid).is_some_and(|s| Arc::ptr_eq(s, &sub.0)) {
                subs.remove(&sub.sid);
            }
        }
    }

    /// Tells a requester nobody is listening: an HMSG with status 503 on its reply subject,
    /// delivered to its own subscription that matches the reply.
    fn send_no_responders(&mut self, account: &Account, subject: &[u8], reply: &[u8]) {
        let matches = account.sublist.matches(reply);
        // Only a plain subscription of the requester's gets it (Go skips queue subscribers).
        let own = matches.plain.iter().find_map(|s| {
            let client = s.endpoint.client().filter(|c| c.cid == self.cid)?;
            Some((s, client))
        });
        let Some((sub, client)) = own else { return };
        let mut header = Vec::with_capacity(nats_proto::headers::no_responders_len(subject.len()));
        write_no_responders(&mut header, subject);
        let mut line = Vec::with_capacity(64 + reply.len());
        nats_proto::encode::write_hmsg_header(
            &mut line,
            reply,
            &sub.sid,
            None,
            header.len(),
            header.len(),
        );
        let parts: [&[u8]; 3] = [&line, &header, b"\r\n"];
        if client.out.enqueue_msg(&parts, header.len()) != Enqueued::Closed {
            client.out.flush();
        }
    }

    /// Wakes every writer that got frames in this batch and folds the batch statistics in.
    pub fn flush(&mut self) {
        for target in self.pending_flush.drain(..) {
            target.out.flush();
        }
        if !self.batch.is_empty() {
            self.stats.add_batch(&self.batch);
            if let Some(origin) = &self.origin {
                let own = BatchStats {
                    out_msgs: self
                        .batch
                        .out_msgs
                        .saturating_sub(self.foreign_out.out_msgs),
                    out_bytes: self
                        .batch
                        .out_bytes
                        .saturating_sub(self.foreign_out.out_bytes),
                    ..self.batch
                };
                origin.account.stats.add_batch(&own);
            }
            self.batch = BatchStats::default();
            self.foreign_out = BatchStats::default();
        }
    }

    /// Whether this batch pushed a subscriber past its stall mark (see
    /// [`stall_if_needed`](Self::stall_if_needed)).
    pub fn must_stall(&self) -> bool {
        !self.stalled.is_empty() || !self.stalled_sinks.is_empty()
    }

    /// Waits, at most `PUBLISHER_STALL_MAX` per batch, until every subscriber this batch pushed
    /// past its stall mark has drained below it again.
    pub async fn stall_if_needed(&mut self) {
        if !self.must_stall() {
            return;
        }
        // Far past the mark, the subscriber's writer is not keeping up (often it is just not
        // being scheduled): wait longer, so that memory stays bounded well below max_pending.
        let far_behind = self
            .stalled
            .iter()
            .any(|t| t.out.pending_bytes() > OUTBOUND_STALL_BYTES_MAX * 8);
        let wait = if far_behind {
            PUBLISHER_STALL_FAR_BEHIND_MAX
        } else {
            PUBLISHER_STALL_MAX
        };
        let deadline = tokio::time::Instant::now() + wait;
        for target in self.stalled.drain(..) {
            let _ = tokio::time::timeout_at(deadline, target.out.wait_below_stall_mark()).await;
        }
        for sink in self.stalled_sinks.drain(..) {
            let _ = tokio::time::timeout_at(deadline, sink.until_ready()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliver_message_fields_are_borrowed() {
        let msg = Message {
            subject: b"a",
            reply: None,
            headers: None,
            payload: b"xy",
        };
        let copy = Message {
            headers: Some(b""),
            ..msg
        };
        assert_eq!(copy.payload, b"xy");
    }
}
