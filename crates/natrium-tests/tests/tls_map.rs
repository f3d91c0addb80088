//! `verify_and_map` against our server and, where installed, Go's: client certificates mapped
//! to users by email, DNS name, URI and subject (exact and reordered DN), a mapped user's
//! password and permissions, refusals with Go's `-ERR` and debug lines, a certificate from
//! another CA, and `/connz?auth=1` with `tls_peer_certs` and `authorized_user`.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use natrium_tests::certs::OID_DC;
use natrium_tests::raw::http_get_json;
use natrium_tests::{go_server_path, natrium_path, ServerProcess, TestCerts};
use rcgen::{DnType, SanType};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

const WAIT: Duration = Duration::from_secs(10);
const VIOLATION: &str = "-ERR 'Authorization Violation'\r\n";

fn servers(conf: &str) -> Vec<(&'static str, ServerProcess)> {
    let args = ["-c", conf, "-D", "-m", "-1"];
    let mut out = vec![(
        "natrium",
        ServerProcess::start_binary(natrium_path(), &args),
    )];
    if let Some(go) = go_server_path() {
        out.push(("go", ServerProcess::start_binary(go, &args)));
    }
    out
}

/// The certificates of these tests: the standard set plus one per mapping rule.
fn certs() -> TestCerts {
    let mut certs = TestCerts::generate();
    let uri = rcgen::Ia5String::try_from("spiffe://example.org/svc").expect("ascii");
    certs.issue_client(
        "uri",
        &[(DnType::CommonName, "uri")],
        vec![SanType::URI(uri)],
    );
    // rcgen keeps one attribute per type, so one domain component.
    certs.issue_client(
        "bob",
        &[
            (DnType::CustomDnType(OID_DC.to_vec()), "example"),
            (DnType::OrganizationName, "Acme"),
            (DnType::OrganizationalUnitName, "eng"),
            (DnType::CommonName, "bob"),
        ],
        Vec::new(),
    );
    certs.issue_client(
        "carol",
        &[
            (DnType::CountryName, "US"),
            (DnType::OrganizationName, "Acme"),
            (DnType::CommonName, "carol"),
        ],
        Vec::new(),
    );
    certs
}

fn map_config(certs: &TestCerts) -> String {
    let ca = certs.file("ca.pem");
    let tls = certs.tls_block(&format!("  ca_file: \"{ca}\"\n  verify_and_map: true"));
    certs.config(
        "map.conf",
        &format!(
            "{tls}\nauthorization {{ users = [\n  \
             {{user: \"client@example.com\", permissions: {{ publish: \"client.>\" }}}}\n  \
             {{user: \"client2.example.com\"}}\n  \
             {{user: \"spiffe://example.org/svc\"}}\n  \
             {{user: \"CN=bob,OU=eng,O=Acme,DC=example\"}}\n  \
             {{user: \"O=Acme, CN=carol, C=US\", password: pw}}\n] }}"
        ),
    )
}

fn tls_config(certs: &TestCerts, client: Option<&str>) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from(certs.ca_der().to_vec()))
        .expect("root");
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots);
    match client {
        Some(name) => {
            let chain = CertificateDer::pem_file_iter(certs.path(&format!("{name}.pem")))
                .expect("chain")
                .collect::<Result<Vec<_>, _>>()
                .expect("chain pem");
            let key =
                PrivateKeyDer::from_pem_file(certs.path(&format!("{name}-key.pem"))).expect("key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("client auth")
        }
        None => builder.with_no_client_auth(),
    }
}

