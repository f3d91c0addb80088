//! Operator mode: which operators are trusted, which accounts the (memory) resolver holds, and
//! the decision for a client presenting a user JWT.
//!
//! A user is admitted, as Go admits it, when: its JWT decodes and verifies; it is within its
//! `exp`/`nbf`; its account (`issuer_account`, else the issuer) is known and was signed by a
//! trusted operator key and has not expired; the user's issuer is the account or one of the
//! account's signing keys; the account does not refuse bearer tokens it carries; the nonce
//! signature verifies with the user's key (bearer tokens skip this); and the account has not
//! revoked it. Each refusal carries the debug text Go logs for it.

use std::collections::HashMap;

use base64::Engine as _;

use super::claims::{AccountNats, Claims, OperatorNats, SigningKey, UserNats};
use super::decode::{decode, undecorate, DecodeError};
use crate::account::{export_allows, AccountSpec};
use crate::Permissions;

/// Why operator mode could not be set up (configuration errors, in Go's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtConfigError {
    #[error("error parsing operator JWT: {0}")]
    Operator(DecodeError),
    #[error("invalid account JWT")]
    Account,
}

/// An account the resolver holds.
#[derive(Debug, Clone)]
pub struct ResolvedAccount {
    pub claims: Claims<AccountNats>,
    /// Whether its issuer is a trusted operator key.
    pub trusted: bool,
}

/// An admitted JWT user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtUser {
    /// The user's public key (`U…`).
    pub public_key: String,
    /// The account's public key.
    pub account: String,
    pub name: String,
    /// `None`: unrestricted.
    pub permissions: Option<Permissions>,
    /// The user's `subs` and `payload` limits (`-1`: unlimited).
    pub max_subscriptions: i64,
    pub max_payload: i64,
    /// Unix seconds at which the JWT expires, if it does.
    pub expires: Option<i64>,
}

/// A refusal, with the debug line Go logs for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// Trusted operators and preloaded accounts.
#[derive(Debug, Clone, Default)]
pub struct JwtAuth {
    operators: Vec<Claims<OperatorNats>>,
    trusted_keys: Vec<String>,
    accounts: HashMap<String, ResolvedAccount>,
    /// The JWTs as configured, for equality (a reload compares configurations).
    source: Vec<String>,
}

impl PartialEq for JwtAuth {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for JwtAuth {}

impl JwtAuth {
    /// Decodes the operators (JWT text, decorated or not) and the preloaded account JWTs.
    ///
    /// # Errors
    /// An operator or account JWT that does not decode.
    pub fn new(operators: &[String], preload: &[(String, String)]) -> Result<Self, JwtConfigError> {
        let mut out = Self::default();
        for text in operators {
            let claims =
                decode::<OperatorNats>(undecorate(text)).map_err(JwtConfigError::Operator)?;
            if !claims.nats.strict_signing_key_usage {
                out.trusted_keys.push(claims.sub.clone());
            }
            out.trusted_keys
                .extend(claims.nats.signing_keys.iter().cloned());
            out.operators.push(claims);
            out.source.push(text.clone());
        }
        for (key, jwt) in preload {
            let claims = decode::<AccountNats>(jwt).map_err(|_| JwtConfigError::Account)?;
            let trusted = out.trusted_keys.contains(&claims.iss);
            out.source.push(jwt.clone());
            // Go keys the resolver by the name given; the account is its subject.
            out.accounts
                .insert(key.clone(), ResolvedAccount { claims, trusted });
        }
        Ok(out)
    }

    pub fn operators(&self) -> &[Claims<OperatorNats>] {
        &self.operators
    }

    /// The system account the first operator names, if any.
    pub fn operator_system_account(&self) -> Option<&str> {
        self.operators
            .first()
            .map(|o| o.nats.system_account.as_str())
            .filter(|s| !s.is_empty())
    }

    pub fn account(&self, key: &str) -> Option<&ResolvedAccount> {
        self.accounts.get(key)
    }

