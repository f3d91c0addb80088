//! Deciding who a client is when its CONNECT arrives: the credentials it offers, or under
//! `verify_and_map` its certificate; the permissions that follow; and the names Go's logs and
//! `/connz` give the client (never a secret).

use std::sync::Arc;

use natrium_auth::{
    Admission, AuthConfig, AuthError, CertIdentity, ClientPermissions, Credentials, Identity,
};
use natrium_gofmt::go_quote_bytes as go_quote;

use super::ClientHandle;
use crate::config::CoreConfig;
use crate::tls::PeerCert;
use nats_proto::ConnectOptions;

/// An authenticated client.
pub(super) struct Admitted {
    /// `None`: unrestricted.
    pub perms: Option<Arc<ClientPermissions>>,
    /// What `/connz?auth=1` shows as `authorized_user`.
    pub auth_user: String,
    /// The account to log into; `None` is the global account.
    pub account: Option<String>,
    /// What a user JWT adds: its own limits and expiry.
    pub jwt: Option<JwtGrant>,
}

/// The limits and expiry a user JWT carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct JwtGrant {
    /// `-1` (or 0): unlimited.
    pub max_subscriptions: i64,
    pub max_payload: i64,
    /// Unix seconds.
    pub expires: Option<i64>,
}

/// A refused client.
pub(super) struct Refused {
    /// How Go's log line names the client (`User "bob"`), `None` for no credentials.
    pub who: Option<String>,
    /// `authorized_user` for the closed-connections list (Go keeps what CONNECT said).
    pub auth_user: String,
}

/// A CONNECT field that is there and not empty.
fn present(field: Option<&String>) -> Option<&str> {
    field.map(String::as_str).filter(|s| !s.is_empty())
}

/// Go's raw authorized user: the nkey, else the user name, else a redacted token marker.
fn raw_auth_user(opts: &ConnectOptions) -> String {
    present(opts.nkey.as_ref())
        .or(present(opts.user.as_ref()))
        .map(str::to_owned)
        .or_else(|| present(opts.auth_token.as_ref()).map(|_| "[REDACTED]".to_owned()))
        .unwrap_or_default()
}

/// How Go's log names a client that failed to authenticate; tokens are redacted.
fn go_auth_user(opts: &ConnectOptions) -> Option<String> {
    if let Some(nkey) = present(opts.nkey.as_ref()) {
        Some(format!("Nkey {}", go_quote(nkey.as_bytes())))
    } else if let Some(user) = present(opts.user.as_ref()) {
        Some(format!("User {}", go_quote(user.as_bytes())))
    } else {
        present(opts.auth_token.as_ref()).map(|_| "Token \"[REDACTED]\"".to_owned())
    }
}

/// The authentication settings a client is checked against, decided here for every listener:
/// a websocket client's block's own `authorization` (else the server's) and its own TLS
/// `verify_and_map`; the server's for everyone else. The read loop, CONNECT and a reload's
/// re-check all ask this one function.
#[derive(Clone, Copy)]
pub(crate) struct AuthScope<'a> {
    pub auth: &'a AuthConfig,
    /// `verify_and_map` on the listener the client came through.
    pub tls_map: bool,
}

pub(crate) fn auth_scope(config: &CoreConfig, websocket: bool) -> AuthScope<'_> {
    match config.websocket.as_ref().filter(|_| websocket) {
        Some(ws) => AuthScope {
            auth: ws.auth.as_ref().unwrap_or(&config.auth),
            tls_map: ws.tls.as_ref().is_some_and(|t| t.map),
        },
        None => AuthScope {
            auth: &config.auth,
            tls_map: config.tls.as_ref().is_some_and(|t| t.map),
        },
    }
}

/// Checks a client's CONNECT against `scope`, in one call to the auth crate (who, permissions,
/// account), with the clock read once.
pub(super) fn authenticate(
    scope: AuthScope<'_>,
    handle: &ClientHandle,
    opts: &ConnectOptions,
    nonce: &str,
) -> Result<Admitted, Refused> {
    let auth = scope.auth;
    let raw = raw_auth_user(opts);
    if !auth.required() {
        return Ok(Admitted {
            perms: None,
            auth_user: raw,
            account: None,
            jwt: None,
        });
    }
    if scope.tls_map && auth.maps_certificates(opts.nkey.as_deref()) {
        return map_certificate(auth, handle, opts, raw);
    }
    let creds = Credentials {
        user: opts.user.as_deref(),
        pass: opts.pass.as_deref(),
        token: opts.auth_token.as_deref(),
        nkey: opts.nkey.as_deref(),
        sig: opts.sig.as_deref(),
        nonce,
        jwt: opts.jwt.as_deref(),
    };
    let now = chrono::Utc::now().timestamp();
    match auth.admit(creds, now) {
        Ok(admission) => Ok(admitted(handle, admission, raw)),
        Err(refused) => {
            if let Some(why) = refused.reason {
                tracing::debug!("{} - {why}", handle.log_prefix());
            }
            Err(Refused {
                who: go_auth_user(opts),
                auth_user: raw,
            })
        }
    }
}