/// Connects over TLS as `client`, sends CONNECT `json` (plus `extra` and a PING), and returns
/// what came back before the PONG, or everything up to the close followed by `<closed>`.
fn session(certs: &TestCerts, addr: &str, client: Option<&str>, json: &str, extra: &str) -> String {
    let mut tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    // INFO comes in plain text first.
    let mut info = Vec::new();
    let mut byte = [0u8; 1];
    let deadline = Instant::now() + WAIT;
    while !info.ends_with(b"\r\n") {
        assert!(Instant::now() < deadline, "no INFO");
        match tcp.read(&mut byte) {
            Ok(1) => info.push(byte[0]),
            Ok(_) => panic!("closed before INFO"),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("INFO: {e}"),
        }
    }
    let name = ServerName::try_from("localhost").expect("name");
    let conn = rustls::ClientConnection::new(Arc::new(tls_config(certs, client)), name)
        .expect("client connection");
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let request = format!("CONNECT {json}\r\n{extra}PING\r\n");
    if tls.write_all(request.as_bytes()).is_err() {
        return "<closed>".to_owned();
    }
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        assert!(Instant::now() < deadline, "no answer: {got:?}");
        if got.windows(6).any(|w| w == b"PONG\r\n") {
            let text = String::from_utf8_lossy(&got).into_owned();
            return text.replace("PONG\r\n", "").replace("PING\r\n", "");
        }
        match tls.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    format!("{}<closed>", String::from_utf8_lossy(&got))
}

/// The lines about mapping and authentication, without time and connection prefixes.
fn auth_lines(server: &ServerProcess) -> Vec<String> {
    let markers = [
        "for auth [",
        "User in cert",
        "authentication error",
        "found in connect proto",
        "User required in cert",
    ];
    server
        .log_lines()
        .into_iter()
        .filter(|l| markers.iter().any(|m| l.contains(m)))
        .map(|l| {
            // `[pid] date time [LVL] message`, the message maybe after `ip:port - cid:N - `.
            let message = l.splitn(3, "] ").nth(2).unwrap_or(&l).to_owned();
            match message.split_once(" - cid:") {
                Some((_, rest)) => rest.split_once(" - ").map_or(rest, |(_, m)| m).to_owned(),
                None => message,
            }
        })
        .collect()
}

#[test]
fn tls_map_users_from_certificates_like_go() {
    let certs = certs();
    let conf = map_config(&certs);
    let plain = "{\"verbose\":false}";
    let mut logs = Vec::new();
    for (name, server) in servers(&conf) {
        let addr = server.addr();
        // Email SAN, with the user's permissions.
        assert_eq!(
            session(
                &certs,
                &addr,
                Some("client"),
                plain,
                "PUB client.x 0\r\n\r\nPUB other 0\r\n\r\n"
            ),
            "-ERR 'Permissions Violation for Publish to \"other\"'\r\n",
            "{name}"
        );
        // DNS SAN, URI SAN, subject as an exact DN.
        for client in ["client2", "uri", "bob"] {
            assert_eq!(
                session(&certs, &addr, Some(client), plain, ""),
                "",
                "{name}: {client}"
            );
        }
        // Reordered DN of a user with a password: the password is still required.
        let with_pass = "{\"verbose\":false,\"pass\":\"pw\"}";
        assert_eq!(
            session(&certs, &addr, Some("carol"), with_pass, ""),
            "",
            "{name}"
        );
        assert_eq!(
            session(&certs, &addr, Some("carol"), plain, ""),
            format!("{VIOLATION}<closed>"),
            "{name}"
        );
        // A user name in CONNECT is ignored (with a warning).
        let named = "{\"verbose\":false,\"user\":\"zed\",\"pass\":\"pw\"}";
        assert_eq!(
            session(&certs, &addr, Some("carol"), named, ""),
            "",
            "{name}"
        );
        // Expired is refused at the handshake, before mapping; the stranger's CA is unknown.
        for refused in ["expired", "stranger"] {
            assert_eq!(
                session(&certs, &addr, Some(refused), plain, ""),
                "<closed>",
                "{name}: {refused}"
            );
        }
        assert!(server.wait_for_log("certificate signed by unknown authority", WAIT));
        assert!(
            server.wait_for_log("authentication error - User", WAIT),
            "{name}"
        );
        logs.push(auth_lines(&server));
    }
    let ours = &logs[0];
    let expect = [
        "Using email found in cert for auth [\"client@example.com\"]",
        "Using SAN found in cert for auth [\"client2.example.com\"]",
        "Using URI found in cert for auth [\"spiffe://example.org/svc\"]",
        "Using DistinguishedNameMatch for auth [\"CN=bob,OU=eng,O=Acme,DC=example\"]",
        "Using DistinguishedNameMatch for auth [\"O=Acme, CN=carol, C=US\"]",
        "Using DistinguishedNameMatch for auth [\"O=Acme, CN=carol, C=US\"]",
        "authentication error - User \"O=Acme, CN=carol, C=US\"",
        "Using DistinguishedNameMatch for auth [\"O=Acme, CN=carol, C=US\"]",
        "User \"zed\" found in connect proto, but user required from cert",
    ];
    assert_eq!(ours, &expect, "{ours:#?}");
    if let [ours, go] = logs.as_slice() {
        assert_eq!(ours, go);
    }
}

