//! TLS for client connections: building the server's TLS configuration from files (with Go's
//! errors), and what a connection knows after its handshake.
//!
//! Layout:
//! - [`pem`], [`der`], [`x509`]: the pure decoders for the files and for peer certificates
//!   (the subject as Go prints it, the alternative names, fingerprints, validity), from the
//!   `natrium-x509` leaf crate.
//! - `load`: reading the certificate, key and CA files with Go's error texts.
//! - `verify`: the client-certificate verifier (rustls' WebPKI one, noting the rejected chain
//!   for Go's error detail) and the translation of handshake errors into Go's log wording.
//! - `legacy`: the verifier's path for X.509 v1/v2 client certificates, which WebPKI refuses
//!   and Go accepts.
//!
//! The connection-side flow (INFO before or after the handshake, `allow_non_tls` sniffing, the
//! handshake timeout) lives with the client code, in `client::tls_accept`.

mod legacy;
mod load;
pub(crate) mod verify;

pub use natrium_x509::{der, pem, x509};

use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::ring as provider;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, SupportedCipherSuite};

pub use natrium_x509::{NameAttribute, PeerCert};

/// What the binary asks for, already checked by the configuration layer (Go's names for
/// suites and curves, only those Natrium supports).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TlsSpec {
    pub cert_file: String,
    pub key_file: String,
    pub ca_file: String,
    /// Require and verify client certificates.
    pub verify: bool,
    /// `verify_and_map`: authentication maps the verified certificate to a user.
    pub map: bool,
    pub timeout: Duration,
    pub handshake_first: bool,
    /// Zero: wait for the handshake only.
    pub handshake_first_fallback: Duration,
    pub allow_non_tls: bool,
    /// TLS 1.2 suites by Go name; `None` for the defaults.
    pub cipher_suites: Option<Vec<String>>,
    /// Key exchange groups by Go name, preferred first; `None` for the defaults.
    pub curve_preferences: Option<Vec<String>>,
    /// Refuse TLS 1.2 (`min_version: "1.3"`).
    pub tls13_only: bool,
    /// Lower-case hex SHA-256 of accepted client SubjectPublicKeyInfos; `None` accepts any.
    pub pinned_certs: Option<Vec<String>>,
}

/// Why a TLS configuration could not be built, worded as Go's `GenTLSConfig` errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsConfigError {
    /// The certificate or key file: `error parsing X509 certificate/key pair: open c.pem: no
    /// such file or directory`.
    #[error("error parsing X509 certificate/key pair: {0}")]
    KeyPair(String),
    /// The CA file: `open ca.pem: …` or `failed to parse root ca certificate`.
    #[error("{0}")]
    CaFile(String),
    /// A name the configuration layer should have refused, or something rustls refused.
    #[error("{0}")]
    Unsupported(String),
}

/// The client TLS settings the runtime uses, built once at start.
#[derive(Debug)]
pub struct ClientTls {
    pub config: Arc<ServerConfig>,
    /// The same certificate without client authentication, for HTTPS monitoring (Go serves
    /// monitoring with the `tls` block but never asks for a client certificate there).
    pub monitor_config: Arc<ServerConfig>,
    pub verify: bool,
    pub map: bool,
    /// How long a client has to complete the handshake.
    pub timeout: Duration,
    pub handshake_first: bool,
    pub handshake_first_fallback: Duration,
    pub allow_non_tls: bool,
    /// SHA-256 digests of accepted client public keys; `None` accepts any.
    pub pinned_certs: Option<Vec<[u8; 32]>>,
    /// The server certificate's expiry, Unix seconds (`/varz tls_cert_not_after`).
    pub cert_not_after: Option<i64>,
}

/// Serves the one configured certificate; with none (Go accepts a `tls {}` block) every
/// handshake fails, as in Go.
#[derive(Debug)]
struct OneCert(Option<Arc<CertifiedKey>>);

impl ResolvesServerCert for OneCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.clone()
    }
}

