//! `FileStore`'s data, opening (recovery of every block), and the write path: records are
//! encoded with the record codec and appended to the tail block; `sync_blocks` is the group
//! commit, one `fdatasync` per block written since the last. A tail past the block size
//! rotates at the next append after a sync, so every block but the tail is whole on disk.
//! With server keys (`AtRest`) new blocks are encrypted and message records are sealed for
//! the offset they are appended at; the first write after an open goes to a new block, so
//! no offset of an earlier process's encrypted tail is ever sealed again.
//!
//! The in-memory state is a `MemStore<Loc>` counting bytes with Go's file-store formula and
//! holding, for each message, where its record is instead of its headers and payload: it
//! answers every query and enforces the limits, and its removal log tells this layer which
//! records died. Bodies are read back from the blocks by location. Removals below the first
//! message are logged as one `First` record; others as tombstones. Each block counts its live
//! messages, and the oldest blocks with none are removed after a sync; a block in the middle
//! that is half dead is compacted (`compact`), and recent bytes are kept in the bounded record
//! cache (`cache`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::at_rest::AtRest;
use super::block::{self, Block, Loc, BLOCK_BYTES_DEFAULT};
use super::block_key;
use super::cache::{Staging, StoreCache};
use super::index::IndexState;
use super::record::{self, Kind, Record};
use super::recover::add_seq;
use super::scrub::ScrubState;
use crate::error::StoreError;
use crate::io::StorageIo;
use crate::memstore::{MemStore, Removal};
use crate::stream::StreamStore;
pub use crate::types::DamagedFile;
use crate::types::{LostData, MsgSizing, StoreConfig};

/// File store settings that are not stream limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStoreOptions {
    /// A block rotates when the next record would take it past this many bytes.
    pub block_bytes: u64,
    /// At most this many bytes of recently written records are kept in memory for loads.
    pub cache_bytes: u64,
    /// Blocks that are no longer the tail are compressed (stream `compression: s2`).
    pub compress: bool,
    /// `index.dat` is written by `StreamStore::maintain` once this many bytes (and at least
    /// the size of the last index) were written to blocks since the last one
    /// (`docs/store-format.md` §6).
    pub index_bytes: u64,
}

/// Smallest and largest block a stream's limits choose (`FileStoreOptions::for_stream`).
const BLOCK_BYTES_MIN: u64 = 32 * 1024;
const BLOCK_BYTES_MEDIUM: u64 = 4 * 1024 * 1024;

impl FileStoreOptions {
    /// The options for a stream with these limits: blocks of a quarter of `max_bytes` (so at
    /// most about a quarter more than the limit is kept on disk while the oldest block waits to
    /// be removed), between 32 KiB and 8 MiB; without `max_bytes`, 8 MiB blocks for limits
    /// retention and 4 MiB for interest and work-queue streams, whose messages go sooner. The
    /// record cache may hold one block's worth (a sequential reader needs one 64 KiB window;
    /// the rest serves re-reads of recent messages), so a small stream's cache stays small
    /// (Go's #4638: memory growing with the number of small streams).
    pub fn for_stream(max_bytes: Option<u64>, limits_retention: bool, compress: bool) -> Self {
        let block_bytes = match max_bytes {
            Some(max) => (max / 4).clamp(BLOCK_BYTES_MIN, BLOCK_BYTES_DEFAULT),
            None if limits_retention => BLOCK_BYTES_DEFAULT,
            None => BLOCK_BYTES_MEDIUM,
        };
        FileStoreOptions {
            block_bytes,
            cache_bytes: block_bytes.max(2 * super::cache::WINDOW_BYTES),
            compress,
            index_bytes: INDEX_BYTES_DEFAULT,
        }
    }
}

impl Default for FileStoreOptions {
    fn default() -> Self {
        FileStoreOptions {
            block_bytes: BLOCK_BYTES_DEFAULT,
            cache_bytes: CACHE_BYTES_DEFAULT,
            compress: false,
            index_bytes: INDEX_BYTES_DEFAULT,
        }
    }
}

