//! Key rotation of block files (`docs/store-format.md` §11): a block whose key record only
//! `prev_key` opened is rewritten, after a sync, with the record wrapped under `key` (same
//! data key, same bytes otherwise), by the atomic rule; one block per sync, so a sync pays
//! for one rewrite at most.

use super::block::HEADER_BYTES;
use super::block_key::{file_id, ENCRYPTED_DATA_START};
use super::store::FileStore;
use crate::error::StoreError;
use crate::io::{read_exact_at, write_atomic, OpenMode};

impl FileStore {
    /// Blocks whose key record only `prev_key` opens: while any is left, `prev_key` must
    /// stay configured. Each sync rewrites one of them under `key`.
    pub fn blocks_under_prev_key(&self) -> usize {
        self.blocks.values().filter(|b| b.rewrap).count()
    }

    /// Rewrites the oldest block opened with `prev_key` with its key record wrapped under
    /// `key` (same data key, same bytes otherwise), by the atomic rule. Called with every
    /// record synced. A block whose rewrite fails (the old file stays whole: the rename is
    /// the commit) is still counted by [`FileStore::blocks_under_prev_key`] and tried again
    /// at the next sync, so the count never says `prev_key` can go while a block needs it.
    pub(super) fn rewrap_one_block(&mut self) {
        let Some(index) = self.blocks.values().find(|b| b.rewrap).map(|b| b.index) else {
            return;
        };
        let rewrapped = self.rewrap_block(index);
        debug_assert!(
            !matches!(rewrapped, Err(StoreError::WrongKey)),
            "the key opened it on open"
        );
        if rewrapped.is_ok() {
            if let Some(block) = self.blocks.get_mut(&index) {
                block.rewrap = false;
            }
        }
    }

    fn rewrap_block(&mut self, index: u32) -> Result<(), StoreError> {
        let (Some(at_rest), Some(block)) = (&self.at_rest, self.blocks.get(&index)) else {
            return Ok(());
        };
        let mut raw = vec![0u8; usize::try_from(block.len).unwrap_or(0)];
        read_exact_at(&*block.file, &mut raw, 0).map_err(|e| StoreError::io("read block", e))?;
        let slot = raw
            .get_mut(HEADER_BYTES as usize..ENCRYPTED_DATA_START as usize)
            .ok_or(StoreError::Corrupt { what: "key record" })?;
        let file = file_id(index);
        let Some(record) = at_rest.keys.rewrap(&at_rest.context(&file), slot)? else {
            return Ok(());
        };
        slot.copy_from_slice(&record);
        let path = block.path.clone();
        self.invalidate_index()?;
        write_atomic(&*self.io, &path, &raw).map_err(|e| StoreError::io("rewrap block", e))?;
        self.index.wrote(raw.len() as u64);
        let file = self
            .io
            .open(&path, OpenMode::ReadWrite)
            .map_err(|e| StoreError::io("open block", e))?;
        if let Some(block) = self.blocks.get_mut(&index) {
            block.file = file;
        }
        Ok(())
    }
}
