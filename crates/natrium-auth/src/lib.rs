//! Authentication and authorization decisions for client connections, as the Go server makes
//! them: a single token, a single user and password, or a list of users (each secret written
//! plainly or as a bcrypt hash, `$2a$…`), nkeys, client certificates, and operator-mode JWTs;
//! then what the user may publish and subscribe to, and which account it belongs to. Pure: no
//! I/O, no async runtime.
//!
//! Layout: [`AuthConfig`] is what the configuration compiles to; [`Credentials`] is what a
//! client's CONNECT offers; [`AuthConfig::check`] decides. `verify_and_map` decides from a
//! client certificate instead ([`tls_map`], with distinguished names in [`dn`]). Permissions
//! are configured as [`Permissions`] and checked as [`ClientPermissions`]; [`ReplyTable`]
//! holds the reply subjects `allow_responses` lets a connection publish to. [`account`]
//! describes accounts (exports, imports, limits) and decides whether an import is allowed.
//! [`jwt`] decodes and verifies NATS JWTs for operator mode. [`limits`] bounds the state a
//! connection keeps.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::dbg_macro,
    clippy::print_stdout,
    clippy::print_stderr
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

use subtle::ConstantTimeEq as _;
use thiserror::Error;

pub mod account;
mod client_perms;
pub mod dn;
pub mod jwt;
pub mod limits;
mod permissions;
mod replies;
pub mod tls_map;

pub use client_perms::{ClientPermissions, PermissionLists};
pub use permissions::{
    entry_problem, split_subject_queue, EntryProblem, Permissions, ResponsePermission,
    SubjectPermission,
};
pub use replies::ReplyTable;
pub use tls_map::CertIdentity;

/// Prefix Go uses to recognise a bcrypt hash among configured secrets.
const BCRYPT_PREFIX: &str = "$2";

/// One configured user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    /// Plain text or a bcrypt hash.
    pub password: String,
    /// `None`: the default permissions apply.
    pub permissions: Option<Permissions>,
    /// The account the user logs into; `None` is the global account.
    pub account: Option<String>,
}

/// One configured nkey user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NkeyUser {
    /// Public user nkey (`U…`).
    pub nkey: String,
    /// `None`: the default permissions apply.
    pub permissions: Option<Permissions>,
    /// The account the user logs into; `None` is the global account.
    pub account: Option<String>,
}

/// How clients must authenticate. `None` means no authentication is required.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AuthConfig {
    #[default]
    None,
    /// `authorization { token }` or `--auth`.
    Token(String),
    /// `authorization { user, password }`, `--user/--pass`, or `users = [...]`, with the user
    /// assumed for clients that send no credentials (`no_auth_user`).
    Users {
        users: Vec<User>,
        /// Public user nkeys (`users = [ {nkey: U…} ]`).
        nkeys: Vec<NkeyUser>,
        no_auth_user: Option<String>,
        /// `default_permissions`, for users without their own.
        default_permissions: Option<Permissions>,
    },
    /// Operator mode: users present JWTs issued by accounts a trusted operator signed.
    Jwt(std::sync::Arc<jwt::JwtAuth>),
}

/// What a client offers in CONNECT.
#[derive(Debug, Clone, Copy, Default)]
pub struct Credentials<'a> {
    pub user: Option<&'a str>,
    pub pass: Option<&'a str>,
    pub token: Option<&'a str>,
    /// Public nkey and the signature of `nonce` (base64, URL or standard alphabet).
    pub nkey: Option<&'a str>,
    pub sig: Option<&'a str>,
    /// The nonce this connection's INFO carried.
    pub nonce: &'a str,
    /// A user JWT (operator mode).
    pub jwt: Option<&'a str>,
}

/// Why a client was refused. The client is always told `Authorization Violation`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    #[error("authentication error")]
    Refused,
}

/// Who a client authenticated as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    Anonymous,
    Token,
    User(String),
    Nkey(String),
    /// A user admitted by its JWT (operator mode).
    Jwt(Box<jwt::JwtUser>),
}

impl AuthConfig {
    /// Whether INFO advertises `auth_required`.
    #[must_use]
    pub fn required(&self) -> bool {
        !matches!(self, Self::None)
    }

    /// Whether INFO carries a nonce to sign (Go: when nkey users are configured).
    #[must_use]
    pub fn nonce_required(&self) -> bool {
        match self {
            Self::Users { nkeys, .. } => !nkeys.is_empty(),
            Self::Jwt(_) => true,
            Self::None | Self::Token(_) => false,
        }
    }

