//! A connected client after a configuration reload: its credentials are checked again against
//! the new authentication settings, and its permissions recomputed, as Go's
//! `reloadAuthorization` does.
//!
//! What Go does, observed with the v2.15 binary:
//! - a client that named a user (or nkey) the new configuration no longer has is closed
//!   without a word (Go sees it as having moved account; the close reason is `Client Closed`);
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

use natrium_auth::{AuthConfig, AuthError, Credentials, Identity, Permissions};
use nats_proto::WireError;

use super::conn::send_err;
use super::connect::ConnectOptions;
use super::logfmt::go_quote;
use super::{ClientHandle, ClosedReason, Subscription};
use crate::account::{Account, SubRef};

/// What a client authenticated with, kept so that a reload can check it again, and the
/// permissions in force for it.
#[derive(Debug, Clone, Default)]
pub struct StoredAuth {
    pub user: Option<String>,
    pub pass: Option<String>,
    pub token: Option<String>,
    pub nkey: Option<String>,
    pub sig: Option<String>,
    /// The nonce the client signed (nkey users).
    pub nonce: String,
    /// The client sent no credentials and was let in as `no_auth_user`, named in `user`
    /// (`pass` then holds that user's configured password).
    pub via_no_auth_user: bool,
    /// `None`: unrestricted.
    pub perms: Option<Arc<Permissions>>,
}

fn present(value: Option<&String>) -> Option<&str> {
    value.map(String::as_str).filter(|s| !s.is_empty())
}

impl StoredAuth {
    /// What a CONNECT offered, before it is checked.
    pub(crate) fn from_connect(opts: &ConnectOptions, nonce: &str) -> Self {
        Self {
            user: opts.user.clone(),
            pass: opts.pass.clone(),
            token: opts.auth_token.clone(),
            nkey: opts.nkey.clone(),
            sig: opts.sig.clone(),
            nonce: nonce.to_owned(),
            via_no_auth_user: false,
            perms: None,
        }
    }

    /// Records whom a successful check let in, and with which permissions.
    pub(crate) fn admit(&mut self, auth: &AuthConfig, who: &Identity) {
        if let Identity::User(name) = who {
            if present(self.user.as_ref()).is_none() {
                // Let in as no_auth_user: Go names the client after that user and remembers
                // the user's password, which a reload compares.
                self.via_no_auth_user = true;
                self.user = Some(name.clone());
                self.pass = configured_password(auth, name);
            }
        }
        self.perms = auth.permissions_for(who).cloned().map(Arc::new);
    }

    pub(crate) fn credentials(&self) -> Credentials<'_> {
        if self.via_no_auth_user {
            return Credentials {
                nonce: &self.nonce,
                ..Credentials::default()
            };
        }
        Credentials {
            user: self.user.as_deref(),
            pass: self.pass.as_deref(),
            token: self.token.as_deref(),
            nkey: self.nkey.as_deref(),
            sig: self.sig.as_deref(),
            nonce: &self.nonce,
        }
    }

    /// How Go's log names the client (`User "bob"`, `Nkey "U…"`, `Token "[REDACTED]"`).
    pub fn auth_user(&self) -> String {
        if let Some(nkey) = present(self.nkey.as_ref()) {
            format!("Nkey {}", go_quote(nkey.as_bytes()))
        } else if let Some(user) = present(self.user.as_ref()) {
            format!("User {}", go_quote(user.as_bytes()))
        } else if present(self.token.as_ref()).is_some() {
            "Token \"[REDACTED]\"".to_owned()
        } else {
            "User \"N/A\"".to_owned()
        }
    }

    /// Whether the user or nkey the client named still exists; `None` when the question does
    /// not apply (no users configured, or the client named neither).
    fn named_user_exists(&self, auth: &AuthConfig) -> Option<bool> {
        let AuthConfig::Users { users, nkeys, .. } = auth else {
            return None;
        };
        if let Some(nkey) = present(self.nkey.as_ref()) {
            return Some(nkeys.iter().any(|k| k.nkey == nkey));
        }
        let user = present(self.user.as_ref())?;
        Some(users.iter().any(|u| u.name == user))
    }
}