impl ClientTls {
    /// Reads the files and builds the rustls configuration.
    pub fn build(spec: &TlsSpec) -> Result<ClientTls, TlsConfigError> {
        let provider = Arc::new(crypto_provider(spec)?);
        let (certified, leaf) = if spec.cert_file.is_empty() {
            (None, None)
        } else {
            let (key, leaf) = load::key_pair(&spec.cert_file, &spec.key_file, &provider)?;
            (Some(key), Some(leaf))
        };
        // Go reads the CA file even when it does not ask for client certificates.
        let roots = if spec.ca_file.is_empty() {
            None
        } else {
            Some(load::roots(&spec.ca_file)?)
        };
        let versions: &[&rustls::SupportedProtocolVersion] =
            if spec.tls13_only || !has_tls12_suite(&provider) {
                &[&rustls::version::TLS13]
            } else {
                &[&rustls::version::TLS13, &rustls::version::TLS12]
            };
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(versions)
            .map_err(|e| TlsConfigError::Unsupported(e.to_string()))?;
        let resolver = Arc::new(OneCert(certified));
        let mut monitor_config = builder
            .clone()
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&resolver) as Arc<dyn ResolvesServerCert>);
        monitor_config.ignore_client_order = true;
        let builder = if spec.verify {
            let roots = match roots {
                Some(roots) => roots,
                None => load::system_roots(),
            };
            builder.with_client_cert_verifier(verify::client_verifier(roots, &provider)?)
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder.with_cert_resolver(resolver);
        // Go picks the suite from its own preference order, not the client's.
        config.ignore_client_order = true;
        let pinned_certs = match &spec.pinned_certs {
            Some(list) => Some(
                list.iter()
                    .map(|hex| parse_sha256_hex(hex))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        Ok(ClientTls {
            config: Arc::new(config),
            monitor_config: Arc::new(monitor_config),
            verify: spec.verify,
            map: spec.map,
            timeout: spec.timeout,
            handshake_first: spec.handshake_first,
            handshake_first_fallback: spec.handshake_first_fallback,
            allow_non_tls: spec.allow_non_tls,
            pinned_certs,
            cert_not_after: leaf.map(|l| l.not_after),
        })
    }

    /// Whether INFO tells clients that TLS is required (Go: unless `allow_non_tls`, but always
    /// with `handshake_first`).
    pub fn info_tls_required(&self) -> bool {
        !self.allow_non_tls || self.handshake_first
    }

    /// Whether a client certificate with this SubjectPublicKeyInfo digest may connect.
    pub fn pinned_accepts(&self, spki_sha256: Option<&[u8; 32]>) -> bool {
        match (&self.pinned_certs, spki_sha256) {
            (None, _) => true,
            (Some(list), Some(digest)) => list.contains(digest),
            (Some(_), None) => false,
        }
    }
}

fn has_tls12_suite(provider: &CryptoProvider) -> bool {
    provider
        .cipher_suites
        .iter()
        .any(|s| matches!(s, SupportedCipherSuite::Tls12(_)))
}

fn parse_sha256_hex(text: &str) -> Result<[u8; 32], TlsConfigError> {
    let bad = || TlsConfigError::Unsupported(format!("bad pinned certificate digest {text}"));
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let s = std::str::from_utf8(pair).map_err(|_| bad())?;
        let byte = u8::from_str_radix(s, 16).map_err(|_| bad())?;
        if let Some(slot) = out.get_mut(i) {
            *slot = byte;
        }
    }
    Ok(out)
}

/// Go's preference order (with AES hardware), which the server applies over the client's:
/// AES-128-GCM, AES-256-GCM, then ChaCha20-Poly1305, ECDSA before RSA.
const GO_SUITE_ORDER: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

/// rustls' ring provider with the configured suites and curves, in Go's preference order.
fn crypto_provider(spec: &TlsSpec) -> Result<CryptoProvider, TlsConfigError> {
    let mut p = provider::default_provider();
    // As in Go, a configured list only restricts TLS 1.2; TLS 1.3 suites stay enabled.
    let allowed = |name: &str| {
        name.starts_with("TLS_AES_")
            || name.starts_with("TLS_CHACHA20_")
            || spec
                .cipher_suites
                .as_ref()
                .is_none_or(|list| list.iter().any(|n| n == name))
    };
    if let Some(names) = &spec.cipher_suites {
        for name in names {
            cipher_suite(name)?;
        }
    }
    p.cipher_suites = GO_SUITE_ORDER
        .iter()
        .filter(|name| allowed(name))
        .map(|name| cipher_suite(name))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(names) = &spec.curve_preferences {
        p.kx_groups = names
            .iter()
            .map(|n| curve(n))
            .collect::<Result<Vec<_>, _>>()?;
    }
    Ok(p)
}

