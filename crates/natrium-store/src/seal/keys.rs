//! Server keys and key records (`docs/store-format.md` §11). The server's `key` (and the
//! `prev_key` it replaced) derive, with HKDF-SHA256, one key-encryption key (KEK) per file
//! from the account, stream and file name. Each encrypted file has its own random data key,
//! wrapped by that KEK in a 70-byte key record in front of the data:
//!
//! ```text
//!  0        4        5        6              18                            66       70
//!  +--------+--------+--------+--------------+-----------------------------+--------+
//!  | 'NKEY' | key_id | cipher | nonce        | wrapped data key + tag      | crc    |
//!  | magic  | u8     | u8     | 12 random    | 32 + 16                     | u32    |
//!  +--------+--------+--------+--------------+-----------------------------+--------+
//! ```
//!
//! The CRC-32C covers bytes `[0, 66)`, so a damaged record (`Corrupt`) is told apart from one
//! that is intact but opened by neither key (`WrongKey`). The wrap's AAD is bytes `[0, 18)`.

use std::fmt;

use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::Zeroizing;

use super::cipher::{random_nonce, Cipher, DataKey, KEY_BYTES, NONCE_BYTES, TAG_BYTES};
use crate::error::StoreError;

pub const KEY_RECORD_MAGIC: [u8; 4] = *b"NKEY";
/// Bytes of a key record.
pub const KEY_RECORD_BYTES: usize = 4 + 1 + 1 + NONCE_BYTES + WRAPPED_BYTES + 4;
/// The wrapped data key and its tag.
const WRAPPED_BYTES: usize = KEY_BYTES + TAG_BYTES;
/// Magic, key id, cipher and nonce: what the wrap authenticates besides the key.
const AAD_BYTES: usize = 4 + 1 + 1 + NONCE_BYTES;
const CRC_AT: usize = KEY_RECORD_BYTES - 4;
/// `key_id` of a record wrapped with the writer's `key`; the only value written.
pub const KEY_ID_CURRENT: u8 = 0;
/// `key_id` reserved for a record wrapped with `prev_key`. Accepted on read, never written.
pub const KEY_ID_PREV: u8 = 1;
/// HKDF salt: a fixed domain label (the server key is the secret; RFC 5869 allows a fixed
/// salt).
const KEK_SALT: &[u8] = b"natrium-store key-encryption key v1";

const _: () = assert!(KEY_RECORD_BYTES == 70);

/// Which file a key is for: the KEK is bound to it, so a key record copied to another
/// stream's or file's place does not open there. `file` is the path inside the stream's
/// directory under its committed name (`msgs/0000000007.blk`, `obs/<consumer>/state.dat`),
/// never a `.tmp` or `.new` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyContext<'a> {
    pub account: &'a str,
    pub stream: &'a str,
    pub file: &'a str,
}

/// Which server key opened a key record. `Prev` means the file should be rewrapped
/// ([`ServerKeys::rewrap`]) so that `prev_key` can later be dropped from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    Current,
    Prev,
}

/// A key record's fields once its magic, bytes and CRC check out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRecord {
    pub key_id: u8,
    pub cipher: Cipher,
    pub nonce: [u8; NONCE_BYTES],
    pub wrapped: [u8; WRAPPED_BYTES],
}

/// Checks the key record at the start of `bytes` (the bytes after it are not looked at):
/// `Corrupt` if it is short, or its magic, key id, cipher byte or CRC is wrong.
pub fn parse_key_record(bytes: &[u8]) -> Result<KeyRecord, StoreError> {
    parse(bytes).ok_or(StoreError::Corrupt { what: "key record" })
}

fn parse(bytes: &[u8]) -> Option<KeyRecord> {
    let record = bytes.get(..KEY_RECORD_BYTES)?;
    let stored = u32::from_le_bytes(record.get(CRC_AT..)?.try_into().ok()?);
    if record.get(..4)? != KEY_RECORD_MAGIC || crc32c::crc32c(record.get(..CRC_AT)?) != stored {
        return None;
    }
    let key_id = *record.get(4)?;
    if key_id > KEY_ID_PREV {
        return None;
    }
    Some(KeyRecord {
        key_id,
        cipher: Cipher::from_byte(*record.get(5)?)?,
        nonce: record.get(6..AAD_BYTES)?.try_into().ok()?,
        wrapped: record.get(AAD_BYTES..CRC_AT)?.try_into().ok()?,
    })
}

/// A data key taken out of a key record, and which server key opened it.
#[derive(Debug)]
pub struct Unwrapped {
    pub key: DataKey,
    pub source: KeySource,
}

/// The server's `jetstream { key, prev_key, cipher }`. The key strings are kept (zeroized
/// on drop) and KEKs derived per call; `Debug` shows no secret.
pub struct ServerKeys {
    current: Zeroizing<Vec<u8>>,
    prev: Option<Zeroizing<Vec<u8>>>,
    cipher: Cipher,
}

impl fmt::Debug for ServerKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerKeys")
            .field("cipher", &self.cipher)
            .field("has_prev", &self.prev.is_some())
            .finish_non_exhaustive()
    }
}

