//! The subject hash: `foldhash` (its `quality` variant), seeded at random per index.
//!
//! Subjects are chosen by clients, so a fixed unseeded hash (`FxHash`) would let one client craft
//! subjects that all land in one bucket of a trie level or one set of the match cache. foldhash
//! folds 64x64->128-bit multiplies over 16 bytes at a time (a typical 20-40 byte subject costs
//! three), plus one final multiply in the `quality` variant: with the `fast` one, about 2 % of
//! seeds left sequential subjects (`foo.bar.1`, `foo.bar.2`, …) in as few as 739 of 1,024
//! low-bit buckets, against at least 990 with it. Its seeds here come from std's `RandomState`
//! (the operating system's randomness): one shared by the process and one drawn for each
//! `Sublist`, so collisions depend on secrets a client does not see. foldhash's own `RandomState` seeds from addresses and the clock instead,
//! which is weaker. It is not a keyed PRF, and need not be.

use std::collections::hash_map::RandomState as StdRandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

use foldhash::quality::{FoldHasher, SeedableRandomState};
use foldhash::SharedSeed;

/// A 64-bit seed from the operating system's randomness, through std's `RandomState`.
fn os_random_u64() -> u64 {
    StdRandomState::new().hash_one(0x5eed_u64)
}

/// The process-wide part of the seed, drawn once.
fn shared_seed() -> &'static SharedSeed {
    static SEED: OnceLock<SharedSeed> = OnceLock::new();
    SEED.get_or_init(|| SharedSeed::from_u64(os_random_u64()))
}

/// Builds the hashers of one index; cloned into every trie level, so all agree.
#[derive(Debug, Clone)]
pub(crate) struct SubjectHashBuilder(SeedableRandomState);

impl SubjectHashBuilder {
    /// A builder with a fresh random seed.
    pub(crate) fn random() -> Self {
        Self(SeedableRandomState::with_seed(
            os_random_u64(),
            shared_seed(),
        ))
    }

    /// Hashes one subject in a single call, as the match cache does: the bytes only, with no
    /// length prefix (foldhash mixes the length in itself).
    #[inline]
    pub(crate) fn hash_subject(&self, subject: &[u8]) -> u64 {
        let mut hasher = self.0.build_hasher();
        hasher.write(subject);
        hasher.finish()
    }
}

impl BuildHasher for SubjectHashBuilder {
    type Hasher = FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn hash_every_length_reads_every_byte() {
        let b = SubjectHashBuilder::random();
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
        let b = SubjectHashBuilder::random();
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
        let a = SubjectHashBuilder::random();
        let b = SubjectHashBuilder::random();
        assert_ne!(a.hash_subject(b"foo"), b.hash_subject(b"foo"));
        assert_ne!(a.hash_subject(b""), a.hash_subject(b"\0"));
        assert_ne!(a.hash_subject(b"\0"), a.hash_subject(b"\0\0"));
    }
}
