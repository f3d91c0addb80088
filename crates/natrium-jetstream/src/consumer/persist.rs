//! Where a consumer keeps its configuration and state: on a file stream, the directory
//! `<stream>/obs/<name>/` with `meta.dat` (name, creation time and config as JSON, by the
//! store's atomic rule, sealed when keys are configured) and the store's `state.dat`; on a
//! memory stream, or with `mem_storage`, nothing on disk (as Go).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use natrium_store::consumer::{AckPolicy as StoreAck, ConsumerStoreConfig};
use natrium_store::filestore::at_rest::AtRest;
use natrium_store::filestore::envelope::Kind;
use natrium_store::filestore::meta;
use natrium_store::io::StorageIo;
use natrium_store::{ConsumerStore, FileConsumerStore, MemConsumerStore, StoreError};
use serde::{Deserialize, Serialize};

use super::config::{AckPolicy, ConsumerConfig};

/// The consumers' directory inside a stream's.
pub const CONSUMERS_DIR: &str = "obs";

/// A consumer's `meta.dat` body.
#[derive(Serialize, Deserialize)]
pub struct ConsumerMeta {
    pub name: String,
    pub created_ns: i64,
    pub config: ConsumerConfig,
}

/// What the state store needs of the config.
pub fn store_config(config: &ConsumerConfig) -> ConsumerStoreConfig {
    ConsumerStoreConfig {
        ack_policy: match config.ack_policy {
            AckPolicy::None => StoreAck::None,
            AckPolicy::All => StoreAck::All,
            AckPolicy::Explicit => StoreAck::Explicit,
            AckPolicy::FlowControl => StoreAck::FlowControl,
        },
        max_deliver: u64::try_from(config.max_deliver).ok().filter(|n| *n > 0),
    }
}

/// The directory of consumer `name` of the stream stored in `stream_dir`.
pub fn consumer_dir(stream_dir: &Path, name: &str) -> PathBuf {
    stream_dir.join(CONSUMERS_DIR).join(name)
}

/// Opens the state store: in memory, or under `dir` (created if missing) when given.
///
/// # Errors
/// The store's failure to create or read its files.
pub fn open_store(
    io: &Arc<dyn StorageIo>,
    dir: Option<&Path>,
    config: &ConsumerConfig,
    at_rest: Option<AtRest>,
) -> Result<Box<dyn ConsumerStore>, StoreError> {
    let store_cfg = store_config(config);
    Ok(match dir {
        None => Box::new(MemConsumerStore::new(store_cfg)),
        Some(dir) => Box::new(FileConsumerStore::open_at_rest(
            Arc::clone(io),
            dir,
            store_cfg,
            at_rest,
        )?),
    })
}

/// Writes `meta.dat`.
///
/// # Errors
/// The store's write failure.
pub fn save_meta(
    io: &dyn StorageIo,
    dir: &Path,
    at_rest: Option<&AtRest>,
    body: &ConsumerMeta,
) -> Result<(), StoreError> {
    let json = serde_json::to_vec(body).unwrap_or_default();
    meta::save(io, dir, Kind::ConsumerMeta, at_rest, &json)
}

/// Reads `meta.dat`: `None` when there is none; rewritten when the store asks (a previous
/// key opened it).
///
/// # Errors
/// A damaged or undecodable file, as text for the log.
pub fn load_meta(
    io: &dyn StorageIo,
    dir: &Path,
    at_rest: Option<&AtRest>,
) -> Result<Option<ConsumerMeta>, String> {
    let Some((body, rewrite)) =
        meta::load(io, dir, Kind::ConsumerMeta, at_rest).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    if rewrite {
        let _ = meta::save(io, dir, Kind::ConsumerMeta, at_rest, &body);
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Removes a deleted consumer's directory.
pub fn remove_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}
