//! What a client authenticated with, kept on its handle so that a reload can check it again,
//! and the permissions in force for it.

use std::sync::Arc;

use natrium_auth::{AuthConfig, ClientPermissions, Identity};
use natrium_gofmt::go_quote_bytes as go_quote;
use nats_proto::ConnectOptions;

use crate::account::names::GLOBAL_ACCOUNT;

/// What a client authenticated with, kept so that a reload can check it again, and the
/// permissions in force for it.
#[derive(Debug, Clone, Default)]
pub struct StoredAuth {
    /// The CONNECT as the client sent it (credentials included: Go keeps them too).
    pub opts: ConnectOptions,
    /// The nonce the client signed (nkey users).
    pub nonce: String,
    /// Let in as `no_auth_user` (no credentials sent): that user's name and its password at
    /// CONNECT, which a reload compares with the new one as Go does.
    pub no_auth_user: Option<(String, String)>,
    /// `None`: unrestricted.
    pub perms: Option<Arc<ClientPermissions>>,
}

fn present(value: Option<&String>) -> Option<&str> {
    value.map(String::as_str).filter(|s| !s.is_empty())
}

impl StoredAuth {
    /// Records a client `auth` just admitted with `perms`.
    pub(crate) fn admitted(
        opts: &ConnectOptions,
        nonce: &str,
        auth: &AuthConfig,
        perms: Option<Arc<ClientPermissions>>,
    ) -> Self {
        let offered_nothing = present(opts.user.as_ref()).is_none()
            && present(opts.nkey.as_ref()).is_none()
            && present(opts.auth_token.as_ref()).is_none();
        let no_auth_user = match auth {
            AuthConfig::Users {
                users,
                no_auth_user: Some(name),
                ..
            } if offered_nothing => users
                .iter()
                .find(|u| &u.name == name)
                .map(|u| (u.name.clone(), u.password.clone())),
            _ => None,
        };
        Self {
            opts: opts.clone(),
            nonce: nonce.to_owned(),
            no_auth_user,
            perms,
        }
    }

    /// How Go's log names the client (`User "bob"`, `Nkey "U…"`, `Token "[REDACTED]"`).
    pub fn auth_user(&self) -> String {
        let opts = &self.opts;
        if let Some(nkey) = present(opts.nkey.as_ref()) {
            format!("Nkey {}", go_quote(nkey.as_bytes()))
        } else if let Some((name, _)) = &self.no_auth_user {
            format!("User {}", go_quote(name.as_bytes()))
        } else if let Some(user) = present(opts.user.as_ref()) {
            format!("User {}", go_quote(user.as_bytes()))
        } else if present(opts.auth_token.as_ref()).is_some() {
            "Token \"[REDACTED]\"".to_owned()
        } else {
            "User \"N/A\"".to_owned()
        }
    }

    /// Whether the user or nkey the client named (or was let in as) still exists; `None` when
    /// the question does not apply (no users configured, or the client named neither).
    pub(crate) fn named_user_exists(&self, auth: &AuthConfig) -> Option<bool> {
        let AuthConfig::Users { users, nkeys, .. } = auth else {
            return None;
        };
        if let Some(nkey) = present(self.opts.nkey.as_ref()) {
            return Some(nkeys.iter().any(|k| k.nkey == nkey));
        }
        let user = self
            .no_auth_user
            .as_ref()
            .map(|(name, _)| name.as_str())
            .or(present(self.opts.user.as_ref()))?;
        Some(users.iter().any(|u| u.name == user))
    }

    /// The account the user or nkey the client named belongs to in `auth` (the global
    /// account when none is given); `None` when it named neither.
    pub(crate) fn named_account<'a>(&self, auth: &'a AuthConfig) -> Option<&'a str> {
        let who = if let Some(nkey) = present(self.opts.nkey.as_ref()) {
            Identity::Nkey(nkey.to_owned())
        } else {
            let user = self
                .no_auth_user
                .as_ref()
                .map(|(name, _)| name.as_str())
                .or(present(self.opts.user.as_ref()))?;
            Identity::User(user.to_owned())
        };
        Some(auth.account_for(&who).unwrap_or(GLOBAL_ACCOUNT))
    }

    /// For a `no_auth_user` client: whether that user's password is unchanged.
    pub(crate) fn no_auth_password_unchanged(&self, auth: &AuthConfig) -> bool {
        let (Some((name, pass)), AuthConfig::Users { users, .. }) = (&self.no_auth_user, auth)
        else {
            return true;
        };
        users
            .iter()
            .find(|u| &u.name == name)
            .is_some_and(|u| &u.password == pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use natrium_auth::User;

    fn users(names: &[(&str, &str)], no_auth: Option<&str>) -> AuthConfig {
        AuthConfig::Users {
            users: names
                .iter()
                .map(|(n, p)| User {
                    name: (*n).to_owned(),
                    password: (*p).to_owned(),
                    permissions: None,
                    account: None,
                })
                .collect(),
            nkeys: Vec::new(),
            no_auth_user: no_auth.map(str::to_owned),
            default_permissions: None,
        }
    }

    fn stored(user: &str, pass: &str) -> StoredAuth {
        let opts = ConnectOptions {
            user: Some(user.to_owned()),
            pass: Some(pass.to_owned()),
            ..ConnectOptions::default()
        };
        StoredAuth::admitted(&opts, "", &users(&[], None), None)
    }

    #[test]
    fn reload_named_user_gone_or_kept() {
        let auth = users(&[("alice", "a"), ("bob", "b2")], None);
        assert_eq!(stored("alice", "a").named_user_exists(&auth), Some(true));
        assert_eq!(stored("carol", "c").named_user_exists(&auth), Some(false));
        // No users any more: the question does not apply (everyone passes or a token rules).
        assert_eq!(
            stored("carol", "c").named_user_exists(&AuthConfig::None),
            None
        );
        assert_eq!(stored("alice", "a").auth_user(), "User \"alice\"");
    }

    #[test]
    fn reload_no_auth_user_password_change() {
        let before = users(&[("a", "x")], Some("a"));
        let stored = StoredAuth::admitted(&ConnectOptions::default(), "", &before, None);
        assert_eq!(stored.auth_user(), "User \"a\"");
        assert!(stored.no_auth_password_unchanged(&before));
        assert!(!stored.no_auth_password_unchanged(&users(&[("a", "z")], Some("a"))));
        assert_eq!(
            stored.named_user_exists(&users(&[("b", "y")], None)),
            Some(false)
        );
        let token = StoredAuth::admitted(
            &ConnectOptions {
                auth_token: Some("t".into()),
                ..ConnectOptions::default()
            },
            "",
            &AuthConfig::Token("t".into()),
            None,
        );
        assert_eq!(token.auth_user(), "Token \"[REDACTED]\"");
    }
}
