//! A stream's consumer engine: one task per stream serving all its consumers' pull requests
//! (`$JS.API.CONSUMER.MSG.NEXT.<stream>.*`), acks (`$JS.ACK.<stream>.…`, both forms) and
//! timers, woken by the stream when it stored messages a waiting request may take.
//!
//! Overflow rule: never drop. Requests and acks go into an [`IngestQueue`]; past
//! [`QUEUE_MSGS_MAX`] messages or [`QUEUE_BYTES_MAX`] bytes the sender is stalled until the
//! task catches up (an ack is never lost; Go's queues for them are unbounded).
//!
//! Timers are cheap when idle: the task holds one ordered set of (due time, consumer) and
//! sleeps until its first entry; a consumer is entered only when something falls due (an
//! ack wait, a request's expiry or heartbeat, the end of a pause while requests wait), so a
//! stream with thousands of idle consumers sleeps without waking.
//!
//! Each round works under the consumer locks, then writes the state of every consumer it
//! changed (one write each, not synced: a restart after the process dies finds it), removes
//! what interest or work-queue retention released, and only then publishes what the round
//! produced: a delivered message or an answered double ack is never ahead of the state that
//! records it. The states written are synced [`CONSUMER_SYNC_INTERVAL`] later (or on the
//! server's `sync_interval`; at once with `sync_interval: always`), so a power loss takes
//! back at most that much: deliveries since are redelivered, never lost.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use natrium_conf::options::SyncPolicy;
use natrium_core::account::{Account, InterestListener, SubRef};
use natrium_core::deliver::Message;
use natrium_core::endpoint::{Delivery, Sink, Subscription};
use natrium_core::internal::InternalClient;
use natrium_core::Server;
use nats_subject::InterestChange;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::acking::{on_ack, on_removed, on_timer};
use super::deliver::{deliver, due, on_request, release_waiting, Round};
use super::outbox::{Outbox, Outgoing};
use super::pushing;
use super::running::{Consumer, ConsumerCore};
use crate::clock::now_ns;
use crate::config::stream::Retention;
use crate::stream::capture::IngestQueue;
use crate::stream::Stream;

/// Requests and acks queued per stream before senders are stalled.
pub const QUEUE_MSGS_MAX: usize = 8192;
pub const QUEUE_BYTES_MAX: usize = 8 * 1024 * 1024;
/// Requests and acks handled per round (bounds one blocking section).
const BATCH_MAX: usize = 1024;
/// How long a written consumer state waits for its sync by default: a sync costs two disk
/// flushes, which per round made a fetch-and-ack loop wait on the disk for every batch.
pub const CONSUMER_SYNC_INTERVAL: Duration = Duration::from_secs(1);

const SID_NEXT: u64 = 1;
const SID_ACK: u64 = 2;
const SID_ACK_V2: u64 = 3;
const SID_FC: u64 = 4;
const SID_FC_V2: u64 = 5;

/// The engine of one stream.
pub struct Engine {
    stream: Arc<Stream>,
    queue: Arc<IngestQueue>,
    subs: Mutex<Vec<Arc<Subscription>>>,
    /// Messages to send on the next round (answers to requests of a deleted consumer).
    farewells: Mutex<Vec<Outgoing>>,
    /// Consumers to look at on the next round (recovered, paused or resumed, updated).
    look: Mutex<Vec<String>>,
    stop: CancellationToken,
    domain: String,
    /// The server's `max_payload`: a rate limit's burst when nothing smaller applies.
    max_payload: i64,
    /// `<domain>.<account hash>` when the `js_ack_fc_v2` feature flag asks for Go's v2 ack
    /// and flow-control subjects (`$JS.ACK.<domain>.<hash>.<stream>…`).
    ack_v2: Option<String>,
    /// The account's subscriptions changed: push consumers look at their interest again.
    interest: AtomicBool,
    /// The stream has push consumers (only then do subscription changes wake the task).
    has_push: AtomicBool,
    /// The interest listener and the accounts it listens to: the stream's, and those importing
    /// its streams (a deliver subject may be consumed there; the importers at start).
    listener: Mutex<Option<Heard>>,
    /// A round is running (it took, or may take, queued requests and acks).
    busy: AtomicBool,
}

