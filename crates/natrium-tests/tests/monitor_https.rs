//! Monitoring over TLS (`https_port`, `https`) compared with the Go server: the endpoints over
//! HTTPS with the `tls` block's certificate and no client certificate even under `verify`,
//! Go's answer to plain HTTP on the HTTPS port, Go's start-up refusals, the ports file, and a
//! reloaded certificate used by the next handshake. Also: the monitoring port stays
//! responsive while publishers flood the client port.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use natrium_tests::process::{run_to_exit, wait_for_file};
use natrium_tests::{go_server_path, natrium_path, ServerProcess, TestCerts};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const WAIT: Duration = Duration::from_secs(10);

/// The port in `Starting https monitor on HOST:PORT`.
fn https_port(server: &ServerProcess) -> u16 {
    assert!(server.wait_for_log("Starting https monitor on", WAIT));
    server
        .log_lines()
        .iter()
        .find_map(|l| l.split("Starting https monitor on ").nth(1))
        .and_then(|rest| rest.trim().rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .expect("https monitor port")
}

/// A TLS connection to the HTTPS monitor, trusting the test CA for `localhost`.
async fn tls_connect(
    certs: &TestCerts,
    port: u16,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(
            certs.ca_der().to_vec(),
        ))
        .map_err(|e| e.to_string())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    tokio::time::timeout(WAIT, connector.connect(name, tcp))
        .await
        .map_err(|_| "handshake timed out".to_owned())?
        .map_err(|e| e.to_string())
}

/// GET `path` over TLS, trusting the test CA for `localhost`; the status and body, or the
/// handshake error.
async fn https_get(certs: &TestCerts, port: u16, path: &str) -> Result<(u16, String), String> {
    let mut tls = tls_connect(certs, port).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(WAIT, tls.read_to_end(&mut raw)).await;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b.to_owned());
    Ok((status, body.unwrap_or_default()))
}

fn https_config(certs: &TestCerts, extra: &str) -> String {
    let verify = format!("verify: true\nca_file: \"{}\"", certs.file("ca.pem"));
    certs.config(
        "https.conf",
        &format!("https: 127.0.0.1:-1\n{extra}\n{}", certs.tls_block(&verify)),
    )
}

