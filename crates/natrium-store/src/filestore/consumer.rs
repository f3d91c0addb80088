//! `FileConsumerStore`: a consumer's state kept in memory by the same bookkeeping as
//! [`MemConsumerStore`] and written to `<dir>/state.dat` (`docs/store-format.md` §7) by the
//! atomic rule.
//!
//! **When the state reaches the disk.** Deliveries and acks change only the memory state;
//! [`ConsumerStore::sync`] writes it, if it changed since the last write, and so does
//! [`ConsumerStore::stop`]. Go flushes consumer state on a timer; here the caller decides:
//! the stream engine calls `sync` in its group commit, and a caller that needs an ack to be
//! durable before it answers calls `sync` first. After a crash the state is the one of the
//! last successful `sync`: deliveries after it are redelivered, as Go's are.
//!
//! A failed write leaves the previous `state.dat` whole (the atomic rule) and the state
//! marked as changed, so the next `sync` writes it again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::at_rest::{self, AtRest};
use super::consumer_state;
use super::envelope::{self, Kind};
use super::meta::file_id;
use crate::consumer::{ConsumerState, ConsumerStore, ConsumerStoreConfig};
use crate::error::StoreError;
use crate::io::StorageIo;
use crate::memstore::MemConsumerStore;

/// The file name in a consumer's directory.
pub const STATE_FILE: &str = "state.dat";

/// A consumer's state, held in memory and written to `<dir>/state.dat` on `sync` and `stop`.
pub struct FileConsumerStore {
    io: Arc<dyn StorageIo>,
    dir: PathBuf,
    inner: MemConsumerStore,
    /// The state may differ from what `state.dat` holds.
    changed: bool,
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
        let (state, rewrite) = match envelope::read_state_file(&*io, dir, STATE_FILE, kind)? {
            Some(read) => {
                let (body, rewrite) =
                    at_rest::open_file(at_rest.as_ref(), &file, kind, read.flags, read.body)?;
                (consumer_state::decode(&body)?, rewrite)
            }
            None => (ConsumerState::default(), false),
        };
        Ok(FileConsumerStore {
            io,
            dir: dir.to_path_buf(),
            inner: MemConsumerStore::with_state(config, state),
            changed: rewrite,
            closed: false,
            scratch: Vec::new(),
            at_rest,
        })
    }

    /// The consumer's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the state changed since `state.dat` was last written.
    pub fn has_unsynced(&self) -> bool {
        self.changed
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

    /// Writes the state if it changed since the last write.
    fn flush(&mut self) -> Result<(), StoreError> {
        if !self.changed {
            return Ok(());
        }
        let state = self.inner.state()?;
        self.scratch.clear();
        consumer_state::encode(&state, &mut self.scratch);
        let kind = Kind::ConsumerState;
        let file = file_id(&self.dir, kind);
        let (flags, body) = at_rest::seal_file(self.at_rest.as_ref(), &file, kind, &self.scratch)?;
        envelope::write_state_file_with(&*self.io, &self.dir, STATE_FILE, kind, flags, &body)?;
        self.changed = false;
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
