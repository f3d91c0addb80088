//! A stream's consumers in its snapshot: read into archive records when the snapshot starts,
//! recreated from them once a restored stream exists (`docs/store-format.md` §13).
//!
//! As Go: consumers with `mem_storage` are left out (Go archives file-stored consumers only)
//! and so are a stream's internal direct consumers; every archived consumer, durable or
//! ephemeral, is recreated with its config, creation time and state, and one that fails its
//! checks fails the restore.

use std::sync::Arc;

use bytes::Bytes;
use natrium_store::archive::ArchiveConsumer;

use crate::account::JsAccount;
use crate::consumer::check::check_config;
use crate::consumer::config::ConsumerConfig;
use crate::consumer::context::ConsumerContext;
use crate::consumer::defaults::set_defaults;
use crate::consumer::lifecycle::add_with_state;
use crate::errors::{table, ApiError};
use crate::service::JetStream;
use crate::stream::Stream;

/// The archive records of `stream`'s consumers, by name. Each consumer's config and state
/// are read together under its lock.
pub fn collect(stream: &Stream) -> Vec<ArchiveConsumer> {
    let consumers: Vec<_> = stream.consumers.lock().values().cloned().collect();
    let mut out = Vec::with_capacity(consumers.len());
    for consumer in consumers {
        let core = consumer.core.lock();
        if core.config.mem_storage || core.config.direct {
            continue;
        }
        let Some(store) = core.store.as_ref() else {
            continue;
        };
        let state = match store.state() {
            Ok(state) => state,
            Err(err) => {
                tracing::warn!(
                    "Snapshot of stream '{}' leaves out consumer '{}': {err}",
                    stream.name,
                    consumer.name
                );
                continue;
            }
        };
        let config = serde_json::to_vec(&core.config).unwrap_or_default();
        out.push(ArchiveConsumer {
            name: consumer.name.clone(),
            created_ns: consumer.created_ns,
            config: Bytes::from(config),
            state,
        });
    }
    out
}

/// Recreates the archived consumers on the restored `stream`, then lets its engine look at
/// them.
///
/// # Errors
/// The first consumer whose config does not decode or pass the checks of a create, or
/// whose store refuses its state (10062, with the consumer's name, as Go's restore).
pub fn restore(
    js: &JetStream,
    jsa: &JsAccount,
    stream: &Arc<Stream>,
    archived: Vec<ArchiveConsumer>,
) -> Result<(), ApiError> {
    if archived.is_empty() {
        return Ok(());
    }
    let stream_config = stream.core.lock().config.clone();
    let limits = js.server_limits();
    let ctx = ConsumerContext {
        stream: &stream_config,
        server_max_ack_pending: limits.max_ack_pending,
        server_max_request_batch: limits.max_request_batch,
        account: jsa.limits(),
        pedantic: false,
        recovering: false,
    };
    let files = js.consumer_files(jsa.name(), &stream.name);
    let failed = |name: &str, err: &dyn std::fmt::Display| {
        table::STREAM_RESTORE.with(&[(
            "err",
            &format!("error restoring consumer [{name:?}]: {err}"),
        )])
    };
    for record in archived {
        let name = record.name.as_str();
        let mut config: ConsumerConfig =
            serde_json::from_slice(&record.config).map_err(|e| failed(name, &e))?;
        set_defaults(&mut config, &ctx)
            .and_then(|()| check_config(&config, &ctx))
            .map_err(|e| failed(name, &e.description))?;
        add_with_state(
            &files,
            stream,
            name,
            config,
            record.created_ns,
            Some(&record.state),
        )
        .map_err(|e| failed(name, &e.description))?;
    }
    if let Some(engine) = jsa.engine(&stream.name) {
        for name in stream.consumers.lock().keys() {
            engine.look_at(name);
        }
    }
    Ok(())
}
