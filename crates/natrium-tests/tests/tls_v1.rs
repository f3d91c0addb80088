//! X.509 v1 client certificates under mutual TLS (issue 12): `openssl x509 -req` without an
//! extensions file makes them, and Go accepts them where rustls' WebPKI refuses every
//! end-entity certificate that is not v3. Compared with Go: accepted when a trusted CA signed
//! them (also with `verify_and_map`), refused with Go's log line when it did not, when the
//! signature does not check out against a CA of the right name, and when expired.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use natrium_tests::{go_server_path, natrium_path, ServerProcess, TestCerts, V1Issuer};
use rustls::client::ResolvesClientCert;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::SignatureScheme;

const WAIT: Duration = Duration::from_secs(10);

fn servers(conf: &str) -> Vec<(&'static str, ServerProcess)> {
    let args = ["-c", conf];
    let mut out = vec![(
        "natrium",
        ServerProcess::start_binary(natrium_path(), &args),
    )];
    if let Some(go) = go_server_path() {
        out.push(("go", ServerProcess::start_binary(go, &args)));
    }
    out
}

/// Presents a fixed certificate. rustls' own `with_client_auth_cert` parses the certificate
/// with WebPKI to match it with the key, and so refuses v1 certificates on the client side.
#[derive(Debug)]
struct Present(Arc<CertifiedKey>);

impl ResolvesClientCert for Present {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

fn options(certs: &TestCerts, client: &str) -> async_nats::ConnectOptions {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(certs.ca_der().to_vec()))
        .expect("root");
    let chain = CertificateDer::pem_file_iter(certs.path(&format!("{client}.pem")))
        .expect("chain")
        .collect::<Result<Vec<_>, _>>()
        .expect("chain pem");
    let key = PrivateKeyDer::from_pem_file(certs.path(&format!("{client}-key.pem"))).expect("key");
    let key = provider
        .key_provider
        .load_private_key(key)
        .expect("signing key");
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_client_cert_resolver(Arc::new(Present(Arc::new(CertifiedKey::new(chain, key)))));
    async_nats::ConnectOptions::new()
        .tls_client_config(config)
        .require_tls(true)
        .connection_timeout(Duration::from_secs(5))
}

async fn round_trip(client: &async_nats::Client, name: &str) {
    let mut sub = client.subscribe("v1.>").await.expect("subscribe");
    client
        .publish("v1.hello", "hi".into())
        .await
        .expect("publish");
    let msg = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap_or_else(|_| panic!("{name}: no message"))
        .expect("open");
    assert_eq!(&msg.payload[..], b"hi", "{name}");
}

/// The handshake error logged for `subject`, from `x509:` on; the current time (which
/// differs between runs) is cut out of expiry messages.
fn refusal(server: &ServerProcess, subject: &str) -> String {
    let marker = format!("{subject} SHA-256: ");
    assert!(
        server.wait_for_log(&marker, WAIT),
        "no refusal of {subject}:\n{}",
        server.log_text()
    );
    let line = server
        .log_lines()
        .into_iter()
        .find(|l| l.contains(&marker) && l.contains("TLS handshake error"))
        .unwrap_or_default();
    let text = line
        .split_once("x509: ")
        .map_or(line.as_str(), |(_, rest)| rest)
        .to_owned();
    match text.split_once("current time ") {
        Some((head, rest)) => {
            let after = rest.split_once(" is ").map_or("", |(_, a)| a);
            format!("{head}current time <now> is {after}")
        }
        None => text,
    }
}

/// An RSA v1 certificate made the way tutorials make it, when `openssl` is installed.
fn openssl_v1(certs: &TestCerts) -> bool {
    let dir = certs.dir();
    let run = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let made = run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "rsa-v1-key.pem",
        "-out",
        "rsa-v1.csr",
        "-subj",
        "/O=Acme/CN=rsa-v1",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "rsa-v1.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca-key.pem",
        "-CAcreateserial",
        "-days",
        "30",
        "-out",
        "rsa-v1.pem",
    ]);
    if !made {
        eprintln!("openssl not usable: the RSA v1 certificate is skipped");
    }
    made
}

