//! Per-record encryption for the tail block, which is appended to and so cannot be framed
//! (`docs/store-format.md` §11). A record's fixed 36-byte header stays plain, so the
//! recovery scan still reads sequences and lengths, and it is the AAD, so they are
//! authenticated; everything after it (TTL, subject, headers, payload) is encrypted, and the
//! tag follows. The record CRC is computed over the stored (encrypted) bytes.
//!
//! The nonce is a 4-byte prefix per block then the record's 8-byte offset in the block
//! (little-endian). Offsets never repeat within a block, so nonces never repeat under the
//! block's data key, on three conditions the store keeps:
//! - the prefix is the block's index (never reused in a stream's life) when one data key
//!   serves several blocks, or any fixed value when each block has its own data key;
//! - no offset is written twice under one key and prefix: a tail whose torn end recovery
//!   cut back, or a tail reset to empty, takes no more records under the same key and
//!   prefix (the store starts a new block, or gives the block a new data key);
//! - erase (§8) under encryption overwrites the body with random bytes (and marks the
//!   record `ERASED`) instead of encrypting zeros again at the same offset, which would
//!   reuse the nonce.

use super::cipher::{DataKey, NONCE_BYTES, TAG_BYTES};
use crate::error::StoreError;

/// Bytes an encrypted record body has beyond the plain one: the tag.
pub const RECORD_SEAL_OVERHEAD_BYTES: usize = TAG_BYTES;

/// The nonce of the record at `offset` in a block with `nonce_prefix`.
pub fn record_nonce(nonce_prefix: u32, offset: u64) -> [u8; NONCE_BYTES] {
    let mut nonce = [0u8; NONCE_BYTES];
    let parts = nonce_prefix
        .to_le_bytes()
        .into_iter()
        .chain(offset.to_le_bytes());
    for (dst, src) in nonce.iter_mut().zip(parts) {
        *dst = src;
    }
    nonce
}

/// Appends the encryption of `body` (ciphertext then tag, `body.len() + 16` bytes) for the
/// record at `offset`, authenticated with its `fixed_header`.
pub fn seal_record_body_into(
    key: &DataKey,
    nonce_prefix: u32,
    offset: u64,
    fixed_header: &[u8],
    body: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), StoreError> {
    let at = out.len();
    out.extend_from_slice(body);
    key.seal_tail(&record_nonce(nonce_prefix, offset), fixed_header, out, at)
}

/// The encryption of `body` for the record at `offset`: ciphertext then tag.
pub fn seal_record_body(
    key: &DataKey,
    nonce_prefix: u32,
    offset: u64,
    fixed_header: &[u8],
    body: &[u8],
) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(body.len() + TAG_BYTES);
    seal_record_body_into(key, nonce_prefix, offset, fixed_header, body, &mut out)?;
    Ok(out)
}

/// Opens in place the sealed body `data` (ciphertext, the tag cut off into `tag`) of the
/// record at `offset`; `Decrypt` (and `data` unspecified) as for [`open_record_body`].
pub fn open_record_body_in_place(
    key: &DataKey,
    nonce_prefix: u32,
    offset: u64,
    fixed_header: &[u8],
    data: &mut [u8],
    tag: &[u8],
) -> Result<(), StoreError> {
    let nonce = record_nonce(nonce_prefix, offset);
    if key.open_in_place(&nonce, fixed_header, data, tag) {
        Ok(())
    } else {
        Err(StoreError::Decrypt { what: "record" })
    }
}

/// The plain body of the record at `offset`; `Decrypt` if the header, offset, prefix, key
/// or bytes differ from what was sealed.
pub fn open_record_body(
    key: &DataKey,
    nonce_prefix: u32,
    offset: u64,
    fixed_header: &[u8],
    sealed: &[u8],
) -> Result<Vec<u8>, StoreError> {
    key.open(&record_nonce(nonce_prefix, offset), fixed_header, sealed)
        .ok_or(StoreError::Decrypt { what: "record" })
}

#[cfg(test)]
mod tests {
    use super::super::cipher::Cipher;
    use super::*;
    use crate::filestore::record::{self, Decoded, Kind, Record, HEADER_BYTES};
    use crate::types::MsgTtl;

    #[test]
    fn store_seal_record_nonce_layout() {
        let n = record_nonce(0x0403_0201, 0x0c0b_0a09_0807_0605);
        assert_eq!(n, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    }

    #[test]
    fn store_seal_record_body_round_trip_and_binding() {
        let rec = Record {
            kind: Kind::Msg,
            erased: false,
            sealed: false,
            seq: 7,
            timestamp_ns: 1,
            ttl: MsgTtl::None,
            subject: b"a.b",
            headers: b"",
            payload: b"payload bytes",
        };
        let mut plain = Vec::new();
        record::encode(&rec, &mut plain).unwrap();
        let (header, rest) = plain.split_at(HEADER_BYTES);
        let body = &rest[..rest.len() - 4];
        for cipher in [Cipher::ChaCha, Cipher::Aes] {
            let key = DataKey::generate(cipher).unwrap();
            let sealed = seal_record_body(&key, 9, 4096, header, body).unwrap();
            assert_eq!(sealed.len(), body.len() + RECORD_SEAL_OVERHEAD_BYTES);
            assert_ne!(&sealed[..body.len()], body);
            assert_eq!(
                open_record_body(&key, 9, 4096, header, &sealed).unwrap(),
                body
            );
            let mut other_header = header.to_vec();
            other_header[8] ^= 1;
            for (prefix, offset, hdr) in [
                (9, 4097, header),
                (10, 4096, header),
                (9, 4096, &other_header[..]),
            ] {
                assert!(matches!(
                    open_record_body(&key, prefix, offset, hdr, &sealed),
                    Err(StoreError::Decrypt { .. })
                ));
            }
            let mut flipped = sealed.clone();
            flipped[0] ^= 0x80;
            assert!(open_record_body(&key, 9, 4096, header, &flipped).is_err());
            assert!(open_record_body(&key, 9, 4096, header, &sealed[..3]).is_err());
        }
        assert!(matches!(decode_ok(&plain), Some(7)));
    }

    fn decode_ok(bytes: &[u8]) -> Option<u64> {
        match record::decode(bytes) {
            Decoded::Record(r, _) => Some(r.seq),
            _ => None,
        }
    }
}
