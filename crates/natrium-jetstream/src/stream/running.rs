//! One stream: its configuration, its store, the capture subscriptions on its subjects, and
//! the ingest task that stores what they catch.
//!
//! Locking: `core` is held while messages are stored and synced and while the API reads the
//! store; nothing else is locked under it except the account's subscription index (taking
//! or dropping the capture subscriptions).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use natrium_conf::options::SyncPolicy;
use natrium_core::account::{Account, SubRef};
use natrium_core::endpoint::{Delivery, Sink, Subscription};
use natrium_core::internal::InternalClient;

use crate::clock::now_ns;
use natrium_store::{DiscardPolicy, MemStore, StoreConfig};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::capture::{IngestQueue, InlineIngest};
use super::ingest::{Ingest, Outcome};
use super::marker_retry::{MarkerHost, MarkerRetries, Placed};
use super::republish::Republisher;
use super::signal::Signal;
use super::transform::InputTransform;
use crate::config::stream::{Discard, PersistMode, Storage};
use crate::config::StreamConfig;
use crate::consumer::Consumer;

/// At most this many captured messages are stored per sync (bounds an ack's wait behind a
/// long batch).
const BATCH_MAX: usize = 4096;
/// A stream that stored nothing for this long gives its record cache back (Go's #4638:
/// memory growing with the number of idle streams).
const IDLE_CACHE_RELEASE: Duration = Duration::from_secs(30);

/// Quiet time after which a file stream writes its index when one is due: never under load,
/// where rebuilding it stalled ingest (2026-11-24: 500,000 async publishes 615k → 526k msg/s
/// and 41 → 106 MB peak RSS with a write every 8 MiB); a crash under load scans what came
/// after the last index instead.
const IDLE_INDEX_WRITE: Duration = Duration::from_secs(1);
/// Bytes the store's scrub checks per step, between which the ingest task looks for work.
const SCRUB_STEP_BYTES: u64 = 4 * 1024 * 1024;

/// A running stream.
pub struct Stream {
    pub name: String,
    pub account: Arc<Account>,
    /// Unix nanoseconds of creation (`created`).
    pub created_ns: i64,
    /// The stream's directory (file storage).
    pub dir: Option<PathBuf>,
    pub(crate) core: Mutex<StreamCore>,
    /// The stream's consumers by name (locked before a consumer's or the stream's `core`).
    pub(crate) consumers: Mutex<BTreeMap<String, Arc<Consumer>>>,
    queue: Arc<IngestQueue>,
    stop: CancellationToken,
    /// When the ingest task's expiry timer fires (Unix ns; `i64::MAX` when not armed): a store
    /// made elsewhere (inline) that expires sooner wakes it so it can re-arm.
    expiry_armed: std::sync::atomic::AtomicI64,
    /// A file stream stored a message inline since its ingest task last did its idle work
    /// (the index write, then the cache release): the first such store wakes the task once,
    /// so that work is armed without a wake-up per message.
    inline_noted: std::sync::atomic::AtomicBool,
    /// Tells the consumer engine that messages were stored (`crate::consumer::engine`).
    pub(crate) signal: Arc<Signal>,
    /// The server's `sync_interval` (consumer state follows it too).
    pub(crate) sync: SyncPolicy,
    /// The domain and system account of the advisories Go copies there.
    pub(crate) events: crate::event::EventScope,
}

/// What `core` guards.
pub struct StreamCore {
    pub config: StreamConfig,
    pub ingest: Ingest,
    client: InternalClient,
    subs: Vec<Arc<Subscription>>,
    /// Acks wait for a sync (the durable default and `sync_interval: always`).
    sync_before_ack: bool,
    /// Reused ack buffer.
    ack: Vec<u8>,
    /// Reused outcome list of a batch (the last batch's, once it is done).
    pub(crate) outcomes: Vec<Outcome>,
    /// The compiled `subject_transform` and `republish` (rebuilt by [`Self::set_config`]).
    transform: InputTransform,
    republish: Republisher,
    /// Atomic batches staged until their commit (`super::batch`).
    batches: super::batch::AtomicBatches,
    /// Fast batches open (`super::batch::fast`).
    fast: super::batch::FastBatches,
    /// Subject delete markers refused, waiting to be tried again (`super::marker_retry`).
    marker_retries: MarkerRetries,
}

