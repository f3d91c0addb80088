//! Encryption at rest of the state files (`meta.dat`, `state.dat`; `docs/store-format.md` §5,
//! §11): with server keys configured, a state file's body is sealed under a fresh data key
//! wrapped for that file, and the envelope says so (`ENCRYPTED`). The envelope's magic is the
//! AAD, so a body cannot be moved into another kind of file, and the key is bound to the
//! account, stream and file, so it cannot be moved to another file either. Block files use
//! the same `AtRest` (`super::block_key`).

use std::sync::Arc;

use super::envelope::{Kind, FLAG_ENCRYPTED};
use crate::error::StoreError;
use crate::seal::{open_state_body, seal_state_body, KeyContext, KeySource, ServerKeys};

/// The server keys and the stream the files belong to.
#[derive(Clone)]
pub struct AtRest {
    pub keys: Arc<ServerKeys>,
    pub account: String,
    pub stream: String,
}

impl AtRest {
    /// The key context of `file`, a path inside the stream's directory.
    pub(super) fn context<'a>(&'a self, file: &'a str) -> KeyContext<'a> {
        KeyContext {
            account: &self.account,
            stream: &self.stream,
            file,
        }
    }
}

/// The envelope flags and body to write for `plain`, the body of state file `file` (its path
/// inside the stream's directory) of `kind`: sealed when keys are configured.
pub fn seal_file(
    at_rest: Option<&AtRest>,
    file: &str,
    kind: Kind,
    plain: &[u8],
) -> Result<(u8, Vec<u8>), StoreError> {
    match at_rest {
        None => Ok((0, plain.to_vec())),
        Some(at_rest) => {
            let sealed =
                seal_state_body(&at_rest.keys, &at_rest.context(file), &kind.magic(), plain)?;
            Ok((FLAG_ENCRYPTED, sealed))
        }
    }
}

/// A state file's plain body from its envelope's flags and body, and whether it should be
/// written again (it was opened with `prev_key`). An encrypted file with no keys configured,
/// or none that opens it, is `WrongKey`; a plain file with keys configured is read as it is
/// (encryption was turned on since) and should be written again.
pub fn open_file(
    at_rest: Option<&AtRest>,
    file: &str,
    kind: Kind,
    flags: u8,
    body: Vec<u8>,
) -> Result<(Vec<u8>, bool), StoreError> {
    let encrypted = flags & FLAG_ENCRYPTED != 0;
    match (at_rest, encrypted) {
        (None, false) => Ok((body, false)),
        (None, true) => Err(StoreError::WrongKey),
        (Some(_), false) => Ok((body, true)),
        (Some(at_rest), true) => {
            let (plain, source) =
                open_state_body(&at_rest.keys, &at_rest.context(file), &kind.magic(), &body)?;
            Ok((plain, source == KeySource::Prev))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::Cipher;

    fn at_rest(key: &str, prev: Option<&str>) -> AtRest {
        let keys = ServerKeys::new(key.as_bytes(), prev.map(str::as_bytes), Cipher::ChaCha)
            .expect("a key");
        AtRest {
            keys: Arc::new(keys),
            account: "$G".into(),
            stream: "ORDERS".into(),
        }
    }

    #[test]
    fn store_at_rest_state_files_round_trip_and_rotate() {
        let old = at_rest("old key", None);
        let (flags, body) = seal_file(Some(&old), "meta.dat", Kind::StreamMeta, b"cfg").unwrap();
        assert_eq!(flags, FLAG_ENCRYPTED);
        assert!(!body.windows(3).any(|w| w == b"cfg"), "sealed");
        let open =
            |a: Option<&AtRest>, file: &str, kind| open_file(a, file, kind, flags, body.clone());
        assert_eq!(
            open(Some(&old), "meta.dat", Kind::StreamMeta).unwrap(),
            (b"cfg".to_vec(), false)
        );
        // Rotation: the old key is now prev_key; the file opens and asks to be rewritten.
        let rotated = at_rest("new key", Some("old key"));
        assert_eq!(
            open(Some(&rotated), "meta.dat", Kind::StreamMeta).unwrap(),
            (b"cfg".to_vec(), true)
        );
        // No keys, another key, another file or another kind: refused, never garbage.
        assert!(matches!(
            open(None, "meta.dat", Kind::StreamMeta),
            Err(StoreError::WrongKey)
        ));
        let other = at_rest("other key", None);
        assert!(matches!(
            open(Some(&other), "meta.dat", Kind::StreamMeta),
            Err(StoreError::WrongKey)
        ));
        assert!(open(Some(&old), "obs/c/meta.dat", Kind::StreamMeta).is_err());
        assert!(open(Some(&old), "meta.dat", Kind::ConsumerMeta).is_err());
        // A plain file read with keys configured is taken, and asks to be rewritten sealed.
        assert_eq!(
            open_file(Some(&old), "meta.dat", Kind::StreamMeta, 0, b"cfg".to_vec()).unwrap(),
            (b"cfg".to_vec(), true)
        );
    }
}