    /// Decides a client's admission in one pass: who it is, its permissions and its account,
    /// from the one configured entry that admitted it. `now` (Unix seconds) is the clock JWTs
    /// are checked against, read once by the caller.
    ///
    /// # Errors
    /// [`Refused`] when the credentials do not pass, with Go's debug line when it has one.
    pub fn admit(&self, creds: Credentials<'_>, now: i64) -> Result<Admission<'_>, Refused> {
        match self {
            Self::None => Ok(Admission::plain(Identity::Anonymous)),
            Self::Jwt(auth) => {
                let Some(token) = creds.jwt.filter(|j| !j.is_empty()) else {
                    return Err(Refused::because("Authentication requires a user JWT"));
                };
                auth.authenticate(token, creds.sig, creds.nonce, now)
                    .map(|user| Admission::plain(Identity::Jwt(Box::new(user))))
                    .map_err(|jwt::Refusal(why)| Refused { reason: Some(why) })
            }
            Self::Token(token) => {
                let offered = creds.token.ok_or(Refused::silently())?;
                if secret_matches(token, offered) {
                    Ok(Admission::plain(Identity::Token))
                } else {
                    Err(Refused::silently())
                }
            }
            Self::Users {
                users,
                nkeys,
                no_auth_user,
                default_permissions,
            } => {
                let defaults = default_permissions.as_ref();
                if let Some(nkey) = creds.nkey.filter(|k| !k.is_empty()) {
                    let entry = nkeys
                        .iter()
                        .find(|k| k.nkey == nkey)
                        .ok_or(Refused::silently())?;
                    if !verify_nonce(nkey, creds.sig.unwrap_or(""), creds.nonce) {
                        return Err(Refused::silently());
                    }
                    let identity = Identity::Nkey(nkey.to_owned());
                    let (own, account) = (entry.permissions.as_ref(), entry.account.as_ref());
                    return Ok(grant(identity, own, account, defaults));
                }
                let offered_nothing =
                    creds.user.is_none_or(str::is_empty) && creds.token.is_none_or(str::is_empty);
                let user = if offered_nothing {
                    let name = no_auth_user.as_ref().ok_or(Refused::silently())?;
                    users
                        .iter()
                        .find(|u| &u.name == name)
                        .ok_or(Refused::silently())?
                } else {
                    let name = creds.user.ok_or(Refused::silently())?;
                    let user = users
                        .iter()
                        .find(|u| u.name == name)
                        .ok_or(Refused::silently())?;
                    if !secret_matches(&user.password, creds.pass.unwrap_or("")) {
                        return Err(Refused::silently());
                    }
                    user
                };
                let identity = Identity::User(user.name.clone());
                Ok(grant(
                    identity,
                    user.permissions.as_ref(),
                    user.account.as_ref(),
                    defaults,
                ))
            }
        }
    }

    /// Whether a configured user has a plain-text password (Go warns at start: `Plaintext
    /// passwords detected, use nkeys or bcrypt`). A user without a password is left out when
    /// certificates can be mapped to it (`maps_certificates`), as Go leaves it out.
    #[must_use]
    pub fn has_plaintext_password(&self, maps_certificates: bool) -> bool {
        let Self::Users { users, .. } = self else {
            return false;
        };
        users.iter().any(|u| {
            let mapped = u.password.is_empty() && maps_certificates;
            !mapped && !u.password.starts_with(BCRYPT_PREFIX)
        })
    }

    /// The account a configured user or nkey belongs to (`None`: the global account, or not
    /// configured); a reload asks it before re-checking a connected client's credentials.
    #[must_use]
    pub fn account_for(&self, who: &Identity) -> Option<&str> {
        let Self::Users { users, nkeys, .. } = self else {
            return None;
        };
        match who {
            Identity::User(name) => users
                .iter()
                .find(|u| &u.name == name)
                .and_then(|u| u.account.as_deref()),
            Identity::Nkey(key) => nkeys
                .iter()
                .find(|k| &k.nkey == key)
                .and_then(|k| k.account.as_deref()),
            Identity::Anonymous | Identity::Token | Identity::Jwt(_) => None,
        }
    }

    /// The grant of a user the configuration names (a certificate mapped to it): its
    /// permissions and account, as [`AuthConfig::admit`] gives them.
    #[must_use]
    pub fn grant_user<'a>(&'a self, user: &'a User) -> Admission<'a> {
        let defaults = match self {
            Self::Users {
                default_permissions,
                ..
            } => default_permissions.as_ref(),
            _ => None,
        };
        let identity = Identity::User(user.name.clone());
        grant(
            identity,
            user.permissions.as_ref(),
            user.account.as_ref(),
            defaults,
        )
    }
}

/// A configured user's or nkey's grant. The authorization block's default permissions are for
/// its own users; an account's users got their account's defaults when the configuration was
/// read.
fn grant<'a>(
    identity: Identity,
    own: Option<&'a Permissions>,
    account: Option<&'a String>,
    defaults: Option<&'a Permissions>,
) -> Admission<'a> {
    Admission {
        identity,
        permissions: if account.is_some() {
            own
        } else {
            own.or(defaults)
        },
        account: account.map(String::as_str),
    }
}