#[tokio::test]
async fn monitor_https_serves_endpoints_like_go() {
    let certs = TestCerts::generate();
    let conf = https_config(&certs, "");
    let mut servers = vec![("ours", ServerProcess::start(&["-c", &conf]))];
    if let Some(go) = ServerProcess::start_go(&["-c", &conf]) {
        servers.push(("go", go));
    }
    let mut plain_replies = Vec::new();
    for (name, server) in &servers {
        let port = https_port(server);
        let (status, body) = https_get(&certs, port, "/varz").await.expect(name);
        assert_eq!(status, 200, "{name}: {body}");
        let varz: serde_json::Value = serde_json::from_str(&body).expect("varz JSON");
        assert_eq!(
            (&varz["https_port"], &varz["http_port"]),
            (&serde_json::json!(-1), &serde_json::json!(0)),
            "{name}"
        );
        let (status, body) = https_get(&certs, port, "/healthz").await.expect(name);
        assert_eq!(
            (status, body.as_str()),
            (200, "{\"status\":\"ok\"}"),
            "{name}"
        );
        // Plain HTTP on the HTTPS port.
        let mut plain = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        plain.set_read_timeout(Some(WAIT)).expect("timeout");
        plain
            .write_all(b"GET /varz HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("send");
        let mut reply = String::new();
        let _ = plain.read_to_string(&mut reply);
        plain_replies.push(reply);
    }
    assert_eq!(
        plain_replies[0],
        "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
    );
    if let Some(go) = plain_replies.get(1) {
        assert_eq!(go, &plain_replies[0]);
    }
}

#[test]
fn monitor_https_refusals_like_go() {
    let certs = TestCerts::generate();
    let cases: [&[&str]; 2] = [
        &["-p", "-1", "--https_port", "-1"],
        &["-p", "-1", "--https_port", "-1", "-m", "-1"],
    ];
    let expected = [
        "Can't start monitoring: TLS cert and key required for HTTPS",
        "Can't start monitoring: can't specify both HTTP (-1) and HTTPs (-1) ports",
    ];
    for (args, want) in cases.iter().zip(expected) {
        let ours = run_to_exit(&natrium_path(), args, Some(certs.dir()), &[], WAIT);
        assert_eq!(ours.code, Some(1), "{ours:?}");
        let fatal = |text: &str| {
            text.lines()
                .find_map(|l| l.split("[FTL] ").nth(1))
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(fatal(&ours.stderr), want);
        if let Some(go) = go_server_path() {
            let theirs = run_to_exit(&go, args, Some(certs.dir()), &[], WAIT);
            assert_eq!(theirs.code, ours.code);
            assert_eq!(fatal(&theirs.stderr), want);
        }
    }
}

#[tokio::test]
async fn monitor_https_ports_file_and_reloaded_certificate() {
    let certs = TestCerts::generate();
    let dir = certs.dir().display().to_string();
    let conf = https_config(&certs, &format!("ports_file_dir: \"{dir}\""));
    let server = ServerProcess::start(&["-c", &conf]);
    let port = https_port(&server);
    let ports = certs.path(&format!("nats-server_{}.ports", server.pid()));
    let text = wait_for_file(&ports, WAIT, |t| t.contains("monitoring")).expect("ports file");
    assert!(
        text.contains(&format!("\"monitoring\":[\"https://127.0.0.1:{port}\"]")),
        "{text}"
    );
    assert!(https_get(&certs, port, "/varz").await.is_ok());
    // Serve the client certificate instead: not valid for localhost, so a client checking the
    // name refuses the next handshake, which proves the new certificate is in use.
    let swapped = format!(
        "https: 127.0.0.1:-1\nports_file_dir: \"{dir}\"\ntls {{\n cert_file: \"{}\"\n key_file: \"{}\"\n}}",
        certs.file("client.pem"),
        certs.file("client-key.pem")
    );
    certs.config("https.conf", &swapped);
    server.signal("HUP");
    assert!(server.wait_for_log("Reloaded server configuration", WAIT));
    assert!(server.log_text().contains("Reloaded: tls = enabled"));
    let err = https_get(&certs, port, "/varz")
        .await
        .expect_err("old name no longer valid");
    assert!(
        err.contains("certificate") || err.contains("Certificate"),
        "{err}"
    );
}

/// The flood: publishers as fast as they can, no subscriber.
async fn flood(url: String, stop: Arc<std::sync::atomic::AtomicBool>) -> u64 {
    let client = async_nats::connect(url).await.expect("publisher");
    let payload = bytes::Bytes::from(vec![b'x'; 512]);
    let mut sent = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        for _ in 0..256 {
            if client.publish("flood", payload.clone()).await.is_err() {
                return sent;
            }
            sent += 1;
        }
        tokio::task::yield_now().await;
    }
    let _ = client.flush().await;
    sent
}

/// One `/varz` request with its own deadline; the time it took.
fn timed_varz(port: u16, deadline: Duration) -> Result<Duration, String> {
    let start = Instant::now();
    let mut stream = TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), deadline)
        .map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(deadline))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET /varz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw).map_err(|e| e.to_string())?;
    if !raw.starts_with("HTTP/1.1 200") || !raw.contains("\"in_msgs\"") {
        return Err(format!(
            "bad reply: {}",
            raw.lines().next().unwrap_or_default()
        ));
    }
    Ok(start.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn monitor_port_stays_responsive_under_full_load() {
    let server = ServerProcess::start(&["-m", "-1"]);
    let port = server.monitor_port.expect("monitor port");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let publishers: Vec<_> = (0..4)
        .map(|_| tokio::spawn(flood(server.url(), Arc::clone(&stop))))
        .collect();
    // Poll /varz while the flood runs: every request must answer within its own deadline.
    let per_request = Duration::from_secs(2);
    let polling = tokio::task::spawn_blocking(move || {
        let mut times = Vec::new();
        let mut in_msgs_seen = Vec::new();
        let run_until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < run_until {
            let took = timed_varz(port, per_request)?;
            times.push(took);
            let varz = natrium_tests::raw::http_get_json(port, "/varz");
            in_msgs_seen.push(varz["in_msgs"].as_u64().unwrap_or(0));
        }
        Ok::<_, String>((times, in_msgs_seen))
    });
    let (times, seen) = polling.await.expect("poller").expect("monitoring answered");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut sent = 0;
    for p in publishers {
        sent += p.await.expect("publisher");
    }
    assert!(times.len() >= 5, "only {} responses", times.len());
    // The flood was real: messages kept arriving while monitoring answered.
    assert!(sent > 10_000, "sent {sent}");
    assert!(
        seen.last() > seen.first(),
        "in_msgs did not move while polling: {seen:?}"
    );
    let worst = times.iter().max().copied().unwrap_or_default();
    eprintln!(
        "monitor under load: {} responses, worst {worst:?}, {sent} messages published",
        times.len()
    );
}

/// Reads until the server ends the connection, at most 8 s from `since`; when it did.
async fn closed_since<R>(mut stream: R, since: Instant) -> Option<Duration>
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut buf = [0u8; 1024];
    loop {
        let left = Duration::from_secs(8).saturating_sub(since.elapsed());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(since.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

/// One probe of the HTTPS port: no handshake at all, or a handshake followed by `then`.
async fn https_probe(certs: &TestCerts, port: u16, then: Option<&[u8]>) -> Option<Duration> {
    let Some(bytes) = then else {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        return closed_since(tcp, Instant::now()).await;
    };
    let mut tls = tls_connect(certs, port).await.expect("handshake");
    let since = Instant::now();
    tls.write_all(bytes).await.expect("send");
    closed_since(tls, since).await
}

/// Go's HTTPS monitor closes a connection that sends no handshake, or nothing (or half a
/// request) after it, within its 5 s `ReadHeaderTimeout`; so does ours. All probes of both
/// servers run at once.
#[tokio::test]
async fn monitor_https_closes_silent_connections_like_go() {
    let certs = TestCerts::generate();
    let conf = https_config(&certs, "");
    let mut servers = vec![("ours", ServerProcess::start(&["-c", &conf]))];
    if let Some(go) = ServerProcess::start_go(&["-c", &conf]) {
        servers.push(("go", go));
    }
    let probes: [(&str, Option<&[u8]>); 3] = [
        ("no handshake", None),
        ("silent after handshake", Some(b"")),
        ("half request", Some(b"GET /varz HTTP/1.1\r\nHost: x\r\n")),
    ];
    let mut runs = Vec::new();
    let mut labels = Vec::new();
    for (name, server) in &servers {
        let port = https_port(server);
        for (probe, then) in probes {
            labels.push(format!("{name} {probe}"));
            runs.push(https_probe(&certs, port, then));
        }
    }
    let results = futures::future::join_all(runs).await;
    for (label, closed) in labels.iter().zip(results) {
        assert!(
            closed.is_some_and(|t| t >= Duration::from_secs(4) && t <= Duration::from_secs(8)),
            "{label}: closed after {closed:?}, want about 5 s"
        );
    }
}