impl ServerKeys {
    /// The keys of a configuration; `None` when `current` is empty (as in Go, an empty
    /// `key` means no encryption). An empty `prev` counts as none.
    pub fn new(current: &[u8], prev: Option<&[u8]>, cipher: Cipher) -> Option<ServerKeys> {
        if current.is_empty() {
            return None;
        }
        Some(ServerKeys {
            current: Zeroizing::new(current.to_vec()),
            prev: prev
                .filter(|p| !p.is_empty())
                .map(|p| Zeroizing::new(p.to_vec())),
            cipher,
        })
    }

    /// The cipher new files are written with.
    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    pub fn has_prev(&self) -> bool {
        self.prev.is_some()
    }

    /// A fresh random data key for a new file, of the configured cipher.
    pub fn new_data_key(&self) -> Result<DataKey, StoreError> {
        DataKey::generate(self.cipher)
    }

    /// The key record of `key` for the file `ctx`, wrapped with the current server key
    /// under the data key's own cipher (data written under one cipher stays readable after
    /// the configured cipher changes; the file's next rewrite takes the new one).
    pub fn wrap(
        &self,
        ctx: &KeyContext<'_>,
        key: &DataKey,
    ) -> Result<[u8; KEY_RECORD_BYTES], StoreError> {
        let cipher = key.cipher();
        // The data key passes through `out` in plain before it is sealed in place.
        let mut out = Zeroizing::new(Vec::with_capacity(KEY_RECORD_BYTES));
        out.extend_from_slice(&KEY_RECORD_MAGIC);
        out.push(KEY_ID_CURRENT);
        out.push(cipher.byte());
        out.extend_from_slice(&random_nonce()?);
        let header: [u8; AAD_BYTES] = out
            .as_slice()
            .try_into()
            .map_err(|_| StoreError::Corrupt { what: "key record" })?;
        let nonce = nonce_of(&header);
        out.extend_from_slice(key.secret());
        kek(&self.current, cipher, ctx).seal_tail(&nonce, &header, &mut out, AAD_BYTES)?;
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let record: [u8; KEY_RECORD_BYTES] = out
            .as_slice()
            .try_into()
            .map_err(|_| StoreError::Corrupt { what: "key record" })?;
        debug_assert!(parse(&record).is_some());
        Ok(record)
    }

    /// Opens a key record for the file `ctx`: tries `key`, then `prev_key`. `Corrupt` if the
    /// record is damaged, `WrongKey` if it is intact and neither key opens it.
    pub fn unwrap(&self, ctx: &KeyContext<'_>, record: &[u8]) -> Result<Unwrapped, StoreError> {
        let parsed = parse_key_record(record)?;
        let aad = record.get(..AAD_BYTES).unwrap_or_default();
        let candidates = [
            Some((KeySource::Current, &self.current)),
            self.prev.as_ref().map(|p| (KeySource::Prev, p)),
        ];
        for (source, server_key) in candidates.into_iter().flatten() {
            let kek = kek(server_key, parsed.cipher, ctx);
            let Some(secret) = kek.open(&parsed.nonce, aad, &parsed.wrapped) else {
                continue;
            };
            let secret = Zeroizing::new(secret);
            let bytes: &[u8; KEY_BYTES] = secret
                .as_slice()
                .try_into()
                .map_err(|_| StoreError::Corrupt { what: "key record" })?;
            let key = DataKey::from_secret(parsed.cipher, bytes);
            return Ok(Unwrapped { key, source });
        }
        Err(StoreError::WrongKey)
    }

    /// Key rotation: the record rewrapped with the current key if `prev_key` opened it,
    /// `None` if the current key already does. The data key (and so the data) is unchanged;
    /// the caller replaces the record by the atomic rule.
    pub fn rewrap(
        &self,
        ctx: &KeyContext<'_>,
        record: &[u8],
    ) -> Result<Option<[u8; KEY_RECORD_BYTES]>, StoreError> {
        let opened = self.unwrap(ctx, record)?;
        match opened.source {
            KeySource::Current => Ok(None),
            KeySource::Prev => self.wrap(ctx, &opened.key).map(Some),
        }
    }
}

fn nonce_of(header: &[u8; AAD_BYTES]) -> [u8; NONCE_BYTES] {
    let mut nonce = [0u8; NONCE_BYTES];
    for (dst, src) in nonce.iter_mut().zip(header.iter().skip(6)) {
        *dst = *src;
    }
    nonce
}

