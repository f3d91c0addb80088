//! One account's JetStream: its streams by name, created, recovered and deleted here.
//!
//! On disk: `<store_dir>/jetstream/<account>/streams/<stream>/` holds the stream's
//! `meta.dat` (its configuration and creation time as JSON, written by the store's atomic
//! rule) and the file store's `msgs/`. Memory streams keep nothing on disk, as in Go. A
//! restore builds its stream under `<account>/__snapshots__/` and moves it into `streams/`
//! once complete; what is left there at start-up is removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use natrium_auth::account::JsAccountLimits;
use natrium_core::account::Account;
use natrium_core::internal::InternalClient;
use natrium_store::filestore::envelope::Kind;
use natrium_store::filestore::meta;
use natrium_store::{FileStore, FileStoreOptions, MemStore, StreamState, StreamStore};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::clock::now_ns;
use crate::config::stream::{Compression, Retention, Storage};
use crate::config::StreamConfig;
use crate::consumer::engine::Engine;
use crate::direct::DirectGet;
use crate::errors::{table, ApiError};
use crate::resources::{self, Budget, Quota, Usage};
use crate::service::JetStream;
use crate::stream::capture::{QUEUE_BYTES_DEFAULT, QUEUE_MSGS_DEFAULT};
use crate::stream::ingest::{store_failed, Ingest};
use crate::stream::running::{store_config, Stream, StreamParts};
use crate::stream::signal::Signal;
use crate::stream::sourcing::origin::MirrorDirect;
use crate::stream::sourcing::Sourcing;

/// The account's directory of restores in progress (Go's name).
const STAGING_DIR: &str = "__snapshots__";

/// A stream's `meta.dat` body.
#[derive(Serialize, Deserialize)]
struct StreamMeta {
    config: StreamConfig,
    created_ns: i64,
}

/// JetStream in one account.
pub struct JsAccount {
    pub account: Arc<Account>,
    /// The account's JetStream limits (`-1` unlimited); a reload may change them.
    limits: Mutex<JsAccountLimits>,
    dir: PathBuf,
    streams: Mutex<BTreeMap<String, Arc<Stream>>>,
    /// Bytes the account's streams store.
    pub(crate) usage: Arc<Usage>,
    /// API requests this account made, and those answered with an error.
    pub api_total: AtomicU64,
    pub api_errors: AtomicU64,
    /// Each stream's direct-get service, by stream name (locked after `streams`, never
    /// while holding a stream's `core`).
    direct: Mutex<BTreeMap<String, Arc<DirectGet>>>,
    /// Each stream's consumer engine, by stream name (locked like `direct`).
    engines: Mutex<BTreeMap<String, Arc<Engine>>>,
    /// The mirror or sources of each stream that has them, by stream name (locked like
    /// `direct`).
    sourcing: Mutex<BTreeMap<String, Arc<Sourcing>>>,
    /// Stored streams this server does not run (`crate::offline`).
    pub(crate) offline: crate::offline::OfflineStreams,
}

impl JsAccount {
    pub fn new(account: Arc<Account>, dir: PathBuf, limits: JsAccountLimits) -> Self {
        let usage = Arc::new(Usage::default());
        usage.set_limit(Storage::Memory, limits.max_memory);
        usage.set_limit(Storage::File, limits.max_store);
        Self {
            account,
            limits: Mutex::new(limits),
            dir,
            streams: Mutex::new(BTreeMap::new()),
            usage,
            api_total: AtomicU64::new(0),
            api_errors: AtomicU64::new(0),
            direct: Mutex::new(BTreeMap::new()),
            engines: Mutex::new(BTreeMap::new()),
            sourcing: Mutex::new(BTreeMap::new()),
            offline: crate::offline::OfflineStreams::default(),
        }
    }

    /// The account's JetStream limits (`-1` unlimited).
    pub fn limits(&self) -> JsAccountLimits {
        *self.limits.lock()
    }