#[test]
fn tls_map_unmapped_certificate_refused_like_go() {
    let certs = certs();
    let ca = certs.file("ca.pem");
    let tls = certs.tls_block(&format!("  ca_file: \"{ca}\"\n  verify_and_map: true"));
    let conf = certs.config(
        "nomap.conf",
        &format!("{tls}\nauthorization {{ users = [ {{user: nobody}}, {{user: \"CN=bob,OU=eng,O=Acme\", password: pw}} ] }}"),
    );
    let mut logs = Vec::new();
    for (name, server) in servers(&conf) {
        let addr = server.addr();
        let closed = format!("{VIOLATION}<closed>");
        for client in ["client", "uri", "bob"] {
            assert_eq!(
                session(&certs, &addr, Some(client), "{\"verbose\":false}", ""),
                closed,
                "{name}: {client}"
            );
        }
        let named = "{\"verbose\":false,\"user\":\"zed\"}";
        assert_eq!(
            session(&certs, &addr, Some("client2"), named, ""),
            closed,
            "{name}"
        );
        assert!(server.wait_for_log("authentication error - User \"zed\"", WAIT));
        assert!(server.wait_for_log("Client connection closed: Authentication Failure", WAIT));
        logs.push(auth_lines(&server));
    }
    let ours = &logs[0];
    let expect = [
        "DistinguishedNameMatch could not be used for auth [\"CN=client,O=Acme\"]",
        "User in cert [\"CN=client,O=Acme\"], not found",
        "authentication error",
        "DistinguishedNameMatch could not be used for auth [\"CN=uri\"]",
        "User in cert [\"CN=uri\"], not found",
        "authentication error",
        "DistinguishedNameMatch could not be used for auth [\"CN=bob,OU=eng,O=Acme\"]",
        "RDNSequence could not be used for auth [\"CN=bob,OU=eng,O=Acme,DC=example\"]",
        "Using certificate subject for auth [\"CN=bob,OU=eng,O=Acme\"]",
        "authentication error - User \"CN=bob,OU=eng,O=Acme\"",
        "DistinguishedNameMatch could not be used for auth [\"CN=client2,O=Acme\"]",
        "User in cert [\"CN=client2,O=Acme\"], not found",
        "authentication error - User \"zed\"",
    ];
    assert_eq!(ours, &expect, "{ours:#?}");
    if let [ours, go] = logs.as_slice() {
        assert_eq!(ours, go);
    }
}