/// The KEK for one file: HKDF-SHA256 of the server key, with the cipher and every context
/// part (length-prefixed, so no two contexts give the same input) as the info.
fn kek(server_key: &[u8], cipher: Cipher, ctx: &KeyContext<'_>) -> DataKey {
    let mut okm = Zeroizing::new([0u8; KEY_BYTES]);
    let hk = Hkdf::<Sha256>::new(Some(KEK_SALT), server_key);
    let lens = [ctx.account, ctx.stream, ctx.file].map(|s| (s.len() as u32).to_le_bytes());
    let [la, ls, lf] = &lens;
    let info: [&[u8]; 7] = [
        &[cipher.byte()],
        la,
        ctx.account.as_bytes(),
        ls,
        ctx.stream.as_bytes(),
        lf,
        ctx.file.as_bytes(),
    ];
    // 32 bytes is far below HKDF-SHA256's 8,160-byte output limit, so expand cannot fail.
    if hk.expand_multi_info(&info, &mut okm[..]).is_err() {
        debug_assert!(false, "HKDF expand of 32 bytes failed");
    }
    DataKey::from_secret(cipher, &okm)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: KeyContext<'static> = KeyContext {
        account: "$G",
        stream: "ORDERS",
        file: "msgs/0000000001.blk",
    };

    fn keys(current: &str, prev: Option<&str>, cipher: Cipher) -> ServerKeys {
        ServerKeys::new(current.as_bytes(), prev.map(str::as_bytes), cipher).unwrap()
    }

    #[test]
    fn store_seal_key_record_round_trip() {
        for cipher in [Cipher::ChaCha, Cipher::Aes] {
            let server = keys("s3cr3t", None, cipher);
            let data = server.new_data_key().unwrap();
            let record = server.wrap(&CTX, &data).unwrap();
            assert_eq!(&record[..4], b"NKEY");
            assert_eq!(record[5], cipher.byte());
            let opened = server.unwrap(&CTX, &record).unwrap();
            assert_eq!(opened.source, KeySource::Current);
            assert_eq!(opened.key.secret(), data.secret());
            assert_eq!(server.rewrap(&CTX, &record).unwrap(), None);
        }
    }

    #[test]
    fn store_seal_key_record_wrong_key_and_context() {
        let server = keys("right", None, Cipher::Aes);
        let record = server.wrap(&CTX, &server.new_data_key().unwrap()).unwrap();
        let wrong = keys("wrong", None, Cipher::Aes);
        assert!(matches!(
            wrong.unwrap(&CTX, &record),
            Err(StoreError::WrongKey)
        ));
        for ctx in [
            KeyContext {
                account: "A",
                ..CTX
            },
            KeyContext {
                stream: "OTHER",
                ..CTX
            },
            KeyContext {
                file: "msgs/0000000002.blk",
                ..CTX
            },
        ] {
            assert!(matches!(
                server.unwrap(&ctx, &record),
                Err(StoreError::WrongKey)
            ));
        }
        // Context parts are length-prefixed: moving a byte between parts changes the KEK.
        let shifted = KeyContext {
            account: "$GO",
            stream: "RDERS",
            ..CTX
        };
        assert!(server.unwrap(&shifted, &record).is_err());
    }

    #[test]
    fn store_seal_key_rotation_through_prev_key() {
        let old = keys("old key", None, Cipher::ChaCha);
        let data = old.new_data_key().unwrap();
        let record = old.wrap(&CTX, &data).unwrap();
        // The configuration moves the old key to prev_key and the cipher to AES.
        let rotated = keys("new key", Some("old key"), Cipher::Aes);
        let opened = rotated.unwrap(&CTX, &record).unwrap();
        assert_eq!(opened.source, KeySource::Prev);
        assert_eq!(opened.key.cipher(), Cipher::ChaCha);
        let rewrapped = rotated.rewrap(&CTX, &record).unwrap().unwrap();
        let again = rotated.unwrap(&CTX, &rewrapped).unwrap();
        assert_eq!(again.source, KeySource::Current);
        assert_eq!(again.key.secret(), data.secret());
        // Once prev_key is dropped, the rewrapped record still opens; the old one does not.
        let new_only = keys("new key", None, Cipher::Aes);
        assert!(new_only.unwrap(&CTX, &rewrapped).is_ok());
        assert!(matches!(
            new_only.unwrap(&CTX, &record),
            Err(StoreError::WrongKey)
        ));
    }

    #[test]
    fn store_seal_key_record_damage_is_not_wrong_key() {
        let server = keys("k", None, Cipher::ChaCha);
        let record = server.wrap(&CTX, &server.new_data_key().unwrap()).unwrap();
        for at in 0..KEY_RECORD_BYTES {
            for bit in 0..8 {
                let mut bad = record;
                bad[at] ^= 1 << bit;
                assert!(
                    matches!(server.unwrap(&CTX, &bad), Err(StoreError::Corrupt { .. })),
                    "flip {at}.{bit}"
                );
            }
        }
        for len in 0..KEY_RECORD_BYTES {
            assert!(matches!(
                server.unwrap(&CTX, &record[..len]),
                Err(StoreError::Corrupt { .. })
            ));
        }
    }

    #[test]
    fn store_seal_server_keys_empty_means_off() {
        assert!(ServerKeys::new(b"", None, Cipher::ChaCha).is_none());
        let k = ServerKeys::new(b"hunter2", Some(b""), Cipher::ChaCha).unwrap();
        assert!(!k.has_prev());
        let shown = format!("{k:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("104, 117"),
            "{shown}"
        );
    }
}
