//! A connected client after a configuration reload: its credentials are checked again against
//! the new authentication settings, and its permissions recomputed, as Go's
//! `reloadAuthorization` does.
//!
//! What Go does, observed with the v2.15 binary:
//! - a client that named a user (or nkey) the new configuration no longer has, or whose user
//!   now belongs to another account (or to none, when accounts are gone), is closed without a
//!   word (the close reason is `Client Closed`); it reconnects into its new account;
//! - a client whose credentials no longer pass is told `-ERR 'Authorization Violation'`, the
//!   server logs `authentication error - User "bob"`, and the connection closes;
//! - a client that still passes gets the new permissions; each of its subscriptions the new
//!   permissions forbid is removed, the client is told
//!   `-ERR 'Permissions Violation for Subscription to "foo" (sid "1")'` and the server logs
//!   `Removed sub "foo" (sid "1") for User "alice" - not authorized`.
//!
//! One deliberate difference: Go also closes clients that sent a user name to a server that
//! has no users configured at all (any reload does it, because Go always re-runs its
//! authorization step); here a client is only closed when the new configuration has users and
//! not the one it named.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use natrium_auth::ClientPermissions;
use natrium_gofmt::go_quote_bytes as go_quote;
use nats_proto::WireError;

use super::authn::{auth_scope, authenticate, log_refusal, AuthScope};
use super::stored_auth::StoredAuth;
use super::{ClientHandle, ClosedReason};
use crate::account::{Account, SubRef, GLOBAL_ACCOUNT};
use crate::config::CoreConfig;
use crate::endpoint::Subscription;

/// The outcome of checking a client again.
enum Verdict {
    /// Still admitted, into the account named (`None`: the global account).
    Keep {
        perms: Option<Arc<ClientPermissions>>,
        account: Option<String>,
    },
    /// Its user is gone: closed quietly.
    Gone,
    /// Its credentials no longer pass.
    Refused,
}

/// Checks a client logged into `account` against `scope`.
fn recheck(
    handle: &ClientHandle,
    scope: AuthScope<'_>,
    stored: &StoredAuth,
    account: &str,
) -> Verdict {
    let auth = scope.auth;
    if !auth.required() {
        return Verdict::Keep {
            perms: None,
            account: None,
        };
    }
    match stored.named_user_exists(auth) {
        Some(false) => return Verdict::Gone,
        // As Go, a user now in another account is closed before its credentials are checked.
        Some(true) if stored.named_account(auth) != Some(account) => return Verdict::Gone,
        _ => {}
    }
    if !stored.no_auth_password_unchanged(auth) {
        return Verdict::Refused;
    }
    match authenticate(scope, handle, &stored.opts, &stored.nonce) {
        Ok(admitted) => Verdict::Keep {
            perms: admitted.perms,
            account: admitted.account,
        },
        Err(_) => Verdict::Refused,
    }
}

/// Applies the reloaded authentication settings to one client (a no-op before its CONNECT,
/// which will be checked against the new settings anyway).
pub(crate) fn apply(handle: &ClientHandle, config: &CoreConfig) {
    let Some(stored) = handle.auth.lock().clone() else {
        return;
    };
    let Some(current) = handle.account() else {
        return;
    };
    let scope = auth_scope(config, handle.websocket().is_some());
    let perms = match recheck(handle, scope, &stored, &current.name) {
        Verdict::Keep { perms, account } => {
            if account.as_deref().unwrap_or(GLOBAL_ACCOUNT) != current.name {
                handle.close(ClosedReason::ClientClosed);
                return;
            }
            perms
        }
        Verdict::Gone => {
            handle.close(ClosedReason::ClientClosed);
            return;
        }
        Verdict::Refused => {
            log_refusal(handle, Some(&stored.auth_user()));
            handle.send_err(&WireError::AuthorizationViolation);
            handle.close(ClosedReason::AuthenticationViolation);
            return;
        }
    };
    let removed = replace_permissions(handle, perms.as_ref(), &current);
    let who = stored.auth_user();
    for sub in removed {
        let subject = go_quote(&sub.subject);
        let sid = go_quote(&sub.sid);
        if let Some(queue) = &sub.queue {
            tracing::info!(
                "Removed sub {subject} using queue {} (sid {sid}) for {who} - not authorized",
                go_quote(queue)
            );
        } else {
            tracing::info!("Removed sub {subject} (sid {sid}) for {who} - not authorized");
        }
        handle.send_err(&WireError::SubscriptionRemoved {
            subject: &sub.subject,
            queue: sub.queue.as_deref(),
            sid: &sub.sid,
        });
    }
}

/// Installs `perms` for the connection, removes the subscriptions they forbid and gives the
/// others the delivery filter the new permissions call for (Go rebuilds its deny filter on
/// reload too), all under the subscription lock, so that a SUB racing with the reload is
/// checked against one set or the other, never lost in between. Lock order: `subs`, then
/// `auth`.
fn replace_permissions(
    handle: &ClientHandle,
    perms: Option<&Arc<ClientPermissions>>,
    account: &Account,
) -> Vec<Arc<Subscription>> {
    let mut subs = handle.subs.lock();
    if let Some(stored) = handle.auth.lock().as_mut() {
        stored.perms = perms.cloned();
    }
    handle.perms_changed.store(true, Ordering::Release);
    let forbidden: Vec<Box<[u8]>> = subs
        .iter()
        .filter(|(_, sub)| {
            perms.is_some_and(|p| !p.can_subscribe(&sub.subject, sub.queue.as_deref()))
        })
        .map(|(sid, _)| sid.clone())
        .collect();
    let mut removed = Vec::with_capacity(forbidden.len());
    for sid in forbidden {
        if let Some(sub) = subs.remove(&sid) {
            let _ = account.unsubscribe(&SubRef(sub.clone()));
            removed.push(sub);
        }
    }
    for sub in subs.values_mut() {
        let filter = perms
            .filter(|p| p.needs_delivery_filter(&sub.subject, sub.queue.as_deref()))
            .map(Arc::clone);
        if filter.is_none() && sub.deny_filter.is_none() {
            continue;
        }
        // A subscription is immutable once indexed: the refiltered one takes its place.
        let next = Arc::new(Subscription {
            endpoint: sub.endpoint.clone(),
            subject: sub.subject.clone(),
            queue: sub.queue.clone(),
            sid: sub.sid.clone(),
            max_msgs: sub.max_msgs.load(Ordering::Relaxed).into(),
            delivered: sub.delivered.load(Ordering::Relaxed).into(),
            deny_filter: filter,
        });
        let swapped = account.sublist.replace(
            &sub.subject,
            sub.queue.as_deref(),
            &SubRef(Arc::clone(sub)),
            SubRef(Arc::clone(&next)),
        );
        if swapped.is_ok() {
            *sub = next;
        }
    }
    // Go reports them in its map's (random) order; ours is by sid, numbers in numeric order.
    removed.sort_by(|a, b| (a.sid.len(), &a.sid[..]).cmp(&(b.sid.len(), &b.sid[..])));
    removed
}
