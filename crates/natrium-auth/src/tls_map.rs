//! `verify_and_map`: choosing the configured user a verified client certificate stands for.
//!
//! The order is Go's: the certificate's email addresses, then its DNS names, then its URIs
//! (each an exact user name); then its subject as a distinguished name (see [`crate::dn`]:
//! RDNs in order, then in any order, against every user name that parses as a DN); then the
//! subject's RDN-sequence string with the domain components appended
//! (`CN=bob,O=Acme,DC=example,DC=com`), then that string alone (`CN=bob,O=Acme`). The first
//! match wins. Each step reports Go's debug line through a callback, so the runtime can log
//! exactly what Go logs.

use natrium_gofmt::go_quote;

use crate::dn::{dn_from_subject, parse_dn, OID_DOMAIN_COMPONENT};
use crate::{secret_matches, AuthConfig, User};

/// What mapping reads from a client certificate.
#[derive(Debug, Clone, Copy, Default)]
pub struct CertIdentity<'a> {
    pub emails: &'a [String],
    pub dns_names: &'a [String],
    pub uris: &'a [String],
    /// Go's `Subject.String()`; an empty one counts as no subject.
    pub subject: &'a str,
    /// Go's `Subject.ToRDNSequence().String()`, the subject as users are named after it.
    pub subject_rdn: &'a str,
    /// The subject's attributes in certificate order: `(OID, string value)`.
    pub rdns: &'a [Vec<(&'a str, Option<&'a str>)>],
}

impl User {
    /// Whether `offered` is this user's password. A mapped user without a password accepts
    /// a client that sends none; one with a password needs it (Go checks it after mapping).
    #[must_use]
    pub fn password_matches(&self, offered: &str) -> bool {
        secret_matches(&self.password, offered)
    }
}

impl AuthConfig {
    /// Whether `verify_and_map` decides who a client is: users are configured (nkey users
    /// who offer their nkey still sign the nonce instead).
    #[must_use]
    pub fn maps_certificates(&self, offered_nkey: Option<&str>) -> bool {
        match self {
            Self::Users { users, nkeys, .. } => {
                let nkey_auth = !nkeys.is_empty() && offered_nkey.is_some_and(|k| !k.is_empty());
                !users.is_empty() && !nkey_auth
            }
            Self::None | Self::Token(_) | Self::Jwt(_) => false,
        }
    }

    /// The user a certificate maps to, if any; `debug` receives Go's debug lines.
    pub fn map_certificate(
        &self,
        cert: &CertIdentity<'_>,
        debug: &mut dyn FnMut(String),
    ) -> Option<&User> {
        let Self::Users { users, .. } = self else {
            return None;
        };
        let by_name = |name: &str| users.iter().find(|u| u.name == name);
        let has_subject = !cert.subject.is_empty();
        if cert.emails.is_empty()
            && cert.dns_names.is_empty()
            && cert.uris.is_empty()
            && !has_subject
        {
            debug("User required in cert, none found".to_owned());
            return None;
        }
        let named: [(&[String], &str); 3] = [
            (cert.emails, "email"),
            (cert.dns_names, "SAN"),
            (cert.uris, "URI"),
        ];
        for (names, what) in named {
            if let Some(user) = names.iter().find_map(|n| by_name(n)) {
                debug(format!(
                    "Using {what} found in cert for auth [{}]",
                    go_quote(&user.name)
                ));
                return Some(user);
            }
        }
        let rdn = cert.subject_rdn;
        if let Some(cert_dn) = dn_from_subject(cert.rdns) {
            let parsed: Vec<_> = users
                .iter()
                .filter_map(|u| parse_dn(&u.name).map(|dn| (u, dn)))
                .collect();
            let found = parsed
                .iter()
                .find(|(_, dn)| dn.matches(&cert_dn))
                .or_else(|| parsed.iter().find(|(_, dn)| dn.matches_reordered(&cert_dn)));
            if let Some((user, _)) = found {
                debug(format!(
                    "Using DistinguishedNameMatch for auth [{}]",
                    go_quote(&user.name)
                ));
                return Some(user);
            }
            debug(format!(
                "DistinguishedNameMatch could not be used for auth [{}]",
                go_quote(rdn)
            ));
        }
        let dcs = domain_components(cert.rdns);
        if !dcs.is_empty() {
            let with_dcs = format!("{rdn},{dcs}");
            if let Some(user) = by_name(&with_dcs) {
                debug(format!(
                    "Using RDNSequence for auth [{}]",
                    go_quote(&user.name)
                ));
                return Some(user);
            }
            debug(format!(
                "RDNSequence could not be used for auth [{}]",
                go_quote(&with_dcs)
            ));
        }
        if let Some(user) = by_name(rdn) {
            debug(format!(
                "Using certificate subject for auth [{}]",
                go_quote(&user.name)
            ));
            return Some(user);
        }
        debug(format!("User in cert [{}], not found", go_quote(rdn)));
        None
    }
}

