//! Client certificates older than X.509 v3 (no extensions), which `openssl x509 -req` makes
//! when it is given no extensions file, as many tutorials do. Go accepts them; WebPKI refuses
//! every end-entity certificate that is not v3, so the verifier sends them here instead.
//!
//! The checks are Go's for such a leaf: its validity period first, then a signature by a
//! trusted authority of the name it gives as issuer, verified with the crypto provider's own
//! signature algorithms (matched by the certificate's algorithm identifiers, as WebPKI matches
//! them). Without extensions there are no key usages or names to check. A leaf that names an
//! intermediate presented by the client as its issuer is refused, saying so: verifying a path
//! through intermediates stays WebPKI's job, and WebPKI cannot start from a v1 leaf.
//!
//! The handshake's own signature (CertificateVerify) is checked against the leaf's public key
//! here too, since rustls would hand the v1 certificate to WebPKI for that as well.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{verify_tls13_signature_with_raw_key, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, SubjectPublicKeyInfoDer, TrustAnchor, UnixTime};
use rustls::server::danger::ClientCertVerified;
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, PeerMisbehaved};

use super::der::{self, oid_string, tag, Reader};
use super::x509;

/// The parts of a pre-v3 certificate that verifying it needs, borrowed from its DER.
#[derive(Debug, Clone, Copy)]
pub(super) struct LegacyCert<'a> {
    /// The whole TBSCertificate element: what the issuer signed.
    tbs: &'a [u8],
    /// Contents of the signature AlgorithmIdentifier (WebPKI's form of an algorithm id).
    signature_alg: &'a [u8],
    /// The signature, without the BIT STRING's unused-bits byte.
    signature: &'a [u8],
    /// Contents of the issuer Name (how trust anchors store their subject).
    issuer: &'a [u8],
    /// Validity, Unix seconds.
    not_before: i64,
    not_after: i64,
    /// The whole SubjectPublicKeyInfo element.
    spki: &'a [u8],
}

const VERSION_V3: u8 = 2;

