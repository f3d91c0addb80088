//! What a match returns: immutable snapshots shared through `Arc`, so the cache and every
//! caller hold the same allocation.

/// The subscriptions one subject reaches. A message goes to every entry of `plain` and to one
/// member of each queue group.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchResult<T> {
    /// Subscriptions without a queue group.
    pub plain: Vec<T>,
    /// Queue groups, one per distinct name: subscribers of the same group on different
    /// matching patterns (`foo.*` and `foo.bar`, both group `q`) are merged into one group.
    pub queues: Vec<QueueGroup<T>>,
}

/// The members of one queue group that a subject reaches.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueGroup<T> {
    /// The group name as given on `SUB`.
    pub name: Box<[u8]>,
    /// Never empty in a match result.
    pub members: Vec<T>,
}

impl<T> MatchResult<T> {
    /// A result with no subscription.
    pub const fn empty() -> Self {
        Self {
            plain: Vec::new(),
            queues: Vec::new(),
        }
    }

    /// Whether nobody is reached.
    pub fn is_empty(&self) -> bool {
        self.plain.is_empty() && self.queues.is_empty()
    }

    /// How many deliveries one message makes: one per plain subscription, one per group.
    /// This is what Go's `/subsz` calls fanout.
    pub fn fanout(&self) -> usize {
        self.plain.len() + self.queues.len()
    }

    /// Every subscription in the result, plain ones first, then each group's members.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.plain
            .iter()
            .chain(self.queues.iter().flat_map(|g| g.members.iter()))
    }
}

impl<T> Default for MatchResult<T> {
    fn default() -> Self {
        Self::empty()
    }
}