/// How far past the block size a tail grows between syncs before it rotates (with a sync
/// of its own). Rotation normally waits for a group commit, so one batch stays in one block.
const BLOCK_OVERRUN_BYTES_MAX: u64 = 8 * 1024 * 1024;

/// Bytes written to blocks between two indexes written at a sync, by default: a reopen after
/// a crash scans at most about this much on top of the index.
pub const INDEX_BYTES_DEFAULT: u64 = 8 * 1024 * 1024;

/// The record cache's default budget per stream: four blocks' worth, so a consumer following
/// the stream, or reading back over the last blocks, reads from memory (Go keeps every block
/// read in the last seconds whole, with no budget).
pub const CACHE_BYTES_DEFAULT: u64 = 4 * BLOCK_BYTES_DEFAULT;

/// A stream kept in block files under `<dir>/msgs`, through a [`StorageIo`].
pub struct FileStore {
    pub(super) io: Arc<dyn StorageIo>,
    pub(super) dir: PathBuf,
    pub(super) options: FileStoreOptions,
    pub(super) inner: MemStore<Loc>,
    pub(super) blocks: BTreeMap<u32, Block>,
    /// Blocks written since the last sync.
    pub(super) dirty: BTreeSet<u32>,
    /// The last sequence the log accounts for (messages, skips, truncates).
    pub(super) logged_last: u64,
    pub(super) lost: Option<LostData>,
    /// What recovery found damaged, file by file.
    pub(super) report: RecoveryReport,
    /// The first sequence the last `First` record told the log.
    pub(super) logged_first: u64,
    /// Tombstones whose message record is still on disk: sequence → (the tombstone's block,
    /// the record's block). A tombstone not here deletes nothing any more: compaction drops
    /// it, and its bytes count as dead.
    pub(super) tombstones: BTreeMap<u64, (u32, u32)>,
    /// Set by a failed write or sync: nothing more is acknowledged (`docs/store-format.md`
    /// §12); reads keep working.
    pub(super) failed: bool,
    /// The tail reached the block size at the last sync: the next record starts a block.
    rotate_next: bool,
    /// Everything was purged: the next sync starts a fresh tail so the old one can go.
    rotate_empty: bool,
    staging: Staging,
    /// Block bytes kept in memory for loads (`super::cache`).
    pub(super) cache: Mutex<StoreCache>,
    scratch: Vec<u8>,
    /// Server keys: blocks this store creates (and rewrites) are encrypted.
    pub(super) at_rest: Option<AtRest>,
    /// Where a message record is sealed before it is appended.
    seal_scratch: Vec<u8>,
    /// What `index.dat` on disk describes, and what was written since (`super::index`).
    pub(super) index: IndexState,
    /// What a reopen from the index took on trust and is still to check (`super::scrub`).
    pub(super) scrub: ScrubState,
}

/// Recovery's progress, after each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoveryProgress {
    pub blocks_done: u64,
    pub blocks_total: u64,
    /// Messages recovered so far.
    pub msgs: u64,
}

/// What recovery found damaged, for the log line naming stream and file and the advisory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    pub damaged_files: Vec<DamagedFile>,
}

impl RecoveryReport {
    /// Notes block `index`: its lost ranges, and whether its bytes failed a check.
    pub(super) fn note(&mut self, index: u32, lost: &[(u64, u64)], damaged: bool) {
        if lost.is_empty() && !damaged {
            return;
        }
        if let Some(entry) = self.entry(index) {
            entry.lost.extend_from_slice(lost);
        }
    }

    /// Notes sequence `seq` lost in block `index` (joined to a range it touches).
    pub(super) fn note_lost(&mut self, index: u32, seq: u64) {
        if let Some(entry) = self.entry(index) {
            add_seq(&mut entry.lost, seq);
        }
    }

