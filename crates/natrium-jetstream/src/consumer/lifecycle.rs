//! Consumers added to, updated in and removed from their stream, and recovered with it.

use std::sync::Arc;

use super::check::check_config;
use super::config::ConsumerConfig;
use super::config::DeliverPolicy;
use super::context::ConsumerContext;
use super::defaults::{set_defaults, EPHEMERAL_INACTIVE_DEFAULT_NS};
use super::persist::{self, ConsumerMeta};
use super::running::{starting_seq, store_filter, Consumer, ConsumerCore};
use super::state::DeliveryState;
use crate::clock::now_ns;
use crate::errors::{table, ApiError};
use crate::stream::Stream;
use natrium_store::filestore::at_rest::AtRest;
use natrium_store::io::StorageIo;

/// Where a stream's consumers keep their files: the storage, and the stream's keys at rest.
pub struct ConsumerFiles {
    pub io: Arc<dyn StorageIo>,
    pub at_rest: Option<AtRest>,
}

/// Go stamps an ephemeral's config with the default inactive threshold when it sets none.
pub fn stamp_inactive_threshold(config: &mut ConsumerConfig) {
    if !config.is_durable() && config.inactive_threshold <= 0 {
        config.inactive_threshold = EPHEMERAL_INACTIVE_DEFAULT_NS;
    }
}

fn store_failed(err: &dyn std::fmt::Display) -> ApiError {
    table::CONSUMER_STORE_FAILED.with(&[("err", err)])
}

/// Adds a checked consumer named `name` to `stream`: its store opened (its state recovered
/// when it has one, else its start chosen and stored) and its `meta.dat` written.
///
/// # Errors
/// 10104 when the store can not be opened.
pub fn add(
    files: &ConsumerFiles,
    stream: &Stream,
    name: &str,
    config: ConsumerConfig,
    created_ns: i64,
) -> Result<Arc<Consumer>, ApiError> {
    add_with_state(files, stream, name, config, created_ns, None)
}

/// [`add`], with the state the consumer resumes from when `initial` is given (a restored
/// snapshot's): stored first, then recovered as after a restart.
///
/// # Errors
/// 10104 when the store can not be opened or refuses the state.
pub fn add_with_state(
    files: &ConsumerFiles,
    stream: &Stream,
    name: &str,
    mut config: ConsumerConfig,
    created_ns: i64,
    initial: Option<&natrium_store::ConsumerState>,
) -> Result<Arc<Consumer>, ApiError> {
    stamp_inactive_threshold(&mut config);
    let dir = stream
        .dir
        .as_ref()
        .filter(|_| !config.mem_storage && !config.direct)
        .map(|d| persist::consumer_dir(d, name));
    let at_rest = files.at_rest.clone();
    let store = if config.direct {
        None
    } else {
        let store = persist::open_store(&files.io, dir.as_deref(), &config, at_rest.clone())
            .map_err(|e| store_failed(&e))?;
        Some(store)
    };
    if let Some(dir) = &dir {
        let meta = ConsumerMeta {
            name: name.to_owned(),
            created_ns,
            config: config.clone(),
        };
        persist::save_meta(files.io.as_ref(), dir, at_rest.as_ref(), &meta)
            .map_err(|e| store_failed(&e))?;
    }
    let mut store = store;
    if let (Some(s), Some(state)) = (store.as_mut(), initial) {
        s.force_update(state).map_err(|e| store_failed(&e))?;
    }
    let (next_seq, delivery) = match store.as_mut() {
        Some(s) if s.has_state() => {
            let state = s.state().map_err(|e| store_failed(&e))?;
            let delivery = DeliveryState::recovered(&state, config.ack_wait, now_ns());
            (state.delivered.stream + 1, delivery)
        }
        other => {
            let core = stream.core.lock();
            let one_per_subject = core.config.max_msgs_per_subject == 1;
            let store = core.ingest.store.as_ref();
            let next = starting_seq(&config, store, one_per_subject);
            let mut delivery = DeliveryState::starting(next);
            if config.deliver_policy == DeliverPolicy::LastPerSubject && !one_per_subject {
                delivery.last_per_subject = last_per_subject(&config, store, next);
            }
            drop(core);
            if let Some(s) = other {
                if next > 1 {
                    s.set_starting(next - 1).map_err(|e| store_failed(&e))?;
                }
            }
            (next, delivery)
        }
    };
    let consumer = Arc::new(Consumer::new(
        &stream.name,
        name,
        created_ns,
        ConsumerCore {
            config,
            store,
            next_seq,
            dir,
            delivery,
        },
    ));
    stream
        .consumers
        .lock()
        .insert(name.to_owned(), Arc::clone(&consumer));
    Ok(consumer)
}

