//! `FileStore`'s data, opening (recovery of every block), and the write path: records are
//! encoded with the record codec and appended to the tail block; `sync_blocks` is the group
//! commit, one `fdatasync` per block written since the last. A tail past the block size
//! rotates at the next append after a sync, so every block but the tail is whole on disk.
//!
//! The in-memory state is a [`MemStore`] counting bytes with Go's file-store formula and
//! holding no headers or payloads: it answers every query and enforces the limits, and its
//! storage-update events tell this layer which messages to write tombstones for. Message
//! bodies are read back from the blocks by location. `TODO(#14)`: a bounded cache of recent
//! blocks, and an index of subjects that is not a map entry per message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::block::{self, Block, Loc, BLOCK_BYTES_DEFAULT, BLOCK_FILE_BYTES_MAX, HEADER_BYTES};
use super::record::{self, Kind, Record};
use super::recover::{scan_block, Replay};
use crate::error::StoreError;
use crate::io::{read_exact_at, OpenMode, StorageIo};
use crate::memstore::MemStore;
use crate::stream::StreamStore;
use crate::types::{LostData, MsgSizing, MsgTtl, StorageUpdateFn, StoreConfig};

/// File store settings that are not stream limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStoreOptions {
    /// A block rotates when the next record would take it past this many bytes.
    pub block_bytes: u64,
}

impl Default for FileStoreOptions {
    fn default() -> Self {
        FileStoreOptions {
            block_bytes: BLOCK_BYTES_DEFAULT,
        }
    }
}

/// Storage-update events seen by this layer: (message delta, sequence).
type Events = Arc<Mutex<Vec<(i64, u64)>>>;

/// How far past the block size a tail grows between syncs before it rotates (with a sync
/// of its own). Rotation normally waits for a group commit, so one batch stays in one block.
const BLOCK_OVERRUN_BYTES_MAX: u64 = 8 * 1024 * 1024;

/// A stream kept in block files under `<dir>/msgs`, through a [`StorageIo`].
pub struct FileStore {
    pub(super) io: Arc<dyn StorageIo>,
    pub(super) dir: PathBuf,
    pub(super) options: FileStoreOptions,
    pub(super) inner: MemStore,
    pub(super) blocks: BTreeMap<u32, Block>,
    /// Sequence → where its message record is, for every message held.
    pub(super) locs: BTreeMap<u64, Loc>,
    /// Blocks written since the last sync.
    pub(super) dirty: BTreeSet<u32>,
    /// The last sequence the log accounts for (messages, skips, truncates).
    pub(super) logged_last: u64,
    pub(super) lost: Option<LostData>,
    pub(super) events: Events,
    pub(super) user_updates: Arc<Mutex<Option<StorageUpdateFn>>>,
    /// Set by a failed write or sync: nothing more is acknowledged (`docs/store-format.md`
    /// §12); reads keep working.
    pub(super) failed: bool,
    /// The tail reached the block size at the last sync: the next record starts a block.
    rotate_next: bool,
    scratch: Vec<u8>,
}

impl FileStore {
    /// Opens (creating if needed) the stream stored under `dir`, recovering every block.
    pub fn open(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: StoreConfig,
        options: FileStoreOptions,
    ) -> Result<FileStore, StoreError> {
        let msgs_dir = dir.join("msgs");
        io.create_dir_all(&msgs_dir)
            .map_err(|e| StoreError::io("create directory", e))?;
        let mut store = FileStore {
            io,
            dir: msgs_dir,
            options,
            inner: MemStore::with_sizing(StoreConfig::default(), MsgSizing::File).without_bodies(),
            blocks: BTreeMap::new(),
            locs: BTreeMap::new(),
            dirty: BTreeSet::new(),
            logged_last: 0,
            lost: None,
            events: Arc::default(),
            user_updates: Arc::default(),
            failed: false,
            rotate_next: false,
            scratch: Vec::new(),
        };
        store.recover()?;
        store.hook_updates();
        store.mutate(0, |inner| inner.update_config(config))?;
        Ok(store)
    }