impl StreamCore {
    /// Takes a new configuration.
    pub fn set_config(&mut self, config: StreamConfig) {
        self.transform = InputTransform::new(&config);
        self.republish = Republisher::new(&config);
        if !config.allow_batched {
            self.fast.clear();
        }
        self.config = config;
    }

    /// Stores a message taken from a mirror or source with `store`, republishing it as a
    /// publish is (Go stores both through one path); `msg` is what is stored, at `now_ns`.
    pub(crate) fn store_copy(
        &mut self,
        account: &Arc<Account>,
        msg: &Delivery,
        now_ns: i64,
        store: impl FnOnce(&mut Self) -> Outcome,
    ) -> Outcome {
        self.republish.note(0, &*self.ingest.store, msg, now_ns);
        let outcome = store(self);
        let outcomes = std::slice::from_ref(&outcome);
        let name = &self.config.name;
        self.republish
            .send(&mut self.client, account, name, outcomes);
        outcome
    }

    /// When the expiry pass should next run: the store's next expiry, or with markers waiting
    /// for a retry, see [`MarkerRetries::wake`].
    fn next_expiry_wake(&self) -> Option<i64> {
        let next = self.ingest.store.next_expiry();
        if self.marker_retries.is_empty() {
            return next;
        }
        self.marker_retries.wake(next, now_ns())
    }

    /// Gives a file store the schedules as they stand (its schedule index), once its blocks
    /// are synced: a restart then reads the messages after it, not the whole stream.
    fn save_schedules(&mut self) {
        let ingest = &mut self.ingest;
        let store = &mut *ingest.store;
        ingest.scheduler.save_index(&self.config.name, store);
    }

    /// The stream's internal client (direct-get answers made on a requester's task go out
    /// through it, as Go sends them through the stream's send queue).
    pub(crate) fn client(&mut self) -> &mut InternalClient {
        &mut self.client
    }

    /// `msg` with the stream's `subject_transform` applied (sourced messages take it too, as
    /// in Go, where they go through the same path as publishes).
    pub fn transformed<'a>(&mut self, msg: &'a Delivery) -> std::borrow::Cow<'a, Delivery> {
        self.transform.apply(msg)
    }
}

/// How a stream's writes become durable, from the server's sync policy and the stream's
/// `persist_mode`.
pub fn acks_wait_for_sync(config: &StreamConfig, sync: SyncPolicy) -> bool {
    config.storage == Storage::File
        && config.persist_mode == PersistMode::Default
        && !matches!(sync, SyncPolicy::Interval(_))
}

/// The store's limits for a stream's configuration (Go's -1 and 0 are no limit).
pub fn store_config(config: &StreamConfig) -> StoreConfig {
    let limit = |n: i64| (n > 0).then_some(n as u64);
    StoreConfig {
        max_msgs: limit(config.max_msgs),
        max_bytes: limit(config.max_bytes),
        max_age: (config.max_age > 0).then(|| Duration::from_nanos(config.max_age as u64)),
        max_msgs_per_subject: limit(config.max_msgs_per_subject),
        max_msg_size: limit(i64::from(config.max_msg_size)),
        discard: match config.discard {
            Discard::Old => DiscardPolicy::Old,
            Discard::New => DiscardPolicy::New,
        },
        discard_new_per_subject: config.discard_new_per_subject,
    }
}

/// What a new stream starts with.
pub struct StreamParts {
    pub config: StreamConfig,
    pub ingest: Ingest,
    pub client: InternalClient,
    pub account: Arc<Account>,
    pub created_ns: i64,
    pub dir: Option<PathBuf>,
    pub sync: SyncPolicy,
    /// The engine's signal, made first so the store's update callback can hold it.
    pub signal: Arc<Signal>,
    pub queue_msgs: usize,
    pub queue_bytes: usize,
    pub events: crate::event::EventScope,
}

