//! The data key of an encrypted block file (`docs/store-format.md` §3, §11): a key record
//! right after the 32-byte header, wrapped with the server key for `msgs/<index>.blk` of the
//! stream (so a block copied to another place does not open there). This module draws and
//! wraps the key of a new block, opens the key record of a block found on disk (a wrong key
//! told apart from a damaged record); `super::rekey` rewrites blocks opened with `prev_key`
//! under the current key.

use super::at_rest::AtRest;
use super::block::{self, FLAG_ENCRYPTED, HEADER_BYTES};
use crate::error::StoreError;
use crate::seal::{parse_key_record, DataKey, KeySource, KEY_RECORD_BYTES};

/// Where the records of an encrypted block start: after the header and the key record.
pub const ENCRYPTED_DATA_START: u64 = HEADER_BYTES + KEY_RECORD_BYTES as u64;

/// The path of block `index` inside the stream's directory, which its key is bound to.
pub fn file_id(index: u32) -> String {
    format!("msgs/{}", block::file_name(index))
}

/// A fresh data key for new block `index` and its key record, wrapped with the current key.
pub fn new_block_key(
    at_rest: &AtRest,
    index: u32,
) -> Result<(DataKey, [u8; KEY_RECORD_BYTES]), StoreError> {
    let file = file_id(index);
    let key = at_rest.keys.new_data_key()?;
    let record = at_rest.keys.wrap(&at_rest.context(&file), &key)?;
    Ok((key, record))
}

/// What a block file's first bytes say about its encryption.
#[derive(Debug)]
pub struct BlockKey {
    /// Where its records start.
    pub data_start: u64,
    /// Its data key, when it is encrypted and the key record opened.
    pub key: Option<DataKey>,
    /// The key record opened only with `prev_key`.
    pub prev: bool,
    /// It is encrypted but its key record is damaged: its sealed records cannot be read.
    pub damaged: bool,
}

/// Opens the key record of block `index` from the start of its file `raw`, if the block is
/// encrypted: the header's flag says so, or, when the header fails its CRC, a valid key
/// record after it. An intact key record that no configured key opens, or any encrypted
/// block while no keys are configured, is `WrongKey`: nothing is damaged and the caller
/// changes no file. A file cut inside its key record is a block whose creation was torn:
/// it holds no record, and is not damage.
pub fn open_block_key(
    at_rest: Option<&AtRest>,
    index: u32,
    raw: &[u8],
) -> Result<BlockKey, StoreError> {
    let record = raw.get(HEADER_BYTES as usize..ENCRYPTED_DATA_START as usize);
    let intact = record.is_some_and(|r| parse_key_record(r).is_ok());
    let header = raw.get(..HEADER_BYTES as usize).unwrap_or_default();
    let encrypted = block::header_flags(header).map_or(intact, |f| f & FLAG_ENCRYPTED != 0);
    if !encrypted {
        return Ok(BlockKey {
            data_start: HEADER_BYTES,
            key: None,
            prev: false,
            damaged: false,
        });
    }
    // Encrypted while no keys are configured: the configuration is wrong, whatever state
    // the key record is in.
    let at_rest = at_rest.ok_or(StoreError::WrongKey)?;
    let unopened = BlockKey {
        data_start: ENCRYPTED_DATA_START,
        key: None,
        prev: false,
        damaged: record.is_some() && !intact,
    };
    let Some(record) = record.filter(|_| intact) else {
        return Ok(unopened);
    };
    let opened = at_rest
        .keys
        .unwrap(&at_rest.context(&file_id(index)), record)?;
    Ok(BlockKey {
        key: Some(opened.key),
        prev: opened.source == KeySource::Prev,
        ..unopened
    })
}
