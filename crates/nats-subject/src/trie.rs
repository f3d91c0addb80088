//! The subscription trie: one level per token, literal children in a hash map, `*` and `>`
//! children beside them. No locking here: the owner (`Sublist`) decides who may call what.
//!
//! Invariants, checked by `recount` in tests:
//! - a node's `next` level is `Some` only while it has at least one child;
//! - a node exists only while it or some node below it holds a subscription (empty chains are
//!   pruned on remove), so the counters return to zero once every subscription is gone;
//! - within one node, a value appears at most once in `plain` and at most once per group.
//!
//! Membership is a [`Members`] set: a vector, indexed by value once it is large, so insert and
//! remove stay O(1) however many subscriptions share a subject and queue group.

use std::collections::HashMap;
use std::hash::Hash;

use crate::error::SublistError;
use crate::hash::SubjectHashBuilder;
use crate::limits::{SHRINK_MIN_CAPACITY, SHRINK_RATIO};
use crate::members::Members;
use crate::result::{MatchResult, QueueGroup};
use crate::validate::{is_valid_queue_name, is_valid_subject, split_token};

/// One token position: what comes after a given prefix.
struct Level<T> {
    literals: HashMap<Box<[u8]>, Node<T>, SubjectHashBuilder>,
    /// The `*` child.
    pwc: Option<Box<Node<T>>>,
    /// The `>` child; never has a `next`.
    fwc: Option<Box<Node<T>>>,
}

/// The subscriptions on one exact pattern, and the level below it.
struct Node<T> {
    next: Option<Box<Level<T>>>,
    plain: Members<T>,
    queues: Vec<StoredGroup<T>>,
}

/// A queue group's members on one node.
struct StoredGroup<T> {
    name: Box<[u8]>,
    members: Members<T>,
}

/// The trie plus the counters that only change with it.
pub(crate) struct Trie<T> {
    root: Level<T>,
    hasher: SubjectHashBuilder,
    /// Subscriptions stored.
    pub(crate) subs: usize,
    /// Nodes below the root level.
    pub(crate) nodes: usize,
    /// Levels below the root level.
    pub(crate) levels: usize,
}

impl<T> Level<T> {
    fn new(hasher: SubjectHashBuilder) -> Self {
        Self {
            literals: HashMap::with_hasher(hasher),
            pwc: None,
            fwc: None,
        }
    }

    fn child_count(&self) -> usize {
        self.literals.len() + usize::from(self.pwc.is_some()) + usize::from(self.fwc.is_some())
    }

    fn child(&self, token: &[u8]) -> Option<&Node<T>> {
        match token {
            b"*" => self.pwc.as_deref(),
            b">" => self.fwc.as_deref(),
            _ => self.literals.get(token),
        }
    }

    fn child_mut(&mut self, token: &[u8]) -> Option<&mut Node<T>> {
        match token {
            b"*" => self.pwc.as_deref_mut(),
            b">" => self.fwc.as_deref_mut(),
            _ => self.literals.get_mut(token),
        }
    }

    /// The child for `token`, created if missing (counted in `nodes`). `None` cannot happen:
    /// std's map has no borrowed-key entry API, so a new literal is inserted and then looked up
    /// again rather than copying the key to the heap on every insert.
    fn child_or_insert(&mut self, token: &[u8], nodes: &mut usize) -> Option<&mut Node<T>> {
        let slot = match token {
            b"*" => &mut self.pwc,
            b">" => &mut self.fwc,
            _ => {
                if !self.literals.contains_key(token) {
                    self.literals.insert(Box::from(token), Node::new());
                    *nodes += 1;
                }
                return self.literals.get_mut(token);
            }
        };
        if slot.is_none() {
            *nodes += 1;
        }
        Some(slot.get_or_insert_with(|| Box::new(Node::new())))
    }

    fn remove_child(&mut self, token: &[u8]) {
        match token {
            b"*" => self.pwc = None,
            b">" => self.fwc = None,
            _ => {
                self.literals.remove(token);
                let cap = self.literals.capacity();
                if cap > SHRINK_MIN_CAPACITY && self.literals.len() * SHRINK_RATIO < cap {
                    self.literals.shrink_to(self.literals.len() * 2);
                }
            }
        }
    }

    fn children(&self) -> impl Iterator<Item = &Node<T>> {
        self.literals
            .values()
            .chain(self.pwc.as_deref())
            .chain(self.fwc.as_deref())
    }
}

impl<T> Node<T> {
    const fn new() -> Self {
        Self {
            next: None,
            plain: Members::new(),
            queues: Vec::new(),
        }
    }

    fn has_subs(&self) -> bool {
        !self.plain.is_empty() || !self.queues.is_empty()
    }