impl Stream {
    /// Starts the stream: subscribes its subjects and spawns its ingest task (and, with
    /// `sync_interval`, its periodic sync).
    pub fn start(parts: StreamParts) -> Arc<Stream> {
        let cid = parts.client.cid();
        let queue = Arc::new(IngestQueue::new(cid, parts.queue_msgs, parts.queue_bytes));
        let sync_before_ack = acks_wait_for_sync(&parts.config, parts.sync);
        let stream = Arc::new(Stream {
            name: parts.config.name.clone(),
            account: parts.account,
            created_ns: parts.created_ns,
            dir: parts.dir,
            core: Mutex::new(StreamCore {
                transform: InputTransform::new(&parts.config),
                republish: Republisher::new(&parts.config),
                config: parts.config,
                ingest: parts.ingest,
                client: parts.client,
                subs: Vec::new(),
                sync_before_ack,
                ack: Vec::new(),
                outcomes: Vec::new(),
                batches: super::batch::AtomicBatches::default(),
                fast: super::batch::FastBatches::default(),
                marker_retries: MarkerRetries::default(),
            }),
            consumers: Mutex::new(BTreeMap::new()),
            queue,
            stop: CancellationToken::new(),
            expiry_armed: std::sync::atomic::AtomicI64::new(i64::MAX),
            inline_noted: std::sync::atomic::AtomicBool::new(false),
            signal: parts.signal,
            sync: parts.sync,
            events: parts.events,
        });
        let weak = Arc::downgrade(&stream);
        stream.queue.set_inline(weak);
        stream.subscribe_subjects();
        tokio::spawn(Arc::clone(&stream).run_ingest());
        if let SyncPolicy::Interval(every) = parts.sync {
            tokio::spawn(Arc::clone(&stream).run_sync(every));
        }
        stream
    }

    /// (Re)subscribes the capture on the configured subjects.
    pub fn subscribe_subjects(&self) {
        let mut core = self.core.lock();
        for sub in core.subs.drain(..) {
            let _ = self.account.unsubscribe(&SubRef(sub));
        }
        let sink: Arc<dyn Sink> = Arc::clone(&self.queue) as Arc<dyn Sink>;
        let subjects = core.config.subjects.clone();
        for (i, subject) in subjects.iter().enumerate() {
            let sid = i as u64 + 1;
            let sub = crate::sink_sub::subscribe(&self.account, &sink, sid, subject, None);
            core.subs.extend(sub);
        }
    }

    /// Stops capturing and stops the tasks; what was queued is stored first.
    pub fn stop(&self) {
        let mut core = self.core.lock();
        for sub in core.subs.drain(..) {
            let _ = self.account.unsubscribe(&SubRef(sub));
        }
        drop(core);
        self.stop.cancel();
    }

    /// The stream is being deleted: its store is closed now and swapped for an empty memory
    /// store, so the tasks' last steps (draining, the index write at stop, a scrub step)
    /// write nothing into the directory being removed.
    pub fn retire_store(&self) {
        let mut core = self.core.lock();
        let empty = Box::new(MemStore::new(StoreConfig::default()));
        drop(std::mem::replace(&mut core.ingest.store, empty));
    }

