//! Opening one block file at recovery (`docs/store-format.md` §10, §11): read it whole, open
//! its key record if it is encrypted, decode its frames if it is sealed, scan its records
//! into the replay, and cut a torn tail back to its last whole record.

use std::path::Path;

use super::at_rest::AtRest;
use super::block::{self, Block, BLOCK_FILE_BYTES_MAX, HEADER_BYTES};
use super::block_key::open_block_key;
use super::recover::{scan_block, Replay};
use super::sealed;
use crate::error::StoreError;
use crate::io::{read_exact_at, write_all_at, OpenMode, StorageIo};

/// Where a block sits among those recovery opens.
#[derive(Clone, Copy)]
pub struct BlockRole {
    pub tail: bool,
    pub oldest: bool,
}

/// A block recovery opened, and how many lost ranges there were once it was entered.
pub struct OpenedBlock {
    pub block: Block,
    pub lost_at_entry: usize,
}

/// Opens block `index`, scans it into `replay` (opening its key record with `at_rest` if it
/// is encrypted, decoding its frames if it is sealed) and, for the tail, cuts a torn end back
/// to its last whole record. `WrongKey` comes before any byte of the file is changed.
pub fn open_block(
    io: &dyn StorageIo,
    dir: &Path,
    index: u32,
    at_rest: Option<&AtRest>,
    role: BlockRole,
    replay: &mut Replay<'_>,
) -> Result<OpenedBlock, StoreError> {
    let path = dir.join(block::file_name(index));
    let file = io
        .open(&path, OpenMode::ReadWrite)
        .map_err(|e| StoreError::io("open block", e))?;
    let size = file.size().map_err(|e| StoreError::io("block size", e))?;
    if size > BLOCK_FILE_BYTES_MAX {
        return Err(StoreError::Corrupt {
            what: "block file length",
        });
    }
    let mut raw = vec![0u8; usize::try_from(size).unwrap_or(0)];
    read_exact_at(&*file, &mut raw, 0).map_err(|e| StoreError::io("read block", e))?;
    let block_key = open_block_key(at_rest, index, &raw)?;
    let mut data_start = block_key.data_start;
    let mut key = block_key.key;
    let frames = sealed::frame_index(&raw, data_start);
    let (buf, frame_damage) = sealed::plain_content(raw, data_start, key.as_ref());
    replay.enter_block(&buf, role.oldest);
    let lost_at_entry = replay.lost.len();
    let end = scan_block(&buf, 0, index, (data_start, key.as_ref()), replay);
    let mut len = size;
    let mut plain_len = buf.len() as u64;
    if role.tail && frames.is_none() && (end.torn || size < data_start) {
        // Only the tail block can be torn by a crash: cut it back to its last whole record.
        // A header or key record cut short holds no record: the block is rewritten empty
        // and plain (an encrypted store starts its next block anyway, §11).
        let cut = if size < data_start { 0 } else { end.good_end };
        file.set_len(cut)
            .and_then(|()| file.sync_data())
            .map_err(|e| StoreError::io("cut torn tail", e))?;
        if cut < data_start {
            let header = block::encode_header(index, replay.last + 1, 0, 0);
            write_all_at(&*file, &header, 0)
                .and_then(|()| file.sync_data())
                .map_err(|e| StoreError::io("rewrite block header", e))?;
            (data_start, key) = (HEADER_BYTES, None);
        }
        len = cut.max(data_start);
        plain_len = len;
    }
    let block = Block {
        index,
        path,
        file,
        len,
        live: 0,
        live_bytes: 0,
        dead_bytes: 0,
        keep_as_is: end.damaged || frame_damage || block_key.damaged,
        frames,
        plain_len,
        data_start,
        key,
        created_here: false,
        rewrap: block_key.prev,
    };
    Ok(OpenedBlock {
        block,
        lost_at_entry,
    })
}
