//! Opening a stream's blocks (`docs/store-format.md` §10): the full scan of every block in
//! index order, or the index of §6 with the scan over what follows it (`super::index`), and
//! the bookkeeping both leave behind: the last logged sequence, lost ranges, tombstones
//! still tracked, and each block's live and dead bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::at_rest::AtRest;
use super::block::{self, Block, Loc};
use super::index;
use super::open::{open_block, BlockRole};
use super::recover::Replay;
use super::store::{FileStore, RecoveryProgress, RecoveryReport};
use crate::error::StoreError;
use crate::io::StorageIo;
use crate::memstore::MemStore;
use crate::stream::StreamStore;
use crate::types::{LostData, MsgSizing, StoreConfig};

/// What a replay leaves besides the messages.
pub struct Scanned {
    /// The last sequence the records account for.
    pub last: u64,
    /// Per block: bytes of message records and of tombstones that delete nothing.
    pub record_bytes: BTreeMap<u32, u64>,
    pub tombstones: BTreeMap<u64, (u32, u32)>,
    pub lost: Option<LostData>,
}

impl Replay<'_> {
    /// The replay's bookkeeping, once every block was scanned.
    pub fn finish(mut self) -> Scanned {
        let mut record_bytes = std::mem::take(&mut self.msg_bytes);
        for (index, bytes) in std::mem::take(&mut self.garbage) {
            *record_bytes.entry(index).or_default() += bytes;
        }
        let lost = (!self.lost.is_empty()).then(|| LostData {
            bytes: self.lost_bytes(),
            ranges: std::mem::take(&mut self.lost),
        });
        Scanned {
            last: self.last,
            record_bytes,
            tombstones: std::mem::take(&mut self.tombstones),
            lost,
        }
    }
}

/// A recovered stream, before it replaces the store's empty state.
pub struct Recovered {
    pub inner: MemStore<Loc>,
    pub blocks: BTreeMap<u32, Block>,
    pub report: RecoveryReport,
    pub scanned: Scanned,
}

/// A fresh replay over `inner`, starting from `last` with `record_bytes` and `tombstones`.
pub fn replay_from(
    inner: &mut MemStore<Loc>,
    last: u64,
    record_bytes: BTreeMap<u32, u64>,
    tombstones: BTreeMap<u64, (u32, u32)>,
) -> Replay<'_> {
    Replay {
        inner,
        lost: Vec::new(),
        bad_sizes: BTreeMap::new(),
        last,
        msg_bytes: record_bytes,
        deleted_ahead: BTreeSet::new(),
        tombstones,
        garbage: BTreeMap::new(),
    }
}

/// An empty in-memory state for recovery: no limits, so replay removes only what the log
/// says was removed.
pub fn empty_state() -> MemStore<Loc> {
    MemStore::with_sizing(StoreConfig::default(), MsgSizing::File)
}

/// Where blocks are opened from, and where they go.
pub struct BlockScan<'a> {
    pub io: &'a dyn StorageIo,
    pub dir: &'a Path,
    pub at_rest: Option<&'a AtRest>,
    /// Every block index in the directory (the last is the tail, the first the oldest).
    pub all: &'a BTreeSet<u32>,
}

impl BlockScan<'_> {
    /// Opens and scans `indexes` (ascending) into `replay` as the full scan does, after
    /// `previous`, the block scanned before them; adds them to `blocks` and their damage to
    /// `report`, telling `progress` after each (the first being number `done + 1`).
    pub fn scan(
        &self,
        indexes: &[u32],
        replay: &mut Replay<'_>,
        out: (&mut BTreeMap<u32, Block>, &mut RecoveryReport),
        mut previous: Option<u32>,
        progress: &mut dyn FnMut(RecoveryProgress),
    ) -> Result<(), StoreError> {
        let (blocks, report) = out;
        let total = self.all.len() as u64;
        for index in indexes.iter().copied() {
            let role = BlockRole {
                tail: self.all.last() == Some(&index),
                oldest: self.all.first() == Some(&index),
            };
            let before = replay.lost.len();
            let opened = open_block(self.io, self.dir, index, self.at_rest, role, replay)?;
            // A gap found entering this block is the end of the previous one.
            let entered = opened.lost_at_entry;
            if let (Some(prev), Some(gaps)) = (previous, replay.lost.get(before..entered)) {
                report.note(prev, gaps, false);
            }
            let found = replay.lost.get(entered..).unwrap_or_default();
            report.note(index, found, opened.block.keep_as_is);
            blocks.insert(index, opened.block);
            previous = Some(index);
            progress(RecoveryProgress {
                blocks_done: blocks.len() as u64,
                blocks_total: total,
                msgs: replay.inner.fast_state().msgs,
            });
        }
        Ok(())
    }
}

