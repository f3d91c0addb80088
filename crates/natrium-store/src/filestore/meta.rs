//! `meta.dat` of a stream or a consumer (`docs/store-format.md` §1, §5): the caller's
//! configuration bytes, opaque to the store, in an envelope written by the atomic rule.

use std::path::Path;

use super::envelope::{self, Kind, FLAG_ENCRYPTED};
use crate::error::StoreError;
use crate::io::StorageIo;

/// The file name in a stream's or a consumer's directory.
pub const META_FILE: &str = "meta.dat";

/// Writes a stream's configuration bytes to `<dir>/meta.dat`.
pub fn save_stream_meta(io: &dyn StorageIo, dir: &Path, config: &[u8]) -> Result<(), StoreError> {
    envelope::write_state_file(io, dir, META_FILE, Kind::StreamMeta, config)
}

/// Reads a stream's configuration bytes: `None` if there is no `meta.dat`, `Corrupt` if it is
/// damaged (the file is left in place).
pub fn load_stream_meta(io: &dyn StorageIo, dir: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    load(io, dir, Kind::StreamMeta)
}

/// Writes a consumer's configuration bytes to `<dir>/meta.dat`.
pub fn save_consumer_meta(io: &dyn StorageIo, dir: &Path, config: &[u8]) -> Result<(), StoreError> {
    envelope::write_state_file(io, dir, META_FILE, Kind::ConsumerMeta, config)
}

/// Reads a consumer's configuration bytes, as [`load_stream_meta`] does a stream's.
pub fn load_consumer_meta(io: &dyn StorageIo, dir: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    load(io, dir, Kind::ConsumerMeta)
}

fn load(io: &dyn StorageIo, dir: &Path, kind: Kind) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(file) = envelope::read_state_file(io, dir, META_FILE, kind)? else {
        return Ok(None);
    };
    refuse_encrypted(file.flags, kind)?;
    Ok(Some(file.body))
}

/// An encrypted body cannot be read until encryption is built (`TODO(#14)`); it is reported,
/// like damage, rather than parsed as plain bytes.
pub(super) fn refuse_encrypted(flags: u8, kind: Kind) -> Result<(), StoreError> {
    if flags & FLAG_ENCRYPTED != 0 {
        return Err(StoreError::Corrupt { what: kind.what() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{SimFs, StorageIo};

    #[test]
    fn store_meta_round_trips_and_kinds_stay_apart() {
        let fs = SimFs::new();
        let dir = Path::new("/s/obs/c");
        fs.create_dir_all(dir).unwrap();
        assert_eq!(load_consumer_meta(&fs, dir).unwrap(), None);
        save_consumer_meta(&fs, dir, b"{\"durable_name\":\"c\"}").unwrap();
        assert_eq!(
            load_consumer_meta(&fs, dir).unwrap().unwrap(),
            b"{\"durable_name\":\"c\"}"
        );
        // A stream's reader refuses a consumer's file: another magic.
        assert!(matches!(
            load_stream_meta(&fs, dir),
            Err(StoreError::Corrupt { .. })
        ));
        let stream_dir = Path::new("/s");
        save_stream_meta(&fs, stream_dir, b"").unwrap();
        assert_eq!(load_stream_meta(&fs, stream_dir).unwrap().unwrap(), b"");
    }
}