/// A listener and the accounts it was added to.
type Heard = (Arc<dyn InterestListener>, Vec<Arc<Account>>);

/// Hears of interest changes in the stream's account (called on the subscribing task: it
/// only sets a flag and wakes the engine).
struct Watch(Weak<Engine>);

impl InterestListener for Watch {
    fn interest_changed(&self, _: &str, _: &[u8], _: Option<&[u8]>, _: InterestChange) {
        if let Some(engine) = self.0.upgrade() {
            if engine.has_push.load(Ordering::SeqCst) {
                engine.interest.store(true, Ordering::Release);
                engine.stream.signal.notify.notify_one();
            }
        }
    }
}

/// What the task owns between rounds.
struct Worker {
    client: InternalClient,
    timers: BTreeSet<(i64, String)>,
    /// Consumers with waiting requests.
    active: BTreeSet<String>,
    batch: Vec<Delivery>,
    /// Consumers whose state was written but not synced, and when the sync is due.
    unsynced: BTreeSet<String>,
    sync_due: Option<tokio::time::Instant>,
}

impl Engine {
    /// Subscribes the stream's request and ack subjects and starts the task.
    pub fn start(server: &Server, domain: &str, stream: &Arc<Stream>) -> Arc<Engine> {
        let (client, _inbox) = InternalClient::start(server, Arc::clone(&stream.account));
        let queue = Arc::new(IngestQueue::new(
            client.cid(),
            QUEUE_MSGS_MAX,
            QUEUE_BYTES_MAX,
        ));
        let engine = Arc::new(Engine {
            stream: Arc::clone(stream),
            queue,
            subs: Mutex::new(Vec::new()),
            farewells: Mutex::new(Vec::new()),
            look: Mutex::new(Vec::new()),
            stop: CancellationToken::new(),
            domain: domain.to_owned(),
            max_payload: server.config().max_payload as i64,
            ack_v2: ack_v2_prefix(server, domain, &stream.account.name),
            interest: AtomicBool::new(false),
            has_push: AtomicBool::new(false),
            listener: Mutex::new(None),
            busy: AtomicBool::new(false),
        });
        engine.subscribe();
        let listener: Arc<dyn InterestListener> = Arc::new(Watch(Arc::downgrade(&engine)));
        let mut heard = crate::event::stream_importers(&stream.account);
        heard.push(Arc::clone(&stream.account));
        for account in &heard {
            account.add_interest_listener(Arc::clone(&listener));
        }
        *engine.listener.lock() = Some((listener, heard));
        let worker = Worker {
            client,
            timers: BTreeSet::new(),
            active: BTreeSet::new(),
            batch: Vec::new(),
            unsynced: BTreeSet::new(),
            sync_due: None,
        };
        tokio::spawn(Arc::clone(&engine).run(worker));
        engine
    }

    fn subscribe(&self) {
        let name = &self.stream.name;
        let sink: Arc<dyn Sink> = Arc::clone(&self.queue) as Arc<dyn Sink>;
        let subjects = [
            (SID_NEXT, format!("$JS.API.CONSUMER.MSG.NEXT.{name}.*")),
            (SID_ACK, format!("$JS.ACK.{name}.*.*.*.*.*.*")),
            (SID_ACK_V2, format!("$JS.ACK.*.*.{name}.*.*.*.*.*.>")),
            (SID_FC, format!("$JS.FC.{name}.*.*")),
            (SID_FC_V2, format!("$JS.FC.*.*.{name}.*.*")),
        ];
        let mut subs = self.subs.lock();
        for (sid, subject) in subjects {
            let account = &self.stream.account;
            subs.extend(crate::sink_sub::subscribe(
                account, &sink, sid, &subject, None,
            ));
        }
    }

