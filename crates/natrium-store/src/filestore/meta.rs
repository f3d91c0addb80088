//! `meta.dat` of a stream or a consumer (`docs/store-format.md` §1, §5): the caller's
//! configuration bytes, opaque to the store, in an envelope written by the atomic rule.

use std::path::Path;

use super::at_rest::{self, AtRest};
use super::envelope::{self, Kind};
use crate::error::StoreError;
use crate::io::StorageIo;

/// The file name in a stream's or a consumer's directory.
pub const META_FILE: &str = "meta.dat";

/// Writes a stream's configuration bytes to `<dir>/meta.dat`.
pub fn save_stream_meta(io: &dyn StorageIo, dir: &Path, config: &[u8]) -> Result<(), StoreError> {
    save(io, dir, Kind::StreamMeta, None, config)
}

/// Reads a stream's configuration bytes: `None` if there is no `meta.dat`, `Corrupt` if it is
/// damaged (the file is left in place), `WrongKey` if it is encrypted.
pub fn load_stream_meta(io: &dyn StorageIo, dir: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(load(io, dir, Kind::StreamMeta, None)?.map(|(body, _)| body))
}

/// Writes a consumer's configuration bytes to `<dir>/meta.dat`.
pub fn save_consumer_meta(io: &dyn StorageIo, dir: &Path, config: &[u8]) -> Result<(), StoreError> {
    save(io, dir, Kind::ConsumerMeta, None, config)
}

/// Reads a consumer's configuration bytes, as [`load_stream_meta`] does a stream's.
pub fn load_consumer_meta(io: &dyn StorageIo, dir: &Path) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(load(io, dir, Kind::ConsumerMeta, None)?.map(|(body, _)| body))
}

/// Writes `<dir>/meta.dat` of `kind` (stream or consumer), sealed when `at_rest` is given.
/// The key is bound to the file's path inside the stream's directory: `meta.dat` for the
/// stream, `obs/<consumer>/meta.dat` for a consumer (`dir`'s last component names it).
pub fn save(
    io: &dyn StorageIo,
    dir: &Path,
    kind: Kind,
    at_rest: Option<&AtRest>,
    config: &[u8],
) -> Result<(), StoreError> {
    let (flags, body) = at_rest::seal_file(at_rest, &file_id(dir, kind), kind, config)?;
    envelope::write_state_file_with(io, dir, META_FILE, kind, flags, &body)
}

/// Reads `<dir>/meta.dat` of `kind`, opening it with `at_rest` when it is sealed: the body,
/// and whether it should be written again (`prev_key` opened it, or it was written plain).
pub fn load(
    io: &dyn StorageIo,
    dir: &Path,
    kind: Kind,
    at_rest: Option<&AtRest>,
) -> Result<Option<(Vec<u8>, bool)>, StoreError> {
    let Some(file) = envelope::read_state_file(io, dir, META_FILE, kind)? else {
        return Ok(None);
    };
    at_rest::open_file(at_rest, &file_id(dir, kind), kind, file.flags, file.body).map(Some)
}

/// A state file's path inside the stream's directory, which its key is bound to.
pub(super) fn file_id(dir: &Path, kind: Kind) -> String {
    let name = match kind {
        Kind::ConsumerState => super::consumer::STATE_FILE,
        _ => META_FILE,
    };
    match kind {
        Kind::ConsumerMeta | Kind::ConsumerState => {
            let consumer = dir
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            format!("obs/{consumer}/{name}")
        }
        _ => name.to_string(),
    }
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

    #[test]
    fn store_meta_sealed_with_keys_and_bound_to_its_file() {
        let fs = SimFs::new();
        let keys = crate::seal::ServerKeys::new(b"key", None, crate::seal::Cipher::ChaCha).unwrap();
        let at_rest = AtRest {
            keys: std::sync::Arc::new(keys),
            account: "ACC".into(),
            stream: "ORDERS".into(),
        };
        let dir = Path::new("/s/obs/c");
        fs.create_dir_all(dir).unwrap();
        save(
            &fs,
            dir,
            Kind::ConsumerMeta,
            Some(&at_rest),
            b"{\"durable_name\":\"c\"}",
        )
        .unwrap();
        let (body, rewrite) = load(&fs, dir, Kind::ConsumerMeta, Some(&at_rest))
            .unwrap()
            .unwrap();
        assert_eq!(
            (body.as_slice(), rewrite),
            (&b"{\"durable_name\":\"c\"}"[..], false)
        );
        assert!(matches!(
            load_consumer_meta(&fs, dir),
            Err(StoreError::WrongKey)
        ));
        // The same bytes under another consumer's name do not open: the key is bound to it.
        let other = Path::new("/s/obs/d");
        fs.create_dir_all(other).unwrap();
        let bytes = fs.contents(&dir.join(META_FILE)).unwrap();
        let file = fs
            .open(&other.join(META_FILE), crate::io::OpenMode::Truncate)
            .unwrap();
        crate::io::write_all_at(&*file, &bytes, 0).unwrap();
        assert!(load(&fs, other, Kind::ConsumerMeta, Some(&at_rest)).is_err());
    }
}
