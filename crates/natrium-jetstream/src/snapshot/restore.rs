//! A restore: the client's chunks, taken from the deliver subject by a [`ChunkQueue`], are
//! decoded as they arrive ([`natrium_store::archive`]) into a new store, and the stream is
//! made one of the account's when the client's final empty message comes.
//!
//! As in Go: each chunk must carry a reply subject and is acknowledged with an empty
//! message; the final empty message is answered with a `stream_create_response` (the
//! stream's info, or the error that stopped the restore; chunks after a decoding error are
//! still acknowledged and dropped). A chunk without a reply ends the restore with a warning
//! and no answer. When no chunk comes for [`INACTIVITY`] before the final one, the restore is
//! abandoned silently. Whatever ends a restore early, its staged files are removed.
//!
//! Bounds: the queue stalls publishers past its mark; a record is checked against
//! `max_payload` before it is buffered; the bytes restored are checked against what the
//! account and the server may still store (Go's 10047 and 10028) before and while storing;
//! the store enforces the stream's own limits.

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use natrium_core::account::Account;
use natrium_core::internal::InternalClient;
use natrium_store::archive::{
    ArchiveConsumer, ArchiveError, ArchiveLimits, ArchiveMsg, ArchiveReader, Record,
};
use natrium_store::{NewMsg, StreamStore};

use super::sinks::{ChunkQueue, SinkSub};
use super::TransferGuard;
use crate::account::JsAccount;
use crate::advisory::{self, ClientInfo, Span};
use crate::api::responses::encode;
use crate::api::streams::{error_response, stream_info};
use crate::api::Request;
use crate::clock::now_ns;
use crate::config::stream::Storage;
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::service::{friendly_bytes, JetStream};
use crate::stream::headers::PublishHeaders;
use crate::stream::ingest::{parse_ttl, store_failed};

/// Go's restore inactivity timeout: no chunk for this long and the restore is abandoned.
pub const INACTIVITY: Duration = Duration::from_secs(5);

/// One restore in progress.
pub struct Restore {
    pub js: Arc<JetStream>,
    pub jsa: Arc<JsAccount>,
    pub config: StreamConfig,
    pub queue: Arc<ChunkQueue>,
    /// The deliver subject's subscription, dropped once the input ended.
    pub sub: Option<SinkSub>,
    pub client: InternalClient,
    pub who: ClientInfo,
    /// Its place among the transfers running, freed when it ends.
    pub guard: TransferGuard,
}

/// Why a restore ended without an answer.
enum Abort {
    Stalled,
    NoReply,
}

/// The restore's staging directory, removed when dropped (a completed restore has moved it).
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A restored store, not yet a stream.
struct Built {
    store: Box<dyn StreamStore>,
    staging: Option<Staging>,
    /// The archived consumers, recreated once the stream exists.
    consumers: Vec<ArchiveConsumer>,
    /// The archived stream's creation time, kept as Go keeps it (0: the archive has none).
    created_ns: i64,
}

impl Restore {
    /// Receives, decodes and answers; runs on the restore's thread.
    pub fn run(mut self) {
        let began = Instant::now();
        let start_ns = now_ns();
        let account = Arc::clone(&self.jsa.account);
        let domain = self.js.settings.domain.clone();
        let name = self.config.name.clone();
        advisory::restore_create(&mut self.client, &account, &name, &self.who, &domain);
        let mut input = ChunkInput {
            queue: &self.queue,
            client: &mut self.client,
            account: &account,
            current: Bytes::new(),
            total: 0,
            end: None,
        };
        let built = build(&mut input, &self.js, &self.jsa, &self.config);
        let end = input.finish();
        let total = input.total;
        self.sub = None;
        let (reply, result) = match end {
            Ok(reply) => (Some(reply), built.and_then(|built| self.adopt(built))),
            // Go abandons a stalled restore without a word.
            Err(Abort::Stalled) => return,
            Err(Abort::NoReply) => {
                let err = format!(
                    "restore for stream '{} > {name}' requires reply subject for each chunk",
                    self.jsa.name()
                );
                tracing::warn!("{err}");
                (None, Err(restore_failed(&err)))
            }
        };
        let span = Span {
            start_ns,
            end_ns: now_ns(),
        };
        advisory::restore_complete(
            &mut self.client,
            &account,
            (&name, total),
            span,
            &self.who,
            &domain,
        );
        let body = self.answer(result, total, began);
        if let Some(reply) = reply {
            self.client.publish_in(&account, &reply, None, &body);
        }
    }

