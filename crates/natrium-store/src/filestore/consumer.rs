//! `FileConsumerStore`: a consumer's state kept in memory by the same bookkeeping as
//! [`MemConsumerStore`] and written to its directory (`docs/store-format.md` §7).
//!
//! **When the state reaches the disk.** Deliveries and acks change only the memory state.
//! [`ConsumerStore::write`] puts it in `state.latest` (written and renamed, not synced: a
//! process crash keeps it, a power loss may not); [`ConsumerStore::sync`] and
//! [`ConsumerStore::stop`] write it again, synced, and rename it over `state.dat`.
//! The stream engine writes after every round (a restart after kill -9 resumes exactly where
//! the consumer was) and syncs on a timer, as Go flushes consumer state on one. An open takes
//! `state.latest` when it is whole, else `state.dat`: after a power loss the consumer resumes
//! from its last sync, and what it delivered after that is redelivered.
//!
//! A failed write leaves the previous files whole and the state marked as changed, so the
//! next write or sync tries again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::at_rest::{self, AtRest};
use super::consumer_state;
use super::envelope::{self, Durability, Kind};
use super::meta::file_id;
use crate::consumer::{ConsumerState, ConsumerStore, ConsumerStoreConfig};
use crate::error::StoreError;
use crate::io::StorageIo;
use crate::memstore::MemConsumerStore;

/// The synced state's file name in a consumer's directory.
pub const STATE_FILE: &str = "state.dat";
/// The latest state written since the last sync, when there is one.
pub const LATEST_FILE: &str = "state.latest";

/// A consumer's state, held in memory and written to `<dir>/state.dat` on `sync` and `stop`.
pub struct FileConsumerStore {
    io: Arc<dyn StorageIo>,
    dir: PathBuf,
    inner: MemConsumerStore,
    /// The state may differ from the newest file written.
    changed: bool,
    /// `state.latest` may hold a state newer than `state.dat`'s.
    unsynced: bool,
    closed: bool,
    scratch: Vec<u8>,
    /// Keys to seal `state.dat` with, when encryption at rest is configured.
    at_rest: Option<AtRest>,
}

impl FileConsumerStore {
    /// Opens the consumer stored under `dir` (created if missing): leftover temporary files
    /// are removed and `state.dat` is loaded if present. A damaged `state.dat` is reported as
    /// `Corrupt` and left where it is.
    pub fn open(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: ConsumerStoreConfig,
    ) -> Result<FileConsumerStore, StoreError> {
        Self::open_at_rest(io, dir, config, None)
    }

    /// As [`FileConsumerStore::open`], with `state.dat` sealed under `at_rest`'s keys. A file
    /// opened with `prev_key`, or written before encryption was turned on, is written again
    /// (sealed with the current key) at the next `sync`.
    pub fn open_at_rest(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: ConsumerStoreConfig,
        at_rest: Option<AtRest>,
    ) -> Result<FileConsumerStore, StoreError> {
        io.create_dir_all(dir)
            .map_err(|e| StoreError::io("create directory", e))?;
        envelope::remove_leftover_tmp(&*io, dir)?;
        let kind = Kind::ConsumerState;
        let file = file_id(dir, kind);
        let read = |name: &str| -> Result<Option<(ConsumerState, bool)>, StoreError> {
            let Some(read) = envelope::read_state_file(&*io, dir, name, kind)? else {
                return Ok(None);
            };
            let (body, rewrite) =
                at_rest::open_file(at_rest.as_ref(), &file, kind, read.flags, read.body)?;
            Ok(Some((consumer_state::decode(&body)?, rewrite)))
        };
        // What a power loss left of `state.latest` fails its checks: the synced state holds.
        let latest = read(LATEST_FILE).ok().flatten();
        let unsynced = latest.is_some();
        let (state, rewrite) = match latest {
            Some(found) => found,
            None => read(STATE_FILE)?.unwrap_or_default(),
        };
        Ok(FileConsumerStore {
            io,
            dir: dir.to_path_buf(),
            inner: MemConsumerStore::with_state(config, state),
            changed: rewrite,
            unsynced,
            closed: false,
            scratch: Vec::new(),
            at_rest,
        })
    }

    /// The consumer's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the state changed since it was last synced.
    pub fn has_unsynced(&self) -> bool {
        self.changed || self.unsynced
    }