    /// A reload changed the accounts' links: the listener is added to accounts importing the
    /// stream's streams now (and removed from those that no longer do), and push consumers
    /// look at their interest again.
    pub fn refresh_importers(&self) {
        let mut guard = self.listener.lock();
        let Some((listener, heard)) = guard.as_mut() else {
            return;
        };
        let mut now = crate::event::stream_importers(&self.stream.account);
        now.push(Arc::clone(&self.stream.account));
        for account in &now {
            if !heard.iter().any(|a| Arc::ptr_eq(a, account)) {
                account.add_interest_listener(Arc::clone(listener));
            }
        }
        for account in heard.iter() {
            if !now.iter().any(|a| Arc::ptr_eq(a, account)) {
                account.remove_interest_listener(listener);
            }
        }
        *heard = now;
        drop(guard);
        if self.has_push.load(Ordering::SeqCst) {
            self.interest.store(true, Ordering::Release);
            self.stream.signal.notify.notify_one();
        }
    }

    /// Unsubscribes and ends the task once what is queued was handled.
    pub fn stop(&self) {
        if let Some((listener, heard)) = self.listener.lock().take() {
            for account in heard {
                account.remove_interest_listener(&listener);
            }
        }
        for sub in self.subs.lock().drain(..) {
            let _ = self.stream.account.unsubscribe(&SubRef(sub));
        }
        self.stop.cancel();
    }

    /// The server is shutting down: every waiting pull request is answered `409 Server
    /// Shutdown` with what it still wanted, as Go does, through `client` and now, while the
    /// requesters' connections are still open (a client re-asks after it reconnects).
    pub fn server_shutdown(&self, client: &mut InternalClient) {
        let consumers: Vec<_> = self.stream.consumers.lock().values().cloned().collect();
        for consumer in consumers {
            let waiting: Vec<_> = consumer
                .core
                .lock()
                .delivery
                .waiting
                .queue
                .drain(..)
                .collect();
            for w in waiting {
                let headers = super::pull::status_pending("409 Server Shutdown", w.n, w.bytes);
                let msg = Message {
                    subject: w.reply.as_bytes(),
                    reply: None,
                    headers: Some(&headers),
                    payload: &[],
                };
                client.deliver_routed(&self.stream.account, w.reply.as_bytes(), &msg);
            }
        }
    }

    /// A deleted consumer's waiting requests are answered `409 Consumer Deleted`.
    pub fn farewell(&self, consumer: &Consumer) {
        let mut out = Outbox::default();
        release_waiting(&mut consumer.core.lock(), &mut out);
        if !out.msgs.is_empty() {
            self.farewells.lock().extend(out.msgs);
            self.stream.signal.notify.notify_one();
        }
    }

    /// Asks the next round to look at `name` (its timers, its waiting requests).
    pub fn look_at(&self, name: &str) {
        self.look.lock().push(name.to_owned());
        self.stream.signal.notify.notify_one();
    }