/// What authentication decided for an admitted client.
#[derive(Debug)]
pub struct Admission<'a> {
    pub identity: Identity,
    /// `None`: unrestricted.
    pub permissions: Option<&'a Permissions>,
    /// The account to log into; `None` is the global account.
    pub account: Option<&'a str>,
}

impl Admission<'_> {
    fn plain(identity: Identity) -> Self {
        Self {
            identity,
            permissions: None,
            account: None,
        }
    }
}

/// A refused client, with the debug line Go logs for the refusal when it has one (operator
/// mode says why a JWT was refused; the client itself only ever hears
/// `Authorization Violation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub reason: Option<String>,
}

impl Refused {
    fn silently() -> Self {
        Self { reason: None }
    }

    fn because(why: &str) -> Self {
        Self {
            reason: Some(why.to_owned()),
        }
    }
}

/// Checks an ed25519 signature of the nonce by a public user nkey.
fn verify_nonce(nkey: &str, sig: &str, nonce: &str) -> bool {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let Ok(sig) = engine
        .decode(sig)
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(sig))
    else {
        return false;
    };
    let Ok(key) = nkeys::KeyPair::from_public_key(nkey) else {
        return false;
    };
    !nonce.is_empty() && key.verify(nonce.as_bytes(), &sig).is_ok()
}