impl FileStore {
    /// Recovers every block into the in-memory state: from `index.dat` and the bytes after
    /// it when it holds together with the blocks, else by the full scan. Tells `progress`
    /// after each block.
    pub(super) fn recover(
        &mut self,
        progress: &mut dyn FnMut(RecoveryProgress),
    ) -> Result<(), StoreError> {
        let names = self
            .io
            .list_dir(&self.dir)
            .map_err(|e| StoreError::io("list blocks", e))?;
        let all: BTreeSet<u32> = names.iter().filter_map(|n| block::parse_name(n)).collect();
        let scan = BlockScan {
            io: &*self.io,
            dir: &self.dir,
            at_rest: self.at_rest.as_ref(),
            all: &all,
        };
        let found_index = names.iter().any(|n| n == index::INDEX_FILE);
        let from_index = if found_index {
            index::load(&scan, progress)
        } else {
            None
        };
        let used = from_index.is_some();
        let (recovered, covered, basis, size) = match from_index {
            Some(loaded) => {
                let basis = if loaded.rewrite {
                    Vec::new()
                } else {
                    loaded.covered.clone()
                };
                (loaded.recovered, loaded.covered, basis, loaded.size)
            }
            None => (full_scan(&scan, progress)?, Vec::new(), Vec::new(), 0),
        };
        self.index.opened(found_index, used, basis, size);
        for name in names.iter().filter(|n| is_leftover_tmp(n)) {
            // A compaction that never reached its rename (the block it meant to replace is
            // whole, `docs/store-format.md` §9), or an index write that never reached its
            // own. Removed only now that every block opened, so an open that fails (a wrong
            // key) changes no file.
            let _ = self.io.remove(&self.dir.join(name));
        }
        self.settle(recovered)?;
        // What the index covered was taken on trust: checked later, a step at a time.
        self.start_scrub(&covered);
        Ok(())
    }

    /// Takes a recovered state: the messages and blocks, and each block's live and dead
    /// bytes from the records the replay counted in it.
    fn settle(&mut self, recovered: Recovered) -> Result<(), StoreError> {
        let Recovered {
            inner,
            blocks,
            report,
            scanned,
        } = recovered;
        self.inner = inner;
        self.blocks = blocks;
        self.report = report;
        self.logged_last = scanned.last;
        self.tombstones = scanned.tombstones;
        self.lost = scanned.lost;
        if self.blocks.is_empty() {
            let created = self.create_block(1, self.logged_last + 1)?;
            self.blocks.insert(1, created);
        }
        self.logged_first = self.inner.fast_state().first_seq;
        for (index, bytes) in scanned.record_bytes {
            if let Some(block) = self.blocks.get_mut(&index) {
                block.dead_bytes = bytes;
            }
        }
        for (_, loc) in self.inner.bodies() {
            if let Some(block) = self.blocks.get_mut(&loc.block) {
                block.live += 1;
                block.live_bytes += u64::from(loc.len);
                block.dead_bytes = block.dead_bytes.saturating_sub(u64::from(loc.len));
            }
        }
        Ok(())
    }
}

/// Scans every block in index order.
pub fn full_scan(
    scan: &BlockScan<'_>,
    progress: &mut dyn FnMut(RecoveryProgress),
) -> Result<Recovered, StoreError> {
    let mut inner = empty_state();
    let mut blocks = BTreeMap::new();
    let mut report = RecoveryReport::default();
    let mut replay = replay_from(&mut inner, 0, BTreeMap::new(), BTreeMap::new());
    let indexes: Vec<u32> = scan.all.iter().copied().collect();
    scan.scan(
        &indexes,
        &mut replay,
        (&mut blocks, &mut report),
        None,
        progress,
    )?;
    let scanned = replay.finish();
    Ok(Recovered {
        inner,
        blocks,
        report,
        scanned,
    })
}

/// A temporary file of an atomic write that never reached its rename: a block rewrite's
/// (`<block>.tmp`), the index's or the schedule index's.
fn is_leftover_tmp(name: &str) -> bool {
    name.strip_suffix(".tmp").is_some_and(|b| {
        block::parse_name(b).is_some()
            || b == index::INDEX_FILE
            || b == super::schedule_index::SCHEDULES_FILE
    })
}
