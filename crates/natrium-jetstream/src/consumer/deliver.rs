//! Pull delivery of one consumer, as Go's consumer loop does it: a request is checked and
//! queued (`processNextMsgRequest`), then messages go to the waiting requests one at a time
//! (redeliveries first, then the next stored message the filters match) until nothing is
//! left, `max_ack_pending` is reached or nobody waits; then the queue is swept (expired
//! requests get `408`, finished `no_wait` ones `404`, heartbeats are sent).
//!
//! Runs with the consumer's `core` locked; the stream's `core` is taken inside for each read
//! of its store (the documented order). Everything sent goes to the round's [`Outbox`].

use std::sync::Arc;

use bytes::Bytes;
use natrium_store::{Filter, StoreError, StoredMsg};

use super::ack::reply_subject;
use super::config::{AckPolicy, PriorityPolicy};
use super::outbox::{Advice, Delivered, Outbox};
use super::priority::{self, Admit};
use super::pull::{self, Waiting};
use super::push::FC_REQUEST;
use super::running::{num_pending, store_filter, ConsumerCore};
use super::state::AckTiming;
use crate::stream::Stream;

/// Push deliveries of one consumer in a round (bounds the round's outbox).
const PUSH_ROUND_MAX: usize = 1024;

/// Go's reason for a pending message that left the stream.
pub const DELETED_REASON: &str = "Unacknowledged message was deleted";

/// One consumer's share of a round.
pub struct Round<'a> {
    pub stream: &'a Stream,
    pub consumer: &'a str,
    pub domain: &'a str,
    /// The server's `max_payload`.
    pub max_payload: i64,
    /// `<domain>.<account hash>` of Go's v2 ack and flow-control subjects, when they are on.
    pub ack_v2: Option<&'a str>,
    /// The stream's retention is `limits` (acks remove nothing).
    pub limits: bool,
    pub now: i64,
    pub out: &'a mut Outbox,
}

impl Round<'_> {
    /// Whether anyone could receive a message on `subject` (a reply, an advisory).
    pub fn listened(&self, subject: &str) -> bool {
        let account = &self.stream.account;
        account.links().is_some() || crate::event::has_interest(account, subject)
    }

    pub fn advise(&mut self, advice: Advice, seqs: (u64, u64), deliveries: u64, reason: &str) {
        let facts = Delivered {
            stream: &self.stream.name,
            consumer: self.consumer,
            consumer_seq: seqs.0,
            stream_seq: seqs.1,
            deliveries,
            reason,
            domain: self.domain,
        };
        let account = &self.stream.account;
        self.out
            .advise(advice, &facts, |s| crate::event::has_interest(account, s));
    }

    /// The `sample_freq` ack metric of one acknowledged delivery (`delay`: nanoseconds since
    /// it was delivered).
    pub fn ack_metric(&mut self, seqs: (u64, u64), deliveries: u64, delay: i64) {
        let subject = format!(
            "$JS.EVENT.METRIC.CONSUMER.ACK.{}.{}",
            self.stream.name, self.consumer
        );
        if !crate::event::has_interest(&self.stream.account, &subject) {
            return;
        }
        let body = super::outbox::AckMetric {
            stream: &self.stream.name,
            consumer: self.consumer,
            consumer_seq: seqs.0,
            stream_seq: seqs.1,
            ack_time: delay,
            deliveries,
            domain: self.domain,
        };
        self.out
            .advisory(subject, "io.nats.jetstream.metric.v1.consumer_ack", body);
    }

    /// The advisory of a new pin (`pinned`: its id) or of a pin that lapsed.
    pub fn advise_pin(&mut self, group: &str, pinned: Option<&str>) {
        let (verb, kind) = if pinned.is_some() {
            (
                "PINNED",
                "io.nats.jetstream.advisory.v1.consumer_group_pinned",
            )
        } else {
            (
                "UNPINNED",
                "io.nats.jetstream.advisory.v1.consumer_group_unpinned",
            )
        };
        let subject = format!(
            "$JS.EVENT.ADVISORY.CONSUMER.{verb}.{}.{}",
            self.stream.name, self.consumer
        );
        if !crate::event::has_interest(&self.stream.account, &subject) {
            return;
        }
        let body = priority::PinAdvisory {
            account: &self.stream.account.name,
            stream: &self.stream.name,
            consumer: self.consumer,
            domain: self.domain,
            group,
            pinned_id: pinned,
            reason: pinned.is_none().then_some("timeout"),
        };
        self.out.advisory(subject, kind, body);
    }
}