    /// Waits (at most `max`) until what is queued now was handled: an ack sent before a
    /// consumer info or reset on the same connection is reflected in it.
    pub fn settle(&self, max: Duration) {
        let deadline = std::time::Instant::now() + max;
        while !self.queue.is_empty() || self.busy.load(Ordering::SeqCst) {
            if std::time::Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    async fn run(self: Arc<Self>, mut worker: Worker) {
        let file_backed = self.stream.dir.is_some();
        loop {
            let first_due = worker.timers.first().map(|(t, _)| *t);
            let sleep = first_due.map_or(Duration::ZERO, |t| {
                Duration::from_nanos(u64::try_from(t.saturating_sub(now_ns())).unwrap_or(0))
            });
            let sync_due = worker.sync_due;
            tokio::select! {
                () = self.queue.wake.notified() => {}
                () = self.stream.signal.notify.notified() => {}
                () = tokio::time::sleep(sleep), if first_due.is_some() => {}
                () = tokio::time::sleep_until(sync_due.unwrap_or_else(tokio::time::Instant::now)),
                    if sync_due.is_some() =>
                {
                    match self.off_thread(worker, Engine::sync_written).await {
                        Some(back) => worker = back,
                        None => return,
                    }
                    continue;
                }
                () = self.stop.cancelled() => {
                    self.round(&mut worker);
                    break;
                }
            }
            if file_backed {
                // Store reads and state writes may wait on the disk: off the async workers.
                match self.off_thread(worker, Engine::round).await {
                    Some(back) => worker = back,
                    None => return,
                }
            } else {
                self.round(&mut worker);
            }
        }
    }

    /// Runs `step` on the blocking pool with the worker, and hands the worker back (`None`
    /// if the pool is gone: the runtime is shutting down).
    async fn off_thread(
        self: &Arc<Self>,
        mut worker: Worker,
        step: fn(&Engine, &mut Worker),
    ) -> Option<Worker> {
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            step(&me, &mut worker);
            worker
        })
        .await
        .ok()
    }

    /// One round: queued requests and acks, deliveries of newly stored messages, due timers;
    /// then state stored, retention applied, and everything published.
    fn round(&self, w: &mut Worker) {
        self.busy.store(true, Ordering::SeqCst);
        let now = now_ns();
        let mut out = Outbox::default();
        out.msgs.append(&mut self.farewells.lock());
        let limits = self.stream.core.lock().config.retention == Retention::Limits;
        let mut step = Step {
            engine: self,
            w,
            out: &mut out,
            now,
            limits,
            emptied: false,
        };
        step.inbound();
        step.removed();
        step.looked_at();
        if self.interest.swap(false, Ordering::AcqRel) {
            step.interest();
        }
        if self.stream.signal.take_stored() {
            let active: Vec<String> = step.w.active.iter().cloned().collect();
            for name in active {
                step.with_consumer(&name, deliver);
            }
        }
        step.timers();
        if step.emptied {
            self.track_removals();
        }
        self.finish(w, out);
        self.busy.store(false, Ordering::SeqCst);
        if !self.queue.is_empty() {
            self.queue.wake.notify_one();
        }
    }

    /// Writes the state of the consumers changed, releases acknowledged messages, publishes.
    fn finish(&self, w: &mut Worker, mut out: Outbox) {
        let sync_now = matches!(self.stream.sync, SyncPolicy::Always);
        for name in &out.touched {
            let written = self.store_state(name, sync_now);
            if written && !sync_now && self.stream.dir.is_some() {
                w.unsynced.insert(name.clone());
                let every = match self.stream.sync {
                    SyncPolicy::Interval(every) => every,
                    _ => CONSUMER_SYNC_INTERVAL,
                };
                w.sync_due
                    .get_or_insert_with(|| tokio::time::Instant::now() + every);
            }
        }
        if !out.again.is_empty() {
            self.look.lock().append(&mut out.again);
            self.stream.signal.notify.notify_one();
        }
        for name in std::mem::take(&mut out.doomed) {
            self.remove_inactive(w, &name);
        }
        let mut seqs: Vec<u64> = out.released.drain(..).map(|(_, s)| s).collect();
        super::retention::release(&self.stream, &mut seqs);
        let account = &self.stream.account;
        for m in out.msgs.drain(..) {
            let msg = Message {
                subject: &m.subject,
                reply: m.reply.as_deref().map(str::as_bytes),
                headers: m.headers.as_deref(),
                payload: &m.payload,
            };
            w.client.deliver_routed(
                account,
                m.route.as_deref().map_or(&m.subject[..], str::as_bytes),
                &msg,
            );
        }
    }
}