    async fn run_ingest(self: Arc<Self>) {
        let file_backed = self.dir.is_some();
        let mut cache_held = false;
        let mut index_pending = false;
        if file_backed {
            // Message schedules are rebuilt from the store (a scan) off the async threads.
            let stream = Arc::clone(&self);
            let _ = tokio::task::spawn_blocking(move || stream.until_next_schedule()).await;
        }
        loop {
            let expiry = self.until_next_expiry();
            let schedule = self.until_next_schedule();
            // What a reopen from the index took on trust is checked in idle time, a step at
            // a time (`StreamStore::scrub`); every other branch goes first.
            let scrubbing = file_backed && self.core.lock().ingest.store.wants_scrub();
            let batch_timeout = self.until_batch_timeout();
            tokio::select! {
                biased;
                () = tokio::time::sleep(batch_timeout.unwrap_or_default()), if batch_timeout.is_some() => {
                    self.sweep_batches();
                    continue;
                }
                () = tokio::time::sleep(expiry.unwrap_or_default()), if expiry.is_some() => {
                    if file_backed {
                        let stream = Arc::clone(&self);
                        let _ = tokio::task::spawn_blocking(move || stream.expire()).await;
                    } else {
                        self.expire();
                    }
                    continue;
                }
                () = tokio::time::sleep(schedule.unwrap_or_default()), if schedule.is_some() => {
                    let stream = Arc::clone(&self);
                    let _ = tokio::task::spawn_blocking(move || stream.fire_schedules()).await;
                    continue;
                }
                () = self.queue.wake.notified() => {}
                () = self.stop.cancelled() => {
                    if self.queue.is_empty() {
                        break;
                    }
                }
                () = tokio::time::sleep(IDLE_INDEX_WRITE), if index_pending => {
                    index_pending = false;
                    // The next inline store wakes the task again, to arm this once more.
                    self.inline_noted.store(false, std::sync::atomic::Ordering::Release);
                    let stream = Arc::clone(&self);
                    let _ = tokio::task::spawn_blocking(move || {
                        let mut core = stream.core.lock();
                        core.ingest.store.maintain();
                        core.save_schedules();
                    })
                    .await;
                    continue;
                }
                () = tokio::time::sleep(IDLE_CACHE_RELEASE), if cache_held => {
                    cache_held = false;
                    let stream = Arc::clone(&self);
                    let _ = tokio::task::spawn_blocking(move || {
                        stream.core.lock().ingest.store.release_caches();
                    })
                    .await;
                    continue;
                }
                () = std::future::ready(()), if scrubbing => {
                    let stream = Arc::clone(&self);
                    let _ = tokio::task::spawn_blocking(move || stream.scrub_step()).await;
                    continue;
                }
            }
            cache_held = file_backed;
            index_pending = file_backed;
            if file_backed {
                let stream = Arc::clone(&self);
                let _ = tokio::task::spawn_blocking(move || stream.drain_queue()).await;
            } else {
                self.drain_queue();
            }
        }
        let stream = Arc::clone(&self);
        let _ = tokio::task::spawn_blocking(move || {
            let mut core = stream.core.lock();
            if core.ingest.store.sync().is_ok() {
                core.save_schedules();
            }
            let _ = core.ingest.store.stop();
        })
        .await;
    }

    /// One step of the store's scrub: damage it finds is logged as recovery logs it, and
    /// shows in the stream's state (`lost`) and `/healthz` from then on.
    fn scrub_step(&self) {
        let mut core = self.core.lock();
        match core.ingest.store.scrub(SCRUB_STEP_BYTES) {
            Ok(step) => {
                for damaged in &step.damaged {
                    log_damage(&self.account.name, &self.name, damaged);
                    let client = &mut core.client;
                    crate::event::data_lost(client, &self.account, &self.name, damaged);
                }
                if !step.damaged.is_empty() {
                    // Consumers held at a damaged record move past it now it is gone.
                    self.signal.stored();
                }
            }
            Err(err) => tracing::error!(
                "JetStream failed to check stream '{} > {}': {err}",
                self.account.name,
                self.name
            ),
        }
    }

    /// After reads under `core`: a load that failed its checks left its record to the
    /// store's scrub, which the ingest task runs.
    pub(crate) fn after_reads(&self, core: &StreamCore) {
        if self.dir.is_some() && core.ingest.store.wants_scrub() {
            self.queue.wake.notify_one();
        }
    }

    /// How long until the store has messages to expire (`max_age`, TTLs), if it ever will;
    /// the timer about to be armed is noted in `expiry_armed`.
    fn until_next_expiry(&self) -> Option<Duration> {
        let next = self.core.lock().next_expiry_wake();
        self.expiry_armed.store(
            next.unwrap_or(i64::MAX),
            std::sync::atomic::Ordering::Release,
        );
        Some(Duration::from_nanos(
            next?.saturating_sub(now_ns()).max(0) as u64
        ))
    }

    /// How long until an atomic or fast batch times out, if one is open.
    fn until_batch_timeout(&self) -> Option<Duration> {
        let mut core = self.core.lock();
        // The timer about to be armed covers the batches opened so far.
        let _ = core.batches.take_opened() | core.fast.take_opened();
        let next = [core.batches.next_timeout(), core.fast.next_timeout()]
            .into_iter()
            .flatten()
            .min()?;
        Some(next.saturating_duration_since(std::time::Instant::now()))
    }

    /// Drops the batches idle past their timeout (an advisory for each atomic one).
    fn sweep_batches(&self) {
        let mut core = self.core.lock();
        let core = &mut *core;
        core.fast.sweep(std::time::Instant::now());
        let notify = super::batch::stage::Notify {
            client: &mut core.client,
            account: &self.account,
            events: &self.events,
            batches: &mut core.batches,
            committed: None,
        };
        super::batch::stage::sweep_idle(notify, &core.config.name);
    }

