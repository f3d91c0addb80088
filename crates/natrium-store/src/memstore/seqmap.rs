//! `SeqMap`: an ordered map from sequence to value, built for stream sequences, which are
//! dense and mostly appended. Sequences are grouped in chunks of 64; a chunk is a presence
//! bitmap and its values in sequence order, so a dense stream costs about one byte per message
//! beyond the value itself (a `BTreeMap` costs the key and half-empty nodes: several times
//! the value for small ones), and a chunk whose values are all removed is freed.

use std::collections::BTreeMap;

const CHUNK_BITS: u32 = 6;
const CHUNK_SEQS: u64 = 1 << CHUNK_BITS;

/// Up to 64 consecutive sequences: which are present, and their values in order.
#[derive(Debug)]
struct Chunk<V> {
    present: u64,
    values: Vec<V>,
}

impl<V> Chunk<V> {
    /// The position in `values` of bit `bit` (the number of present bits below it).
    fn rank(&self, bit: u32) -> usize {
        let below = self.present & ((1u64 << bit) - 1);
        below.count_ones() as usize
    }

    fn has(&self, bit: u32) -> bool {
        self.present & (1u64 << bit) != 0
    }
}

/// Sequence → value, ordered.
#[derive(Debug)]
pub(super) struct SeqMap<V> {
    chunks: BTreeMap<u64, Chunk<V>>,
    len: usize,
}

impl<V> Default for SeqMap<V> {
    fn default() -> Self {
        SeqMap {
            chunks: BTreeMap::new(),
            len: 0,
        }
    }
}

/// Builds a [`SeqMap`] from values in ascending sequence order (bulk loads): chunks are
/// laid out in a vector, where a value already pushed can still be reached by its position,
/// and become the map's tree in one sorted build.
pub(super) struct SeqMapBuilder<V> {
    chunks: Vec<(u64, Chunk<V>)>,
    len: usize,
}

impl<V> Default for SeqMapBuilder<V> {
    fn default() -> Self {
        SeqMapBuilder {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<V> SeqMapBuilder<V> {
    /// Appends `value` at `seq`, which must be above every sequence pushed; its position, or
    /// `None` (and nothing added) if it is not above.
    pub(super) fn push(&mut self, seq: u64, value: V) -> Option<(usize, usize)> {
        let (key, bit) = split(seq);
        let last_at = self.chunks.len().saturating_sub(1);
        if let Some((last_key, chunk)) = self.chunks.last_mut() {
            if *last_key > key || (*last_key == key && chunk.present >> bit != 0) {
                return None;
            }
            if *last_key == key {
                chunk.present |= 1u64 << bit;
                chunk.values.push(value);
                self.len += 1;
                return Some((last_at, chunk.values.len() - 1));
            }
        }
        let mut values = Vec::with_capacity(CHUNK_SEQS as usize);
        values.push(value);
        let present = 1u64 << bit;
        self.chunks.push((key, Chunk { present, values }));
        self.len += 1;
        Some((self.chunks.len() - 1, 0))
    }

    /// The value pushed at `position`.
    pub(super) fn get_mut(&mut self, position: (usize, usize)) -> Option<&mut V> {
        self.chunks
            .get_mut(position.0)?
            .1
            .values
            .get_mut(position.1)
    }

    pub(super) fn build(self) -> SeqMap<V> {
        SeqMap {
            chunks: self.chunks.into_iter().collect(),
            len: self.len,
        }
    }
}

fn split(seq: u64) -> (u64, u32) {
    (seq >> CHUNK_BITS, (seq & (CHUNK_SEQS - 1)) as u32)
}

fn join(chunk: u64, bit: u32) -> u64 {
    (chunk << CHUNK_BITS) | u64::from(bit)
}

impl<V> SeqMap<V> {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn get(&self, seq: u64) -> Option<&V> {
        let (key, bit) = split(seq);
        let chunk = self.chunks.get(&key)?;
        if !chunk.has(bit) {
            return None;
        }
        chunk.values.get(chunk.rank(bit))
    }

    pub(super) fn get_mut(&mut self, seq: u64) -> Option<&mut V> {
        let (key, bit) = split(seq);
        let chunk = self.chunks.get_mut(&key)?;
        if !chunk.has(bit) {
            return None;
        }
        let at = chunk.rank(bit);
        chunk.values.get_mut(at)
    }

    /// Inserts or replaces the value at `seq`. Appending above the last sequence is the fast
    /// path (a push onto the last chunk).
    pub(super) fn insert(&mut self, seq: u64, value: V) {
        let (key, bit) = split(seq);
        let chunk = self.chunks.entry(key).or_insert_with(|| Chunk {
            present: 0,
            values: Vec::new(),
        });
        let at = chunk.rank(bit);
        if chunk.has(bit) {
            if let Some(slot) = chunk.values.get_mut(at) {
                *slot = value;
            }
            return;
        }
        chunk.present |= 1u64 << bit;
        chunk.values.insert(at, value);
        self.len += 1;
    }

    pub(super) fn remove(&mut self, seq: u64) -> Option<V> {
        let (key, bit) = split(seq);
        let chunk = self.chunks.get_mut(&key)?;
        if !chunk.has(bit) {
            return None;
        }
        let at = chunk.rank(bit);
        chunk.present &= !(1u64 << bit);
        let value = chunk.values.remove(at);
        self.len -= 1;
        if chunk.present == 0 {
            self.chunks.remove(&key);
        } else if chunk.values.len() * 4 <= chunk.values.capacity() {
            // A thinned-out chunk gives its memory back rather than keeping its peak.
            chunk.values.shrink_to_fit();
        }
        Some(value)
    }

    pub(super) fn first(&self) -> Option<(u64, &V)> {
        let (key, chunk) = self.chunks.first_key_value()?;
        let bit = chunk.present.trailing_zeros();
        Some((join(*key, bit), chunk.values.first()?))
    }

    pub(super) fn last(&self) -> Option<(u64, &V)> {
        let (key, chunk) = self.chunks.last_key_value()?;
        let bit = chunk.present.checked_ilog2()?;
        Some((join(*key, bit), chunk.values.last()?))
    }

    /// Entries at or after `start`, in order.
    pub(super) fn range_from(&self, start: u64) -> Iter<'_, V> {
        let (key, bit) = split(start);
        Iter {
            chunks: self.chunks.range(key..),
            current: None,
            skip_below: Some((key, bit)),
        }
    }

    pub(super) fn iter(&self) -> Iter<'_, V> {
        self.range_from(0)
    }

    /// Entries in `start..=end`, in order.
    pub(super) fn range(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, &V)> + '_ {
        self.range_from(start)
            .take_while(move |(seq, _)| *seq <= end)
    }