#[tokio::test]
async fn tls_v1_client_certificates_like_go() {
    let mut certs = TestCerts::generate();
    certs.issue_client_v1("v1", "v1", V1Issuer::Main);
    certs.issue_client_v1("v1-other", "v1-other", V1Issuer::Other);
    certs.issue_client_v1("v1-forged", "v1-forged", V1Issuer::ForgedMain);
    certs.issue_client_v1("v1-expired", "v1-expired", V1Issuer::ExpiredMain);
    let rsa = openssl_v1(&certs);
    let ca = certs.file("ca.pem");
    let conf = certs.config(
        "v1.conf",
        &certs.tls_block(&format!("  ca_file: \"{ca}\"\n  verify: true")),
    );
    let mut logs = Vec::new();
    for (name, server) in servers(&conf) {
        let client = options(&certs, "v1")
            .connect(server.url())
            .await
            .unwrap_or_else(|e| panic!("{name}: v1 certificate refused: {e}"));
        round_trip(&client, name).await;
        if rsa {
            let client = options(&certs, "rsa-v1")
                .connect(server.url())
                .await
                .unwrap_or_else(|e| panic!("{name}: openssl's v1 certificate refused: {e}"));
            round_trip(&client, name).await;
        }
        for refused in ["v1-other", "v1-forged", "v1-expired"] {
            let attempt = options(&certs, refused).connect(server.url()).await;
            assert!(attempt.is_err(), "{name}: {refused} connected");
        }
        let lines: Vec<String> = ["v1-other", "v1-forged", "v1-expired"]
            .iter()
            .map(|cn| refusal(&server, &format!("CN={cn},O=Acme")))
            .collect();
        assert!(
            lines[0].starts_with("certificate signed by unknown authority (CN=v1-other,O=Acme"),
            "{name}: {}",
            lines[0]
        );
        assert!(
            lines[1].starts_with(
                "certificate signed by unknown authority (possibly because of \"x509: ECDSA \
                 verification failure\" while trying to verify candidate authority certificate \
                 \"Natrium Test CA\") (CN=v1-forged,O=Acme"
            ),
            "{name}: {}",
            lines[1]
        );
        assert!(
            lines[2].starts_with(
                "certificate has expired or is not yet valid: current time <now> is after \
                 2021-01-01T00:00:00Z (CN=v1-expired,O=Acme"
            ),
            "{name}: {}",
            lines[2]
        );
        logs.push(lines);
    }
    if let [ours, go] = logs.as_slice() {
        assert_eq!(ours, go, "refusals: ours (left) and Go's (right)");
    }
}

#[tokio::test]
async fn tls_v1_verify_and_map_like_go() {
    let mut certs = TestCerts::generate();
    certs.issue_client_v1("v1-map", "v1-map", V1Issuer::Main);
    certs.issue_client_v1("v1-nobody", "v1-nobody", V1Issuer::Main);
    let ca = certs.file("ca.pem");
    let tls = certs.tls_block(&format!("  ca_file: \"{ca}\"\n  verify_and_map: true"));
    let conf = certs.config(
        "v1map.conf",
        &format!("{tls}\nauthorization {{ users = [ {{user: \"CN=v1-map,O=Acme\"}} ] }}"),
    );
    for (name, server) in servers(&conf) {
        let client = options(&certs, "v1-map")
            .connect(server.url())
            .await
            .unwrap_or_else(|e| panic!("{name}: mapped v1 certificate refused: {e}"));
        round_trip(&client, name).await;
        let unmapped = options(&certs, "v1-nobody").connect(server.url()).await;
        assert!(
            unmapped.is_err(),
            "{name}: an unmapped v1 certificate logged in"
        );
        assert!(
            server.wait_for_log("authentication error", WAIT),
            "{name}: {}",
            server.log_text()
        );
    }
}