    /// Removes what is due; with delete markers, see [`super::marker_retry`].
    fn expire(&self) {
        let marker_ttl = super::markers::marker_ttl_secs(&self.core.lock().config);
        let interest = marker_ttl.and_then(|_| crate::consumer::retention::interest_filters(self));
        let mut core = self.core.lock();
        let now = now_ns();
        let expired = if let Some(ttl) = marker_ttl {
            let mut host = ExpiryHost {
                stream: self,
                core: &mut core,
                interest: interest.as_deref(),
            };
            super::marker_retry::expire_pass(&mut host, ttl, now)
        } else {
            core.marker_retries.clear();
            core.ingest.store.expire_due(now).map(drop)
        };
        if let Err(err) = expired {
            tracing::error!(
                "JetStream failed to expire messages of stream '{} > {}': {err}",
                self.account.name,
                self.name
            );
        }
    }

    async fn run_sync(self: Arc<Self>, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = self.stop.cancelled() => break,
            }
            let stream = Arc::clone(&self);
            let _ = tokio::task::spawn_blocking(move || {
                let mut core = stream.core.lock();
                if core.ingest.store.sync().is_ok() {
                    core.ingest.store.maintain();
                    core.save_schedules();
                }
            })
            .await;
        }
    }

    /// Stores what is queued, a batch at a time. Each batch is taken with the stream locked,
    /// so a message stored inline never overtakes one taken before it.
    fn drain_queue(&self) {
        let mut batch = Vec::new();
        loop {
            // Taken before the stream's lock: retention locks a consumer, then the stream.
            let interest = crate::consumer::retention::interest_filters(self);
            let mut core = self.core.lock();
            self.queue.take(BATCH_MAX, &mut batch);
            if batch.is_empty() {
                return;
            }
            self.ingest_batch(&mut core, &batch, interest.as_deref());
            drop(core);
            batch.clear();
        }
    }

    /// Stores a batch, syncs once if acks wait for it, then sends every ack. `interest`, on
    /// an interest stream, is its consumers' filters: a message none matches is not kept.
    pub(crate) fn ingest_batch(
        &self,
        core: &mut StreamCore,
        batch: &[Delivery],
        interest: Option<&[natrium_store::Filter]>,
    ) {
        let mut outcomes = std::mem::take(&mut core.outcomes);
        outcomes.clear();
        let mut stored_any = false;
        for (i, msg) in batch.iter().enumerate() {
            let msg = core.transform.apply(msg);
            let interested =
                interest.is_none_or(|filters| filters.iter().any(|f| f.matches(&msg.subject)));
            let now = now_ns();
            let outcome = if super::batch::fast::is_fast(&msg) {
                if interested {
                    core.republish.note(i, &*core.ingest.store, &msg, now);
                }
                let (ingest, fast) = (&mut core.ingest, &mut core.fast);
                super::batch::fast::ingest(ingest, &core.config, fast, &msg, (now, interested))
            } else if super::batch::atomic_id(msg.headers.as_deref()).is_some() {
                let mut committed = Vec::new();
                let notify = super::batch::stage::Notify {
                    client: &mut core.client,
                    account: &self.account,
                    events: &self.events,
                    batches: &mut core.batches,
                    committed: core.republish.enabled().then_some(&mut committed),
                };
                let outcome =
                    super::batch::ingest(&mut core.ingest, &core.config, notify, &msg, now);
                if !committed.is_empty() {
                    core.republish.note_committed(i, committed, now);
                }
                outcome
            } else {
                if interested {
                    core.republish.note(i, &*core.ingest.store, &msg, now);
                }
                core.ingest.process(&core.config, &msg, now, interested)
            };
            stored_any |= outcome.is_stored();
            outcomes.push(outcome);
        }
        if stored_any && core.sync_before_ack {
            if let Err(err) = core.ingest.store.sync() {
                let refused = super::ingest::store_failed(&err);
                tracing::error!(
                    "JetStream failed to sync stream '{} > {}': {err}",
                    self.account.name,
                    self.name
                );
                for outcome in &mut outcomes {
                    if outcome.is_stored() {
                        *outcome = Outcome::Refused(refused.clone());
                    }
                }
            }
        }
        let stream_name = &core.config.name;
        core.republish
            .send(&mut core.client, &self.account, stream_name, &outcomes);
        for (msg, outcome) in batch.iter().zip(&outcomes) {
            // `no_ack`: Go answers nothing, not even a refusal; a fast batch's flow goes out.
            let fast = matches!(outcome, Outcome::Fast { .. });
            let Some(reply) = msg.reply.as_deref().filter(|_| fast || !core.config.no_ack) else {
                continue;
            };
            let Ok(reply) = std::str::from_utf8(reply) else {
                continue;
            };
            if let Outcome::Fast { replies, .. } = outcome {
                for body in replies {
                    core.client.publish_in(&self.account, reply, None, body);
                }
                continue;
            }
            core.ingest.ack(outcome, &mut core.ack);
            core.client
                .publish_in(&self.account, reply, None, &core.ack);
        }
        if outcomes.iter().any(Outcome::is_stored) {
            // Stored and (when acks wait for it) synced: consumers may deliver it now.
            self.signal.stored();
        }
        core.outcomes = outcomes;
    }

    /// Consumers with a state store (Go's `consumer_count`: not the internal direct ones).
    pub fn public_consumer_count(&self) -> u64 {
        let consumers = self.consumers.lock();
        consumers.values().filter(|c| !c.is_direct()).count() as u64
    }

    /// Messages were stored by another task than the ingest (a mirror's or a source's copy):
    /// consumers may deliver them, and the ingest task looks at expiry and its index.
    pub(crate) fn stored_elsewhere(&self) {
        self.signal.stored();
        self.queue.wake.notify_one();
    }

    /// Messages captured and not yet stored.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