impl Engine {
    /// Writes (or syncs) one consumer's state; whether it has a store (a failed write is
    /// tried again by the next sync).
    fn store_state(&self, name: &str, sync: bool) -> bool {
        let consumer = self.stream.consumers.lock().get(name).cloned();
        let Some(consumer) = consumer else {
            return false;
        };
        let mut core = consumer.core.lock();
        let Some(store) = core.store.as_mut() else {
            return false;
        };
        let stored = if sync { store.sync() } else { store.write() };
        if let Err(err) = &stored {
            tracing::warn!(
                "JetStream consumer '{} > {} > {name}' failed to write its state: {err}",
                self.stream.account.name,
                self.stream.name
            );
        }
        true
    }

    /// Removals are recorded for the engine only while some consumer holds unacknowledged
    /// messages: a consumer left with pending messages turns recording on as the round
    /// leaves it; when one is emptied, every consumer is asked (not every round: with
    /// thousands of consumers that was a lock each per round).
    fn track_removals(&self) {
        let consumers: Vec<_> = self.stream.consumers.lock().values().cloned().collect();
        let pending = consumers
            .iter()
            .any(|c| !c.core.lock().delivery.pending.is_empty());
        self.stream.signal.set_tracking(pending);
    }

    /// Syncs every state written since the last sync.
    fn sync_written(&self, w: &mut Worker) {
        w.sync_due = None;
        for name in std::mem::take(&mut w.unsynced) {
            self.store_state(&name, true);
        }
    }

    /// Deletes a consumer inactive past its threshold, with Go's deleted advisory.
    fn remove_inactive(&self, w: &mut Worker, name: &str) {
        let Ok(consumer) = super::lifecycle::delete(&self.stream, name) else {
            return;
        };
        self.farewell(&consumer);
        w.active.remove(name);
        let event = crate::advisory::ConsumerEvent::Deleted {
            stream: self.stream.name.clone(),
            consumer: name.to_owned(),
        };
        crate::advisory::consumer_event(&mut w.client, &self.stream.account, &event, &self.domain);
    }
}

/// The work of a round.
struct Step<'a> {
    engine: &'a Engine,
    w: &'a mut Worker,
    out: &'a mut Outbox,
    now: i64,
    limits: bool,
    /// A consumer's last pending message went this round: whether any consumer still has
    /// one is asked at the round's end.
    emptied: bool,
}

/// The `<domain>.<account hash>` of Go's v2 ack and flow-control subjects, when the server's
/// `js_ack_fc_v2` feature flag is on (`_` stands for no domain, as in Go).
fn ack_v2_prefix(server: &Server, domain: &str, account: &str) -> Option<String> {
    let on = server.config().feature_flags.get("js_ack_fc_v2").copied() == Some(true);
    let domain = if domain.is_empty() { "_" } else { domain };
    on.then(|| {
        format!(
            "{domain}.{}",
            crate::stream::sourcing::names::go_hash(account)
        )
    })
}

