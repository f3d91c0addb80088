//! A connection's permissions at work: publish checks with a per-connection cache, subscribe
//! checks, the delivery filter a wildcard subscription gets when it overlaps a deny entry,
//! and `allow_responses` (reply subjects recorded when a request is delivered, spent when the
//! client publishes to them).
//!
//! The read task owns [`ConnPerms`]; the reply table lives in the [`ClientHandle`] as
//! [`Responses`] (see `allow_responses`), where publishers find it. A client without
//! permissions pays one `Option` check per publish and per delivery.

use std::collections::HashMap;
use std::sync::Arc;

use natrium_auth::ClientPermissions;

use super::allow_responses::Responses;
use super::handle::ClientHandle;

/// Publish decisions cached per connection (Go's `maxPermCacheSize`, 128); the cache is
/// cleared when full, so a client cycling subjects costs a rebuild, never memory. Only
/// decisions of the static lists are cached: a reply permission is spent by its use.
const PUB_PERM_CACHE_MAX: usize = 128;

/// The read task's view of the client's permissions.
#[derive(Default)]
pub(super) struct ConnPerms {
    /// `None` (no checks at all) when unrestricted.
    perms: Option<Arc<ClientPermissions>>,
    /// Static publish decisions per subject, bounded by `PUB_PERM_CACHE_MAX`.
    pub_cache: HashMap<Box<[u8]>, bool>,
}

impl ConnPerms {
    /// Installs the permissions an authenticated client gets; with `allow_responses`, the
    /// reply table goes into the handle, where publishers find it.
    /// On a reload, an existing reply table takes the new grant (or loses it).
    pub(super) fn install(&mut self, perms: Option<Arc<ClientPermissions>>, handle: &ClientHandle) {
        Responses::install(&handle.responses, perms.as_ref());
        self.perms = perms;
        self.pub_cache.clear();
    }

    /// Whether this client may publish to `subject`.
    pub(super) fn can_publish(&mut self, subject: &[u8], handle: &ClientHandle) -> bool {
        let Some(perms) = &self.perms else {
            return true;
        };
        let allowed = if let Some(&ok) = self.pub_cache.get(subject) {
            ok
        } else {
            let ok = perms.can_publish(subject);
            if self.pub_cache.len() >= PUB_PERM_CACHE_MAX {
                self.pub_cache.clear();
            }
            self.pub_cache.insert(subject.into(), ok);
            ok
        };
        allowed || handle.responses.get().is_some_and(|r| r.allow(subject))
    }

    /// Whether this client may subscribe to `subject` (in queue group `queue`).
    pub(super) fn can_subscribe(&self, subject: &[u8], queue: Option<&[u8]>) -> bool {
        self.perms
            .as_ref()
            .is_none_or(|p| p.can_subscribe(subject, queue))
    }

    /// The filter a new subscription's deliveries must pass, if it may cover denied subjects.
    pub(super) fn delivery_filter(
        &self,
        subject: &[u8],
        queue: Option<&[u8]>,
    ) -> Option<Arc<ClientPermissions>> {
        self.perms
            .as_ref()
            .filter(|p| p.needs_delivery_filter(subject, queue))
            .map(Arc::clone)
    }
}