    /// Makes the built store a stream of the account.
    fn adopt(&self, built: Built) -> Result<Arc<crate::stream::Stream>, ApiError> {
        let Built {
            mut store,
            staging,
            consumers,
            created_ns,
        } = built;
        let created_ns = (created_ns > 0).then_some(created_ns);
        if self.jsa.subjects_overlap(&self.config, None) {
            return Err(table::STREAM_SUBJECT_OVERLAP.err());
        }
        let stream = match &staging {
            None => self.jsa.adopt_restored(
                &self.js,
                self.config.clone(),
                Some(store),
                None,
                created_ns,
            ),
            Some(staging) => {
                store.stop().map_err(|e| store_failed(&e))?;
                drop(store);
                self.jsa.adopt_restored(
                    &self.js,
                    self.config.clone(),
                    None,
                    Some(&staging.0),
                    created_ns,
                )
            }
        }?;
        // As Go, a consumer that can not be recreated fails the restore and the stream goes.
        if let Err(err) = super::consumers::restore(&self.js, &self.jsa, &stream, consumers) {
            let _ = self.jsa.delete_stream(&self.js, &stream.name);
            return Err(err);
        }
        Ok(stream)
    }

    /// The final answer, logged as Go logs it.
    fn answer(
        &self,
        result: Result<Arc<crate::stream::Stream>, ApiError>,
        total: u64,
        began: Instant,
    ) -> Vec<u8> {
        const KIND: &str = "stream_create_response";
        let size = friendly_bytes(i64::try_from(total).unwrap_or(i64::MAX));
        let (account, name) = (self.jsa.name(), &self.config.name);
        match result {
            Ok(stream) => {
                let took = round_to_millis(began.elapsed());
                tracing::info!(
                    "Completed restore of {size} for stream '{account} > {name}' in {}",
                    natrium_gofmt::go_duration(took)
                );
                let req = Request::new(&self.js, &self.jsa, b"");
                encode(KIND, None, stream_info(&req, &stream, false, true))
            }
            Err(err) => {
                tracing::warn!(
                    "Restore failed for {size} for stream '{account} > {name}' in {}",
                    natrium_gofmt::go_duration(began.elapsed())
                );
                error_response(KIND, &err)
            }
        }
    }
}

/// Decodes the archive from `input` into a new store.
fn build(
    input: &mut ChunkInput<'_>,
    js: &JetStream,
    jsa: &JsAccount,
    config: &StreamConfig,
) -> Result<Built, ApiError> {
    let max_payload = js.server.config().max_payload;
    let limits = ArchiveLimits {
        msg_bytes_max: max_payload.min(ArchiveLimits::default().msg_bytes_max),
        ..ArchiveLimits::default()
    };
    let mut reader = ArchiveReader::new(input, limits);
    let Some(Record::State(state)) = reader.next_record().map_err(|e| archive_failed(&e))? else {
        return Err(restore_failed(&"expected stream state first"));
    };
    let budget = Budget::new(js, jsa, config.storage);
    budget.check(state.bytes)?;
    let staging = match config.storage {
        Storage::Memory => None,
        Storage::File => {
            let dir = jsa
                .staging_dir()
                .join(format!("snap-{}", natrium_core::events::event_id()));
            js.io.create_dir_all(&dir).map_err(|e| restore_failed(&e))?;
            Some(Staging(dir))
        }
    };
    let mut store = jsa.open_store(js, config, staging.as_ref().map(|s| s.0.as_path()))?;
    let mut writer = Writer {
        store: store.as_mut(),
        next: state.first_seq.max(1),
        used: 0,
        budget,
        max_msg_size: usize::try_from(config.max_msg_size).ok().filter(|n| *n > 0),
    };
    if state.first_seq > 1 {
        writer
            .store
            .compact(state.first_seq)
            .map_err(|e| store_failed(&e))?;
    }
    let mut consumers = Vec::new();
    loop {
        match reader.next_record().map_err(|e| archive_failed(&e))? {
            Some(Record::Msg(msg)) => writer.msg(msg)?,
            Some(Record::Consumer(consumer)) => consumers.push(consumer),
            Some(Record::End) | None => break,
            Some(Record::State(_)) => return Err(restore_failed(&"unexpected stream state")),
        }
    }
    writer.finish(state.last_seq)?;
    Ok(Built {
        store,
        staging,
        consumers,
        created_ns: state.created_ns,
    })
}

/// Stores archived messages at their sequences, skipping the deleted ones.
struct Writer<'s> {
    store: &'s mut dyn StreamStore,
    next: u64,
    used: u64,
    budget: Budget,
    max_msg_size: Option<usize>,
}

impl Writer<'_> {
    fn msg(&mut self, msg: ArchiveMsg) -> Result<(), ApiError> {
        let seq = msg.seq;
        let size = msg.headers.len() + msg.payload.len();
        if self.max_msg_size.is_some_and(|max| size > max) {
            let err = format!("message sequence {seq} exceeds maximum message size");
            return Err(restore_failed(&err));
        }
        if seq > self.next {
            self.store
                .skip_msgs(self.next, seq - self.next, msg.timestamp_ns)
                .map_err(|e| restore_failed(&format!("failed to process gap: {e}")))?;
        }
        let ttl = match PublishHeaders::read(&msg.headers).ttl {
            None => natrium_store::MsgTtl::None,
            Some(value) => parse_ttl(value).map_err(|e| {
                restore_failed(&format!("failed to parse message TTL: {}", e.description))
            })?,
        };
        self.used = self.used.saturating_add((msg.subject.len() + size) as u64);
        self.budget.check(self.used)?;
        let new = NewMsg {
            ttl,
            ..NewMsg::new(&msg.subject, msg.headers, msg.payload, msg.timestamp_ns)
        };
        self.store
            .store_raw_msg(new, seq, false)
            .map_err(|e| restore_failed(&format!("failed to store message sequence {seq}: {e}")))?;
        self.next = seq + 1;
        Ok(())
    }

    /// Skips the deleted sequences after the last archived message and syncs.
    fn finish(&mut self, last_seq: u64) -> Result<(), ApiError> {
        if last_seq >= self.next {
            self.store
                .skip_msgs(self.next, last_seq - self.next + 1, now_ns())
                .map_err(|e| restore_failed(&format!("failed to process trailing gap: {e}")))?;
        }
        self.store.sync().map_err(|e| store_failed(&e))?;
        Ok(())
    }
}

