//! The subscribers stored on one trie node (plain, or one queue group): a vector that matches
//! copy from in one go, plus a position index once the set is large, so that adding and
//! removing stay O(1) when thousands of clients subscribe to the same subject.

use std::collections::HashMap;
use std::hash::Hash;

use crate::limits::{MEMBERS_INDEX_FROM, SHRINK_MIN_CAPACITY, SHRINK_RATIO};

pub(crate) struct Members<T> {
    items: Vec<T>,
    /// Position of each item in `items`; present only while there are at least
    /// `MEMBERS_INDEX_FROM / 2` items (below that a scan is as fast and costs no memory).
    index: Option<HashMap<T, usize>>,
}

impl<T> Members<T> {
    pub(crate) const fn new() -> Self {
        Self {
            items: Vec::new(),
            index: None,
        }
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        &self.items
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<T: Clone + Eq + Hash> Members<T> {
    fn position(&self, value: &T) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(value).copied(),
            None => self.items.iter().position(|v| v == value),
        }
    }

    /// Adds `value`; false if it was already there.
    pub(crate) fn insert(&mut self, value: T) -> bool {
        if self.position(&value).is_some() {
            return false;
        }
        if let Some(index) = &mut self.index {
            index.insert(value.clone(), self.items.len());
        }
        self.items.push(value);
        if self.index.is_none() && self.items.len() >= MEMBERS_INDEX_FROM {
            let index = self
                .items
                .iter()
                .enumerate()
                .map(|(i, v)| (v.clone(), i))
                .collect();
            self.index = Some(index);
        }
        true
    }

    /// Removes `value`; false if it was not there. Order is not kept.
    pub(crate) fn remove(&mut self, value: &T) -> bool {
        let Some(at) = self.position(value) else {
            return false;
        };
        self.items.swap_remove(at);
        if let Some(index) = &mut self.index {
            index.remove(value);
            if let Some(moved) = self.items.get(at) {
                index.insert(moved.clone(), at);
            }
            if self.items.len() < MEMBERS_INDEX_FROM / 2 {
                self.index = None;
            }
        }
        if self.items.capacity() > SHRINK_MIN_CAPACITY
            && self.items.len() * SHRINK_RATIO < self.items.capacity()
        {
            self.items.shrink_to(self.items.len() * 2);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(m: &Members<u32>) {
        if let Some(index) = &m.index {
            assert_eq!(index.len(), m.items.len());
            for (i, v) in m.items.iter().enumerate() {
                assert_eq!(index.get(v), Some(&i));
            }
        }
    }

    #[test]
    fn sublist_members_index_follows_inserts_and_removes() {
        let mut m = Members::new();
        let n = u32::try_from(MEMBERS_INDEX_FROM * 4).unwrap_or(u32::MAX);
        for v in 0..n {
            assert!(m.insert(v));
            assert!(!m.insert(v));
            check(&m);
        }
        assert!(m.index.is_some());
        for v in (0..n).step_by(3).chain((0..n).rev()) {
            let there = m.as_slice().contains(&v);
            assert_eq!(m.remove(&v), there);
            assert!(!m.remove(&v));
            check(&m);
        }
        assert!(m.is_empty());
        assert!(m.index.is_none());
    }
}
