//! The two AEADs of encryption at rest (`docs/store-format.md` §11) behind one type: a
//! [`Cipher`] named as Go's `jetstream { cipher }` names it, and a [`DataKey`], 32 secret
//! bytes with the cipher instance built from them, that seals and opens in place with an
//! explicit nonce. Choosing nonces is the callers' job (each says why its nonces never
//! repeat under one key); random bytes come from the operating system.

use std::fmt;
use std::io;

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, CHACHA20_POLY1305};
use zeroize::Zeroizing;

use crate::error::StoreError;

/// Bytes of a data key or a key-encryption key (both AEADs take 256-bit keys).
pub const KEY_BYTES: usize = 32;
/// Bytes of a nonce (both AEADs take 96-bit nonces).
pub const NONCE_BYTES: usize = 12;
/// Bytes of the authentication tag both AEADs append.
pub const TAG_BYTES: usize = 16;

/// The AEAD a server encrypts with: Go's `jetstream { cipher: chacha | aes }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cipher {
    /// ChaCha20-Poly1305, Go's default.
    #[default]
    ChaCha,
    /// AES-256-GCM.
    Aes,
}

impl Cipher {
    /// The cipher a config value names. Go accepts `chacha`, `chachapoly` and `aes`, in any
    /// letter case; anything else is a config error (Go's text: `Unknown cipher type: %q`).
    pub fn from_config(value: &str) -> Option<Cipher> {
        let is = |name: &str| value.eq_ignore_ascii_case(name);
        if is("chacha") || is("chachapoly") {
            Some(Cipher::ChaCha)
        } else if is("aes") {
            Some(Cipher::Aes)
        } else {
            None
        }
    }

    /// The byte that names the cipher in a key record.
    pub const fn byte(self) -> u8 {
        match self {
            Cipher::ChaCha => 1,
            Cipher::Aes => 2,
        }
    }

    /// The cipher a key record's byte names; `None` is corruption.
    pub const fn from_byte(byte: u8) -> Option<Cipher> {
        match byte {
            1 => Some(Cipher::ChaCha),
            2 => Some(Cipher::Aes),
            _ => None,
        }
    }
}

/// A 32-byte secret and the AEAD it keys (ring's: assembly for both ciphers, about six times
/// faster than the portable crates on a 128-byte record). The secret is zeroized on drop;
/// ring keeps its own key schedule, which it does not zeroize. The `Debug` output shows the
/// cipher only.
pub struct DataKey {
    cipher: Cipher,
    secret: Zeroizing<[u8; KEY_BYTES]>,
    engine: LessSafeKey,
}

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataKey")
            .field("cipher", &self.cipher)
            .finish_non_exhaustive()
    }
}

impl DataKey {
    /// A fresh random data key for `cipher`.
    pub fn generate(cipher: Cipher) -> Result<DataKey, StoreError> {
        let mut secret = Zeroizing::new([0u8; KEY_BYTES]);
        fill_random(&mut secret[..])?;
        Ok(DataKey::from_secret(cipher, &secret))
    }

    /// The key for known secret bytes (an unwrapped data key, a derived KEK, a test key).
    pub fn from_secret(cipher: Cipher, secret: &[u8; KEY_BYTES]) -> DataKey {
        let algorithm = match cipher {
            Cipher::ChaCha => &CHACHA20_POLY1305,
            Cipher::Aes => &AES_256_GCM,
        };
        // Both algorithms take exactly `KEY_BYTES`, so the key is never refused.
        let unbound = UnboundKey::new(algorithm, secret).unwrap_or_else(|_| unreachable!());
        DataKey {
            cipher,
            secret: Zeroizing::new(*secret),
            engine: LessSafeKey::new(unbound),
        }
    }

    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// The secret bytes, for wrapping.
    pub(crate) fn secret(&self) -> &[u8; KEY_BYTES] {
        &self.secret
    }

