//! `SeqMap`: an ordered map from sequence to value, built for stream sequences, which are
//! dense and mostly appended. Sequences are grouped in chunks of 64; a chunk is a presence
//! bitmap and its values in sequence order, so a dense stream costs about one byte per message
//! beyond the value itself. Consecutive chunks form a *run* (a deque indexed by chunk number),
//! so a lookup in a dense stream is one subtraction and one index, not a tree walk; a gap of
//! more than `GAP_CHUNKS` empty chunks starts a new run, so sparse sequences (a large skip, a
//! thinned-out interest stream) cost no memory for the sequences between them.

use std::collections::{btree_map, BTreeMap, VecDeque};
use std::ops::Bound;

const CHUNK_BITS: u32 = 6;
const CHUNK_SEQS: u64 = 1 << CHUNK_BITS;

/// Empty chunks a run may hold between two live ones (32 bytes each) before it is split.
const GAP_CHUNKS: u64 = 4;

/// Up to 64 consecutive sequences: which are present, and their values in order.
#[derive(Debug)]
struct Chunk<V> {
    present: u64,
    values: Vec<V>,
}

impl<V> Chunk<V> {
    fn empty() -> Self {
        Chunk {
            present: 0,
            values: Vec::new(),
        }
    }

    /// The position in `values` of bit `bit` (the number of present bits below it).
    fn rank(&self, bit: u32) -> usize {
        let below = self.present & ((1u64 << bit) - 1);
        below.count_ones() as usize
    }

    fn has(&self, bit: u32) -> bool {
        self.present & (1u64 << bit) != 0
    }
}

/// Consecutive chunks, the first numbered by its key in [`SeqMap::runs`]. Its first and last
/// chunks are never empty; `live` counts the non-empty ones.
#[derive(Debug)]
struct Run<V> {
    chunks: VecDeque<Chunk<V>>,
    live: u64,
}

impl<V> Run<V> {
    fn end(&self, start: u64) -> u64 {
        start + self.chunks.len() as u64
    }

    /// Whether so many of its chunks are empty that splitting it at its long gaps is worth a
    /// pass over it. The bound keeps that pass amortised: after a split no run has a gap of
    /// more than `GAP_CHUNKS`, so many removals must come before the next one.
    fn too_sparse(&self) -> bool {
        let empty = self.chunks.len() as u64 - self.live;
        empty > (self.live + 1) * GAP_CHUNKS
    }
}

/// Sequence → value, ordered.
#[derive(Debug)]
pub(super) struct SeqMap<V> {
    /// Runs by their first chunk's number; they never overlap.
    runs: BTreeMap<u64, Run<V>>,
    len: usize,
}