impl<'a> LegacyCert<'a> {
    /// The certificate, if it is a well-formed v1 or v2 one; `None` for v3 (and for anything
    /// that does not parse, which WebPKI then refuses with its own reason).
    pub(super) fn parse(der: &'a [u8]) -> Option<LegacyCert<'a>> {
        Self::try_parse(der).ok().flatten()
    }

    fn try_parse(der: &'a [u8]) -> Result<Option<LegacyCert<'a>>, der::DerError> {
        let mut outer = Reader::new(der);
        let cert = outer.expect(tag::SEQUENCE)?;
        let mut parts = Reader::new(cert.value);
        let tbs = parts.expect(tag::SEQUENCE)?;
        let signature_alg = parts.expect(tag::SEQUENCE)?;
        let signature = parts.expect(0x03)?;
        let mut fields = Reader::new(tbs.value);
        if let Some(version) = fields.optional(0xa0)? {
            let mut inner = Reader::new(version.value);
            if inner.expect(tag::INTEGER)?.value == [VERSION_V3] {
                return Ok(None);
            }
        }
        fields.expect(tag::INTEGER)?; // serial number
        let inner_alg = fields.expect(tag::SEQUENCE)?;
        let issuer = fields.expect(tag::SEQUENCE)?;
        let validity = fields.expect(tag::SEQUENCE)?;
        fields.expect(tag::SEQUENCE)?; // subject
        let spki = fields.expect(tag::SEQUENCE)?;
        // Unique identifiers (v2) carry nothing to check. Extensions belong to v3 only: with
        // them the certificate is malformed, and WebPKI refuses it.
        fields.optional(0x81)?;
        fields.optional(0x82)?;
        if !fields.is_empty() || !parts.is_empty() || !outer.is_empty() {
            return Err(der::DerError::BadValue);
        }
        // Go refuses a certificate whose two algorithm identifiers differ.
        if inner_alg.value != signature_alg.value {
            return Err(der::DerError::BadValue);
        }
        let (unused_bits, signature) = signature
            .value
            .split_first()
            .ok_or(der::DerError::Truncated)?;
        if *unused_bits != 0 {
            return Err(der::DerError::BadValue);
        }
        let (not_before, not_after) = x509::parse_validity(validity.value)?;
        Ok(Some(LegacyCert {
            tbs: tbs.raw,
            signature_alg: signature_alg.value,
            signature,
            issuer: issuer.value,
            not_before,
            not_after,
            spki: spki.raw,
        }))
    }

    /// Go's checks for a v1 leaf: validity, then a trusted authority's signature.
    pub(super) fn verify(
        &self,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
        anchors: &[TrustAnchor<'static>],
        algorithms: &WebPkiSupportedAlgorithms,
    ) -> Result<ClientCertVerified, Error> {
        let secs = |t: i64| {
            UnixTime::since_unix_epoch(std::time::Duration::from_secs(t.max(0).unsigned_abs()))
        };
        let now_secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        if now_secs < self.not_before {
            return Err(CertificateError::NotValidYetContext {
                time: now,
                not_before: secs(self.not_before),
            }
            .into());
        }
        if now_secs > self.not_after {
            return Err(CertificateError::ExpiredContext {
                time: now,
                not_after: secs(self.not_after),
            }
            .into());
        }
        let mut failed: Option<LegacyCertError> = None;
        for anchor in anchors.iter().filter(|a| a.subject.as_ref() == self.issuer) {
            match signed_by(self, anchor.subject_public_key_info.as_ref(), algorithms) {
                Ok(()) => return Ok(ClientCertVerified::assertion()),
                Err(reason) => {
                    failed.get_or_insert(LegacyCertError::BadSignature {
                        authority: authority_name(anchor.subject.as_ref()),
                        reason,
                    });
                }
            }
        }
        if let Some(err) = failed {
            return Err(other(err));
        }
        if intermediates
            .iter()
            .any(|c| subject_contents(c.as_ref()) == Some(self.issuer))
        {
            return Err(other(LegacyCertError::ThroughIntermediate));
        }
        Err(CertificateError::UnknownIssuer.into())
    }

    /// The handshake signature (CertificateVerify) made with this certificate's key.
    pub(super) fn verify_handshake_signature(
        &self,
        message: &[u8],
        dss: &DigitallySignedStruct,
        algorithms: &WebPkiSupportedAlgorithms,
        tls13: bool,
    ) -> Result<HandshakeSignatureValid, Error> {
        if tls13 {
            let spki = SubjectPublicKeyInfoDer::from(self.spki);
            return verify_tls13_signature_with_raw_key(message, &spki, dss, algorithms);
        }
        let candidates = algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .map(|(_, algs)| *algs)
            .ok_or(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme)?;
        let (key_alg, key) = public_key(self.spki).ok_or(CertificateError::BadEncoding)?;
        let usable = candidates
            .iter()
            .filter(|alg| alg.public_key_alg_id().as_ref() == key_alg);
        for alg in usable {
            if alg.verify_signature(key, message, dss.signature()).is_ok() {
                return Ok(HandshakeSignatureValid::assertion());
            }
        }
        Err(CertificateError::BadSignature.into())
    }
}

/// Why a legacy certificate was refused, when rustls has no variant that says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum LegacyCertError {
    /// An authority of the right name did not sign it (Go names the candidate and why).
    BadSignature {
        authority: String,
        reason: &'static str,
    },
    /// Its issuer is an intermediate the client presented.
    ThroughIntermediate,
}

impl fmt::Display for LegacyCertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadSignature { authority, reason } => write!(
                f,
                "x509: certificate signed by unknown authority (possibly because of \"{reason}\" \
                 while trying to verify candidate authority certificate \"{authority}\")"
            ),
            Self::ThroughIntermediate => f.write_str(
                "x509: X.509 v1 client certificate issued by an intermediate CA: not supported \
                 yet (only by a CA of ca_file directly)",
            ),
        }
    }
}

impl std::error::Error for LegacyCertError {}

fn other(err: LegacyCertError) -> Error {
    CertificateError::Other(OtherError(Arc::new(err))).into()
}

/// `(algorithm id contents, key bits)` of a SubjectPublicKeyInfo, with or without its outer
/// SEQUENCE header (trust anchors keep only the contents).
fn public_key(spki: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut r = Reader::new(spki);
    let body = match r.optional(tag::SEQUENCE).ok()? {
        Some(seq) if r.is_empty() => seq.value,
        _ => spki,
    };
    let mut r = Reader::new(body);
    let alg = r.expect(tag::SEQUENCE).ok()?;
    let bits = r.expect(0x03).ok()?;
    let (&unused, key) = bits.value.split_first()?;
    (unused == 0 && r.is_empty()).then_some((alg.value, key))
}