/// Why delivery stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Nothing,
    MaxAckPending,
}

/// The consumer's ack timing from its config.
pub fn timing(core: &ConsumerCore) -> AckTiming<'_> {
    AckTiming {
        ack_wait: core.config.ack_wait,
        backoff: &core.config.backoff,
        max_deliver: u64::try_from(core.config.max_deliver).unwrap_or(0),
    }
}

fn max_ack_pending(core: &ConsumerCore) -> usize {
    if core.config.ack_policy == AckPolicy::None {
        return 0;
    }
    usize::try_from(core.config.max_ack_pending).unwrap_or(0)
}

fn paused(core: &ConsumerCore, now: i64) -> bool {
    core.config
        .pause_until
        .is_some_and(|t| t.unix_nanos() > now)
}

/// Records a change in the state store; a failure is logged (the memory state goes on, as
/// Go's does).
pub fn stored(result: Result<(), StoreError>, r: &Round<'_>) {
    if let Err(err) = result {
        if !matches!(err, StoreError::NotFound | StoreError::Closed) {
            tracing::warn!(
                "JetStream consumer '{} > {} > {}' failed to store its state: {err}",
                r.stream.account.name,
                r.stream.name,
                r.consumer
            );
        }
    }
}

/// Messages left to deliver, from the cache kept up to date with the stream's last sequence.
fn pending_count(core: &mut ConsumerCore, r: &Round<'_>) -> u64 {
    let sc = r.stream.core.lock();
    let store = sc.ingest.store.as_ref();
    let state = store.fast_state();
    let next = core.next_seq;
    let count = if next > state.last_seq {
        0
    } else {
        match core.delivery.num_pending {
            Some((count, through)) if through == state.last_seq => count,
            Some((count, through))
                if through < state.last_seq
                    && core.config.deliver_policy
                        != super::config::DeliverPolicy::LastPerSubject =>
            {
                let from = next.max(through + 1);
                count
                    + store
                        .num_pending(from, &store_filter(&core.config), false)
                        .0
            }
            _ => num_pending(&core.config, next, store),
        }
        .min(state.msgs)
        .min(state.last_seq - next + 1)
    };
    core.delivery.num_pending = Some((count, state.last_seq));
    count
}