    /// Whether anything is left on this subject in `queue` (plain when `None`).
    fn has_member(&self, queue: Option<&[u8]>) -> bool {
        match queue {
            None => !self.plain.is_empty(),
            Some(queue) => self.queues.iter().any(|g| &*g.name == queue),
        }
    }
}

impl<T: Clone + Eq + Hash> Node<T> {
    /// Adds `value`; false if it was already there. Also says whether it is the first on this
    /// subject (plain) or in its queue group here.
    fn add(&mut self, queue: Option<&[u8]>, value: T) -> (bool, bool) {
        let Some(queue) = queue else {
            let first = self.plain.is_empty();
            let added = self.plain.insert(value);
            return (added, added && first);
        };
        if let Some(group) = self.queues.iter_mut().find(|g| &*g.name == queue) {
            return (group.members.insert(value), false);
        }
        let mut members = Members::new();
        members.insert(value);
        self.queues.push(StoredGroup {
            name: Box::from(queue),
            members,
        });
        (true, true)
    }

    /// Removes `value`; false if it was not there. Order within the node is not kept.
    fn remove(&mut self, queue: Option<&[u8]>, value: &T) -> bool {
        let Some(queue) = queue else {
            return self.plain.remove(value);
        };
        // An emptied group is dropped: `has_member` then says the interest is gone.
        let Some(gi) = self.queues.iter().position(|g| &*g.name == queue) else {
            return false;
        };
        let Some(group) = self.queues.get_mut(gi) else {
            return false;
        };
        if !group.members.remove(value) {
            return false;
        }
        if group.members.is_empty() {
            self.queues.swap_remove(gi);
        }
        true
    }
}

/// Accumulates the subscriptions of every matching node.
struct Collector<T> {
    plain: Vec<T>,
    queues: Vec<QueueGroup<T>>,
}

impl<T: Clone + Eq + Hash> Collector<T> {
    fn add(&mut self, node: &Node<T>) {
        self.plain.extend_from_slice(node.plain.as_slice());
        for group in &node.queues {
            if let Some(same) = self.queues.iter_mut().find(|g| g.name == group.name) {
                same.members.extend_from_slice(group.members.as_slice());
            } else {
                self.queues.push(QueueGroup {
                    name: group.name.clone(),
                    members: group.members.as_slice().to_vec(),
                });
            }
        }
    }
}

/// Walks `level` with the tokens of `subject`. Iterates along literal children and recurses
/// only into `*` children, so the depth is bounded by the `*` tokens of stored patterns.
fn walk<T: Clone + Eq + Hash>(mut level: &Level<T>, mut subject: &[u8], out: &mut Collector<T>) {
    loop {
        let (token, rest) = split_token(subject);
        if let Some(fwc) = &level.fwc {
            out.add(fwc);
        }
        if let Some(pwc) = &level.pwc {
            match (rest, &pwc.next) {
                (None, _) => out.add(pwc),
                (Some(rest), Some(next)) => walk(next, rest, out),
                (Some(_), None) => {}
            }
        }
        let Some(node) = level.literals.get(token) else {
            return;
        };
        match (rest, &node.next) {
            (None, _) => return out.add(node),
            (Some(rest), Some(next)) => {
                level = next;
                subject = rest;
            }
            (Some(_), None) => return,
        }
    }
}

impl<T: Clone + Eq + Hash> Trie<T> {
    pub(crate) fn new(hasher: SubjectHashBuilder) -> Self {
        Self {
            root: Level::new(hasher.clone()),
            hasher,
            subs: 0,
            nodes: 0,
            levels: 0,
        }
    }

    /// Adds a subscription. `Ok(false)`: that value was already on that subject and queue.
    /// Adds a subscription: `(added, first)`, where `first` says it is the first on its exact
    /// subject (plain) or in its queue group there.
    pub(crate) fn insert(
        &mut self,
        subject: &[u8],
        queue: Option<&[u8]>,
        value: T,
    ) -> Result<(bool, bool), SublistError> {
        if !is_valid_subject(subject) {
            return Err(SublistError::InvalidSubject);
        }
        if queue.is_some_and(|q| !is_valid_queue_name(q)) {
            return Err(SublistError::InvalidQueue);
        }
        let Self {
            root,
            hasher,
            nodes,
            levels,
            subs,
        } = self;
        let mut level = root;
        let mut rest = subject;
        loop {
            let (token, tail) = split_token(rest);
            let node = level
                .child_or_insert(token, nodes)
                .ok_or(SublistError::InvalidSubject)?;
            let Some(tail) = tail else {
                let (added, first) = node.add(queue, value);
                *subs += usize::from(added);
                return Ok((added, first));
            };
            if node.next.is_none() {
                *levels += 1;
            }
            level = node
                .next
                .get_or_insert_with(|| Box::new(Level::new(hasher.clone())));
            rest = tail;
        }
    }

