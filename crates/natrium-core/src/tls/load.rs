//! Reading the certificate, key and CA files, in Go's order and with Go's messages
//! (`tls.LoadX509KeyPair`, `x509.CertPool.AppendCertsFromPEM`), because operators and their
//! tooling know those texts.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::RootCertStore;

use super::pem;
use super::x509::PeerCert;
use super::TlsConfigError;
use crate::server::go_os_error;

/// `open <path>: <reason>`, as Go's `os.ReadFile` fails.
fn read(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("open {path}: {}", go_os_error(&e)))
}

fn key_pair_error(message: impl Into<String>) -> TlsConfigError {
    TlsConfigError::KeyPair(message.into())
}

/// Go's `%v` of a list of strings: `[A B]`.
fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

/// The certificate chain in `cert_file` and the key in `key_file`, checked to match. Returns the
/// key ready for rustls and the decoded leaf.
pub(super) fn key_pair(
    cert_file: &str,
    key_file: &str,
    provider: &CryptoProvider,
) -> Result<(Arc<CertifiedKey>, PeerCert), TlsConfigError> {
    let cert_pem = read(cert_file).map_err(key_pair_error)?;
    let key_pem = read(key_file).map_err(key_pair_error)?;
    let chain = certificates(&cert_pem)?;
    let key_der = private_key(&key_pem)?;
    let leaf = chain
        .first()
        .ok_or_else(|| key_pair_error("tls: failed to find any PEM data in certificate input"))
        .and_then(|der| {
            PeerCert::parse(der).map_err(|_| key_pair_error("x509: malformed certificate"))
        })?;
    let key_der = PrivateKeyDer::try_from(key_der)
        .map_err(|_| key_pair_error("tls: failed to parse private key"))?;
    let signing_key = provider
        .key_provider
        .load_private_key(key_der)
        .map_err(|_| key_pair_error("tls: failed to parse private key"))?;
    let certified = CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            return Err(key_pair_error("tls: private key does not match public key"));
        }
        Err(_) => return Err(key_pair_error("x509: malformed certificate")),
    }
    Ok((Arc::new(certified), leaf))
}

/// Every `CERTIFICATE` block, or Go's error naming what was found instead.
fn certificates(input: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let mut chain = Vec::new();
    let mut skipped = Vec::new();
    for block in pem::blocks(input) {
        if block.label == "CERTIFICATE" {
            chain.push(CertificateDer::from(block.der));
        } else {
            skipped.push(block.label);
        }
    }
    if !chain.is_empty() {
        return Ok(chain);
    }
    Err(key_pair_error(match skipped.as_slice() {
        [] => "tls: failed to find any PEM data in certificate input".to_owned(),
        [only] if only.ends_with("PRIVATE KEY") => {
            "tls: failed to find certificate PEM data in certificate input, but did find a \
             private key; PEM inputs may have been switched"
                .to_owned()
        }
        _ => format!(
            "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping \
             PEM blocks of the following types: {}",
            go_list(&skipped)
        ),
    }))
}

/// The first block whose label ends in `PRIVATE KEY`, or Go's error.
fn private_key(input: &[u8]) -> Result<Vec<u8>, TlsConfigError> {
    let mut skipped = Vec::new();
    for block in pem::blocks(input) {
        if block.label == "PRIVATE KEY" || block.label.ends_with(" PRIVATE KEY") {
            return Ok(block.der);
        }
        skipped.push(block.label);
    }
    Err(key_pair_error(match skipped.as_slice() {
        [] => "tls: failed to find any PEM data in key input".to_owned(),
        [only] if only == "CERTIFICATE" => {
            "tls: found a certificate rather than a key in the PEM for the private key".to_owned()
        }
        _ => format!(
            "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input \
             after skipping PEM blocks of the following types: {}",
            go_list(&skipped)
        ),
    }))
}

/// The authorities in `ca_file`: Go keeps every `CERTIFICATE` block without headers that
/// parses, and fails only when none does.
pub(super) fn roots(ca_file: &str) -> Result<RootCertStore, TlsConfigError> {
    let input = read(ca_file).map_err(TlsConfigError::CaFile)?;
    let mut store = RootCertStore::empty();
    let candidates = pem::blocks(&input)
        .into_iter()
        .filter(|b| b.label == "CERTIFICATE" && !b.has_headers)
        .map(|b| CertificateDer::from(b.der));
    let (added, _ignored) = store.add_parsable_certificates(candidates);
    if added == 0 {
        return Err(TlsConfigError::CaFile(
            "failed to parse root ca certificate".to_owned(),
        ));
    }
    Ok(store)
}

/// The system's trusted authorities: Go checks client certificates against them when
/// `verify` is on and no `ca_file` is given.
pub(super) fn system_roots() -> RootCertStore {
    let mut store = RootCertStore::empty();
    if let Ok(certs) = rustls_native_certs::load_native_certs() {
        store.add_parsable_certificates(certs);
    }
    store
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----\n";
    const KEY: &str = "-----BEGIN EC PRIVATE KEY-----\nAQID\n-----END EC PRIVATE KEY-----\n";

    fn err<T: std::fmt::Debug>(r: Result<T, TlsConfigError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn tls_load_pem_errors_like_go() {
        assert_eq!(
            err(certificates(b"nothing")),
            "error parsing X509 certificate/key pair: tls: failed to find any PEM data in \
             certificate input"
        );
        assert_eq!(
            err(certificates(KEY.as_bytes())),
            "error parsing X509 certificate/key pair: tls: failed to find certificate PEM data \
             in certificate input, but did find a private key; PEM inputs may have been switched"
        );
        let two = format!("{KEY}-----BEGIN FOO-----\nAQID\n-----END FOO-----\n");
        assert_eq!(
            err(certificates(two.as_bytes())),
            "error parsing X509 certificate/key pair: tls: failed to find \"CERTIFICATE\" PEM \
             block in certificate input after skipping PEM blocks of the following types: \
             [EC PRIVATE KEY FOO]"
        );
        assert_eq!(
            err(private_key(b"")),
            "error parsing X509 certificate/key pair: tls: failed to find any PEM data in key \
             input"
        );
        assert_eq!(
            err(private_key(CERT.as_bytes())),
            "error parsing X509 certificate/key pair: tls: found a certificate rather than a \
             key in the PEM for the private key"
        );
        assert_eq!(private_key(KEY.as_bytes()).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn tls_load_missing_files_like_go() {
        let provider = rustls::crypto::ring::default_provider();
        assert_eq!(
            err(key_pair(
                "/nonexistent/c.pem",
                "/nonexistent/k.pem",
                &provider
            )),
            "error parsing X509 certificate/key pair: open /nonexistent/c.pem: no such file or \
             directory"
        );
        assert_eq!(
            err(roots("/nonexistent/ca.pem")),
            "open /nonexistent/ca.pem: no such file or directory"
        );
    }
}
