//! `STREAM.SNAPSHOT` and `STREAM.RESTORE`: the requests checked in Go's order and answered;
//! the transfers themselves run on their own threads ([`crate::snapshot`]).
//!
//! Go's checks, in order. Snapshot: an empty request (10003), the stream (10059), the JSON
//! (10025), the deliver subject (10015). Restore: an empty request (10003), the JSON (10025),
//! the config's name against the subject's (10056, an empty name takes the subject's), path
//! separators (10128), the configuration as for a create, the account's limits as for a
//! create (10027, 10026, 10028, 10047), a stream of that name (10130). A restore answers
//! with the subject to send the chunks to, `$JS.SNAPSHOT.RESTORE.<stream>.<id>`, already
//! subscribed.

use std::sync::Arc;

use natrium_core::internal::InternalClient;
use natrium_store::archive::ArchiveState;
use serde::Deserialize;

use super::msg_get::is_empty_request;
use super::request::Request;
use super::responses::{encode, RestoreResponse, SnapshotResponse, StreamStateJson};
use super::streams::context;
use crate::advisory::{self, Span};
use crate::clock::now_ns;
use crate::config::gotype::{GoStruct, GoType};
use crate::config::{check_stream_config, decode_checked, decode_request, decode_stream_request};
use crate::errors::{table, ApiError};
use crate::service::friendly_bytes;
use crate::snapshot::restore::Restore;
use crate::snapshot::send::{self, Transfer};
use crate::snapshot::sinks::{ChunkQueue, SinkSub};
use crate::snapshot::TransferGuard;

static SNAPSHOT_SCHEMA: GoStruct = GoStruct {
    name: "JSApiStreamSnapshotRequest",
    fields: &[
        ("deliver_subject", GoType::Str),
        ("no_consumers", GoType::Bool),
        ("chunk_size", GoType::Int("int", 64)),
        ("window_size", GoType::Int("int", 64)),
        ("jsck", GoType::Bool),
    ],
};

/// `JSApiStreamSnapshotRequest`. `no_consumers` leaves the consumers out of the archive;
/// `jsck` only changes the log line, as in Go 2.15 (reading the messages checks
/// them).
#[derive(Deserialize, Default)]
#[serde(default)]
struct SnapshotRequest {
    deliver_subject: String,
    no_consumers: bool,
    chunk_size: i64,
    window_size: i64,
    jsck: bool,
}

pub fn snapshot(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    if is_empty_request(req.body) {
        return Err(table::BAD_REQUEST.err());
    }
    let stream = req
        .jsa
        .stream(name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let ask: SnapshotRequest = decode_checked(
        req.body,
        &SNAPSHOT_SCHEMA,
        "server.JSApiStreamSnapshotRequest",
    )?;
    if !nats_subject::is_valid_publish_subject(ask.deliver_subject.as_bytes()) {
        return Err(table::SNAPSHOT_DELIVER_SUBJECT_INVALID.err());
    }
    let too_many = || table::STREAM_SNAPSHOT.with(&[("err", &"too many snapshots in progress")]);
    let guard = TransferGuard::try_new(&req.js.transfers).ok_or_else(too_many)?;
    let (config, state) = {
        let core = stream.core.lock();
        (core.config.clone(), core.ingest.store.fast_state())
    };
    // Read just after the stream's state (docs/store-format.md §13).
    let consumers = if ask.no_consumers {
        Vec::new()
    } else {
        crate::snapshot::consumers::collect(&stream)
    };
    let (chunk_bytes, window_bytes) = send::sizes(ask.chunk_size, ask.window_size);
    let state_json = StreamStateJson::of(&state);
    let body = encode(
        "stream_snapshot_response",
        None,
        SnapshotResponse {
            config,
            state: StreamStateJson::of(&state),
        },
    );
    let (client, _inbox) = InternalClient::start(&req.js.server, Arc::clone(&stream.account));
    let created_ns = stream.created_ns;
    let transfer = Transfer {
        stream,
        client,
        deliver: ask.deliver_subject,
        chunk_bytes,
        window_bytes,
        state: ArchiveState {
            first_seq: state.first_seq,
            last_seq: state.last_seq,
            msgs: state.msgs,
            bytes: state.bytes,
            created_ns,
        },
        consumers,
        guard,
    };
    let who = req.client_info();
    let domain = req.js.settings.domain.clone();
    let runtime = tokio::runtime::Handle::current();
    let jsck = ask.jsck;
    req.after_reply.borrow_mut().push(Box::new(move || {
        let spawned = std::thread::Builder::new()
            .name("jetstream-snapshot".into())
            .spawn(move || {
                let _entered = runtime.enter();
                run_snapshot(transfer, &state_json, jsck, (&who, &domain));
            });
        if let Err(err) = spawned {
            tracing::error!("JetStream snapshot thread could not start: {err}");
        }
    }));
    Ok(body)
}

/// Sends a snapshot with Go's advisories and log lines around it.
fn run_snapshot(
    mut transfer: Transfer,
    state: &StreamStateJson,
    jsck: bool,
    (who, domain): (&advisory::ClientInfo, &str),
) {
    let account = Arc::clone(&transfer.stream.account);
    let (acc, name) = (account.name.clone(), transfer.stream.name.clone());
    if jsck {
        tracing::info!("Starting health check and snapshot for stream '{acc} > {name}'");
    } else {
        tracing::info!("Starting snapshot for stream '{acc} > {name}'");
    }
    let start_ns = now_ns();
    let began = std::time::Instant::now();
    advisory::snapshot_create(&mut transfer.client, &account, &name, state, who, domain);
    let bytes = transfer.state.bytes;
    let ending = transfer.run();
    let took = natrium_gofmt::go_duration(began.elapsed());
    let span = Span {
        start_ns,
        end_ns: now_ns(),
    };
    let error = ending.error().unwrap_or_default();
    advisory::snapshot_complete(
        &mut transfer.client,
        &account,
        &name,
        span,
        who,
        (domain, &error),
    );
    if error.is_empty() {
        let size = friendly_bytes(i64::try_from(bytes).unwrap_or(i64::MAX));
        tracing::info!("Completed snapshot of {size} for stream '{acc} > {name}' in {took}");
    } else {
        tracing::warn!("Snapshot for stream '{acc} > {name}' failed after {took}: {error}");
    }
}

/// `JSApiStreamRestoreRequest`: the configuration, checked as a create's. Its `state` is
/// not read: the archive carries its own, as Go's does.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RestoreRequest {
    config: serde_json::Value,
}