/// Go's skip list of a deliver-last-per-subject consumer: the last message of each subject
/// its filters match, from `next` on, then on after the stream's last sequence.
fn last_per_subject(
    config: &ConsumerConfig,
    store: &dyn natrium_store::StreamStore,
    next: u64,
) -> Option<(std::collections::VecDeque<u64>, u64)> {
    let mut seqs: Vec<u64> = store
        .subjects_state(&store_filter(config))
        .iter()
        .map(|(_, s)| s.last)
        .filter(|seq| *seq >= next)
        .collect();
    if seqs.is_empty() {
        return None;
    }
    seqs.sort_unstable();
    Some((seqs.into(), store.fast_state().last_seq + 1))
}

/// Applies a checked update to a consumer: stored first, then taken.
///
/// # Errors
/// 10104 when `meta.dat` can not be written.
pub fn update(
    files: &ConsumerFiles,
    consumer: &Consumer,
    mut config: ConsumerConfig,
) -> Result<(), ApiError> {
    // Go stores an updated pause in UTC.
    config.pause_until = config.pause_until.map(|t| t.utc());
    let mut core = consumer.core.lock();
    if config.inactive_threshold != core.config.inactive_threshold {
        stamp_inactive_threshold(&mut config);
    }
    if let Some(dir) = &core.dir {
        let meta = ConsumerMeta {
            name: consumer.name.clone(),
            created_ns: consumer.created_ns,
            config: config.clone(),
        };
        persist::save_meta(files.io.as_ref(), dir, files.at_rest.as_ref(), &meta)
            .map_err(|e| store_failed(&e))?;
    }
    core.config = config;
    Ok(())
}

/// Removes a consumer from its stream with its stored state.
///
/// # Errors
/// 10014 when there is no such consumer; 10051 when its files can not be removed.
pub fn delete(stream: &Stream, name: &str) -> Result<Arc<Consumer>, ApiError> {
    let consumer = stream
        .consumers
        .lock()
        .remove(name)
        .ok_or_else(|| table::CONSUMER_NOT_FOUND.err())?;
    let mut core = consumer.core.lock();
    if let Some(store) = core.store.as_mut() {
        let _ = store.stop();
    }
    if let Some(dir) = core.dir.take() {
        persist::remove_dir(&dir)
            .map_err(|e| table::STREAM_GENERAL_ERROR_F.with(&[("err", &e)]))?;
    }
    drop(core);
    Ok(consumer)
}

/// Stops every consumer's store (their state written), as a stream stops.
pub fn stop_all(stream: &Stream) {
    for consumer in stream.consumers.lock().values() {
        if let Some(store) = consumer.core.lock().store.as_mut() {
            let _ = store.stop();
        }
    }
}

/// Recovers the consumers stored under a file stream's `obs/`, as Go does: each config
/// defaulted and checked again, an ephemeral restored as one (its inactivity removes it).
pub fn recover(files: &ConsumerFiles, account: &str, stream: &Stream, ctx: &ConsumerContext<'_>) {
    let Some(dir) = &stream.dir else {
        return;
    };
    let obs = dir.join(persist::CONSUMERS_DIR);
    let names = crate::dirs::sorted_dirs(&obs);
    if names.is_empty() {
        return;
    }
    tracing::info!(
        "  Recovering {} consumers for stream - '{account} > {}'",
        names.len(),
        stream.name
    );
    for name in names {
        let odir = obs.join(&name);
        let meta = match persist::load_meta(files.io.as_ref(), &odir, files.at_rest.as_ref()) {
            Ok(Some(meta)) => meta,
            Ok(None) => {
                tracing::warn!("    Missing consumer metafile {:?}", odir.join("meta.dat"));
                continue;
            }
            Err(err) => {
                tracing::warn!("    Error reading consumer metafile {:?}: {err}", odir);
                continue;
            }
        };
        let mut config = meta.config;
        let checked = set_defaults(&mut config, ctx).and_then(|()| check_config(&config, ctx));
        let added = checked.and_then(|()| add(files, stream, &meta.name, config, meta.created_ns));
        if let Err(err) = added {
            tracing::warn!(
                "    Error adding consumer '{account} > {} > {}': {}",
                stream.name,
                meta.name,
                err.description
            );
        }
    }
}
