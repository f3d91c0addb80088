//! Client certificate verification and handshake error reports.
//!
//! Verification is rustls' WebPKI verifier, except for X.509 v1/v2 client certificates, which
//! WebPKI refuses and Go accepts (see `legacy`). It is wrapped also to note the chain a client
//! presented when it is rejected: Go's log line for a rejected certificate names each
//! presented certificate (`… (CN=mallory SHA-256: 5803…)`), and once rustls has failed the
//! handshake the chain is gone. The note goes into a task-local slot that the accepting task
//! sets around its handshake, so concurrent handshakes cannot see each other's chains.
//!
//! [`describe`] turns a failed handshake into Go's wording (`tls: client didn't provide a
//! certificate`, `tls: failed to verify certificate: x509: certificate signed by unknown
//! authority (…)`, `remote error: tls: bad certificate`, `EOF`).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, TrustAnchor, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    AlertDescription, CertificateError, DigitallySignedStruct, DistinguishedName, Error,
    PeerIncompatible, RootCertStore, SignatureScheme,
};

use super::legacy::{LegacyCert, LegacyCertError};
use super::x509::PeerCert;
use super::TlsConfigError;

/// What verification noted about a rejected client certificate.
#[derive(Debug, Default, Clone)]
pub(crate) struct Rejected {
    /// The chain the client presented.
    pub chain: Vec<CertificateDer<'static>>,
    /// The reason to log when it is not the one the handshake error carries: the error also
    /// picks the alert sent to the client, and for a v1 certificate Go's alert (`unknown
    /// certificate authority`) and Go's log line (which names the candidate authority) come
    /// from different places.
    pub reason: Option<String>,
}

type Slot = Arc<Mutex<Rejected>>;

tokio::task_local! {
    /// What the client of the handshake being polled presented, if it was rejected.
    static REJECTED: Slot;
}

/// Runs a handshake, returning its result and what was noted if verification rejected it.
pub(crate) async fn noting_rejected_chain<F: Future>(handshake: F) -> (F::Output, Rejected) {
    let slot: Slot = Arc::default();
    let out = REJECTED.scope(Arc::clone(&slot), handshake).await;
    let rejected = std::mem::take(&mut *slot.lock());
    (out, rejected)
}

/// WebPKI client verification that notes rejected chains, and verifies X.509 v1/v2 leaves
/// (which WebPKI refuses) itself.
#[derive(Debug)]
struct NotingVerifier {
    inner: Arc<dyn ClientCertVerifier>,
    /// The trusted authorities, for v1/v2 leaves.
    anchors: Vec<TrustAnchor<'static>>,
    algorithms: WebPkiSupportedAlgorithms,
}

/// The verifier for `verify: true`: a certificate is required and must chain to `roots`.
pub(super) fn client_verifier(
    roots: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, TlsConfigError> {
    let anchors = roots.roots.clone();
    let inner = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(provider))
        .build()
        .map_err(|e| TlsConfigError::CaFile(format!("failed to use root ca certificates: {e}")))?;
    Ok(Arc::new(NotingVerifier {
        inner,
        anchors,
        algorithms: provider.signature_verification_algorithms,
    }))
}