/// Handles a pull request on `reply`.
pub fn on_request(core: &mut ConsumerCore, r: &mut Round<'_>, reply: &str, body: &[u8]) {
    if core.config.is_push() {
        r.out
            .status(reply, pull::status("409 Consumer is push based"));
        return;
    }
    core.delivery.push.last_active = r.now;
    let req = match pull::decode_next(body, r.now) {
        Ok(req) => req,
        Err(err) => {
            r.out
                .status(reply, pull::status(&format!("400 Bad Request - {err}")));
            return;
        }
    };
    if let Err(text) = pull::check_limits(&req, &core.config, r.now) {
        r.out.status(reply, pull::status(&text));
        return;
    }
    if let Some(group) = req.group.as_ref() {
        let (policy, ttl) = (core.config.priority_policy, core.config.priority_timeout);
        let pin = &mut core.delivery.pin;
        if policy != PriorityPolicy::None {
            if let Err(text) = priority::on_arrival(pin, group, ttl, r.now) {
                r.out.status(reply, pull::status(&text));
                return;
            }
        }
    }
    let max_waiting = usize::try_from(core.config.max_waiting).unwrap_or(0);
    if core.delivery.waiting.len() >= max_waiting {
        process_waiting(core, r, false);
    }
    if req.no_wait {
        let available = pending_count(core, r) + core.delivery.redeliver_queued() as u64;
        if available == 0 && req.expires_at == 0 {
            r.out.status(reply, pull::status("404 No Messages"));
            return;
        }
        if available > 0 {
            let wanted = process_waiting(core, r, false);
            if available < u64::try_from(wanted).unwrap_or(0) {
                r.out.status(reply, pull::status("408 Requests Pending"));
                return;
            }
        }
    }
    if core.delivery.waiting.len() >= max_waiting {
        if req.heartbeat == 0 {
            r.out.status(reply, pull::status("409 Exceeded MaxWaiting"));
        }
        return;
    }
    let waiting = Waiting::new(reply, &req, r.now);
    if let Some(due) = waiting.due() {
        let d = &mut core.delivery;
        d.wait_due = Some(d.wait_due.map_or(due, |w| w.min(due)));
    }
    let prioritized = core.config.priority_policy == PriorityPolicy::Prioritized;
    core.delivery.waiting.push(waiting, prioritized);
    if prioritized {
        // As Go's consumer loop: the requests that came together are ranked before any
        // is served (the next round delivers).
        if !r.out.again.iter().any(|n| n == r.consumer) {
            r.out.again(r.consumer);
        }
    } else {
        deliver(core, r);
    }
}

/// Delivers to the waiting requests what there is, then sweeps the queue; a push consumer
/// delivers to its deliver subject.
pub fn deliver(core: &mut ConsumerCore, r: &mut Round<'_>) {
    if core.config.is_push() {
        deliver_push(core, r);
        return;
    }
    let mut stop = Stop::Nothing;
    let mut replay_wait = false;
    let filter = store_filter(&core.config);
    while !paused(core, r.now) && !core.delivery.waiting.is_empty() {
        if !wait_over(core, r.now) {
            replay_wait = true;
            break;
        }
        match next_msg(core, r, &filter) {
            Ok((msg, dc)) => {
                // `replay_policy: original` paces pull requests too, as Go's one loop does.
                let wait = core.delivery.push.replay_delay(msg.seq, msg.timestamp_ns);
                if wait > 0 {
                    put_back(core, msg.seq, dc);
                    core.delivery.push.resume_at = Some(r.now.saturating_add(wait));
                    replay_wait = true;
                    break;
                }
                if !send_one(core, r, &msg, dc) {
                    break;
                }
                if core.delivery.push.replay_until.is_some() {
                    core.delivery.push.last_ts = msg.timestamp_ns;
                }
            }
            Err(why) => {
                stop = why;
                break;
            }
        }
    }
    // A request waiting out a replay delay is not answered as if nothing were left.
    process_waiting(core, r, stop != Stop::MaxAckPending && !replay_wait);
}

/// Push delivery while the deliver subject has interest and the flow-control window is
/// open, at most [`PUSH_ROUND_MAX`] messages a round (the rest on the next round), paced by
/// `rate_limit_bps` and `replay_policy: original` (the wait is a timer of the engine).
fn deliver_push(core: &mut ConsumerCore, r: &mut Round<'_>) {
    let filter = store_filter(&core.config);
    let mut sent = 0;
    while push_ready(core, r.now) {
        if sent == PUSH_ROUND_MAX {
            r.out.again(r.consumer);
            break;
        }
        let Ok((msg, dc)) = next_msg(core, r, &filter) else {
            break;
        };
        let mut wait = core.delivery.push.replay_delay(msg.seq, msg.timestamp_ns);
        if wait == 0 {
            wait = rate_wait(core, r, &msg);
        }
        if wait > 0 {
            put_back(core, msg.seq, dc);
            core.delivery.push.resume_at = Some(r.now.saturating_add(wait));
            break;
        }
        send_one(core, r, &msg, dc);
        sent += 1;
        if core.delivery.push.replay_until.is_some() {
            core.delivery.push.last_ts = msg.timestamp_ns;
        }
    }
    let hb = core.config.idle_heartbeat;
    if sent > 0 && hb > 0 {
        core.delivery.push.hb_due = Some(r.now.saturating_add(hb));
    }
}