/// Compares a configured secret (plain or bcrypt) with what a client sent. Plain secrets are
/// compared in constant time so that timing reveals nothing about a prefix.
pub(crate) fn secret_matches(configured: &str, offered: &str) -> bool {
    if configured.starts_with(BCRYPT_PREFIX) {
        bcrypt::verify(offered, configured).unwrap_or(false)
    } else {
        // `ct_eq` answers false at once for different lengths, as Go's
        // `subtle.ConstantTimeCompare` does: only the length can be learnt.
        bool::from(configured.as_bytes().ct_eq(offered.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Who `creds` are admitted as (the tests' view of [`AuthConfig::admit`]).
    trait Check {
        fn check(&self, creds: Credentials<'_>) -> Result<Identity, Refused>;
    }

    impl Check for AuthConfig {
        fn check(&self, creds: Credentials<'_>) -> Result<Identity, Refused> {
            self.admit(creds, 0).map(|a| a.identity)
        }
    }

    fn users(no_auth_user: Option<&str>) -> AuthConfig {
        AuthConfig::Users {
            users: vec![
                User {
                    name: "alice".into(),
                    password: "s3cret".into(),
                    permissions: None,
                    account: None,
                },
                User {
                    name: "bob".into(),
                    password: bcrypt::hash("hunter2", 4).unwrap_or_default(),
                    permissions: None,
                    account: None,
                },
            ],
            nkeys: Vec::new(),
            no_auth_user: no_auth_user.map(str::to_owned),
            default_permissions: None,
        }
    }

    #[test]
    fn auth_token_plain_and_bcrypt() {
        let plain = AuthConfig::Token("tok".into());
        assert_eq!(
            plain.check(Credentials {
                token: Some("tok"),
                ..Default::default()
            }),
            Ok(Identity::Token)
        );
        assert!(plain
            .check(Credentials {
                token: Some("tok2"),
                ..Default::default()
            })
            .is_err());
        assert!(plain.check(Credentials::default()).is_err());
        let hashed = AuthConfig::Token(bcrypt::hash("tok", 4).unwrap_or_default());
        assert!(hashed
            .check(Credentials {
                token: Some("tok"),
                ..Default::default()
            })
            .is_ok());
        assert!(hashed
            .check(Credentials {
                token: Some("nope"),
                ..Default::default()
            })
            .is_err());
    }

    #[test]
    fn auth_users_plain_bcrypt_and_unknown() {
        let cfg = users(None);
        let c = |u, p| Credentials {
            user: Some(u),
            pass: Some(p),
            ..Default::default()
        };
        assert_eq!(
            cfg.check(c("alice", "s3cret")),
            Ok(Identity::User("alice".into()))
        );
        assert!(cfg.check(c("alice", "s3cre")).is_err());
        assert!(cfg.check(c("bob", "hunter2")).is_ok());
        assert!(cfg.check(c("bob", "hunter3")).is_err());
        assert!(cfg.check(c("carol", "s3cret")).is_err());
        assert!(cfg.check(Credentials::default()).is_err());
    }

    #[test]
    fn auth_no_auth_user() {
        let cfg = users(Some("alice"));
        assert_eq!(
            cfg.check(Credentials::default()),
            Ok(Identity::User("alice".into()))
        );
        let wrong = Credentials {
            user: Some("alice"),
            pass: Some("x"),
            ..Default::default()
        };
        assert!(cfg.check(wrong).is_err());
    }

    #[test]
    fn auth_nkey_signature() {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let kp = nkeys::KeyPair::new_user();
        let public = kp.public_key();
        let cfg = AuthConfig::Users {
            users: Vec::new(),
            nkeys: vec![NkeyUser {
                nkey: public.clone(),
                permissions: None,
                account: None,
            }],
            no_auth_user: None,
            default_permissions: None,
        };
        assert!(cfg.nonce_required());
        let nonce = "abcdefghijklmno";
        let sig = b64.encode(kp.sign(nonce.as_bytes()).unwrap_or_default());
        let c = |sig, nonce| Credentials {
            nkey: Some(public.as_str()),
            sig: Some(sig),
            nonce,
            ..Default::default()
        };
        assert_eq!(
            cfg.check(c(&sig, nonce)),
            Ok(Identity::Nkey(public.clone()))
        );
        assert!(cfg.check(c(&sig, "other-nonce-xyz")).is_err());
        assert!(cfg.check(c("AAAA", nonce)).is_err());
        assert!(cfg.check(c("!!not base64", nonce)).is_err());
        let other = nkeys::KeyPair::new_user();
        let forged = b64.encode(other.sign(nonce.as_bytes()).unwrap_or_default());
        assert!(cfg.check(c(&forged, nonce)).is_err());
        assert!(cfg
            .admit(c(&sig, nonce), 0)
            .is_ok_and(|a| a.permissions.is_none()));
        let perms = Permissions {
            publish: Some(SubjectPermission {
                allow: Some(vec!["a".into()]),
                deny: Vec::new(),
            }),
            ..Permissions::default()
        };
        let with_perms = AuthConfig::Users {
            users: Vec::new(),
            nkeys: vec![NkeyUser {
                nkey: public.clone(),
                permissions: Some(perms.clone()),
                account: None,
            }],
            no_auth_user: None,
            default_permissions: None,
        };
        let admitted = with_perms.admit(c(&sig, nonce), 0);
        assert_eq!(admitted.ok().and_then(|a| a.permissions), Some(&perms));
    }

    #[test]
    fn auth_account_users_and_defaults() {
        let perms = |subject: &str| Permissions {
            publish: Some(SubjectPermission {
                allow: Some(vec![subject.into()]),
                deny: Vec::new(),
            }),
            ..Permissions::default()
        };
        let cfg = AuthConfig::Users {
            users: vec![
                User {
                    name: "g".into(),
                    password: "g".into(),
                    permissions: None,
                    account: None,
                },
                User {
                    name: "a".into(),
                    password: "a".into(),
                    permissions: None,
                    account: Some("A".into()),
                },
            ],
            nkeys: Vec::new(),
            no_auth_user: Some("a".into()),
            default_permissions: Some(perms("ok.>")),
        };
        let g = Identity::User("g".into());
        let a = Identity::User("a".into());
        assert_eq!(cfg.account_for(&g), None);
        assert_eq!(cfg.account_for(&a), Some("A"));
        let login = |user| Credentials {
            user: Some(user),
            pass: Some(user),
            ..Credentials::default()
        };
        let g_admitted = cfg.admit(login("g"), 0);
        assert_eq!(
            g_admitted.ok().and_then(|a| a.permissions),
            Some(&perms("ok.>"))
        );
        let a_admitted = cfg.admit(login("a"), 0);
        assert!(a_admitted.is_ok_and(|a| a.permissions.is_none() && a.account == Some("A")));
        assert_eq!(cfg.check(Credentials::default()), Ok(a));
    }

    #[test]
    fn auth_not_required() {
        assert!(!AuthConfig::None.required());
        assert!(AuthConfig::Token("t".into()).required());
    }
}