impl<V> Default for SeqMap<V> {
    fn default() -> Self {
        SeqMap {
            runs: BTreeMap::new(),
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

    /// The map: chunks in runs, split where more than `GAP_CHUNKS` empty chunks would lie
    /// between two, as inserts would have built them.
    pub(super) fn build(self) -> SeqMap<V> {
        let mut runs: BTreeMap<u64, Run<V>> = BTreeMap::new();
        let mut current: Option<(u64, Run<V>)> = None;
        for (key, mut chunk) in self.chunks {
            if chunk.values.len() * 4 <= chunk.values.capacity() {
                chunk.values.shrink_to_fit();
            }
            match current.as_mut() {
                Some((start, run)) if key - run.end(*start) <= GAP_CHUNKS => {
                    for _ in run.end(*start)..key {
                        run.chunks.push_back(Chunk::empty());
                    }
                    run.chunks.push_back(chunk);
                    run.live += 1;
                }
                _ => {
                    if let Some((start, run)) = current.take() {
                        runs.insert(start, run);
                    }
                    let chunks = VecDeque::from([chunk]);
                    current = Some((key, Run { chunks, live: 1 }));
                }
            }
        }
        if let Some((start, run)) = current {
            runs.insert(start, run);
        }
        SeqMap {
            runs,
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

    /// The run holding chunk `key`, and its start.
    fn run_of(&self, key: u64) -> Option<(u64, &Run<V>)> {
        let (start, run) = self.runs.range(..=key).next_back()?;
        (key < run.end(*start)).then_some((*start, run))
    }

    fn chunk(&self, key: u64) -> Option<&Chunk<V>> {
        let (start, run) = self.run_of(key)?;
        run.chunks.get(usize::try_from(key - start).ok()?)
    }

    pub(super) fn get(&self, seq: u64) -> Option<&V> {
        let (key, bit) = split(seq);
        let chunk = self.chunk(key)?;
        if !chunk.has(bit) {
            return None;
        }
        chunk.values.get(chunk.rank(bit))
    }

    pub(super) fn get_mut(&mut self, seq: u64) -> Option<&mut V> {
        let (key, bit) = split(seq);
        let (start, run) = self.runs.range_mut(..=key).next_back()?;
        let chunk = run.chunks.get_mut(usize::try_from(key - *start).ok()?)?;
        if !chunk.has(bit) {
            return None;
        }
        let at = chunk.rank(bit);
        chunk.values.get_mut(at)
    }

    /// Inserts or replaces the value at `seq`. Appending above the last sequence is the fast
    /// path (a push onto the last chunk of the last run).
    pub(super) fn insert(&mut self, seq: u64, value: V) {
        let (key, bit) = split(seq);
        let start = self.run_for_insert(key);
        let Some(run) = self.runs.get_mut(&start) else {
            return;
        };
        let Some(chunk) = usize::try_from(key - start)
            .ok()
            .and_then(|at| run.chunks.get_mut(at))
        else {
            return;
        };
        let at = chunk.rank(bit);
        if chunk.has(bit) {
            if let Some(slot) = chunk.values.get_mut(at) {
                *slot = value;
            }
            return;
        }
        if chunk.present == 0 {
            run.live += 1;
        }
        chunk.present |= 1u64 << bit;
        chunk.values.insert(at, value);
        self.len += 1;
    }

    /// The start of the run that holds chunk `key`, extending a neighbouring run across a
    /// short gap or starting a new one.
    fn run_for_insert(&mut self, key: u64) -> u64 {
        if let Some((&start, run)) = self.runs.range_mut(..=key).next_back() {
            let end = run.end(start);
            if key < end {
                return start;
            }
            if key - end <= GAP_CHUNKS {
                // Up to the next run's start at most: `key` is below it, so runs stay apart.
                for _ in end..=key {
                    run.chunks.push_back(Chunk::empty());
                }
                return start;
            }
        }
        if let Some((&next, _)) = self.runs.range(key + 1..).next() {
            if next - key <= GAP_CHUNKS + 1 {
                if let Some(mut run) = self.runs.remove(&next) {
                    for _ in key..next {
                        run.chunks.push_front(Chunk::empty());
                    }
                    self.runs.insert(key, run);
                    return key;
                }
            }
        }
        let mut chunks = VecDeque::with_capacity(1);
        chunks.push_back(Chunk::empty());
        self.runs.insert(key, Run { chunks, live: 0 });
        key
    }

    pub(super) fn remove(&mut self, seq: u64) -> Option<V> {
        let (key, bit) = split(seq);
        let (&start, run) = self.runs.range_mut(..=key).next_back()?;
        let chunk = run.chunks.get_mut(usize::try_from(key - start).ok()?)?;
        if !chunk.has(bit) {
            return None;
        }
        let at = chunk.rank(bit);
        chunk.present &= !(1u64 << bit);
        let value = chunk.values.remove(at);
        self.len -= 1;
        if chunk.present == 0 {
            chunk.values = Vec::new();
            run.live -= 1;
            self.tidy_run(start);
        } else if chunk.values.len() * 4 <= chunk.values.capacity() {
            // A thinned-out chunk gives its memory back rather than keeping its peak.
            chunk.values.shrink_to_fit();
        }
        Some(value)
    }

    /// After a chunk of run `start` emptied: trims empty chunks off both ends, drops an empty
    /// run, and splits a run that became mostly gaps.
    fn tidy_run(&mut self, start: u64) {
        let Some(mut run) = self.runs.remove(&start) else {
            return;
        };
        if run.live == 0 {
            return;
        }
        let mut start = start;
        while run.chunks.front().is_some_and(|c| c.present == 0) {
            run.chunks.pop_front();
            start += 1;
        }
        while run.chunks.back().is_some_and(|c| c.present == 0) {
            run.chunks.pop_back();
        }
        if !run.too_sparse() {
            self.runs.insert(start, run);
            return;
        }
        // Split at every gap longer than `GAP_CHUNKS`.
        let mut piece: Option<(u64, Run<V>)> = None;
        let mut gap = 0u64;
        for (key, chunk) in (start..).zip(run.chunks) {
            if chunk.present == 0 {
                gap += 1;
                if let Some((_, p)) = piece.as_mut().filter(|_| gap <= GAP_CHUNKS) {
                    p.chunks.push_back(chunk);
                }
                continue;
            }
            if gap > GAP_CHUNKS {
                if let Some((at, mut p)) = piece.take() {
                    while p.chunks.back().is_some_and(|c| c.present == 0) {
                        p.chunks.pop_back();
                    }
                    self.runs.insert(at, p);
                }
            }
            gap = 0;
            let (_, p) = piece.get_or_insert_with(|| {
                (
                    key,
                    Run {
                        chunks: VecDeque::new(),
                        live: 0,
                    },
                )
            });
            p.chunks.push_back(chunk);
            p.live += 1;
        }
        if let Some((at, p)) = piece {
            self.runs.insert(at, p);
        }
    }

    pub(super) fn first(&self) -> Option<(u64, &V)> {
        let (key, run) = self.runs.first_key_value()?;
        let chunk = run.chunks.front()?;
        let bit = chunk.present.trailing_zeros();
        Some((join(*key, bit), chunk.values.first()?))
    }

    pub(super) fn last(&self) -> Option<(u64, &V)> {
        let (key, run) = self.runs.last_key_value()?;
        let chunk = run.chunks.back()?;
        let bit = chunk.present.checked_ilog2()?;
        Some((join(run.end(*key) - 1, bit), chunk.values.last()?))
    }

    /// Entries at or after `start`, in order.
    pub(super) fn range_from(&self, start: u64) -> Iter<'_, V> {
        let (key, bit) = split(start);
        // Inside a run, the walk starts at `key`'s chunk: a run may hold millions of
        // sequences, and walking its chunks from the run's start made every read from the
        // middle of a long stream cost the stream's length.
        let (runs, chunks) = match self.run_of(key) {
            Some((run_start, run)) => {
                let offset = usize::try_from(key - run_start).unwrap_or(usize::MAX);
                let from = offset.min(run.chunks.len());
                (
                    self.runs
                        .range((Bound::Excluded(run_start), Bound::Unbounded)),
                    Some((key, run.chunks.range(from..))),
                )
            }
            None => (self.runs.range(key..), None),
        };
        Iter {
            runs,
            chunks,
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
    runs: btree_map::Range<'a, u64, Run<V>>,
    /// The run being walked: the next chunk's number and the chunks left.
    chunks: Option<(u64, std::collections::vec_deque::Iter<'a, Chunk<V>>)>,
    /// The chunk being walked: its number, the bits still to visit, its values, the next index.
    current: Option<(u64, u64, &'a [V], usize)>,
    /// Chunks below this one, and the bits below this one in it, are not visited (the
    /// range's start).
    skip_below: Option<(u64, u32)>,
}

impl<'a, V> Iter<'a, V> {
    /// The next chunk in order with its number, moving to the next run when one ends.
    fn next_chunk(&mut self) -> Option<(u64, &'a Chunk<V>)> {
        loop {
            if let Some((key, chunks)) = self.chunks.as_mut() {
                if let Some(chunk) = chunks.next() {
                    let this = *key;
                    *key += 1;
                    return Some((this, chunk));
                }
            }
            let (start, run) = self.runs.next()?;
            self.chunks = Some((*start, run.chunks.iter()));
        }
    }
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
            let (key, chunk) = self.next_chunk()?;
            let (mut bits, mut at) = (chunk.present, 0);
            if let Some((start_key, start_bit)) = self.skip_below {
                if key < start_key {
                    continue;
                }
                self.skip_below = None;
                if key == start_key && start_bit > 0 {
                    let below = chunk.present & ((1u64 << start_bit) - 1);
                    bits &= !below;
                    at = below.count_ones() as usize;
                }
            }
            self.current = Some((key, bits, &chunk.values, at));
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
        // Dense and sparse draws: gaps longer than a run allows, and runs that join or split.
        prop_oneof![
            (0u64..400).prop_map(Op::Insert),
            (0u64..400).prop_map(Op::Remove),
            (0u64..3000).prop_map(Op::Insert),
            (0u64..3000).prop_map(Op::Remove),
        ]
    }

    /// Runs are apart, start and end with a live chunk, count their live chunks, and none is
    /// left too sparse.
    fn check_runs<V>(map: &SeqMap<V>) {
        let mut prev_end = None;
        let mut len = 0;
        for (start, run) in &map.runs {
            assert!(prev_end.is_none_or(|end| *start >= end), "runs overlap");
            assert!(run.chunks.front().is_some_and(|c| c.present != 0));
            assert!(run.chunks.back().is_some_and(|c| c.present != 0));
            let live = run.chunks.iter().filter(|c| c.present != 0).count();
            assert_eq!(run.live, live as u64);
            assert!(!run.too_sparse());
            for c in &run.chunks {
                assert_eq!(c.present.count_ones() as usize, c.values.len());
                len += c.values.len();
            }
            prev_end = Some(run.end(*start));
        }
        assert_eq!(len, map.len());
    }

    proptest! {
        #[test]
        fn store_seqmap_matches_btreemap(ops in proptest::collection::vec(op(), 0..600), start in 0u64..3100) {
            let mut ours = SeqMap::default();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(s) => { ours.insert(s, s * 10); model.insert(s, s * 10); }
                    Op::Remove(s) => prop_assert_eq!(ours.remove(s), model.remove(&s)),
                }
                prop_assert_eq!(ours.len(), model.len());
                check_runs(&ours);
            }
            let got: Vec<_> = ours.iter().map(|(s, v)| (s, *v)).collect();
            let want: Vec<_> = model.iter().map(|(s, v)| (*s, *v)).collect();
            prop_assert_eq!(got, want);
            let got: Vec<_> = ours.range_from(start).map(|(s, v)| (s, *v)).collect();
            let want: Vec<_> = model.range(start..).map(|(s, v)| (*s, *v)).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(ours.first().map(|(s, v)| (s, *v)), model.first_key_value().map(|(s, v)| (*s, *v)));
            prop_assert_eq!(ours.last().map(|(s, v)| (s, *v)), model.last_key_value().map(|(s, v)| (*s, *v)));
            for s in 0..3100 {
                prop_assert_eq!(ours.get(s), model.get(&s));
            }
            // The bulk builder makes the same map from the same entries.
            let mut builder = SeqMapBuilder::default();
            for (s, v) in &model {
                prop_assert!(builder.push(*s, *v).is_some());
            }
            let built = builder.build();
            check_runs(&built);
            let got: Vec<_> = built.iter().map(|(s, v)| (s, *v)).collect();
            let all: Vec<_> = model.iter().map(|(s, v)| (*s, *v)).collect();
            prop_assert_eq!(got, all);
        }
    }

    #[test]
    fn store_seqmap_thinned_run_splits_and_frees_its_gaps() {
        let mut map = SeqMap::default();
        for seq in 0..64 * 100 {
            map.insert(seq, seq);
        }
        assert_eq!(map.runs.len(), 1);
        for seq in 0..64 * 100 {
            if seq % (64 * 10) != 0 {
                map.remove(seq);
            }
        }
        check_runs(&map);
        assert_eq!(map.runs.len(), 10, "one run per survivor");
        let kept: Vec<_> = map.keys().collect();
        assert_eq!(kept, (0..10).map(|i| i * 640).collect::<Vec<_>>());
        assert_eq!(map.range_from(1).next(), Some((640, &640)));
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