/// Whether a push consumer may deliver now: not paused, interest, window open, no wait.
fn push_ready(core: &mut ConsumerCore, now: i64) -> bool {
    wait_over(core, now)
        && !paused(core, now)
        && core.delivery.push.active
        && !core.delivery.push.stalled()
}

/// Whether a wait (rate limit, replay delay) is over; a replay ends once the consumer is
/// past the last message the stream held when it started.
fn wait_over(core: &mut ConsumerCore, now: i64) -> bool {
    let p = &mut core.delivery.push;
    if p.resume_at.is_some_and(|t| t > now) {
        return false;
    }
    p.resume_at = None;
    if p.replay_until.is_some_and(|last| core.next_seq > last) {
        p.replay_until = None;
    }
    true
}

/// Go's rate limit (`rate_limit_bps`): the message is counted before it goes, and waits
/// if the bucket is short (counted once: it goes when the wait is over).
fn rate_wait(core: &mut ConsumerCore, r: &Round<'_>, msg: &StoredMsg) -> i64 {
    let bps = core.config.rate_limit_bps;
    if bps == 0 {
        return 0;
    }
    if core.delivery.push.paid.take() == Some(msg.seq) {
        return 0;
    }
    // Go's burst: the stream's max_msg_size, else the account's max payload, else the
    // server's.
    let max = r.stream.core.lock().config.max_msg_size;
    let account = r.stream.account.state().spec.limits.max_payload;
    let burst = if max > 0 {
        i64::from(max)
    } else if account > 0 {
        account
    } else {
        r.max_payload
    };
    let size = msg.subject.len() + msg.headers.len() + msg.payload.len();
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let wait = core.delivery.push.pace(r.now, size, bps, burst);
    if wait > 0 {
        core.delivery.push.paid = Some(msg.seq);
    }
    wait
}

/// Sends the flow-control request a push delivery of `size` bytes calls for.
fn flow_control(core: &mut ConsumerCore, r: &mut Round<'_>, size: usize) {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let max = max_ack_pending(core);
    let at_max = core.config.ack_policy == AckPolicy::FlowControl
        && max > 0
        && core.delivery.pending.len() >= max;
    if core.delivery.push.sent(size, at_max) {
        send_flow_control(core, r);
    }
}

/// Go's `sendFlowControl`: a `100 FlowControl Request` on the deliver subject, its reply
/// subject the one the consumer now waits for.
pub fn send_flow_control(core: &mut ConsumerCore, r: &mut Round<'_>) {
    let seed = u64::try_from(r.now).unwrap_or(0) ^ core.delivery.dseq;
    let p = &mut core.delivery.push;
    let fc = p.next_fc_reply(r.ack_v2, &r.stream.name, r.consumer, seed);
    p.requested(fc.clone());
    r.out.push(
        &core.config.deliver_subject,
        Some(fc),
        Some(Bytes::from_static(FC_REQUEST)),
        Bytes::new(),
    );
}

