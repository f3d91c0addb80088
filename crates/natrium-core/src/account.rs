//! An account: one subject namespace with its own subscription index. Until multi-account
//! support lands every client belongs to the global account `$G`.

use std::sync::Arc;

use nats_subject::Sublist;

use crate::client::Subscription;

/// Name of the account clients land in when no account is configured (Go's `$G`).
pub const GLOBAL_ACCOUNT: &str = "$G";

/// Name of the system account when none is configured (Go's `$SYS`).
pub const SYSTEM_ACCOUNT: &str = "$SYS";

/// A subscription as stored in the index: identity is the allocation, not the contents.
#[derive(Clone)]
pub struct SubRef(pub Arc<Subscription>);

impl PartialEq for SubRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SubRef {}

/// Hashes the handle's address, consistent with the pointer equality above.
impl std::hash::Hash for SubRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0), state);
    }
}

impl std::ops::Deref for SubRef {
    type Target = Subscription;
    fn deref(&self) -> &Subscription {
        &self.0
    }
}

pub struct Account {
    pub name: String,
    pub sublist: Sublist<SubRef>,
}

impl Account {
    pub fn new(name: &str, cache_enabled: bool) -> Self {
        Self {
            name: name.to_owned(),
            sublist: Sublist::new(cache_enabled),
        }
    }
}
