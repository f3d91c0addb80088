//! X.509 v1 client certificates (no version field, no extensions), as `openssl x509 -req`
//! makes them without an extensions file. rcgen only writes v3, so the certificate is
//! assembled here in DER and signed with ring: ECDSA P-256 with SHA-256, like the test CAs.

/// What to put in a v1 certificate.
pub struct V1Spec<'a> {
    /// Subject `O=Acme, CN=<cn>` (Go prints it `CN=<cn>,O=Acme`).
    pub cn: &'a str,
    /// The issuer's subject Name element, DER, as written in its certificate.
    pub issuer_name: &'a [u8],
    /// The issuer's private key, PKCS #8 DER (ECDSA P-256).
    pub issuer_pkcs8: &'a [u8],
    /// The subject's public key, SubjectPublicKeyInfo DER.
    pub subject_spki: &'a [u8],
    /// Validity as UTCTime strings (`YYMMDDHHMMSSZ`).
    pub not_before: &'a str,
    pub not_after: &'a str,
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

fn seq(parts: &[&[u8]]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

/// ecdsa-with-SHA256 (1.2.840.10045.4.3.2), no parameters.
const ECDSA_SHA256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
/// id-at-organizationName, id-at-commonName.
const OID_O: &[u8] = &[0x06, 0x03, 0x55, 0x04, 0x0a];
const OID_CN: &[u8] = &[0x06, 0x03, 0x55, 0x04, 0x03];

fn rdn(oid: &[u8], value: &str) -> Vec<u8> {
    tlv(0x31, &seq(&[oid, &tlv(0x0c, value.as_bytes())]))
}

/// The certificate, DER.
pub fn v1_certificate(spec: &V1Spec<'_>) -> Vec<u8> {
    let serial = tlv(0x02, &fastrand::u64(1 << 56..u64::MAX >> 1).to_be_bytes());
    let algorithm = seq(&[ECDSA_SHA256]);
    let validity = seq(&[
        &tlv(0x17, spec.not_before.as_bytes()),
        &tlv(0x17, spec.not_after.as_bytes()),
    ]);
    let subject = seq(&[&rdn(OID_O, "Acme"), &rdn(OID_CN, spec.cn)]);
    // No `[0] version`: its absence is what makes the certificate v1.
    let tbs = seq(&[
        &serial,
        &algorithm,
        spec.issuer_name,
        &validity,
        &subject,
        spec.subject_spki,
    ]);
    let rng = ring::rand::SystemRandom::new();
    let key = ring::signature::EcdsaKeyPair::from_pkcs8(
        &ring::signature::ECDSA_P256_SHA256_ASN1_SIGNING,
        spec.issuer_pkcs8,
        &rng,
    )
    .expect("issuer key");
    let signature = key.sign(&rng, &tbs).expect("sign");
    let mut bits = vec![0u8];
    bits.extend_from_slice(signature.as_ref());
    seq(&[&tbs, &algorithm, &tlv(0x03, &bits)])
}

/// The subject Name element of a certificate, DER.
pub fn subject_name(cert: &[u8]) -> Vec<u8> {
    let mut at = Reader(cert);
    let mut cert = Reader(at.next().1);
    let mut tbs = Reader(cert.next().1);
    let (tag, _, _) = tbs.peek();
    if tag == 0xa0 {
        tbs.next(); // version
    }
    for _ in 0..4 {
        tbs.next(); // serial, algorithm, issuer, validity
    }
    tbs.next().0.to_vec()
}

/// Just enough DER reading for [`subject_name`]: certificates rcgen wrote.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// `(tag, header length, content length)` of the next element.
    fn peek(&self) -> (u8, usize, usize) {
        let tag = self.0[0];
        let first = usize::from(self.0[1]);
        if first < 0x80 {
            return (tag, 2, first);
        }
        let count = first & 0x7f;
        let len = self.0[2..2 + count]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (tag, 2 + count, len)
    }

    /// The next element whole, and its content.
    fn next(&mut self) -> (&'a [u8], &'a [u8]) {
        let (_, header, len) = self.peek();
        let whole = &self.0[..header + len];
        let content = &self.0[header..header + len];
        self.0 = &self.0[header + len..];
        (whole, content)
    }
}