/// Go's `getNextMsg`: a redelivery first, else (below `max_ack_pending`) the next message.
fn next_msg(
    core: &mut ConsumerCore,
    r: &mut Round<'_>,
    filter: &Filter,
) -> Result<(StoredMsg, u64), Stop> {
    let max_deliver = u64::try_from(core.config.max_deliver).unwrap_or(0);
    while let Some(seq) = core.delivery.next_to_redeliver() {
        let dc = core.delivery.inc_delivery_count(seq);
        if max_deliver > 0 && dc > max_deliver {
            if dc == max_deliver + 1 {
                r.advise(Advice::MaxDeliver, (0, seq), dc - 1, "");
            }
            if let Some(p) = core.delivery.pending.remove(&seq) {
                if let Some(store) = core.store.as_mut() {
                    stored(
                        store.update_delivered(p.consumer_seq, seq, dc, p.timestamp_ns),
                        r,
                    );
                }
                core.delivery
                    .move_ack_floor(p.consumer_seq, seq, core.next_seq);
                r.out.touch(r.consumer);
            }
            continue;
        }
        let loaded = r.stream.core.lock().ingest.store.load_msg(seq);
        if let Ok(msg) = loaded {
            return Ok((msg, dc));
        }
        core.delivery.dec_delivery_count(seq);
        if let Some(p) = core.delivery.pending.get(&seq).copied() {
            let seqs = (seq, p.consumer_seq);
            super::acking::terminate(core, r, seqs, dc - 1, DELETED_REASON);
        }
    }
    let max = max_ack_pending(core);
    if max > 0 && core.delivery.pending.len() >= max {
        return Err(Stop::MaxAckPending);
    }
    if let Some((seqs, resume)) = core.delivery.last_per_subject.as_mut() {
        let seq = seqs.pop_front();
        let resume = *resume;
        if seqs.is_empty() {
            core.delivery.last_per_subject = None;
            core.next_seq = resume;
        }
        if let Some(seq) = seq {
            core.next_seq = core.next_seq.max(seq + 1);
            let loaded = r.stream.core.lock().ingest.store.load_msg(seq);
            return loaded.map(|m| (m, 1)).map_err(|_| Stop::Nothing);
        }
    }
    let sc = r.stream.core.lock();
    let store = sc.ingest.store.as_ref();
    match store.load_next_msg(filter, core.next_seq) {
        Ok(msg) => {
            core.next_seq = msg.seq + 1;
            Ok((msg, 1))
        }
        Err(StoreError::Eof | StoreError::NotFound) => {
            // Nothing matches up to the last sequence: the next search starts after it.
            core.next_seq = core.next_seq.max(store.fast_state().last_seq + 1);
            Err(Stop::Nothing)
        }
        Err(_) => {
            // A damaged record: the position stays, the store's scrub takes the record out
            // (reporting it lost), and a later round delivers what follows it.
            r.stream.after_reads(&sc);
            Err(Stop::Nothing)
        }
    }
}