/// The outcome of checking a client again.
enum Verdict {
    Keep(Option<Arc<Permissions>>),
    /// Its user is gone: closed quietly.
    Gone,
    /// Its credentials no longer pass.
    Refused,
}

/// The password configured for user `name`, if any.
fn configured_password(auth: &AuthConfig, name: &str) -> Option<String> {
    match auth {
        AuthConfig::Users { users, .. } => users
            .iter()
            .find(|u| u.name == name)
            .map(|u| u.password.clone()),
        _ => None,
    }
}

fn no_auth_password_unchanged(auth: &AuthConfig, stored: &StoredAuth) -> bool {
    let AuthConfig::Users { users, .. } = auth else {
        return true;
    };
    let name = stored.user.as_deref().unwrap_or_default();
    users
        .iter()
        .find(|u| u.name == name)
        .is_some_and(|u| Some(&u.password) == stored.pass.as_ref())
}

fn recheck(auth: &AuthConfig, stored: &StoredAuth) -> Verdict {
    if !auth.required() {
        return Verdict::Keep(None);
    }
    if stored.named_user_exists(auth) == Some(false) {
        return Verdict::Gone;
    }
    if stored.via_no_auth_user && !no_auth_password_unchanged(auth, stored) {
        // Go checks the password it copied from the user at CONNECT against the new one.
        return Verdict::Refused;
    }
    match auth.check(stored.credentials()) {
        Ok(who) => Verdict::Keep(auth.permissions_for(&who).cloned().map(Arc::new)),
        Err(_) => Verdict::Refused,
    }
}

/// Applies the reloaded authentication settings to one client (a no-op before its CONNECT,
/// which will be checked against the new settings anyway).
pub(crate) fn apply(handle: &ClientHandle, auth: &AuthConfig, account: &Account) {
    let Some(stored) = handle.auth.lock().clone() else {
        return;
    };
    let perms = match recheck(auth, &stored) {
        Verdict::Keep(perms) => perms,
        Verdict::Gone => {
            handle.close(ClosedReason::ClientClosed);
            return;
        }
        Verdict::Refused => {
            tracing::error!(
                "{} - {} - {}",
                handle.log_prefix(),
                AuthError::Refused,
                stored.auth_user()
            );
            send_err(handle, &WireError::AuthorizationViolation);
            handle.close(ClosedReason::AuthenticationViolation);
            return;
        }
    };
    let removed = replace_permissions(handle, perms.as_deref(), account);
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
        send_err(
            handle,
            &WireError::SubscriptionRemoved {
                subject: &sub.subject,
                queue: sub.queue.as_deref(),
                sid: &sub.sid,
            },
        );
    }
}