    /// Runs a change on the memory state. It counts as a change whatever it returns: some
    /// calls change the state and then fail (an ack of an unknown message still drops its
    /// redelivery count).
    fn change<T>(
        &mut self,
        f: impl FnOnce(&mut MemConsumerStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.closed {
            return Err(StoreError::Closed);
        }
        self.changed = true;
        f(&mut self.inner)
    }

    /// The state, encoded and sealed for its file.
    fn sealed_state(&mut self) -> Result<(u8, Vec<u8>), StoreError> {
        let state = self.inner.state()?;
        self.scratch.clear();
        consumer_state::encode(&state, &mut self.scratch);
        let kind = Kind::ConsumerState;
        let file = file_id(&self.dir, kind);
        at_rest::seal_file(self.at_rest.as_ref(), &file, kind, &self.scratch)
    }

    /// Writes `state.latest` if the state changed since the last write.
    fn write_latest(&mut self) -> Result<(), StoreError> {
        if !self.changed {
            return Ok(());
        }
        let (flags, body) = self.sealed_state()?;
        let latest = self.dir.join(LATEST_FILE);
        let kind = Kind::ConsumerState;
        envelope::put_state_file(
            &*self.io,
            &latest,
            kind,
            (flags, &body),
            Durability::Unsynced,
        )?;
        self.changed = false;
        self.unsynced = true;
        Ok(())
    }

    /// Makes the state durable in `state.dat` if it is behind: written to `state.latest` by
    /// the atomic rule's write and sync, then renamed over `state.dat`, then the directory
    /// synced. Whenever the process dies, `state.latest`, if present, is the newest state.
    fn flush(&mut self) -> Result<(), StoreError> {
        if !self.changed && !self.unsynced {
            return Ok(());
        }
        let (flags, body) = self.sealed_state()?;
        let kind = Kind::ConsumerState;
        let latest = self.dir.join(LATEST_FILE);
        envelope::put_state_file(&*self.io, &latest, kind, (flags, &body), Durability::Synced)?;
        self.changed = false;
        self.unsynced = true;
        self.io
            .rename(&latest, &self.dir.join(STATE_FILE))
            .and_then(|()| self.io.sync_dir(&self.dir))
            .map_err(|e| StoreError::io("write state file", e))?;
        self.unsynced = false;
        Ok(())
    }
}

impl ConsumerStore for FileConsumerStore {
    fn set_starting(&mut self, stream_seq: u64) -> Result<(), StoreError> {
        self.change(|c| c.set_starting(stream_seq))
    }

    fn reset(&mut self, stream_seq: u64) -> Result<(), StoreError> {
        self.change(|c| c.reset(stream_seq))
    }

    fn has_state(&self) -> bool {
        self.inner.has_state()
    }

    fn update_delivered(
        &mut self,
        consumer_seq: u64,
        stream_seq: u64,
        delivery_count: u64,
        timestamp_ns: i64,
    ) -> Result<(), StoreError> {
        self.change(|c| c.update_delivered(consumer_seq, stream_seq, delivery_count, timestamp_ns))
    }

    fn update_acks(&mut self, consumer_seq: u64, stream_seq: u64) -> Result<(), StoreError> {
        self.change(|c| c.update_acks(consumer_seq, stream_seq))
    }

    fn remove_redelivered_below(&mut self, stream_seq: u64) {
        // The trait gives this call no error; on a stopped store it changes memory only.
        if !self.closed {
            self.changed = true;
        }
        self.inner.remove_redelivered_below(stream_seq);
    }

    fn update(&mut self, state: &ConsumerState) -> Result<(), StoreError> {
        self.change(|c| c.update(state))
    }

    fn force_update(&mut self, state: &ConsumerState) -> Result<(), StoreError> {
        self.change(|c| c.force_update(state))
    }

    fn state(&self) -> Result<ConsumerState, StoreError> {
        self.inner.state()
    }

    fn write(&mut self) -> Result<(), StoreError> {
        if self.closed {
            return Err(StoreError::Closed);
        }
        self.write_latest()
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        if self.closed {
            return Err(StoreError::Closed);
        }
        self.flush()
    }

    /// Writes the state if it changed, then closes, even when the write fails: the error
    /// says the last changes are not on disk.
    fn stop(&mut self) -> Result<(), StoreError> {
        if self.closed {
            return Ok(());
        }
        let flushed = self.flush();
        self.closed = true;
        self.inner.stop()?;
        flushed
    }
}