/// Sends one message to the next waiting request; `false` (the message put back) when no
/// request can take it.
fn send_one(core: &mut ConsumerCore, r: &mut Round<'_>, msg: &StoredMsg, dc: u64) -> bool {
    if dc == 1 {
        if let Some((count, _)) = core.delivery.num_pending.as_mut() {
            *count = count.saturating_sub(1);
        }
    }
    let pending = pending_count(core, r);
    let mut ack = String::with_capacity(64);
    let seqs = (dc, msg.seq, core.delivery.dseq);
    reply_subject(
        &mut ack,
        r.ack_v2,
        &r.stream.name,
        r.consumer,
        seqs,
        msg.timestamp_ns,
        pending,
    );
    let (mut headers, payload) = if core.config.headers_only {
        headers_only(msg)
    } else {
        (msg.headers.clone(), msg.payload.clone())
    };
    let size = msg.subject.len() + ack.len() + headers.len() + payload.len();
    let (reply, left_msgs, left_bytes) = if core.config.is_push() {
        (Arc::from(core.config.deliver_subject.as_str()), 1, 0)
    } else if let Some(target) = next_waiting(core, r, size, pending + 1) {
        core.delivery.push.last_active = r.now;
        target
    } else {
        put_back(core, msg.seq, dc);
        return false;
    };
    if core.config.priority_policy == PriorityPolicy::PinnedClient {
        headers = Bytes::from(priority::with_pin_header(&headers, &core.delivery.pin.id));
    }
    let dseq = core.delivery.dseq;
    core.delivery.dseq += 1;
    if let Some(store) = core.store.as_mut() {
        stored(
            store.update_delivered(dseq, msg.seq, dc, msg.timestamp_ns),
            r,
        );
    }
    if core.config.ack_policy == AckPolicy::None {
        core.delivery.ack_floor.consumer = dseq;
        core.delivery.ack_floor.stream = msg.seq;
        if !r.limits {
            r.out.released.push((r.consumer.to_owned(), msg.seq));
        }
    } else {
        let rdc = core.delivery.rdc.get(&msg.seq).copied().unwrap_or(0);
        let wait = timing(core).wait_for(rdc);
        core.delivery.track_pending(msg.seq, dseq, r.now, wait);
    }
    r.out.touch(r.consumer);
    let headers = (!headers.is_empty()).then_some(headers);
    let sent = reply.len() + ack.len() + headers.as_ref().map_or(0, Bytes::len) + payload.len();
    r.out
        .delivery(Arc::clone(&reply), &msg.subject, ack, headers, payload);
    if core.config.is_push() {
        flow_control(core, r, sent);
    }
    if left_msgs <= 0 && left_bytes > 0 {
        let done = pull::status_pending("409 Batch Completed", left_msgs, left_bytes);
        r.out.status(&reply, done);
    }
    true
}

/// Go's `convertToHeadersOnly`: the headers plus `Nats-Msg-Size`, no payload.
fn headers_only(msg: &StoredMsg) -> (Bytes, Bytes) {
    let mut block = Vec::with_capacity(msg.headers.len() + 32);
    match msg.headers.len() {
        n if n > 2 => block.extend_from_slice(msg.headers.get(..n - 2).unwrap_or_default()),
        _ => block.extend_from_slice(b"NATS/1.0\r\n"),
    }
    block.extend_from_slice(format!("Nats-Msg-Size: {}\r\n\r\n", msg.payload.len()).as_bytes());
    (Bytes::from(block), Bytes::new())
}

/// A message no request took goes back: the next one to read again, or a redelivery back
/// on the queue.
fn put_back(core: &mut ConsumerCore, seq: u64, dc: u64) {
    let d = &mut core.delivery;
    if dc == 1 && seq + 1 == core.next_seq {
        core.next_seq = seq;
        if let Some((count, _)) = d.num_pending.as_mut() {
            *count += 1;
        }
    } else if !d.on_redeliver_queue(seq) {
        d.dec_delivery_count(seq);
        d.add_to_redeliver_queue(seq);
    }
}

/// Go's `nextWaiting`: the request the next message of `size` bytes goes to, after
/// dropping those that expired (`408`), can not take it (`409 Message Size Exceeds
/// MaxBytes`), hold another pin (`423`) or whose requester left; requests the priority
/// group holds back are cycled (`npc`: messages left to deliver, this one included).
fn next_waiting(
    core: &mut ConsumerCore,
    r: &mut Round<'_>,
    size: usize,
    npc: u64,
) -> Option<(Arc<str>, i64, i64)> {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let (policy, ttl) = (core.config.priority_policy, core.config.priority_timeout);
    let prioritized = policy == PriorityPolicy::Prioritized;
    let mut cycled = 0;
    loop {
        let d = &mut core.delivery;
        let head = d.waiting.queue.front_mut()?;
        if head.expired(r.now) {
            let text = pull::status_pending("408 Request Timeout", head.n, head.bytes);
            r.out.status(&head.reply, text);
            d.waiting.queue.pop_front();
            continue;
        }
        let counts = (npc, d.pending.len());
        let pinned = match priority::admit(policy, &mut d.pin, ttl, head, counts, r.now) {
            Admit::Serve(pinned) => {
                if pinned {
                    let (group, id) = (d.pin.group.clone(), d.pin.id.clone());
                    r.advise_pin(&group, Some(&id));
                }
                pinned
            }
            Admit::Cycle => {
                d.waiting.cycle();
                cycled += 1;
                if cycled >= d.waiting.len() {
                    return None;
                }
                continue;
            }
            Admit::WrongPin => {
                let text = pull::status_pending("423 Nats-Wrong-Pin-Id", head.n, head.bytes);
                r.out.status(&head.reply, text);
                d.waiting.queue.pop_front();
                continue;
            }
        };
        if head.bytes > 0 {
            if size <= head.bytes {
                head.bytes -= size;
                if head.bytes == 0 {
                    head.n = 1;
                }
            } else {
                let text =
                    pull::status_pending("409 Message Size Exceeds MaxBytes", head.n, head.bytes);
                r.out.status(&head.reply, text);
                if pinned {
                    d.pin.clear();
                }
                d.waiting.queue.pop_front();
                continue;
            }
        }
        if r.listened(&head.reply) {
            return d.waiting.pop(r.now, prioritized);
        }
        d.waiting.queue.pop_front();
    }
}