pub fn restore(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    if is_empty_request(req.body) {
        return Err(table::BAD_REQUEST.err());
    }
    let ask: RestoreRequest = decode_request(req.body)?;
    let config_json = serde_json::to_vec(&ask.config).unwrap_or_default();
    let mut config = if ask.config.is_null() {
        crate::config::StreamConfig::default()
    } else {
        decode_stream_request(&config_json)?.config
    };
    if config.name.is_empty() {
        name.clone_into(&mut config.name);
    }
    if config.name != name {
        return Err(table::STREAM_MISMATCH.err());
    }
    if name.contains(['\\', '/']) {
        return Err(table::STREAM_NAME_CONTAINS_PATH_SEPARATORS.err());
    }
    let ctx = context(req, config.storage);
    let config = check_stream_config(config, &ctx)?;
    if config.num_replicas > 1 {
        return Err(table::STREAM_REPLICAS_NOT_SUPPORTED.err());
    }
    // The stream count and the reservations of `max_bytes`, as for a create.
    req.jsa.check_create_limits(req.js, &config, true)?;
    if req.jsa.stream(name).is_some() {
        return Err(table::STREAM_NAME_EXIST_RESTORE_FAILED.err());
    }
    let too_many = || table::STREAM_RESTORE.with(&[("err", &"too many restores in progress")]);
    let guard = TransferGuard::try_new(&req.js.transfers).ok_or_else(too_many)?;
    tracing::info!("Starting restore for stream '{} > {name}'", req.jsa.name());
    let account = Arc::clone(&req.jsa.account);
    let (client, _inbox) = InternalClient::start(&req.js.server, Arc::clone(&account));
    let queue = Arc::new(ChunkQueue::new(client.cid()));
    let deliver = format!(
        "$JS.SNAPSHOT.RESTORE.{name}.{}",
        natrium_core::events::event_id()
    );
    let sink = Arc::clone(&queue) as Arc<dyn natrium_core::endpoint::Sink>;
    let sub = SinkSub::new(&account, &sink, &deliver).ok_or_else(|| {
        table::RESTORE_SUBSCRIBE_FAILED.with(&[("subject", &deliver), ("err", &"invalid subject")])
    })?;
    let job = Restore {
        js: Arc::clone(req.js),
        jsa: Arc::clone(req.jsa),
        config,
        queue,
        sub: Some(sub),
        client,
        who: req.client_info(),
        guard,
    };
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("jetstream-restore".into())
        .spawn(move || {
            let _entered = runtime.enter();
            job.run();
        })
        .map_err(|e| table::STREAM_RESTORE.with(&[("err", &e)]))?;
    Ok(encode(
        "stream_restore_response",
        None,
        RestoreResponse {
            deliver_subject: deliver,
        },
    ))
}