    /// Removes a subscription and prunes the nodes it leaves empty. Returns whether it was the
    /// last on its exact subject (plain) or in its queue group there.
    pub(crate) fn remove(
        &mut self,
        subject: &[u8],
        queue: Option<&[u8]>,
        value: &T,
    ) -> Result<bool, SublistError> {
        if !is_valid_subject(subject) {
            return Err(SublistError::InvalidSubject);
        }
        let mut level = &mut self.root;
        let mut rest = subject;
        let (leaf_empty, last) = loop {
            let (token, tail) = split_token(rest);
            let node = level.child_mut(token).ok_or(SublistError::NotFound)?;
            let Some(tail) = tail else {
                if !node.remove(queue, value) {
                    return Err(SublistError::NotFound);
                }
                break (
                    !node.has_subs() && node.next.is_none(),
                    !node.has_member(queue),
                );
            };
            level = node.next.as_deref_mut().ok_or(SublistError::NotFound)?;
            rest = tail;
        };
        self.subs -= 1;
        if leaf_empty {
            self.prune(subject);
        }
        Ok(last)
    }

    /// Removes the chain of nodes that the now-empty leaf of `subject` hangs from: every node
    /// from the deepest ancestor that is still needed (it holds subscriptions or has another
    /// child) downwards. Two iterative descents, no allocation, no recursion.
    fn prune(&mut self, subject: &[u8]) {
        // First descent: find `cut`, the depth of the first node to drop, and the depth `n`.
        let mut level = &self.root;
        let mut rest = subject;
        let mut depth = 0usize;
        let mut cut = 0usize;
        loop {
            let (token, tail) = split_token(rest);
            let Some(node) = level.child(token) else {
                return;
            };
            let Some(tail) = tail else { break };
            let Some(next) = node.next.as_deref() else {
                return;
            };
            if node.has_subs() || next.child_count() > 1 {
                cut = depth + 1;
            }
            level = next;
            rest = tail;
            depth += 1;
        }
        let n = depth + 1;
        // Second descent: to the level holding the node at depth `cut`.
        let mut removed_levels = n - 1 - cut;
        if cut == 0 {
            self.root.remove_child(split_token(subject).0);
        } else {
            let mut level = &mut self.root;
            let mut rest = subject;
            let mut depth = 0usize;
            let (parent, tail) = loop {
                let (token, tail) = split_token(rest);
                let Some(node) = level.child_mut(token) else {
                    return;
                };
                let Some(tail) = tail else { return };
                if depth + 1 == cut {
                    break (node, tail);
                }
                let Some(next) = node.next.as_deref_mut() else {
                    return;
                };
                level = next;
                rest = tail;
                depth += 1;
            };
            let Some(below) = parent.next.as_deref_mut() else {
                return;
            };
            below.remove_child(split_token(tail).0);
            if below.child_count() == 0 {
                parent.next = None;
                removed_levels += 1;
            }
        }
        self.nodes -= n - cut;
        self.levels -= removed_levels;
    }

    /// Every subscription `subject` reaches.
    pub(crate) fn collect(&self, subject: &[u8]) -> MatchResult<T> {
        let mut out = Collector {
            plain: Vec::new(),
            queues: Vec::new(),
        };
        walk(&self.root, subject, &mut out);
        MatchResult {
            plain: out.plain,
            queues: out.queues,
        }
    }

    /// Appends every stored subscription to `out`.
    pub(crate) fn all(&self, out: &mut Vec<T>) {
        let mut stack = vec![&self.root];
        while let Some(level) = stack.pop() {
            for node in level.children() {
                out.extend_from_slice(node.plain.as_slice());
                for group in &node.queues {
                    out.extend_from_slice(group.members.as_slice());
                }
                if let Some(next) = &node.next {
                    stack.push(next);
                }
            }
        }
    }

    /// Walks the whole trie and returns (nodes, levels, subscriptions) found, checking the
    /// structural invariants on the way (for tests and debug assertions).
    pub(crate) fn recount(&self) -> (usize, usize, usize) {
        let (mut nodes, mut levels, mut subs) = (0, 0, 0);
        let mut stack = vec![&self.root];
        while let Some(level) = stack.pop() {
            for node in level.children() {
                nodes += 1;
                subs += node.plain.as_slice().len();
                subs += node
                    .queues
                    .iter()
                    .map(|g| g.members.as_slice().len())
                    .sum::<usize>();
                debug_assert!(node.queues.iter().all(|g| !g.members.is_empty()));
                match &node.next {
                    Some(next) => {
                        debug_assert!(next.child_count() > 0, "empty level kept");
                        levels += 1;
                        stack.push(next);
                    }
                    None => debug_assert!(node.has_subs(), "empty leaf kept"),
                }
            }
            debug_assert!(level.fwc.as_ref().is_none_or(|f| f.next.is_none()));
        }
        (nodes, levels, subs)
    }
}
