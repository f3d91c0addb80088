//! The links between the messages of one subject, in sequence order: each message holds the
//! distance to the previous and the next message of its subject in 32 bits rather than their
//! sequences in 64, which keeps a stream's per-message entry small. A distance that does not
//! fit (more than four billion messages between two of one subject) is marked [`Link::FAR`]
//! and its sequence kept in [`FarLinks`], rare enough for a map to hold.

use std::collections::HashMap;

/// The distance to a neighbour of the same subject: none, a distance, or "far" (looked up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Link(u32);

impl Link {
    pub(super) const NONE: Link = Link(0);
    const FAR: u32 = u32::MAX;

    fn is_far(self) -> bool {
        self.0 == Self::FAR
    }
}

/// The neighbours whose distance did not fit in a [`Link`], by the sequence holding the link.
#[derive(Debug, Default)]
pub(super) struct FarLinks {
    prev: HashMap<u64, u64, foldhash::fast::RandomState>,
    next: HashMap<u64, u64, foldhash::fast::RandomState>,
}

impl FarLinks {
    /// The previous message of the subject of the message at `seq` (0 for none).
    pub(super) fn prev(&self, seq: u64, link: Link) -> u64 {
        match link.0 {
            0 => 0,
            Link::FAR => self.prev.get(&seq).copied().unwrap_or(0),
            distance => seq.saturating_sub(u64::from(distance)),
        }
    }

    /// The next message of the subject of the message at `seq` (0 for none).
    pub(super) fn next(&self, seq: u64, link: Link) -> u64 {
        match link.0 {
            0 => 0,
            Link::FAR => self.next.get(&seq).copied().unwrap_or(0),
            distance => seq.saturating_add(u64::from(distance)),
        }
    }

    /// The link from `seq` back to `prev` (0 for none), replacing `old`.
    pub(super) fn link_prev(&mut self, seq: u64, old: Link, prev: u64) -> Link {
        let distance = if prev == 0 {
            0
        } else {
            seq.saturating_sub(prev)
        };
        Self::link(&mut self.prev, seq, old, distance, prev)
    }

    /// The link from `seq` on to `next` (0 for none), replacing `old`.
    pub(super) fn link_next(&mut self, seq: u64, old: Link, next: u64) -> Link {
        let distance = if next == 0 {
            0
        } else {
            next.saturating_sub(seq)
        };
        Self::link(&mut self.next, seq, old, distance, next)
    }

    fn link(
        far: &mut HashMap<u64, u64, foldhash::fast::RandomState>,
        seq: u64,
        old: Link,
        distance: u64,
        target: u64,
    ) -> Link {
        match u32::try_from(distance) {
            Ok(d) if d != Link::FAR => {
                if old.is_far() {
                    far.remove(&seq);
                }
                Link(d)
            }
            _ => {
                far.insert(seq, target);
                Link(Link::FAR)
            }
        }
    }

    /// The message at `seq`, with these links, is gone.
    pub(super) fn forget(&mut self, seq: u64, prev: Link, next: Link) {
        if prev.is_far() {
            self.prev.remove(&seq);
        }
        if next.is_far() {
            self.next.remove(&seq);
        }
    }

    pub(super) fn clear(&mut self) {
        self.prev = HashMap::default();
        self.next = HashMap::default();
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.prev.len() + self.next.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_near_are_distances_and_far_ones_are_looked_up() {
        let mut far = FarLinks::default();
        let near = far.link_prev(100, Link::NONE, 40);
        assert_eq!(far.prev(100, near), 40);
        assert_eq!(far.len(), 0);
        let seq = 10_000_000_000u64;
        let away = far.link_next(5, Link::NONE, seq);
        assert_eq!(far.next(5, away), seq);
        assert_eq!(far.len(), 1);
        // Relinking near drops the far entry; forgetting a far link drops it too.
        let relinked = far.link_next(5, away, 6);
        assert_eq!(far.next(5, relinked), 6);
        assert_eq!(far.len(), 0);
        let back = far.link_prev(seq, Link::NONE, 1);
        assert_eq!(far.prev(seq, back), 1);
        far.forget(seq, back, Link::NONE);
        assert_eq!(far.len(), 0);
        assert_eq!(far.prev(7, Link::NONE), 0);
        let none = far.link_next(7, Link::NONE, 0);
        assert_eq!(far.next(7, none), 0);
    }
}