fn unsupported(kind: &str, name: &str) -> TlsConfigError {
    TlsConfigError::Unsupported(format!("{kind} {name} is not supported by Natrium"))
}

/// A cipher suite by Go's name.
fn cipher_suite(name: &str) -> Result<SupportedCipherSuite, TlsConfigError> {
    use provider::cipher_suite as cs;
    Ok(match name {
        "TLS_AES_128_GCM_SHA256" => cs::TLS13_AES_128_GCM_SHA256,
        "TLS_AES_256_GCM_SHA384" => cs::TLS13_AES_256_GCM_SHA384,
        "TLS_CHACHA20_POLY1305_SHA256" => cs::TLS13_CHACHA20_POLY1305_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" => cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" => cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256" => {
            cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" => cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" => cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" => {
            cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
        other => return Err(unsupported("cipher suite", other)),
    })
}

/// A key exchange group by Go's curve name.
fn curve(name: &str) -> Result<&'static dyn rustls::crypto::SupportedKxGroup, TlsConfigError> {
    use provider::kx_group;
    Ok(match name {
        "X25519" => kx_group::X25519,
        "CurveP256" => kx_group::SECP256R1,
        "CurveP384" => kx_group::SECP384R1,
        other => return Err(unsupported("curve preference", other)),
    })
}

/// What one connection negotiated; set once, right after its handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConnInfo {
    /// `1.2` or `1.3`, as Go's `/connz` shows it.
    pub version: &'static str,
    /// Go's name for the suite (`TLS_AES_128_GCM_SHA256`).
    pub cipher_suite: &'static str,
    /// The client did the handshake before INFO (`handshake_first`).
    pub handshake_first: bool,
    /// The client's certificate chain as presented, leaf first; empty without client
    /// certificates. Under `verify` the leaf has been verified against the configured CAs.
    pub peer_certs: Vec<PeerCert>,
}

impl TlsConnInfo {
    /// The verified client certificate, for `verify_and_map` (its `subject`, `subject_rdn`,
    /// `email_addresses`, `dns_names`, `uris` are what Go matches user names against).
    pub fn peer_certificate(&self) -> Option<&PeerCert> {
        self.peer_certs.first()
    }
}

/// Go's name for a negotiated suite.
pub(crate) fn go_suite_name(suite: SupportedCipherSuite) -> &'static str {
    use rustls::CipherSuite as C;
    match suite.suite() {
        C::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        C::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        C::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
        }
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
        }
        _ => "unknown",
    }
}

/// Go's `tlsVersion()` text.
pub(crate) fn go_version_name(version: Option<rustls::ProtocolVersion>) -> &'static str {
    match version {
        Some(rustls::ProtocolVersion::TLSv1_3) => "1.3",
        Some(rustls::ProtocolVersion::TLSv1_2) => "1.2",
        _ => "unknown",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn tls_provider_keeps_tls13_and_listed_tls12_suites() {
        let spec = TlsSpec {
            cipher_suites: Some(vec!["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()]),
            curve_preferences: Some(vec!["CurveP384".into(), "X25519".into()]),
            ..TlsSpec::default()
        };
        let p = crypto_provider(&spec).unwrap();
        let names: Vec<_> = p.cipher_suites.iter().map(|s| go_suite_name(*s)).collect();
        assert_eq!(
            names,
            [
                "TLS_AES_128_GCM_SHA256",
                "TLS_AES_256_GCM_SHA384",
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            ]
        );
        assert_eq!(p.kx_groups.len(), 2);
        let bad = TlsSpec {
            curve_preferences: Some(vec!["CurveP521".into()]),
            ..TlsSpec::default()
        };
        assert_eq!(
            crypto_provider(&bad).unwrap_err().to_string(),
            "curve preference CurveP521 is not supported by Natrium"
        );
    }

    #[test]
    fn tls_pinned_digests() {
        let hex = "ab".repeat(32);
        assert_eq!(parse_sha256_hex(&hex).unwrap(), [0xab; 32]);
        assert!(parse_sha256_hex("abc").is_err());
        assert!(parse_sha256_hex(&"zz".repeat(32)).is_err());
    }
}