impl ClientCertVerifier for NotingVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let result = match LegacyCert::parse(end_entity.as_ref()) {
            Some(legacy) => legacy.verify(intermediates, now, &self.anchors, &self.algorithms),
            None => self
                .inner
                .verify_client_cert(end_entity, intermediates, now),
        };
        let (result, reason) = match result {
            // Go alerts `unknown certificate authority` for these; the log says why.
            Err(Error::InvalidCertificate(CertificateError::Other(other)))
                if other.0.is::<LegacyCertError>() =>
            {
                let reason = other_error_text(&other);
                (Err(CertificateError::UnknownIssuer.into()), Some(reason))
            }
            other => (other, None),
        };
        if result.is_err() {
            let _ = REJECTED.try_with(|slot| {
                let mut noted = slot.lock();
                noted.chain.clear();
                noted.chain.push(end_entity.clone().into_owned());
                noted
                    .chain
                    .extend(intermediates.iter().map(|c| c.clone().into_owned()));
                noted.reason = reason;
            });
        }
        result
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        match LegacyCert::parse(cert.as_ref()) {
            Some(legacy) => {
                legacy.verify_handshake_signature(message, dss, &self.algorithms, false)
            }
            None => self.inner.verify_tls12_signature(message, cert, dss),
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        match LegacyCert::parse(cert.as_ref()) {
            Some(legacy) => legacy.verify_handshake_signature(message, dss, &self.algorithms, true),
            None => self.inner.verify_tls13_signature(message, cert, dss),
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Go's `net.Conn` text for a read failure on this connection.
pub(crate) fn read_error_text(local: SocketAddr, peer: SocketAddr, reason: &str) -> String {
    format!("read tcp {local}->{peer}: {reason}")
}

/// A failed handshake in Go's words.
pub(crate) fn describe(
    err: &io::Error,
    local: SocketAddr,
    peer: SocketAddr,
    rejected: &Rejected,
) -> String {
    if let Some(tls) = err.get_ref().and_then(|e| e.downcast_ref::<Error>()) {
        if let (Error::InvalidCertificate(_), Some(reason)) = (tls, &rejected.reason) {
            return format!(
                "tls: failed to verify certificate: {reason}{}",
                chain_detail(&rejected.chain)
            );
        }
        return tls_error_text(tls, &rejected.chain);
    }
    match err.kind() {
        io::ErrorKind::UnexpectedEof => "EOF".to_owned(),
        _ => read_error_text(
            local,
            peer,
            &format!("read: {}", crate::server::go_os_error(err)),
        ),
    }
}

fn tls_error_text(err: &Error, rejected_chain: &[CertificateDer<'_>]) -> String {
    match err {
        Error::NoCertificatesPresented => "tls: client didn't provide a certificate".to_owned(),
        Error::InvalidCertificate(cert) => format!(
            "tls: failed to verify certificate: {}{}",
            certificate_error_text(cert),
            chain_detail(rejected_chain)
        ),
        Error::AlertReceived(alert) => format!("remote error: tls: {}", alert_text(*alert)),
        Error::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon) => {
            "tls: no cipher suite supported by both client and server".to_owned()
        }
        Error::PeerIncompatible(PeerIncompatible::NoKxGroupsInCommon) => {
            "tls: no ECDHE curve supported by both client and server".to_owned()
        }
        Error::PeerIncompatible(
            PeerIncompatible::SupportedVersionsExtensionRequired
            | PeerIncompatible::Tls12NotOffered
            | PeerIncompatible::Tls12NotOfferedOrEnabled,
        ) => "tls: client offered only unsupported versions".to_owned(),
        // A `tls {}` block without a certificate, which Go accepts too.
        Error::General(text) if text.contains("no server certificate") => {
            "tls: no certificates configured".to_owned()
        }
        other => format!("tls: {other}"),
    }
}

/// Go's `x509` error texts for the common verification failures.
fn certificate_error_text(err: &CertificateError) -> String {
    const VALIDITY: &str = "x509: certificate has expired or is not yet valid";
    let time = |t: &UnixTime| {
        let secs = i64::try_from(t.as_secs()).unwrap_or(i64::MAX);
        chrono::DateTime::from_timestamp(secs, 0)
            .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_default()
    };
    match err {
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            "x509: certificate signed by unknown authority".to_owned()
        }
        CertificateError::Other(other) => other_error_text(other),
        CertificateError::ExpiredContext {
            time: now,
            not_after,
        } => format!(
            "{VALIDITY}: current time {} is after {}",
            time(now),
            time(not_after)
        ),
        CertificateError::NotValidYetContext {
            time: now,
            not_before,
        } => format!(
            "{VALIDITY}: current time {} is before {}",
            time(now),
            time(not_before)
        ),
        CertificateError::Expired | CertificateError::NotValidYet => VALIDITY.to_owned(),
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "x509: certificate specifies an incompatible key usage".to_owned()
        }
        other => format!("x509: {}", Error::InvalidCertificate(other.clone())),
    }
}

