//! `allow_responses`: the reply subjects a client may publish to because a request with that
//! reply was delivered to it. Written by publishers (on delivery), read by the client's read
//! task (on publish), so it lives in the client's handle behind a mutex held for one O(1)
//! table operation.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use arc_swap::ArcSwapOption;
use natrium_auth::limits::REPLY_PERMS_ENTRIES_MAX;
use natrium_auth::{ClientPermissions, ReplyTable};
use parking_lot::Mutex;

/// `allow_responses` state shared with publishers. Created with the first permissions that
/// grant it; a reload that takes the grant away leaves it empty of permissions (nothing is
/// recorded or allowed), one that changes the limits applies them to the replies held.
pub struct Responses {
    perms: ArcSwapOption<ClientPermissions>,
    table: Mutex<ReplyTable>,
}

impl Responses {
    /// Applies the permissions an authenticated client gets to its reply table in `slot`:
    /// with `allow_responses`, the table is created (or takes the new grant on a reload);
    /// without, an existing table loses its permissions and records nothing more.
    pub(crate) fn install(slot: &OnceLock<Box<Self>>, perms: Option<&Arc<ClientPermissions>>) {
        let grant = perms.and_then(|p| p.response().map(|&r| (Arc::clone(p), r)));
        match (slot.get(), grant) {
            (Some(responses), Some((p, response))) => {
                responses.table.lock().set_permission(response);
                responses.perms.store(Some(p));
            }
            (Some(responses), None) => responses.perms.store(None),
            (None, Some((p, response))) => {
                let _ = slot.set(Box::new(Self {
                    perms: ArcSwapOption::from(Some(p)),
                    table: Mutex::new(ReplyTable::new(response, REPLY_PERMS_ENTRIES_MAX)),
                }));
            }
            (None, None) => {}
        }
    }

    /// Lets the client answer a message delivered to it with reply subject `reply`, unless
    /// its static permissions already let it publish there (Go records only those it could
    /// not otherwise publish to).
    pub fn record(&self, reply: &[u8]) {
        let perms = self.perms.load();
        if perms.as_ref().is_some_and(|p| !p.can_publish(reply)) {
            self.table.lock().record(reply, Instant::now());
        }
    }

    /// Spends one response on `subject` if one is held.
    pub(crate) fn allow(&self, subject: &[u8]) -> bool {
        self.perms.load().is_some() && self.table.lock().allow(subject, Instant::now())
    }

    /// Reply subjects currently held (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.table.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
