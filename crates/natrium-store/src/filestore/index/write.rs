//! Writing `index.dat` (`docs/store-format.md` §6): a snapshot of the in-memory state and
//! of each block's checks, written by the atomic rule with every block synced, on stop and
//! by `maintain` (which the engine calls when the stream is quiet) once enough was written since the
//! last; never for a store whose recovery or scrub found damage. Before a block the index covers is changed other than by appending, the index is
//! removed (and the directory synced), so no index on disk ever disagrees with the blocks.

use std::io::ErrorKind;

use super::format::{self, BlockEntry, IndexBody};
use super::state::{INDEX_FILE, INDEX_FILE_ID};
use crate::error::StoreError;
use crate::filestore::at_rest;
use crate::filestore::block::{Block, HEADER_BYTES};
use crate::filestore::envelope::{self, Kind};
use crate::filestore::store::FileStore;
use crate::io::read_exact_at;
use crate::memstore::Bounds;
use crate::stream::StreamStore;

impl FileStore {
    /// Removes `index.dat` before a change to bytes it covers (an erase, a block rewrite), and
    /// makes the removal durable first. Nothing to do when no index is on disk.
    pub(in crate::filestore) fn invalidate_index(&mut self) -> Result<(), StoreError> {
        if !self.index.on_disk {
            return Ok(());
        }
        match self.io.remove(&self.dir.join(INDEX_FILE)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io("remove index", e)),
        }
        self.io
            .sync_dir(&self.dir)
            .map_err(|e| StoreError::io("sync directory", e))?;
        self.index.on_disk = false;
        self.index.basis.clear();
        Ok(())
    }

    /// After a sync (with a block unsynced, nothing is written): writes the index if it does
    /// not describe the blocks as they are and, unless `stopping`, enough was written since
    /// the last one. A failed write changes nothing that matters: the index is a cache, and
    /// the one on disk (if any) still holds with the blocks.
    pub(in crate::filestore) fn index_after_sync(&mut self, stopping: bool) {
        let damaged = self.lost.is_some() || !self.report.damaged_files.is_empty();
        if self.failed || damaged || !self.dirty.is_empty() {
            return;
        }
        let now: Vec<(u32, u64)> = self.blocks.values().map(|b| (b.index, b.len)).collect();
        if self.index.on_disk && self.index.basis == now {
            return;
        }
        let due = self.options.index_bytes.max(self.index.last_size);
        if stopping || self.index.written >= due {
            let _ = self.write_index();
        }
    }

    /// Writes `index.dat` from the current state.
    fn write_index(&mut self) -> Result<(), StoreError> {
        let body = self.index_body()?;
        let msgs = usize::try_from(self.inner.fast_state().msgs).unwrap_or(0);
        let mut plain = Vec::with_capacity(12 * msgs + 1024);
        format::encode(&body, || self.inner.restored_msgs(), &mut plain);
        let (flags, sealed) = match self.at_rest.as_ref() {
            None => (0, plain),
            at_rest => at_rest::seal_file(at_rest, INDEX_FILE_ID, Kind::Index, &plain)?,
        };
        envelope::write_state_file_with(
            &*self.io,
            &self.dir,
            INDEX_FILE,
            Kind::Index,
            flags,
            &sealed,
        )?;
        self.index.on_disk = true;
        self.index.basis = body.blocks.iter().map(|b| (b.index, b.covered)).collect();
        self.index.written = 0;
        self.index.last_size = sealed.len() as u64;
        Ok(())
    }

    /// What the index says of the current state.
    fn index_body(&self) -> Result<IndexBody, StoreError> {
        let state = self.inner.fast_state();
        let subjects = self.inner.subject_table();
        let blocks = self
            .blocks
            .values()
            .map(block_entry)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(IndexBody {
            last: self.logged_last,
            bounds: Bounds {
                first_seq: state.first_seq,
                last_seq: state.last_seq,
                last_ts: state.last_ts,
            },
            subjects,
            blocks,
            tombstones: self.tombstones.iter().map(|(s, t)| (*s, *t)).collect(),
        })
    }
}

/// A block's entry: its lengths and accounting, and the checks read back from its file.
fn block_entry(block: &Block) -> Result<BlockEntry, StoreError> {
    let mut header = [0u8; HEADER_BYTES as usize];
    read_exact_at(&*block.file, &mut header, 0).map_err(|e| StoreError::io("read block", e))?;
    let mut end = [0u8; 4];
    let end_at = block.len.checked_sub(4).ok_or(StoreError::Corrupt {
        what: "block length",
    })?;
    read_exact_at(&*block.file, &mut end, end_at).map_err(|e| StoreError::io("read block", e))?;
    let crc = header.get(28..32).and_then(|b| b.try_into().ok());
    Ok(BlockEntry {
        index: block.index,
        covered: block.len,
        plain_len: block.plain_len,
        data_start: block.data_start,
        header_crc: crc.map_or(0, u32::from_le_bytes),
        end_check: u32::from_le_bytes(end),
        record_bytes: block.dead_bytes + block.live_bytes,
        frames: block
            .frames
            .as_ref()
            .map(|f| f.entries().to_vec())
            .unwrap_or_default(),
    })
}