/// What the account and the server may still store of the restore's storage type.
#[derive(Debug, Clone, Copy)]
struct Budget {
    left: Option<u64>,
    storage: Storage,
}

impl Budget {
    fn new(js: &JetStream, jsa: &JsAccount, storage: Storage) -> Self {
        let used = |jsa: &JsAccount| -> u64 {
            jsa.streams()
                .iter()
                .filter_map(|s| {
                    let core = s.core.lock();
                    (core.config.storage == storage).then(|| core.ingest.store.fast_state().bytes)
                })
                .sum()
        };
        let (account_max, server_max) = match storage {
            Storage::File => (jsa.limits().max_store, js.limit(Storage::File)),
            Storage::Memory => (jsa.limits().max_memory, js.limit(Storage::Memory)),
        };
        let mut left = None::<u64>;
        let mut limit = |max: i64, used: u64| {
            if let Ok(max) = u64::try_from(max) {
                let room = max.saturating_sub(used);
                left = Some(left.map_or(room, |l| l.min(room)));
            }
        };
        limit(account_max, used(jsa));
        if server_max > 0 {
            limit(
                server_max,
                js.accounts().iter().map(|a| used(a.as_ref())).sum(),
            );
        }
        Self { left, storage }
    }

    fn check(&self, bytes: u64) -> Result<(), ApiError> {
        match self.left {
            Some(left) if bytes > left => Err(match self.storage {
                Storage::File => table::STORAGE_RESOURCES_EXCEEDED.err(),
                Storage::Memory => table::MEMORY_RESOURCES_EXCEEDED.err(),
            }),
            _ => Ok(()),
        }
    }
}

fn restore_failed(err: &dyn std::fmt::Display) -> ApiError {
    table::STREAM_RESTORE.with(&[("err", err)])
}

fn archive_failed(err: &ArchiveError) -> ApiError {
    restore_failed(err)
}

/// `d` rounded to the nearest millisecond (Go's `Round(time.Millisecond)`).
fn round_to_millis(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from((d.as_micros() + 500) / 1000).unwrap_or(u64::MAX))
}

/// The chunks as one byte stream: each data chunk is acknowledged when taken, the final
/// empty message ends the stream.
struct ChunkInput<'a> {
    queue: &'a ChunkQueue,
    client: &'a mut InternalClient,
    account: &'a Arc<Account>,
    current: Bytes,
    /// Bytes received (Go's count for its log lines and advisory).
    total: u64,
    /// How the input ended: the final message's reply subject, or why it was abandoned.
    end: Option<Result<String, Abort>>,
}

impl ChunkInput<'_> {
    /// Takes the next chunk: `None` once the input ended.
    fn pull(&mut self) -> Option<Bytes> {
        if self.end.is_some() {
            return None;
        }
        let Some(chunk) = self.queue.next(INACTIVITY) else {
            self.end = Some(Err(Abort::Stalled));
            return None;
        };
        let reply = chunk
            .reply
            .as_deref()
            .and_then(|r| std::str::from_utf8(r).ok())
            .filter(|r| !r.is_empty());
        let Some(reply) = reply else {
            self.end = Some(Err(Abort::NoReply));
            return None;
        };
        if chunk.payload.is_empty() {
            self.end = Some(Ok(reply.to_owned()));
            return None;
        }
        self.total += chunk.payload.len() as u64;
        self.client.publish_in(self.account, reply, None, b"");
        Some(chunk.payload)
    }

    /// Reads and acknowledges what remains up to the final message.
    fn finish(&mut self) -> Result<String, Abort> {
        loop {
            if let Some(end) = self.end.take() {
                return end;
            }
            self.current = Bytes::new();
            let _ = self.pull();
        }
    }
}

impl Read for ChunkInput<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.pull() {
                Some(chunk) => self.current = chunk,
                None => {
                    return match &self.end {
                        Some(Ok(_)) | None => Ok(0),
                        Some(Err(_)) => Err(io::Error::other("restore input abandoned")),
                    };
                }
            }
        }
        let n = buf.len().min(self.current.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), self.current.get(..n)) {
            to.copy_from_slice(from);
        }
        self.current.advance(n);
        Ok(n)
    }
}
