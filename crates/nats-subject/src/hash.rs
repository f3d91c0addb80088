//! A fast, per-index seeded hash for subject bytes.
//!
//! Subjects are chosen by clients, so a fixed unseeded hash (`FxHash`) would let one client craft
//! subjects that all land in one bucket of a trie level. Each `Sublist` draws a seed from std's
//! `RandomState` and hashes with folded 64x64->128-bit multiplies (the construction of
//! `foldhash`/`wyhash`, written here from the idea, not copied): 16 bytes per multiply, so a
//! typical 20-40 byte subject costs three multiplies. It is not a keyed PRF; it only makes
//! collisions depend on a secret the client does not see.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// Odd constants with well-spread bits (from the fractional parts of pi and e).
const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x1319_8a2e_0370_7344;
const K2: u64 = 0xb7e1_5162_8aed_2a6b;

/// Multiplies as 128 bits and folds the halves together: every output bit depends on every
/// input bit of both operands, which a plain 64-bit multiply does not give for the low bits.
#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Hashes `bytes` starting from `state`; the length is mixed in so prefixes differ.
#[inline]
pub(crate) fn hash_bytes(state: u64, bytes: &[u8]) -> u64 {
    let mut acc = state ^ (bytes.len() as u64).wrapping_mul(K0);
    let mut rest = bytes;
    while let Some((chunk, tail)) = rest.split_first_chunk::<16>() {
        let word = u128::from_le_bytes(*chunk);
        acc = fold_mul((word as u64) ^ acc ^ K1, ((word >> 64) as u64) ^ K2);
        rest = tail;
    }
    // The last 0..16 bytes are read as two possibly overlapping words, which is cheaper than a
    // byte loop and still covers every byte.
    let (a, b) = if let (Some(first), Some(last)) =
        (rest.first_chunk::<8>(), rest.last_chunk::<8>())
    {
        (u64::from_le_bytes(*first), u64::from_le_bytes(*last))
    } else if let (Some(first), Some(last)) = (rest.first_chunk::<4>(), rest.last_chunk::<4>()) {
        (
            u64::from(u32::from_le_bytes(*first)),
            u64::from(u32::from_le_bytes(*last)),
        )
    } else {
        let byte = |i: usize| u64::from(rest.get(i).copied().unwrap_or(0));
        let len = rest.len();
        (byte(0) | (byte(len / 2) << 8), byte(len.wrapping_sub(1)))
    };
    fold_mul(a ^ acc ^ K1, b ^ K2)
}

/// Builds [`SubjectHasher`]s sharing one random seed; copied into every trie level.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubjectHashBuilder {
    seed: u64,
}

impl SubjectHashBuilder {
    /// A builder with a fresh random seed.
    pub(crate) fn random() -> Self {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(K2);
        Self {
            seed: hasher.finish(),
        }
    }

    /// Hashes one subject in a single call, as the match cache does.
    #[inline]
    pub(crate) fn hash_subject(self, subject: &[u8]) -> u64 {
        hash_bytes(self.seed, subject)
    }
}

impl BuildHasher for SubjectHashBuilder {
    type Hasher = SubjectHasher;

    #[inline]
    fn build_hasher(&self) -> SubjectHasher {
        SubjectHasher { state: self.seed }
    }
}

/// Streaming form for `HashMap`: `[u8]` keys arrive as a length prefix then the bytes.
#[derive(Debug, Clone)]
pub(crate) struct SubjectHasher {
    state: u64,
}

impl Hasher for SubjectHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.state = hash_bytes(self.state, bytes);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.state = fold_mul(self.state ^ (n as u64), K0);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn hash_every_length_reads_every_byte() {
        let b = SubjectHashBuilder { seed: 7 };
        for len in 1..=40usize {
            let base = vec![b'a'; len];
            let h0 = b.hash_subject(&base);
            for i in 0..len {
                let mut other = base.clone();
                other[i] = b'b';
                assert_ne!(h0, b.hash_subject(&other), "len {len} byte {i} ignored");
            }
        }
    }

    #[test]
    fn hash_spreads_low_bits() {
        let b = SubjectHashBuilder { seed: 1 };
        let buckets: HashSet<u64> = (0..4096)
            .map(|i| b.hash_subject(format!("foo.bar.{i}").as_bytes()) & 1023)
            .collect();
        assert!(
            buckets.len() > 900,
            "only {} of 1024 buckets used",
            buckets.len()
        );
    }

    #[test]
    fn hash_depends_on_seed_and_length() {
        let a = SubjectHashBuilder { seed: 1 };
        let b = SubjectHashBuilder { seed: 2 };
        assert_ne!(a.hash_subject(b"foo"), b.hash_subject(b"foo"));
        assert_ne!(a.hash_subject(b""), a.hash_subject(b"\0"));
    }
}