/// What the connection keeps of an admission.
fn admitted(handle: &ClientHandle, admission: Admission<'_>, raw: String) -> Admitted {
    match admission.identity {
        // A JWT user's permissions are in its JWT.
        Identity::Jwt(user) => {
            tracing::debug!(
                "{} - Authenticated JWT: Client {} (claim-name: {}) by Account {}",
                handle.log_prefix(),
                go_quote(user.public_key.as_bytes()),
                go_quote(user.name.as_bytes()),
                go_quote(user.account.as_bytes())
            );
            Admitted {
                perms: compile(user.permissions.as_ref()),
                auth_user: user.public_key.clone(),
                account: Some(user.account.clone()),
                jwt: Some(JwtGrant {
                    max_subscriptions: user.max_subscriptions,
                    max_payload: user.max_payload,
                    expires: user.expires,
                }),
            }
        }
        identity => Admitted {
            perms: compile(admission.permissions),
            auth_user: match identity {
                // `no_auth_user`: Go fills the name in.
                Identity::User(name) if raw.is_empty() => name,
                _ => raw,
            },
            account: admission.account.map(str::to_owned),
            jwt: None,
        },
    }
}

fn compile(perms: Option<&natrium_auth::Permissions>) -> Option<Arc<ClientPermissions>> {
    perms.map(|p| Arc::new(ClientPermissions::compile(p)))
}

/// `verify_and_map`: the user is the one the client certificate names; a password configured
/// for that user must still be sent. Go's debug lines say how the mapping went.
fn map_certificate(
    auth: &AuthConfig,
    handle: &ClientHandle,
    opts: &ConnectOptions,
    raw: String,
) -> Result<Admitted, Refused> {
    let prefix = handle.log_prefix();
    let refused = |raw: String| Refused {
        who: go_auth_user(opts),
        auth_user: raw,
    };
    let Some(tls) = handle.tls() else {
        tracing::debug!("{prefix} - User required in cert, no TLS connection state");
        return Err(refused(raw));
    };
    let Some(cert) = tls.peer_certificate() else {
        tracing::debug!("{prefix} - User required in cert, no peer certificates found");
        return Err(refused(raw));
    };
    if tls.peer_certs.len() > 1 {
        tracing::debug!("{prefix} - Multiple peer certificates found, selecting first");
    }
    let rdns = subject_attributes(cert);
    let ident = CertIdentity {
        emails: &cert.email_addresses,
        dns_names: &cert.dns_names,
        uris: &cert.uris,
        subject: &cert.subject,
        subject_rdn: &cert.subject_rdn,
        rdns: &rdns,
    };
    let Some(user) = auth.map_certificate(&ident, &mut |line| {
        tracing::debug!("{prefix} - {line}");
    }) else {
        return Err(refused(raw));
    };
    if let Some(sent) = opts.user.as_deref().filter(|u| !u.is_empty()) {
        tracing::warn!(
            "User {} found in connect proto, but user required from cert",
            go_quote(sent.as_bytes())
        );
    }
    if !user.password_matches(opts.pass.as_deref().unwrap_or_default()) {
        return Err(Refused {
            who: Some(format!("User {}", go_quote(user.name.as_bytes()))),
            auth_user: user.name.clone(),
        });
    }
    let grant = auth.grant_user(user);
    Ok(Admitted {
        perms: compile(grant.permissions),
        auth_user: user.name.clone(),
        account: grant.account.map(str::to_owned),
        jwt: None,
    })
}

/// The subject's attributes as mapping reads them: `(OID, string value)` per RDN.
fn subject_attributes(cert: &PeerCert) -> Vec<Vec<(&str, Option<&str>)>> {
    cert.subject_rdns
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|a| (a.oid.as_str(), a.value.as_deref()))
                .collect()
        })
        .collect()
}

/// Logs a failed authentication as Go does.
pub(super) fn log_refusal(handle: &ClientHandle, who: Option<&str>) {
    let prefix = handle.log_prefix();
    if let Some(who) = who {
        tracing::error!("{prefix} - {} - {who}", AuthError::Refused);
    } else {
        tracing::error!("{prefix} - {}", AuthError::Refused);
    }
}