    /// Scans every block in index order into the in-memory state.
    fn recover(&mut self) -> Result<(), StoreError> {
        let names = self
            .io
            .list_dir(&self.dir)
            .map_err(|e| StoreError::io("list blocks", e))?;
        let indexes: BTreeSet<u32> = names.iter().filter_map(|n| block::parse_name(n)).collect();
        let tail = indexes.last().copied();
        let mut replay = Replay {
            inner: &mut self.inner,
            locs: &mut self.locs,
            lost: Vec::new(),
            bad_sizes: BTreeMap::new(),
            last: 0,
        };
        for index in indexes {
            let path = self.dir.join(block::file_name(index));
            let file = self
                .io
                .open(&path, OpenMode::ReadWrite)
                .map_err(|e| StoreError::io("open block", e))?;
            let size = file.size().map_err(|e| StoreError::io("block size", e))?;
            if size > BLOCK_FILE_BYTES_MAX {
                return Err(StoreError::Corrupt {
                    what: "block file length",
                });
            }
            let mut buf = vec![0u8; usize::try_from(size).unwrap_or(0)];
            read_exact_at(&*file, &mut buf, 0).map_err(|e| StoreError::io("read block", e))?;
            let end = scan_block(&buf, index, &mut replay);
            let mut len = size;
            if Some(index) == tail && (end.torn || size < HEADER_BYTES) {
                // Only the tail block can be torn by a crash: cut it back to its last whole
                // record (a header cut short is rewritten, it holds no record).
                len = end.good_end.max(HEADER_BYTES);
                file.set_len(end.good_end)
                    .and_then(|()| file.sync_data())
                    .map_err(|e| StoreError::io("cut torn tail", e))?;
                if end.good_end < HEADER_BYTES {
                    let header = block::encode_header(index, replay.last + 1, 0);
                    crate::io::write_all_at(&*file, &header, 0)
                        .and_then(|()| file.sync_data())
                        .map_err(|e| StoreError::io("rewrite block header", e))?;
                }
            }
            self.blocks.insert(
                index,
                Block {
                    index,
                    path,
                    file,
                    len,
                },
            );
        }
        self.logged_last = replay.last;
        if !replay.lost.is_empty() {
            self.lost = Some(LostData {
                bytes: replay.lost_bytes(),
                ranges: replay.lost,
            });
        }
        if self.blocks.is_empty() {
            let created = Block::create(&*self.io, &self.dir, 1, self.logged_last + 1)?;
            self.blocks.insert(1, created);
        }
        Ok(())
    }

    /// Routes the memory state's storage updates through this layer (to learn what was
    /// removed) and on to the caller's callback.
    fn hook_updates(&mut self) {
        let events = Arc::clone(&self.events);
        let user = Arc::clone(&self.user_updates);
        self.inner.register_storage_updates(Box::new(move |u| {
            events
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((u.msgs, u.seq));
            if let Some(cb) = user.lock().unwrap_or_else(PoisonError::into_inner).as_mut() {
                cb(u);
            }
        }));
    }

    pub(super) fn writable(&self) -> Result<(), StoreError> {
        if self.failed {
            return Err(StoreError::Io {
                op: "write (an earlier write or sync failed)",
                source: std::io::ErrorKind::Other.into(),
            });
        }
        Ok(())
    }