impl Step<'_> {
    /// Runs `f` on consumer `name` locked, then notes whether it has requests waiting and
    /// when its timer is due.
    fn with_consumer(&mut self, name: &str, f: impl FnOnce(&mut ConsumerCore, &mut Round<'_>)) {
        let stream = &self.engine.stream;
        let Some(consumer) = stream.consumers.lock().get(name).cloned() else {
            self.w.active.remove(name);
            return;
        };
        let mut core = consumer.core.lock();
        let mut round = Round {
            stream,
            consumer: name,
            domain: &self.engine.domain,
            max_payload: self.engine.max_payload,
            ack_v2: self.engine.ack_v2.as_deref(),
            limits: self.limits,
            now: self.now,
            out: self.out,
        };
        if core.config.is_push() {
            // Before `f` looks at the deliver subject's interest: a subscription made after
            // that look must find the flag set, or its change would go unheard.
            self.engine.has_push.store(true, Ordering::SeqCst);
        }
        let had_pending = !core.delivery.pending.is_empty();
        f(&mut core, &mut round);
        if !core.delivery.pending.is_empty() {
            stream.signal.set_tracking(true);
        } else if had_pending {
            self.emptied = true;
        }
        let push_ready = core.config.is_push() && core.delivery.push.active;
        if core.delivery.waiting.is_empty() && !push_ready {
            self.w.active.remove(name);
        } else if !self.w.active.contains(name) {
            self.w.active.insert(name.to_owned());
        }
        stream.signal.set_waiting(self.w.active.len());
        if let Some(due) = due(&core, self.now) {
            if core.delivery.armed.is_none_or(|armed| armed > due) {
                core.delivery.armed = Some(due);
                self.w.timers.insert((due, name.to_owned()));
            }
        }
    }

    /// Messages that left the stream one by one: consumers holding them unacknowledged let
    /// them go now (Go's `decStreamPending`), not at their next ack-wait check.
    fn removed(&mut self) {
        let Some(removed) = self.engine.stream.signal.take_removed() else {
            return;
        };
        for name in self.consumer_names() {
            self.with_consumer(&name, |core, r| on_removed(core, r, &removed));
        }
    }

    /// The queued requests and acks, in order.
    fn inbound(&mut self) {
        let mut batch = std::mem::take(&mut self.w.batch);
        self.engine.queue.take(BATCH_MAX, &mut batch);
        for msg in batch.drain(..) {
            let reply = msg
                .reply
                .as_deref()
                .and_then(|r| std::str::from_utf8(r).ok())
                .filter(|r| !r.is_empty());
            let Ok(subject) = std::str::from_utf8(&msg.subject) else {
                continue;
            };
            if msg.sid == SID_NEXT {
                let Some(reply) = reply else {
                    continue;
                };
                let name = subject.rsplit('.').next().unwrap_or_default();
                if !self.engine.stream.consumers.lock().contains_key(name) {
                    // Go subscribes each consumer on its own: a request for one that does not
                    // exist finds no subscriber, and the requester hears "no responders".
                    self.out.status(reply, super::pull::status("503"));
                    continue;
                }
                self.with_consumer(name, |core, r| on_request(core, r, reply, &msg.payload));
            } else if msg.sid == SID_FC || msg.sid == SID_FC_V2 {
                let at = if msg.sid == SID_FC { 3 } else { 5 };
                let name = subject.split('.').nth(at).unwrap_or_default();
                self.with_consumer(name, |core, r| {
                    pushing::on_flow_control(core, r, subject, msg.headers.as_deref());
                });
            } else if let Some((_, name)) = super::ack::route(subject.as_bytes()) {
                self.with_consumer(name, |core, r| {
                    on_ack(core, r, subject, reply, &msg.payload);
                });
            }
        }
        self.w.batch = batch;
    }

    fn looked_at(&mut self) {
        let names: Vec<String> = std::mem::take(&mut *self.engine.look.lock());
        for name in names {
            self.with_consumer(&name, |core, r| {
                core.delivery.armed = None;
                pushing::looked(core, r);
                on_timer(core, r);
                if pushing::tick(core, r) {
                    r.out.doomed.push(r.consumer.to_owned());
                }
            });
        }
    }

    /// The stream's consumers, by name (a copy: each is then locked alone).
    fn consumer_names(&self) -> Vec<String> {
        self.engine
            .stream
            .consumers
            .lock()
            .keys()
            .cloned()
            .collect()
    }

    /// The account's subscriptions changed: every push consumer checks its interest.
    fn interest(&mut self) {
        for name in self.consumer_names() {
            self.with_consumer(&name, pushing::interest_changed);
        }
    }

    /// The consumers whose timer fell due.
    fn timers(&mut self) {
        let mut due = VecDeque::new();
        while let Some((t, _)) = self.w.timers.first() {
            if *t > self.now {
                break;
            }
            if let Some((_, name)) = self.w.timers.pop_first() {
                due.push_back(name);
            }
        }
        for name in due {
            self.with_consumer(&name, |core, r| {
                core.delivery.armed = None;
                on_timer(core, r);
                if pushing::tick(core, r) {
                    r.out.doomed.push(r.consumer.to_owned());
                }
            });
        }
    }
}