    /// The accounts to create at start, each named by its public key, with imports the
    /// exporter does not allow left out (Go marks them invalid).
    pub fn account_specs(&self) -> Vec<AccountSpec> {
        let mut keys: Vec<&String> = self.accounts.keys().collect();
        keys.sort();
        let specs: Vec<AccountSpec> = keys
            .into_iter()
            .filter_map(|k| self.accounts.get(k))
            .map(|a| a.claims.spec())
            .collect();
        let exports: HashMap<String, Vec<crate::account::Export>> = specs
            .iter()
            .map(|s| (s.name.clone(), s.exports.clone()))
            .collect();
        specs
            .into_iter()
            .map(|mut spec| {
                let name = spec.name.clone();
                spec.imports.retain(|i| {
                    exports
                        .get(&i.account)
                        .is_some_and(|e| export_allows(e, i.is_service(), &name, &i.subject))
                });
                spec
            })
            .collect()
    }

    /// Decides on a client's user JWT and nonce signature at Unix time `now`.
    ///
    /// # Errors
    /// A [`Refusal`] with Go's debug text.
    pub fn authenticate(
        &self,
        user_jwt: &str,
        sig: Option<&str>,
        nonce: &str,
        now: i64,
    ) -> Result<JwtUser, Refusal> {
        let refuse = |text: String| Err(Refusal(text));
        let user = match decode::<UserNats>(user_jwt) {
            Ok(user) => user,
            Err(err) => return refuse(format!("User JWT not valid: {err}")),
        };
        if let Some(problem) = user.time_problem(now) {
            return refuse(format!("User JWT no longer valid: {problem}"));
        }
        let account_key = if user.nats.issuer_account.is_empty() {
            user.iss.as_str()
        } else {
            user.nats.issuer_account.as_str()
        };
        let Some(account) = self.accounts.get(account_key) else {
            return refuse("Account JWT lookup error: account missing".to_owned());
        };
        if !account.claims.validation_issues().is_empty() {
            return refuse("Account JWT lookup error: account validation failed".to_owned());
        }
        if !account.trusted {
            return refuse("Account JWT not signed by trusted operator".to_owned());
        }
        let acc = &account.claims;
        let scope = if user.iss == acc.sub {
            None
        } else {
            match acc.nats.signing_keys.iter().find(|k| k.key() == user.iss) {
                Some(key) => Some(key),
                None => return refuse("User JWT issuer is not known".to_owned()),
            }
        };
        if acc.time_problem(now) == Some("claim is expired") {
            return refuse("Account JWT has expired".to_owned());
        }
        if user.nats.bearer_token && acc.nats.limits.disallow_bearer {
            return refuse("Account does not allow bearer tokens".to_owned());
        }
        if !user.nats.bearer_token {
            check_nonce(&user.sub, sig, nonce)?;
        }
        if revoked(&acc.nats.revocations, &user.sub, user.iat) {
            return refuse("User authentication revoked".to_owned());
        }
        let rules = match scope {
            Some(SigningKey::Scoped { template, .. }) => &**template,
            _ => &user.nats,
        };
        let permissions = rules
            .permissions
            .compile()
            .or_else(|| acc.nats.default_permissions.compile());
        Ok(JwtUser {
            public_key: user.sub.clone(),
            account: acc.sub.clone(),
            name: user.name.clone(),
            permissions,
            max_subscriptions: rules.subs,
            max_payload: rules.payload,
            expires: (user.exp > 0).then_some(user.exp),
        })
    }
}

/// Go's `isRevoked`: a revocation of the user, or of everyone (`*`), at or after the time the
/// user's JWT was issued.
fn revoked(revocations: &HashMap<String, i64>, user: &str, issued_at: i64) -> bool {
    [user, "*"]
        .iter()
        .any(|k| revocations.get(*k).is_some_and(|t| *t >= issued_at))
}

fn check_nonce(user: &str, sig: Option<&str>, nonce: &str) -> Result<(), Refusal> {
    let refuse = |text: &str| Err(Refusal(text.to_owned()));
    let Some(sig) = sig.filter(|s| !s.is_empty()) else {
        return refuse("Signature missing");
    };
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sig)
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(sig));
    let Ok(sig) = decoded else {
        return refuse("Signature not valid base64");
    };
    let Ok(key) = nkeys::KeyPair::from_public_key(user) else {
        return refuse("User nkey not valid");
    };
    if nonce.is_empty() || key.verify(nonce.as_bytes(), &sig).is_err() {
        return refuse("Signature not verified");
    }
    Ok(())
}
