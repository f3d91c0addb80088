//! Encrypted state file bodies, for the envelope's `ENCRYPTED` flag (`docs/store-format.md`
//! §5, §11). A sealed body is a random nonce, the ciphertext and the tag; a state body also
//! carries its own key record in front:
//!
//! ```text
//!  key record (70, keys.rs) | nonce 12 | ciphertext (plain length) | tag 16
//! ```
//!
//! Each write of a state file draws a fresh data key and nonce, so a nonce never repeats
//! under a key, and rotation needs no separate step: a file opened with `prev_key` is
//! rewritten under the current key the next time it is written.

use super::cipher::{random_nonce, DataKey, NONCE_BYTES, TAG_BYTES};
use super::keys::{KeyContext, KeySource, ServerKeys, KEY_RECORD_BYTES};
use crate::error::StoreError;

/// Bytes a sealed body has beyond the plain one: the nonce and the tag.
pub const BODY_SEAL_OVERHEAD_BYTES: usize = NONCE_BYTES + TAG_BYTES;
/// Bytes a sealed state body has beyond the plain one: the key record, nonce and tag. A
/// state file's plain body must stay this much under its envelope ceiling.
pub const STATE_SEAL_OVERHEAD_BYTES: usize = KEY_RECORD_BYTES + BODY_SEAL_OVERHEAD_BYTES;

/// Encrypts `plain` under `key` with a random nonce; `aad` is authenticated too (callers
/// pass the envelope's magic, so a body cannot be moved into another kind of file).
pub fn seal_body(key: &DataKey, aad: &[u8], plain: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(plain.len() + BODY_SEAL_OVERHEAD_BYTES);
    let nonce = random_nonce()?;
    out.extend_from_slice(&nonce);
    out.extend_from_slice(plain);
    key.seal_tail(&nonce, aad, &mut out, NONCE_BYTES)?;
    Ok(out)
}

/// Opens what [`seal_body`] made; `Decrypt` if it is short or fails authentication.
pub fn open_body(key: &DataKey, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
    const FAILED: StoreError = StoreError::Decrypt {
        what: "state file body",
    };
    let nonce: &[u8; NONCE_BYTES] = sealed
        .get(..NONCE_BYTES)
        .and_then(|n| n.try_into().ok())
        .ok_or(FAILED)?;
    let rest = sealed.get(NONCE_BYTES..).unwrap_or_default();
    key.open(nonce, aad, rest).ok_or(FAILED)
}

/// A state file body sealed under a fresh data key wrapped for `ctx` with the current key.
pub fn seal_state_body(
    keys: &ServerKeys,
    ctx: &KeyContext<'_>,
    aad: &[u8],
    plain: &[u8],
) -> Result<Vec<u8>, StoreError> {
    let key = keys.new_data_key()?;
    let record = keys.wrap(ctx, &key)?;
    let sealed = seal_body(&key, aad, plain)?;
    let mut out = Vec::with_capacity(KEY_RECORD_BYTES + sealed.len());
    out.extend_from_slice(&record);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Opens a state file body: `Corrupt` if its key record is damaged, `WrongKey` if neither
/// server key opens it, `Decrypt` if the data fails authentication. `KeySource::Prev` asks
/// the caller to write the file again soon (under the current key).
pub fn open_state_body(
    keys: &ServerKeys,
    ctx: &KeyContext<'_>,
    aad: &[u8],
    body: &[u8],
) -> Result<(Vec<u8>, KeySource), StoreError> {
    let opened = keys.unwrap(ctx, body)?;
    let sealed = body.get(KEY_RECORD_BYTES..).unwrap_or_default();
    Ok((open_body(&opened.key, aad, sealed)?, opened.source))
}

#[cfg(test)]
mod tests {
    use super::super::cipher::Cipher;
    use super::*;
    use crate::filestore::envelope::{self, Kind, FLAG_ENCRYPTED};

    const CTX: KeyContext<'static> = KeyContext {
        account: "ACC",
        stream: "S",
        file: "obs/dur/state.dat",
    };

    #[test]
    fn store_seal_body_round_trip() {
        for cipher in [Cipher::ChaCha, Cipher::Aes] {
            let key = DataKey::generate(cipher).unwrap();
            for plain in [&b""[..], b"x", &[7u8; 5000][..]] {
                let sealed = seal_body(&key, b"NCST", plain).unwrap();
                assert_eq!(sealed.len(), plain.len() + BODY_SEAL_OVERHEAD_BYTES);
                assert_eq!(open_body(&key, b"NCST", &sealed).unwrap(), plain);
                assert!(open_body(&key, b"NCMT", &sealed).is_err());
                for len in 0..sealed.len() {
                    assert!(open_body(&key, b"NCST", &sealed[..len]).is_err());
                }
            }
        }
    }

    #[test]
    fn store_seal_state_body_in_envelope() {
        let keys = ServerKeys::new(b"server key", None, Cipher::Aes).unwrap();
        let kind = Kind::ConsumerState;
        let body = seal_state_body(&keys, &CTX, &kind.magic(), b"state bytes").unwrap();
        assert_eq!(body.len(), 11 + STATE_SEAL_OVERHEAD_BYTES);
        let mut file = Vec::new();
        envelope::encode(kind, FLAG_ENCRYPTED, &body, &mut file).unwrap();
        let env = envelope::decode(kind, &file).unwrap();
        assert_eq!(env.flags, FLAG_ENCRYPTED);
        let (plain, source) = open_state_body(&keys, &CTX, &kind.magic(), env.body).unwrap();
        assert_eq!(
            (plain.as_slice(), source),
            (&b"state bytes"[..], KeySource::Current)
        );

        let rotated = ServerKeys::new(b"next key", Some(b"server key"), Cipher::ChaCha).unwrap();
        let (_, source) = open_state_body(&rotated, &CTX, &kind.magic(), env.body).unwrap();
        assert_eq!(source, KeySource::Prev);
        let wrong = ServerKeys::new(b"other", None, Cipher::Aes).unwrap();
        assert!(matches!(
            open_state_body(&wrong, &CTX, &kind.magic(), env.body),
            Err(StoreError::WrongKey)
        ));
        let mut damaged = env.body.to_vec();
        damaged[10] ^= 1;
        assert!(matches!(
            open_state_body(&keys, &CTX, &kind.magic(), &damaged),
            Err(StoreError::Corrupt { .. })
        ));
        let mut tampered = env.body.to_vec();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(matches!(
            open_state_body(&keys, &CTX, &kind.magic(), &tampered),
            Err(StoreError::Decrypt { .. })
        ));
    }
}