/// `DC=…` for every domain component of the subject, in certificate order, comma-separated.
fn domain_components(rdns: &[Vec<(&str, Option<&str>)>]) -> String {
    let mut out = String::new();
    for (_, value) in rdns
        .iter()
        .flatten()
        .filter(|(oid, _)| *oid == OID_DOMAIN_COMPONENT)
    {
        if let Some(value) = value {
            if !out.is_empty() {
                out.push(',');
            }
            out.push_str("DC=");
            out.push_str(value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, password: &str) -> User {
        User {
            name: name.into(),
            password: password.into(),
            permissions: None,
            account: None,
        }
    }

    fn config(names: &[&str]) -> AuthConfig {
        AuthConfig::Users {
            users: names.iter().map(|n| user(n, "")).collect(),
            nkeys: Vec::new(),
            no_auth_user: None,
            default_permissions: None,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn map<'a>(cfg: &'a AuthConfig, cert: &CertIdentity<'_>) -> (Option<&'a str>, Vec<String>) {
        let mut lines = Vec::new();
        let found = cfg.map_certificate(cert, &mut |l| lines.push(l));
        (found.map(|u| u.name.as_str()), lines)
    }

    #[test]
    fn auth_tls_map_order_email_dns_uri() {
        let emails = strings(&["alice@example.com"]);
        let dns = strings(&["alice.example.com", "other.example.com"]);
        let uris = strings(&["spiffe://example.org/svc"]);
        let rdns = vec![
            vec![("2.5.4.10", Some("Acme"))],
            vec![("2.5.4.3", Some("alice"))],
        ];
        let cert = CertIdentity {
            emails: &emails,
            dns_names: &dns,
            uris: &uris,
            subject: "CN=alice,O=Acme",
            subject_rdn: "CN=alice,O=Acme",
            rdns: &rdns,
        };
        let all = config(&[
            "CN=alice,O=Acme",
            "spiffe://example.org/svc",
            "other.example.com",
            "alice@example.com",
        ]);
        assert_eq!(
            map(&all, &cert),
            (
                Some("alice@example.com"),
                vec!["Using email found in cert for auth [\"alice@example.com\"]".to_owned()]
            )
        );
        let dns_uri = config(&["spiffe://example.org/svc", "other.example.com"]);
        assert_eq!(map(&dns_uri, &cert).0, Some("other.example.com"));
        let uri = config(&["spiffe://example.org/svc", "CN=alice,O=Acme"]);
        assert_eq!(map(&uri, &cert).0, Some("spiffe://example.org/svc"));
        let subject = config(&["CN=alice,O=Acme"]);
        assert_eq!(
            map(&subject, &cert),
            (
                Some("CN=alice,O=Acme"),
                vec!["Using DistinguishedNameMatch for auth [\"CN=alice,O=Acme\"]".to_owned()]
            )
        );
        let none = config(&["nobody"]);
        assert_eq!(
            map(&none, &cert),
            (
                None,
                vec![
                    "DistinguishedNameMatch could not be used for auth [\"CN=alice,O=Acme\"]"
                        .to_owned(),
                    "User in cert [\"CN=alice,O=Acme\"], not found".to_owned()
                ]
            )
        );
    }

    /// The lines Go v2.15.2 logged for a subject with domain components mapped by its
    /// RDN-sequence string.
    #[test]
    fn auth_tls_map_domain_components_like_go() {
        let rdns = vec![
            vec![("0.9.2342.19200300.100.1.25", Some("com"))],
            vec![("0.9.2342.19200300.100.1.25", Some("example"))],
            vec![("2.5.4.10", Some("Acme"))],
            vec![("2.5.4.11", Some("eng"))],
            vec![("2.5.4.3", Some("bob"))],
        ];
        let cert = CertIdentity {
            subject: "CN=bob,OU=eng,O=Acme",
            subject_rdn: "CN=bob,OU=eng,O=Acme",
            rdns: &rdns,
            ..CertIdentity::default()
        };
        let cfg = config(&["nobody", "CN=bob,OU=eng,O=Acme"]);
        // The DN has domain components the user name lacks: no DN match.
        assert_eq!(
            map(&cfg, &cert),
            (
                Some("CN=bob,OU=eng,O=Acme"),
                vec![
                    "DistinguishedNameMatch could not be used for auth [\"CN=bob,OU=eng,O=Acme\"]"
                        .to_owned(),
                    "RDNSequence could not be used for auth \
                     [\"CN=bob,OU=eng,O=Acme,DC=com,DC=example\"]"
                        .to_owned(),
                    "Using certificate subject for auth [\"CN=bob,OU=eng,O=Acme\"]".to_owned(),
                ]
            )
        );
        let with_dcs = config(&["CN=bob,OU=eng,O=Acme,DC=com,DC=example"]);
        // As a DN this is in the wrong order for the certificate but has the same RDNs.
        assert_eq!(
            map(&with_dcs, &cert).0,
            Some("CN=bob,OU=eng,O=Acme,DC=com,DC=example")
        );
        let full = config(&["CN=bob,OU=eng,O=Acme,DC=example,DC=com"]);
        assert_eq!(
            map(&full, &cert).1,
            vec![
                "Using DistinguishedNameMatch for auth [\"CN=bob,OU=eng,O=Acme,DC=example,DC=com\"]"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn auth_tls_map_unknown_attribute_skips_dn_match() {
        // UID has no name in Go's table: no DN, so only the string forms are tried.
        let rdns = vec![
            vec![("2.5.4.10", Some("Acme"))],
            vec![
                ("2.5.4.3", Some("m")),
                ("0.9.2342.19200300.100.1.1", Some("77")),
            ],
        ];
        let cert = CertIdentity {
            subject: "CN=m,O=Acme",
            subject_rdn: "CN=m,O=Acme",
            rdns: &rdns,
            ..CertIdentity::default()
        };
        assert_eq!(
            map(&config(&["x=y"]), &cert).1,
            vec!["User in cert [\"CN=m,O=Acme\"], not found".to_owned()]
        );
        assert_eq!(map(&config(&["CN=m,O=Acme"]), &cert).0, Some("CN=m,O=Acme"));
        assert_eq!(
            map(&config(&["a"]), &CertIdentity::default()).1,
            vec!["User required in cert, none found".to_owned()]
        );
    }

    #[test]
    fn auth_tls_map_applies_to_users_not_offered_nkeys() {
        let cfg = AuthConfig::Users {
            users: vec![user("a", "")],
            nkeys: vec![crate::NkeyUser {
                nkey: "UABC".into(),
                permissions: None,
                account: None,
            }],
            no_auth_user: None,
            default_permissions: None,
        };
        assert!(cfg.maps_certificates(None));
        assert!(cfg.maps_certificates(Some("")));
        assert!(!cfg.maps_certificates(Some("UABC")));
        assert!(!AuthConfig::Token("t".into()).maps_certificates(None));
        assert!(user("a", "").password_matches(""));
        assert!(!user("a", "").password_matches("x"));
        assert!(!user("a", "pw").password_matches(""));
    }
}