/// Go's `processWaiting`: answers expired requests (`408 Request Timeout`) and, at the end
/// of the stream (`eos`), `no_wait` ones that are done (`404 No Messages`); drops those
/// whose requester left; sends due heartbeats. Returns the messages still wanted.
pub fn process_waiting(core: &mut ConsumerCore, r: &mut Round<'_>, eos: bool) -> i64 {
    let now = r.now;
    let last = (
        core.delivery.dseq.saturating_sub(1),
        core.next_seq.saturating_sub(1),
    );
    let mut queue = std::mem::take(&mut core.delivery.waiting.queue);
    queue.retain_mut(|w| {
        let expired = w.expired(now);
        if expired {
            r.out.status(
                &w.reply,
                pull::status_pending("408 Request Timeout", w.n, w.bytes),
            );
            return false;
        }
        if eos && w.no_wait && (w.expires_at == 0 || w.delivered > 0) {
            r.out.status(&w.reply, pull::status("404 No Messages"));
            return false;
        }
        if !r.listened(&w.reply) {
            return false;
        }
        if w.heartbeat_at != 0 && now > w.heartbeat_at {
            r.out.status(&w.reply, pull::idle_heartbeat(last.0, last.1));
            w.heartbeat_at = now.saturating_add(w.heartbeat);
        }
        true
    });
    core.delivery.waiting.queue = queue;
    core.delivery.wait_due = core.delivery.waiting.due();
    core.delivery.waiting.wanted()
}

/// Answers every waiting request with `409 Consumer Deleted` (the consumer is going).
pub fn release_waiting(core: &mut ConsumerCore, out: &mut Outbox) {
    for w in core.delivery.waiting.queue.drain(..) {
        out.status(&w.reply, pull::status("409 Consumer Deleted"));
    }
}

/// When this consumer's timer must fire next: its ack wait, a request's expiry or
/// heartbeat, the end of a pause while requests wait (or the deliver subject has
/// interest), a push heartbeat, its inactivity.
pub fn due(core: &ConsumerCore, now: i64) -> Option<i64> {
    let d = &core.delivery;
    let pause = core
        .config
        .pause_until
        .map(|t| t.unix_nanos())
        .filter(|t| *t > now && (!d.waiting.is_empty() || d.push.active));
    let heartbeat = d.push.hb_due.filter(|_| d.push.active);
    let pulled = !core.config.is_push() && !d.waiting.is_empty();
    let resume = d.push.resume_at.filter(|_| d.push.active || pulled);
    [
        d.ack_due,
        d.wait_due,
        pause,
        heartbeat,
        d.push.delete_due,
        resume,
        d.pin.due(),
    ]
    .into_iter()
    .flatten()
    .min()
}