    /// Runs a change on the memory state, then logs what it did: tombstones for every
    /// message it removed and a skip for sequences it used without a record (`skip_ts` is
    /// that skip's time, see `StreamStore::skip_msg`).
    pub(super) fn mutate<T>(
        &mut self,
        skip_ts: i64,
        change: impl FnOnce(&mut MemStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.writable()?;
        let first_before = self.inner.fast_state().first_seq;
        let out = change(&mut self.inner);
        self.log_removals()?;
        let state = self.inner.fast_state();
        if first_before == 0 && state.first_seq != 0 && state.last_seq == 0 {
            // A purge of a store that never used a sequence moves its first sequence to 1:
            // a tombstone of sequence 0 records that (`docs/store-format.md` §2).
            self.append(Kind::Tombstone, 0, 0, &[])?;
        }
        let last = state.last_seq;
        if last > self.logged_last {
            let first = self.logged_last + 1;
            let count = (last - first + 1).to_le_bytes();
            self.append(Kind::Skip, first, skip_ts, &count)?;
            self.logged_last = last;
        }
        out
    }

    /// Writes a tombstone for every message the memory state dropped since the last call.
    pub(super) fn log_removals(&mut self) -> Result<(), StoreError> {
        let events =
            std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner));
        let removals: Vec<_> = events.into_iter().filter(|e| e.0 < 0).collect();
        if removals.is_empty() {
            return Ok(());
        }
        let seqs: Vec<u64> = if removals.iter().all(|e| e.0 == -1 && e.1 != 0) {
            removals.into_iter().map(|e| e.1).collect()
        } else {
            // A bulk removal names no sequences: the held locations the state no longer has.
            let inner = &self.inner;
            self.locs
                .keys()
                .copied()
                .filter(|s| inner.subject_for_seq(*s).is_err())
                .collect()
        };
        // One write for all of them: a purge of many messages is one append, not many.
        self.writable()?;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        for seq in seqs {
            if self.locs.remove(&seq).is_some() {
                let rec = Record {
                    kind: Kind::Tombstone,
                    erased: false,
                    seq,
                    timestamp_ns: 0,
                    ttl: MsgTtl::None,
                    subject: &[],
                    headers: &[],
                    payload: &[],
                };
                let encoded = record::encode(&rec, &mut buf);
                debug_assert!(encoded.is_some(), "an empty record always fits");
            }
        }
        let written = if buf.is_empty() {
            Ok(())
        } else {
            self.write_tail(&buf).map(|_| ())
        };
        self.scratch = buf;
        self.latch(written)
    }

    /// Latches the store after a failed write, so nothing more is acknowledged.
    fn latch<T>(&mut self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if matches!(result, Err(StoreError::Io { .. } | StoreError::StorageFull)) {
            self.failed = true;
        }
        result
    }

    /// Encodes and appends one record with no subject or headers (skip, tombstone, truncate).
    pub(super) fn append(
        &mut self,
        kind: Kind,
        seq: u64,
        timestamp_ns: i64,
        payload: &[u8],
    ) -> Result<Loc, StoreError> {
        let rec = Record {
            kind,
            erased: false,
            seq,
            timestamp_ns,
            ttl: MsgTtl::None,
            subject: &[],
            headers: &[],
            payload,
        };
        self.append_record(&rec)
    }

    /// Encodes and appends `rec` to the tail block, rotating first if it would not fit.
    pub(super) fn append_record(&mut self, rec: &Record<'_>) -> Result<Loc, StoreError> {
        self.writable()?;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let written = record::encode(rec, &mut buf)
            .ok_or(StoreError::MsgTooLarge)
            .and_then(|len| {
                let (block, offset) = self.write_tail(&buf)?;
                let len = u32::try_from(len).map_err(|_| StoreError::MsgTooLarge)?;
                Ok(Loc { block, offset, len })
            });
        self.scratch = buf;
        self.latch(written)
    }

    /// Appends `bytes` (whole records) to the tail block, rotating first when the last sync
    /// found it full; returns the block and offset they went to.
    fn write_tail(&mut self, bytes: &[u8]) -> Result<(u32, u64), StoreError> {
        let len = bytes.len();
        let Some(mut index) = self.blocks.keys().next_back().copied() else {
            return Err(StoreError::Corrupt { what: "no blocks" });
        };
        let tail_len = self.blocks.get(&index).map_or(0, |b| b.len);
        let overrun = tail_len + len as u64 > self.options.block_bytes + BLOCK_OVERRUN_BYTES_MAX;
        if tail_len > HEADER_BYTES && (self.rotate_next || overrun) {
            // The old tail is synced before a record goes to the new one, so a record in a
            // later block means every earlier block is whole: a gap between blocks after a
            // crash is damage, never unsynced writes landing out of order. Rotating right
            // after a group commit makes that free; only an overrun costs a sync of its own.
            self.sync_blocks()?;
            self.rotate_next = false;
            index += 1;
            let created = Block::create(&*self.io, &self.dir, index, self.logged_last + 1)?;
            self.blocks.insert(index, created);
        }
        let tail = self
            .blocks
            .get_mut(&index)
            .ok_or(StoreError::Corrupt { what: "tail block" })?;
        let offset = tail.append(bytes)?;
        self.dirty.insert(index);
        Ok((index, offset))
    }

    /// The group commit: one `fdatasync` per block written since the last one covers every
    /// record appended before it.
    pub(super) fn sync_blocks(&mut self) -> Result<(), StoreError> {
        self.writable()?;
        while let Some(index) = self.dirty.first().copied() {
            if let Some(block) = self.blocks.get(&index) {
                if let Err(e) = block.file.sync_data() {
                    self.failed = true;
                    return Err(StoreError::io("sync", e));
                }
            }
            self.dirty.remove(&index);
        }
        let tail_len = self.blocks.values().next_back().map_or(0, |b| b.len);
        self.rotate_next = tail_len >= self.options.block_bytes;
        Ok(())
    }
}