/// The true reason behind rustls' `Other`: ours for v1/v2 leaves, or WebPKI's, which it only
/// gives as its variant's name (`CaUsedAsEndEntity`).
fn other_error_text(err: &rustls::OtherError) -> String {
    let inner: &(dyn std::error::Error + 'static) = &*err.0;
    if let Some(legacy) = inner.downcast_ref::<LegacyCertError>() {
        return legacy.to_string();
    }
    let name = inner.to_string();
    match name.as_str() {
        // A CA certificate presented as the client's: Go finds no chain to a trusted
        // authority for it either.
        "CaUsedAsEndEntity" => "x509: certificate signed by unknown authority".to_owned(),
        "EndEntityUsedAsCa" => {
            "x509: certificate is not authorized to sign other certificates".to_owned()
        }
        "PathLenConstraintViolated" => {
            "x509: too many intermediates for path length constraint".to_owned()
        }
        "UnsupportedCriticalExtension" => "x509: unhandled critical extension".to_owned(),
        "NameConstraintViolation" => {
            "x509: a root or intermediate certificate is not authorized to sign for this name"
                .to_owned()
        }
        "UnsupportedCertVersion" => "x509: unsupported certificate version".to_owned(),
        _ => format!("x509: certificate refused ({name})"),
    }
}

/// ` (CN=a SHA-256: …; CN=b SHA-256: …)` for the presented chain, as Go appends it.
fn chain_detail(chain: &[CertificateDer<'_>]) -> String {
    let parts: Vec<String> = chain
        .iter()
        .filter_map(|der| PeerCert::parse(der).ok())
        .map(|c| format!("{} SHA-256: {}", c.subject, c.cert_sha256_hex()))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

/// Go's `alert.String()` texts.
fn alert_text(alert: AlertDescription) -> String {
    use AlertDescription as A;
    let text = match alert {
        A::CloseNotify => "close notify",
        A::UnexpectedMessage => "unexpected message",
        A::BadRecordMac => "bad record MAC",
        A::DecryptionFailed => "decryption failed",
        A::RecordOverflow => "record overflow",
        A::DecompressionFailure => "decompression failure",
        A::HandshakeFailure => "handshake failure",
        A::BadCertificate => "bad certificate",
        A::UnsupportedCertificate => "unsupported certificate",
        A::CertificateRevoked => "revoked certificate",
        A::CertificateExpired => "expired certificate",
        A::CertificateUnknown => "unknown certificate",
        A::IllegalParameter => "illegal parameter",
        A::UnknownCA => "unknown certificate authority",
        A::AccessDenied => "access denied",
        A::DecodeError => "error decoding message",
        A::DecryptError => "error decrypting message",
        A::ExportRestriction => "export restriction",
        A::ProtocolVersion => "protocol version not supported",
        A::InsufficientSecurity => "insufficient security level",
        A::InternalError => "internal error",
        A::InappropriateFallback => "inappropriate fallback",
        A::UserCanceled => "user canceled",
        A::NoRenegotiation => "no renegotiation",
        A::MissingExtension => "missing extension",
        A::UnsupportedExtension => "unsupported extension",
        A::UnrecognisedName => "unrecognized name",
        A::BadCertificateStatusResponse => "bad certificate status response",
        A::BadCertificateHashValue => "bad certificate hash value",
        A::UnknownPSKIdentity => "unknown PSK identity",
        A::CertificateRequired => "certificate required",
        A::NoApplicationProtocol => "no application protocol",
        A::EncryptedClientHelloRequired => "encrypted client hello required",
        other => return format!("alert({})", u8::from(other)),
    };
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_tls(err: Error) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, err)
    }

    #[test]
    fn tls_handshake_errors_read_like_go() {
        let a: SocketAddr = ([127, 0, 0, 1], 4222).into();
        let b: SocketAddr = ([127, 0, 0, 1], 5555).into();
        let d = |e: io::Error| describe(&e, a, b, &Rejected::default());
        assert_eq!(
            d(io_tls(Error::NoCertificatesPresented)),
            "tls: client didn't provide a certificate"
        );
        assert_eq!(
            d(io_tls(Error::InvalidCertificate(
                CertificateError::UnknownIssuer
            ))),
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        );
        assert_eq!(
            d(io_tls(Error::InvalidCertificate(
                CertificateError::ExpiredContext {
                    time: UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_795_871_265)),
                    not_after: UnixTime::since_unix_epoch(std::time::Duration::from_secs(
                        1_795_784_864
                    )),
                }
            ))),
            "tls: failed to verify certificate: x509: certificate has expired or is not yet \
             valid: current time 2026-11-28T13:07:45Z is after 2026-11-27T13:07:44Z"
        );
        assert_eq!(
            d(io_tls(Error::AlertReceived(
                AlertDescription::BadCertificate
            ))),
            "remote error: tls: bad certificate"
        );
        assert_eq!(d(io::ErrorKind::UnexpectedEof.into()), "EOF");
        assert_eq!(
            d(io_tls(Error::General(
                "no server certificate chain resolved".into()
            ))),
            "tls: no certificates configured"
        );
        assert_eq!(
            d(io::Error::from_raw_os_error(104)),
            "read tcp 127.0.0.1:4222->127.0.0.1:5555: read: connection reset by peer"
        );
    }
}