    /// Block `index`'s entry, added in file order if it has none.
    fn entry(&mut self, index: u32) -> Option<&mut DamagedFile> {
        let file = format!("msgs/{}", block::file_name(index));
        let at = self.damaged_files.partition_point(|f| f.file < file);
        if self.damaged_files.get(at).is_none_or(|f| f.file != file) {
            self.damaged_files.insert(
                at,
                DamagedFile {
                    file,
                    lost: Vec::new(),
                },
            );
        }
        self.damaged_files.get_mut(at)
    }
}

impl FileStore {
    /// What recovery found damaged when the store was opened, file by file.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.report
    }

    /// Turns compression of blocks that are no longer the tail on or off (a stream update);
    /// blocks already sealed stay as they are.
    pub fn set_compression(&mut self, compress: bool) {
        self.options.compress = compress;
    }

    /// Opens (creating if needed) the stream stored under `dir`, recovering every block.
    pub fn open(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: StoreConfig,
        options: FileStoreOptions,
    ) -> Result<FileStore, StoreError> {
        Self::open_at_rest_with_progress(io, dir, config, options, None, &mut |_| {})
    }

    /// As [`FileStore::open`], with block files encrypted under `at_rest`'s keys
    /// (`docs/store-format.md` §11): blocks it creates or rewrites are encrypted, encrypted
    /// blocks open with `key` or `prev_key`, plain blocks are read as they are. An encrypted
    /// block that no configured key opens (or any, with `at_rest` `None`) is `WrongKey`, and
    /// no file is changed.
    pub fn open_at_rest(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: StoreConfig,
        options: FileStoreOptions,
        at_rest: Option<AtRest>,
    ) -> Result<FileStore, StoreError> {
        Self::open_at_rest_with_progress(io, dir, config, options, at_rest, &mut |_| {})
    }

    /// As [`FileStore::open`], telling `progress` after each block recovered (the server logs
    /// a long recovery's progress from it).
    pub fn open_with_progress(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: StoreConfig,
        options: FileStoreOptions,
        progress: &mut dyn FnMut(RecoveryProgress),
    ) -> Result<FileStore, StoreError> {
        Self::open_at_rest_with_progress(io, dir, config, options, None, progress)
    }

    /// [`FileStore::open_at_rest`] and [`FileStore::open_with_progress`] together.
    pub fn open_at_rest_with_progress(
        io: Arc<dyn StorageIo>,
        dir: &Path,
        config: StoreConfig,
        options: FileStoreOptions,
        at_rest: Option<AtRest>,
        progress: &mut dyn FnMut(RecoveryProgress),
    ) -> Result<FileStore, StoreError> {
        let msgs_dir = dir.join("msgs");
        io.create_dir_all(&msgs_dir)
            .map_err(|e| StoreError::io("create directory", e))?;
        let mut store = FileStore {
            io,
            dir: msgs_dir,
            options,
            inner: MemStore::with_sizing(StoreConfig::default(), MsgSizing::File),
            blocks: BTreeMap::new(),
            dirty: BTreeSet::new(),
            logged_last: 0,
            lost: None,
            logged_first: 0,
            tombstones: BTreeMap::new(),
            failed: false,
            rotate_next: false,
            rotate_empty: false,
            staging: Staging::default(),
            cache: Mutex::new(StoreCache::default()),
            scratch: Vec::new(),
            report: RecoveryReport::default(),
            at_rest,
            seal_scratch: Vec::new(),
            index: IndexState::default(),
            scrub: ScrubState::default(),
        };
        store.recover(progress)?;
        store.inner.log_removals();
        store.mutate(0, |inner| inner.update_config(config))?;
        store.drop_dead_blocks()?;
        Ok(store)
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
        change: impl FnOnce(&mut MemStore<Loc>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.writable()?;
        let out = change(&mut self.inner);
        self.log_removals()?;
        let state = self.inner.fast_state();
        let last = state.last_seq;
        if last > self.logged_last {
            let first = self.logged_last + 1;
            let count = (last - first + 1).to_le_bytes();
            self.append(Kind::Skip, first, skip_ts, &count)?;
            self.logged_last = last;
        }
        out
    }

    /// Logs what the memory state removed since the last call: one `First` record for every
    /// message now below the first sequence, a tombstone for each other one, in one write.
    pub(super) fn log_removals(&mut self) -> Result<(), StoreError> {
        let removals = self.inner.take_removals();
        if removals.is_empty() {
            return Ok(());
        }
        let first = self.inner.fast_state().first_seq;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let mut tombstoned = Vec::new();
        for removal in removals {
            match removal {
                Removal::All => {
                    // Every message record dies: what a scan of the blocks would count.
                    for block in self.blocks.values_mut() {
                        block.live = 0;
                        block.dead_bytes += std::mem::take(&mut block.live_bytes);
                    }
                    self.rotate_empty = true;
                }
                Removal::One(seq, loc) => {
                    if let Some(block) = self.blocks.get_mut(&loc.block) {
                        block.kill(loc.len);
                    }
                    if seq >= first {
                        push_empty_record(&mut buf, Kind::Tombstone, seq, 0);
                        tombstoned.push((seq, loc.block));
                    }
                }
            }
        }
        if first > self.logged_first {
            push_empty_record(
                &mut buf,
                Kind::First,
                first,
                self.inner.fast_state().last_ts,
            );
            self.logged_first = first;
        }
        let written = if buf.is_empty() {
            Ok(())
        } else {
            self.writable()
                .and_then(|()| self.write_tail(&buf))
                .map(|(block, _)| {
                    for (seq, record_block) in tombstoned {
                        self.tombstones.insert(seq, (block, record_block));
                    }
                })
        };
        self.scratch = buf;
        self.latch(written)
    }

    /// Takes the removal log without writing anything (a truncate record covers it).
    pub(super) fn forget_removals(&mut self) {
        for removal in self.inner.take_removals() {
            if let Removal::One(_, loc) = removal {
                if let Some(block) = self.blocks.get_mut(&loc.block) {
                    block.kill(loc.len);
                }
            }
        }
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
        self.append_record(&Record::empty(kind, seq, timestamp_ns, payload))
    }

    /// Encodes and appends `rec` to the tail block, rotating first if it would not fit. In
    /// an encrypted tail a message record is sealed for the offset it goes to.
    pub(super) fn append_record(&mut self, rec: &Record<'_>) -> Result<Loc, StoreError> {
        self.writable()?;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let written = record::encode(rec, &mut buf)
            .ok_or(StoreError::MsgTooLarge)
            .and_then(|_| {
                let index = self.tail_for(buf.len())?;
                let tail = self
                    .blocks
                    .get_mut(&index)
                    .ok_or(StoreError::Corrupt { what: "tail block" })?;
                if let (Some(key), Kind::Msg) = (&tail.key, rec.kind) {
                    self.seal_scratch.clear();
                    record::seal(&buf, key, index, tail.len, &mut self.seal_scratch)?;
                    std::mem::swap(&mut buf, &mut self.seal_scratch);
                }
                let len = u32::try_from(buf.len()).map_err(|_| StoreError::MsgTooLarge)?;
                // Checked before the write: an offset a `Loc` can not hold is never written.
                Loc::new(index, tail.len, len).ok_or(StoreError::MsgTooLarge)?;
                let offset = tail.append(&buf)?;
                self.dirty.insert(index);
                self.index.wrote(buf.len() as u64);
                Loc::new(index, offset, len).ok_or(StoreError::MsgTooLarge)
            });
        if let (Ok(loc), Kind::Msg) = (&written, rec.kind) {
            self.cache_record(*loc, &buf);
        }
        self.scratch = buf;
        self.latch(written)
    }

    /// Keeps a copy of the message record just written at `loc`, within the budget.
    pub(super) fn cache_record(&mut self, loc: Loc, record: &[u8]) {
        let copy = self.staging.copy(record);
        self.cache
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .insert_written(loc, copy, self.options.cache_bytes);
    }

    /// Drops block `index`'s cached bytes (its bytes on disk changed, or it is going).
    pub(super) fn uncache(&mut self, index: u32) {
        self.cache
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drop_block(index);
    }

    /// Drops every cached byte.
    pub(super) fn release_caches(&mut self) {
        self.cache
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Appends `bytes` (whole records, none sealed) to the tail block, rotating first when
    /// the last sync found it full; returns the block and offset they went to.
    fn write_tail(&mut self, bytes: &[u8]) -> Result<(u32, u64), StoreError> {
        let index = self.tail_for(bytes.len())?;
        let tail = self
            .blocks
            .get_mut(&index)
            .ok_or(StoreError::Corrupt { what: "tail block" })?;
        let offset = tail.append(bytes)?;
        self.dirty.insert(index);
        self.index.wrote(bytes.len() as u64);
        Ok((index, offset))
    }

    /// The block `len` more bytes go to: the tail, or a new block when the last sync found
    /// the tail full, when it would grow too far past the block size, or when it is not one
    /// this process created while keys are configured (an encrypted block from an earlier
    /// process never takes another sealed record, and a plain one gives way to an encrypted
    /// one, `docs/store-format.md` §11).
    pub(super) fn tail_for(&mut self, len: usize) -> Result<u32, StoreError> {
        let Some(tail) = self.blocks.values().next_back() else {
            return Err(StoreError::Corrupt { what: "no blocks" });
        };
        let (mut index, tail_len) = (tail.index, tail.len);
        let overrun = tail_len + len as u64 > self.options.block_bytes + BLOCK_OVERRUN_BYTES_MAX;
        let full = tail_len > tail.data_start && (self.rotate_next || overrun);
        let foreign = self.at_rest.is_some() && !tail.created_here;
        if full || foreign {
            // The old tail is synced before a record goes to the new one, so a record in a
            // later block means every earlier block is whole: a gap between blocks after a
            // crash is damage, never unsynced writes landing out of order. Rotating right
            // after a group commit makes that free; only an overrun costs a sync of its own.
            self.sync_blocks()?;
            self.rotate_next = false;
            index += 1;
            let created = self.create_block(index, self.logged_last + 1)?;
            self.blocks.insert(index, created);
        }
        Ok(index)
    }

    /// Creates block `index`, encrypted under a fresh data key when keys are configured.
    pub(super) fn create_block(&self, index: u32, first_seq: u64) -> Result<Block, StoreError> {
        let sealing = self
            .at_rest
            .as_ref()
            .map(|a| block_key::new_block_key(a, index))
            .transpose()?;
        Block::create(&*self.io, &self.dir, index, first_seq, sealing)
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

    /// A sync at a caller's request (`StreamStore::sync`, stop): the group commit, then,
    /// with every record durable, the clean-up that needs it: a fresh tail after a purge,
    /// and the removal of dead blocks. Never run inside a change, whose records are not
    /// all written yet.
    pub(super) fn sync_and_tidy(&mut self) -> Result<(), StoreError> {
        self.sync_blocks()?;
        let (tail_index, tail_used) = self
            .blocks
            .values()
            .next_back()
            .map_or((0, false), |b| (b.index, b.len > b.data_start));
        if std::mem::take(&mut self.rotate_empty) && tail_used && self.inner.fast_state().msgs == 0
        {
            // After a purge the old tail holds only dead records: a fresh tail, whose header
            // carries the next sequence, lets every old block go now.
            let created = self.create_block(tail_index + 1, self.logged_last + 1)?;
            self.blocks.insert(tail_index + 1, created);
            self.rotate_next = false;
        }
        self.drop_dead_blocks()?;
        self.compact_one_block();
        self.seal_one_block();
        self.rewrap_one_block();
        // `index.dat` is not written here: acks wait for this sync, and the engine writes
        // the index after it released them (`StreamStore::maintain`).
        Ok(())
    }

    /// Removes the oldest blocks while they hold no live message (never the tail). Called
    /// only when everything written is synced, so the records that killed their messages are
    /// durable first. Safe because each block's records can matter only to it and older
    /// blocks: tombstones and `First` records name older sequences, and the next block's
    /// header carries the sequence the stream had reached (`docs/store-format.md` §4).
    pub(super) fn drop_dead_blocks(&mut self) -> Result<(), StoreError> {
        let dead: Vec<u32> = self
            .blocks
            .values()
            .take(self.blocks.len().saturating_sub(1))
            .take_while(|b| b.live == 0)
            .map(|b| b.index)
            .collect();
        if dead.is_empty() {
            return Ok(());
        }
        // What the removed blocks told (the first sequence, the last time) goes on in the tail.
        self.carry_first_record()?;
        let mut removed = false;
        for index in dead {
            self.uncache(index);
            let Some(block) = self.blocks.remove(&index) else {
                continue;
            };
            self.forget_tombstones_of(index);
            let path = block.path.clone();
            drop(block);
            // A block that cannot be removed is only space not yet returned: nothing is lost
            // and the records that killed it stay durable, so the sync still succeeds. It is
            // tried again at the next open.
            if self.io.remove(&path).is_err() {
                break;
            }
            removed = true;
        }
        if removed {
            // Same: a removal that does not persist leaves a dead block for the next open.
            let _ = self.io.sync_dir(&self.dir);
        }
        Ok(())
    }
}

impl FileStore {
    /// A truncate to `seq` was logged: tombstones above it delete nothing it does not.
    pub(super) fn tombstones_above_truncate(&mut self, seq: u64) {
        let above = self.tombstones.split_off(&seq.saturating_add(1));
        for (tomb_block, _) in above.into_values() {
            if let Some(block) = self.blocks.get_mut(&tomb_block) {
                block.dead_bytes += record::RECORD_BYTES_MIN as u64;
            }
        }
    }

    /// The records of block `index` are gone: tombstones for them delete nothing any more.
    fn forget_tombstones_of(&mut self, index: u32) {
        let done: Vec<(u64, u32)> = self
            .tombstones
            .iter()
            .filter(|(_, (_, record_block))| *record_block == index)
            .map(|(seq, (tomb_block, _))| (*seq, *tomb_block))
            .collect();
        for (seq, tomb_block) in done {
            self.tombstones.remove(&seq);
            if let Some(block) = self.blocks.get_mut(&tomb_block) {
                block.dead_bytes += record::RECORD_BYTES_MIN as u64;
            }
        }
    }

    /// Writes a `First` record of the stream's first sequence and last time into the tail,
    /// synced: the blocks that told them are about to be removed, and without it their
    /// sequences would read as lost and the last time would be forgotten. Never sealed, so
    /// it may go into an encrypted tail an earlier process wrote (§11).
    fn carry_first_record(&mut self) -> Result<(), StoreError> {
        let mut buf = Vec::new();
        let state = self.inner.fast_state();
        push_empty_record(&mut buf, Kind::First, state.first_seq, state.last_ts);
        let Some(tail) = self.blocks.values_mut().next_back() else {
            return Ok(());
        };
        let written = tail
            .append(&buf)
            .and_then(|_| tail.file.sync_data().map_err(|e| StoreError::io("sync", e)));
        self.latch(written)?;
        self.index.wrote(buf.len() as u64);
        self.logged_first = state.first_seq;
        Ok(())
    }
}

/// Appends an empty record (tombstone, `First`) to `buf`.
fn push_empty_record(buf: &mut Vec<u8>, kind: Kind, seq: u64, timestamp_ns: i64) {
    let encoded = record::encode(&Record::empty(kind, seq, timestamp_ns, &[]), buf);
    debug_assert!(encoded.is_some(), "an empty record always fits");
}