    /// Encrypts `buf[from..]` in place and appends the tag.
    pub(crate) fn seal_tail(
        &self,
        nonce: &[u8; NONCE_BYTES],
        aad: &[u8],
        buf: &mut Vec<u8>,
        from: usize,
    ) -> Result<(), StoreError> {
        let plain = buf.get_mut(from..).ok_or(SEAL_FAILED)?;
        let tag = self
            .engine
            .seal_in_place_separate_tag(Nonce::assume_unique_for_key(*nonce), Aad::from(aad), plain)
            // Only an input past the AEAD's length limit (2^36 bytes) fails; every caller's
            // input is far below it, so this is not reachable from disk bytes.
            .map_err(|_| SEAL_FAILED)?;
        buf.extend_from_slice(tag.as_ref());
        Ok(())
    }

    /// Opens `sealed` (ciphertext then tag) into its plaintext; `None` if authentication
    /// fails (wrong key, or bytes changed).
    pub(crate) fn open(
        &self,
        nonce: &[u8; NONCE_BYTES],
        aad: &[u8],
        sealed: &[u8],
    ) -> Option<Vec<u8>> {
        let split = sealed.len().checked_sub(TAG_BYTES)?;
        let (ciphertext, tag) = sealed.split_at(split);
        let mut plain = ciphertext.to_vec();
        self.open_in_place(nonce, aad, &mut plain, tag)
            .then_some(plain)
    }
}

impl DataKey {
    /// Opens `data` (ciphertext) in place with its detached `tag`; `false`, with `data` left
    /// in an unspecified state, if authentication fails. Saves the copy `open` makes.
    pub(crate) fn open_in_place(
        &self,
        nonce: &[u8; NONCE_BYTES],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8],
    ) -> bool {
        let Ok(tag) = ring::aead::Tag::try_from(tag) else {
            return false;
        };
        self.engine
            .open_in_place_separate_tag(
                Nonce::assume_unique_for_key(*nonce),
                Aad::from(aad),
                tag,
                data,
                0..,
            )
            .is_ok()
    }
}

/// What `seal_tail` reports if the AEAD refuses its input.
const SEAL_FAILED: StoreError = StoreError::Decrypt {
    what: "data to seal (over the AEAD's length limit)",
};

/// Fills `buf` from the operating system's random source.
pub fn fill_random(buf: &mut [u8]) -> Result<(), StoreError> {
    getrandom::getrandom(buf).map_err(|e| StoreError::io("random bytes", io::Error::from(e)))
}

/// A random nonce.
pub fn random_nonce() -> Result<[u8; NONCE_BYTES], StoreError> {
    let mut nonce = [0u8; NONCE_BYTES];
    fill_random(&mut nonce)?;
    Ok(nonce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_seal_cipher_config_names() {
        for (value, cipher) in [
            ("chacha", Cipher::ChaCha),
            ("ChaChaPoly", Cipher::ChaCha),
            ("chachapoly", Cipher::ChaCha),
            ("AES", Cipher::Aes),
            ("aes", Cipher::Aes),
        ] {
            assert_eq!(Cipher::from_config(value), Some(cipher), "{value}");
        }
        for bad in ["", "aes-gcm", "chacha20", "none"] {
            assert_eq!(Cipher::from_config(bad), None, "{bad}");
        }
        for cipher in [Cipher::ChaCha, Cipher::Aes] {
            assert_eq!(Cipher::from_byte(cipher.byte()), Some(cipher));
        }
        assert_eq!(Cipher::from_byte(0), None);
        assert_eq!(Cipher::default(), Cipher::ChaCha);
    }

    #[test]
    fn store_seal_cipher_round_trip_and_tamper() {
        for cipher in [Cipher::ChaCha, Cipher::Aes] {
            let key = DataKey::generate(cipher).unwrap();
            let nonce = random_nonce().unwrap();
            let mut buf = b"prefix".to_vec();
            buf.extend_from_slice(b"secret message");
            key.seal_tail(&nonce, b"aad", &mut buf, 6).unwrap();
            assert_eq!(buf.len(), 6 + 14 + TAG_BYTES);
            let sealed = &buf[6..];
            assert_eq!(key.open(&nonce, b"aad", sealed).unwrap(), b"secret message");
            assert!(key.open(&nonce, b"aaD", sealed).is_none());
            let other = DataKey::generate(cipher).unwrap();
            assert!(other.open(&nonce, b"aad", sealed).is_none());
            assert!(key.open(&nonce, b"aad", &sealed[..TAG_BYTES - 1]).is_none());
            assert!(!format!("{key:?}").contains(&format!("{:?}", key.secret())));
        }
    }
}