    /// Sequences held, in order.
    pub(super) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(seq, _)| seq)
    }
}

/// In-order iteration over a [`SeqMap`].
pub(super) struct Iter<'a, V> {
    chunks: std::collections::btree_map::Range<'a, u64, Chunk<V>>,
    /// The chunk being walked: its key, the bits still to visit, its values, the next index.
    current: Option<(u64, u64, &'a [V], usize)>,
    /// The first chunk's bits below this one are not visited (the range's start).
    skip_below: Option<(u64, u32)>,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (u64, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((key, bits, values, at)) = self.current.as_mut() {
                if *bits != 0 {
                    let bit = bits.trailing_zeros();
                    *bits &= *bits - 1;
                    let index = *at;
                    *at += 1;
                    if let Some(value) = values.get(index) {
                        return Some((join(*key, bit), value));
                    }
                }
                self.current = None;
            }
            let (key, chunk) = self.chunks.next()?;
            let (mut bits, mut at) = (chunk.present, 0);
            if let Some((start_key, start_bit)) = self.skip_below.take() {
                if *key == start_key && start_bit > 0 {
                    let below = chunk.present & ((1u64 << start_bit) - 1);
                    bits &= !below;
                    at = below.count_ones() as usize;
                }
            }
            self.current = Some((*key, bits, &chunk.values, at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64),
        Remove(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..400).prop_map(Op::Insert),
            (0u64..400).prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn store_seqmap_matches_btreemap(ops in proptest::collection::vec(op(), 0..300), start in 0u64..420) {
            let mut ours = SeqMap::default();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(s) => { ours.insert(s, s * 10); model.insert(s, s * 10); }
                    Op::Remove(s) => prop_assert_eq!(ours.remove(s), model.remove(&s)),
                }
                prop_assert_eq!(ours.len(), model.len());
            }
            let got: Vec<_> = ours.iter().map(|(s, v)| (s, *v)).collect();
            let want: Vec<_> = model.iter().map(|(s, v)| (*s, *v)).collect();
            prop_assert_eq!(got, want);
            let got: Vec<_> = ours.range_from(start).map(|(s, v)| (s, *v)).collect();
            let want: Vec<_> = model.range(start..).map(|(s, v)| (*s, *v)).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(ours.first().map(|(s, v)| (s, *v)), model.first_key_value().map(|(s, v)| (*s, *v)));
            prop_assert_eq!(ours.last().map(|(s, v)| (s, *v)), model.last_key_value().map(|(s, v)| (*s, *v)));
            for s in 0..420 {
                prop_assert_eq!(ours.get(s), model.get(&s));
            }
        }
    }

    #[test]
    fn store_seqmap_high_sequences() {
        let mut map = SeqMap::default();
        map.insert(u64::MAX, 1);
        map.insert(u64::MAX - 64, 2);
        assert_eq!(map.last(), Some((u64::MAX, &1)));
        assert_eq!(map.first(), Some((u64::MAX - 64, &2)));
        assert_eq!(map.range_from(u64::MAX).count(), 1);
    }
}