#[test]
fn tls_map_connz_peer_certs_and_user_like_go() {
    let certs = certs();
    let conf = map_config(&certs);
    let mut views = Vec::new();
    for (name, server) in servers(&conf) {
        let addr = server.addr();
        let plain = "{\"verbose\":false}";
        assert_eq!(session(&certs, &addr, Some("client2"), plain, ""), "");
        let port = server.monitor_port.expect("monitor");
        // The mapped session above has closed; the closed list keeps the user, not the certs.
        assert!(natrium_tests::raw::wait_until(WAIT, || {
            http_get_json(port, "/connz?state=closed")["connections"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        }));
        let closed = http_get_json(port, "/connz?state=closed&auth=1");
        let row = &closed["connections"][0];
        let view = (
            row["authorized_user"].clone(),
            row.get("tls_peer_certs").cloned(),
            http_get_json(port, "/connz?state=closed&user=client2.example.com")["connections"]
                .as_array()
                .map(Vec::len),
        );
        assert_eq!(
            view.0,
            serde_json::Value::String("client2.example.com".into()),
            "{name}"
        );
        assert_eq!(view.1, None, "{name}");
        views.push(view);
        // And an open one, with its certificate.
        let open = open_mapped(&certs, &addr, "client");
        let connz = http_get_json(port, "/connz?auth=1");
        let row = &connz["connections"][0];
        let certs_json = &row["tls_peer_certs"];
        assert_eq!(
            certs_json.as_array().map(Vec::len),
            Some(1),
            "{name}: {row}"
        );
        assert_eq!(certs_json[0]["subject"], "CN=client,O=Acme", "{name}");
        assert_eq!(
            certs_json[0]["spki_sha256"],
            certs.spki_sha256("client"),
            "{name}"
        );
        assert_eq!(row["authorized_user"], "client@example.com", "{name}");
        let plain = http_get_json(port, "/connz");
        assert!(plain["connections"][0].get("tls_peer_certs").is_none());
        drop(open);
    }
    if let [ours, go] = views.as_slice() {
        assert_eq!(ours, go);
    }
}

/// A mapped TLS connection kept open until dropped.
fn open_mapped(
    certs: &TestCerts,
    addr: &str,
    client: &str,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let mut tcp = TcpStream::connect(addr).expect("connect");
    let mut byte = [0u8; 1];
    let mut info = Vec::new();
    while !info.ends_with(b"\r\n") {
        tcp.read_exact(&mut byte).expect("INFO");
        info.push(byte[0]);
    }
    let name = ServerName::try_from("localhost").expect("name");
    let conn = rustls::ClientConnection::new(Arc::new(tls_config(certs, Some(client))), name)
        .expect("client connection");
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    tls.write_all(b"CONNECT {\"verbose\":false}\r\nPING\r\n")
        .expect("write");
    let mut got = Vec::new();
    while !got.windows(6).any(|w| w == b"PONG\r\n") {
        let mut chunk = [0u8; 256];
        let n = tls.read(&mut chunk).expect("read");
        assert!(n > 0, "closed: {got:?}");
        got.extend_from_slice(&chunk[..n]);
    }
    tls
}

/// Garbage where the handshake should be, and a certificate from another CA, end those
/// connections without touching the users; mapped clients keep being served.
#[test]
fn tls_map_garbage_and_wrong_ca_then_valid_client() {
    let certs = certs();
    let conf = map_config(&certs);
    for (name, server) in servers(&conf) {
        let addr = server.addr();
        for garbage in [
            &b"CONNECT {\"user\":\"client@example.com\"}\r\nPING\r\n"[..],
            &[0x16, 0x03, 0x01, 0xff, 0xff, 0, 1, 2, 3],
            &[0xff; 64],
        ] {
            let mut raw = natrium_tests::RawClient::connect(&addr);
            let _ = raw.stream().write_all(garbage);
            let (rest, closed) = raw.wait_closed(WAIT);
            assert!(closed, "{name}: {garbage:?} left open");
            assert!(!rest.contains("PONG"), "{name}: {rest:?}");
        }
        assert_eq!(
            session(&certs, &addr, Some("stranger"), "{\"verbose\":false}", ""),
            "<closed>",
            "{name}"
        );
        assert!(!server.log_text().contains("Using email found"), "{name}");
        assert_eq!(
            session(
                &certs,
                &addr,
                Some("client"),
                "{\"verbose\":false}",
                "PUB client.ok 0\r\n\r\n"
            ),
            "",
            "{name}"
        );
    }
}
