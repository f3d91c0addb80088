//! Test certificates, generated with rcgen into a temporary directory: a CA, a server
//! certificate for `localhost`/127.0.0.1, client certificates (valid, expired, and one from
//! another CA with a many-attribute subject), each as `<name>.pem` and `<name>-key.pem`
//! (the CA's key too, as `ca-key.pem`), and X.509 v1 client certificates on demand.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use rcgen::{
    date_time_ymd, BasicConstraints, Certificate, CertificateParams, DistinguishedName, DnType,
    DnValue, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType,
};

/// A directory of PEM files; removed on drop.
pub struct TestCerts {
    dir: tempfile::TempDir,
    /// Hex SHA-256 of each issued certificate's SubjectPublicKeyInfo (`pinned_certs` entries).
    spki: std::collections::HashMap<String, String>,
    /// The CA certificate, DER, for clients that take roots in memory.
    ca_der: Vec<u8>,
    /// The main CA, for certificates issued after [`TestCerts::generate`].
    main: Option<Issuer>,
    /// The other CA (`other-ca.pem`), likewise.
    other: Option<Issuer>,
}

/// Who signs an X.509 v1 client certificate (see [`TestCerts::issue_client_v1`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1Issuer {
    /// The main CA (`ca.pem`).
    Main,
    /// The other CA (`other-ca.pem`).
    Other,
    /// Names the main CA as issuer but is signed with the other CA's key.
    ForgedMain,
    /// The main CA, valid from 2020-01-01 to 2021-01-01 only.
    ExpiredMain,
}

/// emailAddress (PKCS #9).
const OID_EMAIL: &[u64] = &[1, 2, 840, 113_549, 1, 9, 1];
/// domainComponent.
pub const OID_DC: &[u64] = &[0, 9, 2342, 19_200_300, 100, 1, 25];

struct Issuer {
    cert: Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Issuer {
    let key = KeyPair::generate().expect("ca key");
    let mut params = CertificateParams::new(Vec::new()).expect("ca params");
    params.distinguished_name = dn(&[
        (DnType::CommonName, name),
        (DnType::OrganizationName, "Natrium"),
    ]);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).expect("ca cert");
    Issuer { cert, key }
}

fn dn(parts: &[(DnType, &str)]) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    for (ty, value) in parts {
        dn.push(ty.clone(), DnValue::Utf8String((*value).to_owned()));
    }
    dn
}

fn ia5(text: &str) -> rcgen::Ia5String {
    rcgen::Ia5String::try_from(text).expect("ascii")
}

impl TestCerts {
    /// Generates everything (a few milliseconds).
    pub fn generate() -> Self {
        let dir = tempfile::tempdir().expect("cert dir");
        let mut certs = Self {
            dir,
            spki: std::collections::HashMap::new(),
            ca_der: Vec::new(),
            main: None,
            other: None,
        };
        let main = ca("Natrium Test CA");
        certs.ca_der = main.cert.der().to_vec();
        let other = ca("Other Test CA");
        // With its key, so that tests can sign with other tools (`openssl x509 -req`).
        certs.write("ca", &main.cert, Some(&main.key));
        certs.write("other-ca", &other.cert, None);

        let mut server = CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
        server
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        server.distinguished_name = dn(&[(DnType::CommonName, "localhost")]);
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        certs.issue("server", server, &main);

        certs.issue("client", client_params("client"), &main);
        certs.issue("client2", client_params("client2"), &main);

        let mut expired = client_params("expired");
        expired.not_before = date_time_ymd(2020, 1, 1);
        expired.not_after = date_time_ymd(2021, 1, 1);
        certs.issue("expired", expired, &main);

        let mut stranger = client_params("stranger");
        stranger.distinguished_name = dn(&[
            (DnType::CustomDnType(OID_DC.to_vec()), "example"),
            (DnType::CountryName, "US"),
            (DnType::StateOrProvinceName, "CA"),
            (DnType::LocalityName, "San Francisco"),
            (DnType::OrganizationName, "Acme, Inc."),
            (DnType::OrganizationalUnitName, "R+D"),
            (DnType::CommonName, " stranger#1 "),
            (
                DnType::CustomDnType(OID_EMAIL.to_vec()),
                "stranger@example.com",
            ),
        ]);
        certs.issue("stranger", stranger, &other);
        certs.main = Some(main);
        certs.other = Some(other);
        certs
    }