    /// Takes the limits a reload configured: later checks and the publishes of running
    /// streams see them at once.
    pub(crate) fn set_limits(&self, limits: JsAccountLimits) {
        self.usage.set_limit(Storage::Memory, limits.max_memory);
        self.usage.set_limit(Storage::File, limits.max_store);
        *self.limits.lock() = limits;
    }

    pub(crate) fn count_api(&self, error: bool) {
        self.api_total.fetch_add(1, Ordering::Relaxed);
        if error {
            self.api_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The account's JetStream directory (`<store_dir>/<account>`).
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    pub fn name(&self) -> &str {
        &self.account.name
    }

    fn stream_dir(&self, name: &str) -> PathBuf {
        self.dir.join("streams").join(name)
    }

    pub fn stream(&self, name: &str) -> Option<Arc<Stream>> {
        self.streams.lock().get(name).cloned()
    }

    /// Every stream, by name.
    pub fn streams(&self) -> Vec<Arc<Stream>> {
        self.streams.lock().values().cloned().collect()
    }

    /// The publish limits of a stream of `storage` in this account.
    fn quota(&self, js: &JetStream, storage: Storage) -> Quota {
        Quota::new(
            storage,
            Arc::from(self.name()),
            Arc::clone(&self.usage),
            Arc::clone(&js.usage),
        )
    }

    /// What the account's streams reserve with `max_bytes`, memory then file, the stream
    /// named `except` left out (`""` leaves none out).
    pub fn reserved(&self, except: &str) -> (i64, i64) {
        let (mut memory, mut file) = (0i64, 0i64);
        for stream in self.streams() {
            if stream.name == except {
                continue;
            }
            let core = stream.core.lock();
            let bytes = resources::reservation(core.config.max_bytes);
            match core.config.storage {
                Storage::Memory => memory = memory.saturating_add(bytes),
                Storage::File => file = file.saturating_add(bytes),
            }
        }
        (memory, file)
    }

    /// The account's and the server's limits and reservations for `cfg`'s storage, the
    /// account's other streams only (a stream of the same name is the one being replaced).
    fn budget(&self, js: &JetStream, cfg: &StreamConfig) -> Budget {
        let (memory, file) = self.reserved(&cfg.name);
        let limits = self.limits();
        let (account_limit, account_reserved) = match cfg.storage {
            Storage::Memory => (limits.max_memory, memory),
            Storage::File => (limits.max_store, file),
        };
        Budget {
            account_limit,
            account_reserved,
            server_limit: js.limit(cfg.storage),
            server_reserved: js.reserved.get(cfg.storage),
        }
    }

    /// Go's account checks of a create before the config itself is checked: the number of
    /// streams (one of the same name does not count), `max_consumers`, then the reservation
    /// of the storage the request named (none when it named none, as Go's check of the config
    /// as sent matches neither storage).
    ///
    /// # Errors
    /// 10027, 10026, 10028 or 10047.
    pub fn check_create_limits(
        &self,
        js: &JetStream,
        cfg: &StreamConfig,
        storage_sent: bool,
    ) -> Result<(), ApiError> {
        let max = self.limits().max_streams;
        if max > 0 {
            let others = self
                .streams
                .lock()
                .keys()
                .filter(|n| **n != cfg.name)
                .count()
                + self.offline.len();
            if i64::try_from(others).unwrap_or(i64::MAX) >= max {
                return Err(table::MAXIMUM_STREAMS_LIMIT.err());
            }
        }
        if !storage_sent {
            return resources::check_consumers(cfg, &self.limits());
        }
        self.check_stream_limits(js, cfg)
    }

    /// The stream's `max_consumers` and `max_bytes` against the account's and the server's
    /// limits and what is reserved already.
    ///
    /// # Errors
    /// 10026, 10028 or 10047.
    pub fn check_stream_limits(&self, js: &JetStream, cfg: &StreamConfig) -> Result<(), ApiError> {
        resources::check_config(cfg, &self.limits(), &self.budget(js, cfg))
    }

    /// An update's checks: only the growth of `max_bytes` needs room.
    ///
    /// # Errors
    /// 10026, 10028 or 10047.
    pub fn check_update_limits(
        &self,
        js: &JetStream,
        new: &StreamConfig,
        old: &StreamConfig,
    ) -> Result<(), ApiError> {
        resources::check_update(new, old, &self.limits(), &self.budget(js, new))
    }

    /// Creates and starts a stream from a checked configuration whose limits were checked
    /// ([`JsAccount::check_create_limits`], [`JsAccount::check_stream_limits`]).
    pub fn create_stream(
        &self,
        js: &JetStream,
        config: StreamConfig,
    ) -> Result<Arc<Stream>, ApiError> {
        let created_ns = now_ns();
        let dir = (config.storage == Storage::File).then(|| self.stream_dir(&config.name));
        if let Some(dir) = &dir {
            js.io
                .create_dir_all(dir)
                .map_err(|e| table::STREAM_CREATE.with(&[("err", &e)]))?;
            self.save_meta(js, dir, &config, created_ns)?;
        }
        let first_seq = config.first_seq;
        let stream = self.start_stream(js, config, created_ns, dir, None)?;
        if first_seq > 1 {
            // A new stream starting at `first_seq`: everything below it counts as gone.
            let mut core = stream.core.lock();
            let store = &mut core.ingest.store;
            let started = store.compact(first_seq).and_then(|_| store.sync());
            if let Err(err) = started {
                drop(core);
                stream.stop();
                return Err(store_failed(&err));
            }
        }
        self.streams
            .lock()
            .insert(stream.name.clone(), Arc::clone(&stream));
        Ok(stream)
    }

    fn start_stream(
        &self,
        js: &JetStream,
        config: StreamConfig,
        created_ns: i64,
        dir: Option<PathBuf>,
        store: Option<Box<dyn StreamStore>>,
    ) -> Result<Arc<Stream>, ApiError> {
        let store = match store {
            Some(store) => store,
            None => self.open_store(js, &config, dir.as_deref())?,
        };
        let mut store = store;
        let quota = self.quota(js, config.storage);
        let signal = Arc::new(Signal::default());
        let mut count = quota.updates();
        let removals = Arc::clone(&signal);
        store.register_storage_updates(Box::new(move |update| {
            count(update);
            // One message gone (deleted, expired, over a limit): consumers holding it
            // unacknowledged let it go. Purges and compactions are handled by their callers.
            if update.msgs == -1 && update.seq > 0 {
                removals.removed(update.seq);
            }
        }));
        quota.count(i64::try_from(store.fast_state().bytes).unwrap_or(i64::MAX));
        // Go reserves a recovered stream's bytes as a created one's, without checking.
        js.reserved
            .add(config.storage, resources::reservation(config.max_bytes));
        let (client, _inbox) = InternalClient::start(&js.server, Arc::clone(&self.account));
        let opts = &js.settings.options;
        let positive = |n: i64, default: usize| if n > 0 { n as usize } else { default };
        let allow_direct = config.allow_direct;
        let stream = Stream::start(StreamParts {
            ingest: Ingest::new(store, &config, &js.settings.domain, quota),
            config,
            client,
            account: Arc::clone(&self.account),
            created_ns,
            dir,
            sync: opts.sync,
            signal,
            queue_msgs: positive(opts.max_buffered_msgs, QUEUE_MSGS_DEFAULT),
            queue_bytes: positive(opts.max_buffered_size, QUEUE_BYTES_DEFAULT),
            events: crate::event::EventScope {
                domain: js.settings.domain.clone(),
                system: js.server.system_account(),
            },
        });
        let direct = DirectGet::start(js, &stream);
        direct.set_enabled(allow_direct);
        if let Some(old) = self.direct.lock().insert(stream.name.clone(), direct) {
            old.stop();
        }
        let engine = Engine::start(&js.server, &js.settings.domain, &stream);
        if let Some(old) = self.engines.lock().insert(stream.name.clone(), engine) {
            old.stop();
        }
        self.start_sourcing(js, &stream);
        Ok(stream)
    }

    /// The state of the store of a stream Go would start and then stop (for an unsupported
    /// consumer): opened, read and closed again, as it stays offline.
    fn stopped_state(&self, js: &JetStream, cfg: &StreamConfig, dir: &Path) -> StreamState {
        tracing::info!(
            "  Starting restore for stream '{} > {}'",
            self.name(),
            cfg.name
        );
        let began = std::time::Instant::now();
        let store = self.open_store(js, cfg, Some(dir));
        let state = store.map(|store| store.fast_state()).unwrap_or_default();
        self.log_restored(&cfg.name, state.msgs, began);
        state
    }

    /// Go's line for a stream whose store recovered `msgs` messages since `began`.
    fn log_restored(&self, stream: &str, msgs: u64, began: std::time::Instant) {
        tracing::info!(
            "  Restored {} messages for stream '{} > {stream}' in {}",
            comma_count(msgs),
            self.name(),
            // Go rounds this one to the millisecond.
            natrium_gofmt::go_duration(round_to_millis(began.elapsed()))
        );
    }

    /// Opens a stream's store: in memory, or the file store in `dir` (recovering what is
    /// there).
    pub(crate) fn open_store(
        &self,
        js: &JetStream,
        config: &StreamConfig,
        dir: Option<&std::path::Path>,
    ) -> Result<Box<dyn StreamStore>, ApiError> {
        let Some(dir) = dir else {
            return Ok(Box::new(MemStore::new(store_config(config))));
        };
        let options = FileStoreOptions::for_stream(
            (config.max_bytes > 0).then_some(config.max_bytes as u64),
            config.retention == Retention::Limits,
            config.compression == Compression::S2,
        );
        let at_rest = js.at_rest(self.name(), &config.name);
        let mut progress = progress_logger(self.name(), &config.name);
        let store = FileStore::open_at_rest_with_progress(
            Arc::clone(&js.io),
            dir,
            store_config(config),
            options,
            at_rest,
            &mut progress,
        )
        .map_err(|e| store_failed(&e))?;
        report_recovery(self.name(), &config.name, &store);
        Ok(Box::new(store))
    }

    /// Whether `config`'s subjects collide with those of another stream than `except`.
    pub fn subjects_overlap(&self, config: &StreamConfig, except: Option<&str>) -> bool {
        let collide = |theirs: &[String]| {
            config.subjects.iter().any(|mine| {
                theirs
                    .iter()
                    .any(|t| nats_subject::subjects_collide(mine.as_bytes(), t.as_bytes()))
            })
        };
        // An offline stream keeps its subjects, as Go's stand-in does.
        let offline = self
            .offline
            .all()
            .into_iter()
            .any(|o| Some(o.config.name.as_str()) != except && collide(&o.config.subjects));
        offline
            || self.streams().iter().any(|other| {
                if Some(other.name.as_str()) == except {
                    return false;
                }
                let core = other.core.lock();
                collide(&core.config.subjects)
            })
    }

    /// Where restores stage their files until they are complete.
    pub(crate) fn staging_dir(&self) -> PathBuf {
        self.dir.join(STAGING_DIR)
    }

    /// Makes a restored stream one of the account's: refused when the name is taken or the
    /// account is at its stream limit. A memory stream comes with its `store`; a file stream's
    /// files wait, stopped, in `staged` and move to the stream's directory (its `meta.dat`
    /// written first), where the store is reopened from them. It keeps the archive's creation
    /// time when the archive has one.
    pub(crate) fn adopt_restored(
        &self,
        js: &JetStream,
        config: StreamConfig,
        store: Option<Box<dyn StreamStore>>,
        staged: Option<&std::path::Path>,
        created_ns: Option<i64>,
    ) -> Result<Arc<Stream>, ApiError> {
        // Held throughout, so a concurrent restore of the same name waits and is refused.
        let mut streams = self.streams.lock();
        if streams.contains_key(&config.name) {
            return Err(table::STREAM_NAME_EXIST_RESTORE_FAILED.err());
        }
        let max_streams = self.limits().max_streams;
        if max_streams > 0 && streams.len() as i64 >= max_streams {
            return Err(table::MAXIMUM_STREAMS_LIMIT.err());
        }
        let created_ns = created_ns.unwrap_or_else(now_ns);
        let dir = match staged {
            None => None,
            Some(staged) => Some(self.move_staged(js, staged, &config, created_ns)?),
        };
        match self.start_stream(js, config, created_ns, dir.clone(), store) {
            Ok(stream) => {
                streams.insert(stream.name.clone(), Arc::clone(&stream));
                Ok(stream)
            }
            Err(err) => {
                if let Some(dir) = dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
                Err(err)
            }
        }
    }

    /// Writes a restored stream's `meta.dat` into its staged files and moves them to the
    /// stream's directory (replacing any left there by a stream that is not running).
    fn move_staged(
        &self,
        js: &JetStream,
        staged: &std::path::Path,
        config: &StreamConfig,
        created_ns: i64,
    ) -> Result<PathBuf, ApiError> {
        self.save_meta(js, staged, config, created_ns)?;
        let dir = self.stream_dir(&config.name);
        let moved = std::fs::create_dir_all(self.dir.join("streams"))
            .and_then(|()| match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            })
            .and_then(|()| std::fs::rename(staged, &dir));
        moved.map_err(|e| table::STREAM_RESTORE.with(&[("err", &e)]))?;
        Ok(dir)
    }

    /// Applies a checked new configuration to a running stream.
    pub fn update_stream(
        &self,
        js: &JetStream,
        stream: &Arc<Stream>,
        config: StreamConfig,
    ) -> Result<(), ApiError> {
        let allow_direct = config.allow_direct;
        let (origins_changed, mirror_direct) = {
            let old = &stream.core.lock().config;
            let origins_changed = old.mirror != config.mirror || old.sources != config.sources;
            // Go takes the origin's direct gets at once when `mirror_direct` is turned on.
            let on = (config.mirror_direct != old.mirror_direct).then_some(config.mirror_direct);
            (
                origins_changed,
                on.map(|on| {
                    config
                        .mirror
                        .as_ref()
                        .filter(|_| on)
                        .map(|m| m.name.clone())
                }),
            )
        };
        if let Some(dir) = &stream.dir {
            self.save_meta(js, dir, &config, stream.created_ns)?;
        }
        {
            let mut core = stream.core.lock();
            core.ingest
                .store
                .update_config(store_config(&config))
                .map_err(|e| store_failed(&e))?;
            let window = std::time::Duration::from_nanos(config.duplicate_window.max(0) as u64);
            core.ingest.dedup.set_window(window);
            let growth = resources::reservation(config.max_bytes)
                - resources::reservation(core.config.max_bytes);
            js.reserved.add(config.storage, growth);
            core.set_config(config);
        }
        stream.subscribe_subjects();
        if let Some(direct) = self.direct.lock().get(&stream.name) {
            direct.set_enabled(allow_direct);
            if let Some(origin) = mirror_direct {
                direct.set_mirror(origin.as_deref());
            }
        }
        if origins_changed {
            self.start_sourcing(js, stream);
        }
        Ok(())
    }

    /// Starts copying from the stream's mirror or sources (stopping what copied before).
    fn start_sourcing(&self, js: &JetStream, stream: &Arc<Stream>) {
        let direct = self.direct.lock().get(&stream.name).cloned();
        let direct = direct.map(|d| d as Arc<dyn MirrorDirect>);
        let started = Sourcing::start(&js.server, &js.settings.domain, stream, direct);
        let mut all = self.sourcing.lock();
        let old = match &started {
            Some(new) => all.insert(stream.name.clone(), Arc::clone(new)),
            None => all.remove(&stream.name),
        };
        if let Some(old) = old {
            old.stop();
            old.retire(started.as_deref());
        }
    }

    /// The mirror or sources of stream `name`, if it has any.
    pub fn sourcing(&self, name: &str) -> Option<Arc<Sourcing>> {
        self.sourcing.lock().get(name).cloned()
    }

    /// Writes a stream's `meta.dat` (sealed when keys are configured).
    fn save_meta(
        &self,
        js: &JetStream,
        dir: &std::path::Path,
        config: &StreamConfig,
        created_ns: i64,
    ) -> Result<(), ApiError> {
        let body = StreamMeta {
            config: config.clone(),
            created_ns,
        };
        let body = serde_json::to_vec(&body).unwrap_or_default();
        let at_rest = js.at_rest(self.name(), &config.name);
        meta::save(
            js.io.as_ref(),
            dir,
            Kind::StreamMeta,
            at_rest.as_ref(),
            &body,
        )
        .map_err(|e| store_failed(&e))
    }

    /// Stops and removes a stream with everything it stored; its bytes and its reservation
    /// are given back.
    pub fn delete_stream(&self, js: &JetStream, name: &str) -> Result<(), ApiError> {
        let Some(stream) = self.streams.lock().remove(name) else {
            return Err(table::STREAM_NOT_FOUND.err());
        };
        {
            let mut core = stream.core.lock();
            core.ingest.detach_quota();
            let storage = core.config.storage;
            js.reserved
                .add(storage, -resources::reservation(core.config.max_bytes));
        }
        if let Some(direct) = self.direct.lock().remove(name) {
            direct.stop();
        }
        if let Some(sourcing) = self.sourcing.lock().remove(name) {
            sourcing.stop();
            sourcing.delete_consumers();
        }
        if let Some(engine) = self.engines.lock().remove(name) {
            for consumer in stream.consumers.lock().values() {
                engine.farewell(consumer);
            }
            engine.stop();
        }
        crate::consumer::lifecycle::stop_all(&stream);
        stream.stop();
        stream.retire_store();
        if let Some(dir) = &stream.dir {
            if let Err(err) = std::fs::remove_dir_all(dir) {
                if err.kind() != std::io::ErrorKind::NotFound {
                    return Err(table::STREAM_DELETE.with(&[("err", &err)]));
                }
            }
        }
        Ok(())
    }

    /// Opens every stream found under the account's directory.
    pub fn recover(&self, js: &JetStream) {
        // A restore the server stopped in the middle left its files here.
        let _ = std::fs::remove_dir_all(self.staging_dir());
        let streams_dir = self.dir.join("streams");
        // The store's I/O trait lists files; stream directories are listed here.
        for name in crate::dirs::sorted_dirs(&streams_dir) {
            let dir = streams_dir.join(&name);
            let at_rest = js.at_rest(self.name(), &name);
            let meta = match meta::load(js.io.as_ref(), &dir, Kind::StreamMeta, at_rest.as_ref()) {
                Ok(Some((body, rewrite))) => {
                    if rewrite {
                        let _ = meta::save(
                            js.io.as_ref(),
                            &dir,
                            Kind::StreamMeta,
                            at_rest.as_ref(),
                            &body,
                        );
                    }
                    body
                }
                Ok(None) => continue,
                Err(err) => {
                    tracing::warn!(
                        "  Error reading stream metadata for '{} > {name}': {err}",
                        self.name()
                    );
                    continue;
                }
            };
            let Some((config, created_ns)) = crate::offline::runnable(
                (
                    |stream: &str| js.consumer_files(self.name(), stream),
                    |config: &StreamConfig| self.stopped_state(js, config, &dir),
                ),
                (self.name(), &self.offline),
                &meta,
                &dir,
            ) else {
                continue;
            };
            tracing::info!(
                "  Starting restore for stream '{} > {}'",
                self.name(),
                config.name
            );
            let began = std::time::Instant::now();
            match self.start_stream(js, config, created_ns, Some(dir), None) {
                Ok(stream) => {
                    let msgs = stream.core.lock().ingest.store.fast_state().msgs;
                    self.log_restored(&stream.name, msgs, began);
                    self.recover_consumers(js, &stream);
                    self.streams.lock().insert(stream.name.clone(), stream);
                }
                Err(err) => {
                    tracing::warn!("  Error recreating stream {name:?}: {}", err.description);
                }
            }
        }
    }

    /// Recovers a recovered stream's consumers with the account's and server's limits.
    fn recover_consumers(&self, js: &JetStream, stream: &Stream) {
        let config = stream.core.lock().config.clone();
        let limits = js.server_limits();
        let account = self.limits();
        let ctx = crate::consumer::context::ConsumerContext {
            stream: &config,
            server_max_ack_pending: limits.max_ack_pending,
            server_max_request_batch: limits.max_request_batch,
            account,
            pedantic: false,
            recovering: true,
        };
        let files = js.consumer_files(self.name(), &stream.name);
        crate::consumer::lifecycle::recover(&files, self.name(), stream, &ctx);
        crate::consumer::retention::release_acked(stream);
        if let Some(engine) = self.engine(&stream.name) {
            for name in stream.consumers.lock().keys() {
                engine.look_at(name);
            }
        }
    }

    /// The consumer engine of stream `name`.
    /// Every stream's consumer engine.
    pub(crate) fn engines(&self) -> Vec<Arc<Engine>> {
        self.engines.lock().values().cloned().collect()
    }

    pub fn engine(&self, name: &str) -> Option<Arc<Engine>> {
        self.engines.lock().get(name).cloned()
    }

    /// Consumers of every stream of the account.
    pub fn consumer_count(&self) -> usize {
        self.streams()
            .iter()
            .map(|s| s.consumers.lock().len())
            .sum()
    }

    /// The server is shutting down: waiting pull requests of every stream are told so
    /// (`409 Server Shutdown`) through `client`, before the connections close.
    pub fn announce_shutdown(&self, client: &mut InternalClient) {
        let engines: Vec<_> = self.engines.lock().values().cloned().collect();
        for engine in engines {
            engine.server_shutdown(client);
        }
    }

    /// Stops every stream (shutdown): each stores what it captured and syncs.
    /// Gives back to the server what this account's streams reserve and store (JetStream
    /// turned off in the account; its stopped streams keep their files).
    pub(crate) fn release_reservations(&self, js: &JetStream) {
        for stream in self.streams() {
            let core = stream.core.lock();
            js.reserved.add(
                core.config.storage,
                -resources::reservation(core.config.max_bytes),
            );
        }
        for storage in [Storage::Memory, Storage::File] {
            let used = i64::try_from(self.usage.used(storage)).unwrap_or(i64::MAX);
            js.usage.add(storage, -used);
        }
    }

    pub fn stop_all(&self) {
        for direct in self.direct.lock().values() {
            direct.stop();
        }
        for engine in self.engines.lock().values() {
            engine.stop();
        }
        for sourcing in self.sourcing.lock().values() {
            sourcing.stop();
        }
        for stream in self.streams() {
            crate::consumer::lifecycle::stop_all(&stream);
            stream.stop();
        }
    }
}

/// How often a long recovery logs how far it got.
const RECOVERY_PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// A recovery progress callback that logs at most every [`RECOVERY_PROGRESS_EVERY`] (Go logs
/// nothing while a big stream recovers; ours says how far it got).
fn progress_logger<'a>(
    account: &'a str,
    stream: &'a str,
) -> impl FnMut(natrium_store::RecoveryProgress) + 'a {
    let mut last = std::time::Instant::now();
    move |p: natrium_store::RecoveryProgress| {
        if last.elapsed() >= RECOVERY_PROGRESS_EVERY {
            last = std::time::Instant::now();
            tracing::info!(
                "  Restoring stream '{account} > {stream}': {} of {} blocks, {} messages so far",
                p.blocks_done,
                p.blocks_total,
                comma_count(p.msgs)
            );
        }
    }
}

/// Logs what recovery found damaged, naming the stream and each file.
fn report_recovery(account: &str, stream: &str, store: &FileStore) {
    for damaged in &store.recovery_report().damaged_files {
        crate::stream::running::log_damage(account, stream, damaged);
    }
}

/// `d` rounded to the nearest millisecond, as Go's `Duration.Round(time.Millisecond)`.
fn round_to_millis(d: std::time::Duration) -> std::time::Duration {
    std::time::Duration::from_millis(((d.as_micros() + 500) / 1000) as u64)
}

/// Go's `humanize.Comma`: `1,234,567`.
pub fn comma_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