/// Verifies `cert`'s signature with the key in `spki`; on failure, Go's reason for the key
/// type (`crypto/rsa: verification error`, …).
fn signed_by(
    cert: &LegacyCert<'_>,
    spki: &[u8],
    algorithms: &WebPkiSupportedAlgorithms,
) -> Result<(), &'static str> {
    let (key_alg, key) = public_key(spki).ok_or("x509: malformed public key")?;
    let mut usable = algorithms
        .all
        .iter()
        .filter(|alg| {
            alg.public_key_alg_id().as_ref() == key_alg
                && alg.signature_alg_id().as_ref() == cert.signature_alg
        })
        .peekable();
    if usable.peek().is_none() {
        return Err("x509: cannot verify signature: algorithm unimplemented");
    }
    if usable.any(|alg| alg.verify_signature(key, cert.tbs, cert.signature).is_ok()) {
        return Ok(());
    }
    Err(failure_text(key_alg))
}

/// Go's verification failure text for a public key algorithm.
fn failure_text(key_alg: &[u8]) -> &'static str {
    let oid = Reader::new(key_alg)
        .expect(tag::OID)
        .ok()
        .and_then(|o| oid_string(o.value).ok())
        .unwrap_or_default();
    match oid.as_str() {
        "1.2.840.10045.2.1" => "x509: ECDSA verification failure",
        "1.3.101.112" => "x509: Ed25519 verification failure",
        _ => "crypto/rsa: verification error",
    }
}

/// Go names a candidate authority by its common name, else its first organization.
fn authority_name(subject: &[u8]) -> String {
    let rdns = x509::parse_name(subject).unwrap_or_default();
    let first = |oid: &str| {
        rdns.iter()
            .flatten()
            .find(|a| a.oid == oid)
            .and_then(|a| a.value.clone())
    };
    first("2.5.4.3")
        .or_else(|| first("2.5.4.10"))
        .unwrap_or_default()
}

/// Contents of a certificate's subject Name (any version).
fn subject_contents(der: &[u8]) -> Option<&[u8]> {
    let mut outer = Reader::new(der);
    let cert = outer.expect(tag::SEQUENCE).ok()?;
    let tbs = Reader::new(cert.value).expect(tag::SEQUENCE).ok()?;
    let mut fields = Reader::new(tbs.value);
    fields.optional(0xa0).ok()?;
    for _ in 0..4 {
        fields.any().ok()?; // serial, signature algorithm, issuer, validity
    }
    fields.expect(tag::SEQUENCE).ok().map(|s| s.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 SubjectPublicKeyInfo with a dummy point.
    fn p256_spki() -> Vec<u8> {
        let mut out = vec![0x30, 0x59, 0x30, 0x13, 0x06, 0x07];
        out.extend_from_slice(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]);
        out.extend_from_slice(&[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]);
        out.extend_from_slice(&[0x03, 0x42, 0x00, 0x04]);
        out.extend_from_slice(&[0u8; 64]);
        out
    }

    #[test]
    fn tls_legacy_public_key_with_or_without_header() {
        let spki = p256_spki();
        let (alg, key) = public_key(&spki).unwrap_or_default();
        assert_eq!(alg.len(), 19);
        assert_eq!(key.len(), 65);
        let contents = spki.get(2..).unwrap_or_default();
        assert_eq!(public_key(contents), Some((alg, key)));
        assert_eq!(failure_text(alg), "x509: ECDSA verification failure");
        assert_eq!(public_key(b"\x30\x00"), None);
    }

    #[test]
    fn tls_legacy_refusals_worded_like_go() {
        let forged = LegacyCertError::BadSignature {
            authority: "Test CA".to_owned(),
            reason: "crypto/rsa: verification error",
        };
        assert_eq!(
            forged.to_string(),
            "x509: certificate signed by unknown authority (possibly because of \
             \"crypto/rsa: verification error\" while trying to verify candidate authority \
             certificate \"Test CA\")"
        );
        assert!(LegacyCertError::ThroughIntermediate
            .to_string()
            .contains("intermediate CA: not supported yet"));
    }

    #[test]
    fn tls_legacy_parse_leaves_v3_and_garbage_to_webpki() {
        assert!(LegacyCert::parse(b"").is_none());
        assert!(LegacyCert::parse(b"\x30\x03\x02\x01\x00").is_none());
        // TBS starting with `[0] { INTEGER 2 }`: a v3 certificate.
        let v3 = [
            0x30, 0x0c, 0x30, 0x05, 0xa0, 0x03, 0x02, 0x01, 0x02, 0x30, 0x00, 0x03, 0x01, 0x00,
        ];
        assert_eq!(LegacyCert::try_parse(&v3).map(|c| c.is_none()), Ok(true));
        assert!(LegacyCert::parse(&v3).is_none());
    }
}