/// Installs `perms` for the connection and removes the subscriptions they forbid, all under
/// the subscription lock, so that a SUB racing with the reload is checked against one set or
/// the other, never lost in between. Lock order: `subs`, then `auth`.
fn replace_permissions(
    handle: &ClientHandle,
    perms: Option<&Permissions>,
    account: &Account,
) -> Vec<Arc<Subscription>> {
    let mut subs = handle.subs.lock();
    if let Some(stored) = handle.auth.lock().as_mut() {
        stored.perms = perms.cloned().map(Arc::new);
    }
    handle.perms_changed.store(true, Ordering::Release);
    let Some(perms) = perms else {
        return Vec::new();
    };
    let forbidden: Vec<Box<[u8]>> = subs
        .iter()
        .filter(|(_, sub)| !perms.can_subscribe(&sub.subject))
        .map(|(sid, _)| sid.clone())
        .collect();
    let mut removed = Vec::with_capacity(forbidden.len());
    for sid in forbidden {
        if let Some(sub) = subs.remove(&sid) {
            let _ =
                account
                    .sublist
                    .remove(&sub.subject, sub.queue.as_deref(), &SubRef(sub.clone()));
            removed.push(sub);
        }
    }
    // Go reports them in its map's (random) order; ours is by sid, numbers in numeric order.
    removed.sort_by(|a, b| (a.sid.len(), &a.sid[..]).cmp(&(b.sid.len(), &b.sid[..])));
    removed
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use natrium_auth::{SubjectPermission, User};

    fn users(names: &[(&str, &str)]) -> AuthConfig {
        AuthConfig::Users {
            users: names
                .iter()
                .map(|(n, p)| User {
                    name: (*n).to_owned(),
                    password: (*p).to_owned(),
                    permissions: None,
                })
                .collect(),
            nkeys: Vec::new(),
            no_auth_user: None,
            default_permissions: None,
        }
    }

    fn stored(user: &str, pass: &str) -> StoredAuth {
        StoredAuth {
            user: Some(user.to_owned()),
            pass: Some(pass.to_owned()),
            ..StoredAuth::default()
        }
    }

    #[test]
    fn reload_recheck_keeps_moves_and_refuses() {
        let auth = users(&[("alice", "a"), ("bob", "b2")]);
        assert!(matches!(
            recheck(&auth, &stored("alice", "a")),
            Verdict::Keep(None)
        ));
        assert!(matches!(
            recheck(&auth, &stored("bob", "b")),
            Verdict::Refused
        ));
        assert!(matches!(
            recheck(&auth, &stored("carol", "c")),
            Verdict::Gone
        ));
        // No authentication any more: everyone stays.
        assert!(matches!(
            recheck(&AuthConfig::None, &stored("carol", "c")),
            Verdict::Keep(None)
        ));
        let token = StoredAuth {
            token: Some("t1".into()),
            ..StoredAuth::default()
        };
        assert!(matches!(
            recheck(&AuthConfig::Token("t2".into()), &token),
            Verdict::Refused
        ));
        assert_eq!(token.auth_user(), "Token \"[REDACTED]\"");
    }

    #[test]
    fn reload_recheck_no_auth_user_password_change() {
        let mut cfg = users(&[("a", "x")]);
        if let AuthConfig::Users { no_auth_user, .. } = &mut cfg {
            *no_auth_user = Some("a".into());
        }
        let mut stored = StoredAuth::default();
        let who = cfg
            .check(stored.credentials())
            .unwrap_or(Identity::Anonymous);
        stored.admit(&cfg, &who);
        assert!(stored.via_no_auth_user);
        assert_eq!(stored.auth_user(), "User \"a\"");
        assert!(matches!(recheck(&cfg, &stored), Verdict::Keep(None)));
        let mut changed = users(&[("a", "z")]);
        if let AuthConfig::Users { no_auth_user, .. } = &mut changed {
            *no_auth_user = Some("a".into());
        }
        assert!(matches!(recheck(&changed, &stored), Verdict::Refused));
    }

    #[test]
    fn reload_recheck_new_permissions() {
        let perms = Permissions {
            publish: None,
            subscribe: Some(SubjectPermission {
                allow: Some(vec!["bar".into()]),
                deny: Vec::new(),
            }),
        };
        let auth = AuthConfig::Users {
            users: vec![User {
                name: "alice".into(),
                password: "a".into(),
                permissions: Some(perms.clone()),
            }],
            nkeys: Vec::new(),
            no_auth_user: None,
            default_permissions: None,
        };
        match recheck(&auth, &stored("alice", "a")) {
            Verdict::Keep(Some(p)) => assert_eq!(*p, perms),
            _ => panic!("expected new permissions"),
        }
        assert_eq!(stored("alice", "a").auth_user(), "User \"alice\"");
    }
}