impl InlineIngest for Stream {
    fn try_inline(&self, msg: &Delivery) -> bool {
        let Some(mut core) = self.core.try_lock() else {
            return false;
        };
        // Queued messages go first: they were published earlier. An interest stream reads
        // its consumers' filters before locking itself, so it always queues. A file stream
        // whose acks wait for a sync queues: the sync would hold this task (the ingest task
        // makes it off the async workers, once per batch).
        let file_backed = self.dir.is_some();
        if !self.queue.is_empty()
            || core.config.retention == crate::config::stream::Retention::Interest
            || (file_backed && core.sync_before_ack)
        {
            return false;
        }
        self.ingest_batch(&mut core, std::slice::from_ref(msg), None);
        let armed = self.expiry_armed.load(std::sync::atomic::Ordering::Acquire);
        let arm = core.next_expiry_wake().is_some_and(|next| next < armed)
            || core.ingest.scheduler.take_changed()
            || core.batches.take_opened()
            || core.fast.take_opened()
            || (file_backed
                && !self
                    .inline_noted
                    .swap(true, std::sync::atomic::Ordering::AcqRel));
        drop(core);
        if arm {
            self.queue.wake.notify_one();
        }
        true
    }
}

/// An expiry pass's view of a stream: a marker is stored as a published message is.
struct ExpiryHost<'a> {
    stream: &'a Stream,
    core: &'a mut StreamCore,
    interest: Option<&'a [natrium_store::Filter]>,
}

impl MarkerHost for ExpiryHost<'_> {
    fn store(&mut self) -> &mut dyn natrium_store::StreamStore {
        &mut *self.core.ingest.store
    }

    fn retries(&mut self) -> &mut MarkerRetries {
        &mut self.core.marker_retries
    }

    fn place(&mut self, marker: &Delivery) -> Placed {
        let batch = std::slice::from_ref(marker);
        self.stream.ingest_batch(self.core, batch, self.interest);
        match self.core.outcomes.first() {
            Some(Outcome::Refused(_)) => Placed::Refused,
            _ => Placed::Stored,
        }
    }
}

/// The error line of one damaged file: recovery's, and the scrub's after a reopen from the
/// index.
pub(crate) fn log_damage(account: &str, stream: &str, damaged: &natrium_store::DamagedFile) {
    tracing::error!(
        "JetStream stream '{account} > {stream}' lost data in {}: sequences {:?}",
        damaged.file,
        damaged.lost
    );
}