    /// Issues an X.509 v1 client certificate (`O=Acme, CN=<cn>`, no extensions), as
    /// `<name>.pem` and `<name>-key.pem`.
    pub fn issue_client_v1(&mut self, name: &str, cn: &str, issuer: V1Issuer) {
        let main = self.main.as_ref().expect("main CA");
        let other = self.other.as_ref().expect("other CA");
        let (named, signer) = match issuer {
            V1Issuer::Main | V1Issuer::ExpiredMain => (main, main),
            V1Issuer::Other => (other, other),
            V1Issuer::ForgedMain => (main, other),
        };
        let (not_before, not_after) = if issuer == V1Issuer::ExpiredMain {
            ("200101000000Z", "210101000000Z")
        } else {
            ("240101000000Z", "491231235959Z")
        };
        let key = KeyPair::generate().expect("key");
        let der = crate::certs_v1::v1_certificate(&crate::certs_v1::V1Spec {
            cn,
            issuer_name: &crate::certs_v1::subject_name(named.cert.der()),
            issuer_pkcs8: &signer.key.serialize_der(),
            subject_spki: &key.public_key_der(),
            not_before,
            not_after,
        });
        let pem = pem_block("CERTIFICATE", &der);
        std::fs::write(self.path(&format!("{name}.pem")), pem).expect("write cert");
        std::fs::write(self.path(&format!("{name}-key.pem")), key.serialize_pem())
            .expect("write key");
    }

    /// Issues a client certificate from the main CA with `subject` (attributes in
    /// certificate order) and `sans`, as `<name>.pem` and `<name>-key.pem`.
    pub fn issue_client(&mut self, name: &str, subject: &[(DnType, &str)], sans: Vec<SanType>) {
        let mut params = CertificateParams::new(Vec::new()).expect("params");
        params.distinguished_name = dn(subject);
        params.subject_alt_names = sans;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let issuer = self.main.take().expect("main CA");
        self.issue(name, params, &issuer);
        self.main = Some(issuer);
    }

    fn issue(&mut self, name: &str, params: CertificateParams, issuer: &Issuer) {
        let key = KeyPair::generate().expect("key");
        let digest = ring::digest::digest(&ring::digest::SHA256, &key.public_key_der());
        let hex = digest.as_ref().iter().fold(String::new(), |mut out, b| {
            use std::fmt::Write as _;
            let _ = write!(out, "{b:02x}");
            out
        });
        self.spki.insert(name.to_owned(), hex);
        let cert = params
            .signed_by(&key, &issuer.cert, &issuer.key)
            .expect("sign");
        self.write(name, &cert, Some(&key));
    }

    fn write(&self, name: &str, cert: &Certificate, key: Option<&KeyPair>) {
        std::fs::write(self.path(&format!("{name}.pem")), cert.pem()).expect("write cert");
        if let Some(key) = key {
            std::fs::write(self.path(&format!("{name}-key.pem")), key.serialize_pem())
                .expect("write key");
        }
    }

    /// The CA certificate (`ca.pem`), DER.
    pub fn ca_der(&self) -> &[u8] {
        &self.ca_der
    }

    /// The `pinned_certs` entry for an issued certificate.
    pub fn spki_sha256(&self, name: &str) -> &str {
        &self.spki[name]
    }

    /// A file in the directory (which need not exist).
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    /// The path of a file as a string, for configuration files and flags.
    pub fn file(&self, file: &str) -> String {
        self.path(file).display().to_string()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A configuration file in the directory: `listen: 127.0.0.1:-1` plus `body`.
    pub fn config(&self, name: &str, body: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, format!("listen: 127.0.0.1:-1\n{body}\n")).expect("write config");
        path.display().to_string()
    }

    /// A `tls { … }` block with the server certificate and `extra` lines.
    pub fn tls_block(&self, extra: &str) -> String {
        format!(
            "tls {{\n  cert_file: \"{}\"\n  key_file: \"{}\"\n{extra}\n}}",
            self.file("server.pem"),
            self.file("server-key.pem")
        )
    }
}

fn client_params(cn: &str) -> CertificateParams {
    let mut params = CertificateParams::new(vec![format!("{cn}.example.com")]).expect("params");
    params
        .subject_alt_names
        .push(SanType::Rfc822Name(ia5(&format!("{cn}@example.com"))));
    params.distinguished_name = dn(&[(DnType::OrganizationName, "Acme"), (DnType::CommonName, cn)]);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params
}

/// A PEM block of `der`.
fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out + &format!("-----END {label}-----\n")
}
