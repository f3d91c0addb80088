//! A listener built from natrium-core's connection kit alone, as a crate outside the core
//! (MQTT, cluster routes) builds one: a line-echo protocol served over plain TCP, TLS and
//! WebSocket, with the server's accept loop, connection registry, outbound buffer and
//! `max_pending`, writer task and ordered shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use natrium_core::kit::{
    self, ClientHandle, ClosedReason, Inbound, OutSink, PlainRead, PlainWrite, ReadBuf, TcpRead,
};
use natrium_core::listen::bind_tcp;
use natrium_core::tls::{ClientTls, TlsSpec};
use natrium_core::{CoreConfig, Server};
use natrium_tests::certs::TestCerts;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);
const WRITE_DEADLINE: Duration = Duration::from_secs(10);

/// How the echo listener wraps each accepted socket.
#[derive(Clone)]
enum Wrap {
    Plain,
    Tls(Arc<ClientTls>),
    WebSocket(Arc<natrium_ws::Handshake>),
}

/// Binds a free loopback port and serves the echo protocol on it; each connection's close
/// reason is sent on `done`.
async fn start_echo(
    server: &Server,
    wrap: Wrap,
    max_pending: usize,
    done: mpsc::UnboundedSender<ClosedReason>,
) -> SocketAddr {
    let listener = bind_tcp("127.0.0.1", 0).await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let srv = server.clone();
    server.spawn_connection(async move {
        let accepting = srv.clone();
        accepting
            .accept_until_stopped(&listener, "echo", |stream, peer| {
                let handle = srv.new_connection(peer, max_pending);
                let task = connection(srv.clone(), stream, handle, wrap.clone(), done.clone());
                srv.spawn_connection(task);
            })
            .await;
    });
    addr
}

/// One connection: registration, the wrapping, then the echo loop.
async fn connection(
    server: Server,
    stream: TcpStream,
    handle: Arc<ClientHandle>,
    wrap: Wrap,
    done: mpsc::UnboundedSender<ClosedReason>,
) {
    if !server.register_connection(&handle) {
        let _ = done.send(ClosedReason::MaxConnectionsExceeded);
        return;
    }
    match wrap {
        Wrap::Plain => {
            let (r, w) = stream.into_split();
            echo(&handle, TcpRead(r), PlainWrite(w)).await;
        }
        Wrap::Tls(tls) => match kit::tls::accept_tls(&handle, stream, &tls, false).await {
            Ok(tls_stream) => {
                let (r, w) = tokio::io::split(tls_stream);
                echo(&handle, PlainRead(r), PlainWrite(w)).await;
            }
            Err(reason) => {
                handle.close(reason);
            }
        },
        Wrap::WebSocket(rules) => {
            let mut stream = stream;
            let addr = handle.addr;
            if let Some(up) = kit::ws::upgrade(&mut stream, &rules, addr).await {
                let (r, w) = stream.into_split();
                let (reader, writer) = kit::ws::transport(r, w, &handle, &up, 1 << 20);
                echo(&handle, reader, writer).await;
            }
        }
    }
    server.unregister_connection(&handle);
    let _ = done.send(handle.closed_reason().unwrap_or(ClosedReason::ClientClosed));
}

/// Echoes every whole line back, prefixed with `> `, until the peer leaves or the handle is
/// closed (slow consumer, shutdown).
async fn echo<R: Inbound, W: OutSink + 'static>(
    handle: &Arc<ClientHandle>,
    mut socket: R,
    sink: W,
) {
    let writer = kit::spawn_writer(handle, sink, WRITE_DEADLINE);
    let mut buf = ReadBuf::new();
    loop {
        let read = tokio::select! {
            () = handle.closing.cancelled() => break,
            read = buf.fill(&mut socket) => read,
        };
        match read {
            Ok(n) => buf.note_read(n),
            Err(reason) => {
                handle.close(reason);
                break;
            }
        }
        while let Some(end) = buf.pending().iter().position(|&b| b == b'\n') {
            let mut line = b"> ".to_vec();
            line.extend_from_slice(buf.pending().get(..=end).unwrap_or_default());
            buf.consume(end + 1);
            if !handle.send_proto(&line) {
                break;
            }
        }
        handle.out.flush();
    }
    if let Ok(Some(_)) = writer.await {
        handle.close(ClosedReason::WriteError);
    }
}

fn server() -> Server {
    Server::new(CoreConfig::default()).expect("server")
}

async fn read_until(stream: &mut (impl AsyncReadExt + Unpin), want: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    while !got.windows(want.len()).any(|w| w == want) {
        let n = tokio::time::timeout(WAIT, stream.read(&mut chunk))
            .await
            .expect("reply in time")
            .expect("read");
        assert!(
            n > 0,
            "closed early; got {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&chunk[..n]);
    }
    got
}

async fn next_reason(done: &mut mpsc::UnboundedReceiver<ClosedReason>) -> ClosedReason {
    tokio::time::timeout(WAIT, done.recv())
        .await
        .expect("connection ended in time")
        .expect("reason")
}

#[tokio::test]
async fn kit_listener_echoes_and_lists_its_connections() {
    let server = server();
    let (tx, mut done) = mpsc::unbounded_channel();
    let addr = start_echo(&server, Wrap::Plain, 1 << 20, tx).await;
    let mut client = TcpStream::connect(addr).await.expect("connect");
    client.write_all(b"hello\nwor").await.expect("write");
    client.write_all(b"ld\n").await.expect("write");
    let got = read_until(&mut client, b"> world\n").await;
    assert_eq!(got, b"> hello\n> world\n");
    assert_eq!(server.num_clients(), 1);
    let total = server
        .stats()
        .total_connections
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(total, 1);
    drop(client);
    assert_eq!(next_reason(&mut done).await, ClosedReason::ClientClosed);
    assert_eq!(server.num_clients(), 0);
}

#[tokio::test]
async fn kit_listener_cuts_a_peer_that_does_not_read() {
    let server = server();
    let (tx, mut done) = mpsc::unbounded_channel();
    let addr = start_echo(&server, Wrap::Plain, 64 * 1024, tx).await;
    let mut client = TcpStream::connect(addr).await.expect("connect");
    let line = [b'x'; 1023];
    let mut batch = Vec::new();
    for _ in 0..64 {
        batch.extend_from_slice(&line);
        batch.push(b'\n');
    }
    // Never reads: the echoes pile up in the outbound buffer until max_pending cuts it. The
    // writes may fail once the server has closed; that is the point.
    for _ in 0..256 {
        if client.write_all(&batch).await.is_err() {
            break;
        }
        if let Ok(Some(reason)) = tokio::time::timeout(Duration::ZERO, done.recv()).await {
            assert_eq!(reason, ClosedReason::SlowConsumerPendingBytes);
            return;
        }
    }
    assert_eq!(
        next_reason(&mut done).await,
        ClosedReason::SlowConsumerPendingBytes
    );
}

#[tokio::test]
async fn kit_listener_connections_end_in_shutdown() {
    let server = server();
    let (tx, mut done) = mpsc::unbounded_channel();
    let addr = start_echo(&server, Wrap::Plain, 1 << 20, tx).await;
    let mut client = TcpStream::connect(addr).await.expect("connect");
    client.write_all(b"ping\n").await.expect("write");
    read_until(&mut client, b"> ping\n").await;
    tokio::time::timeout(WAIT, server.shutdown())
        .await
        .expect("shutdown in time");
    // Shutdown waited for the connection task: its reason is already there.
    assert_eq!(done.try_recv(), Ok(ClosedReason::ServerShutdown));
    let mut rest = Vec::new();
    let n = tokio::time::timeout(WAIT, client.read_to_end(&mut rest))
        .await
        .expect("closed in time")
        .unwrap_or(0);
    assert_eq!(n, 0);
    // The accept loop ended with it and dropped the listener.
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn kit_listener_over_tls() {
    let certs = TestCerts::generate();
    let tls = ClientTls::build(&TlsSpec {
        cert_file: certs.file("server.pem"),
        key_file: certs.file("server-key.pem"),
        timeout: Duration::from_secs(2),
        ..TlsSpec::default()
    })
    .expect("tls");
    let server = server();
    let (tx, mut done) = mpsc::unbounded_channel();
    let addr = start_echo(&server, Wrap::Tls(Arc::new(tls)), 1 << 20, tx).await;

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from(
            certs.ca_der().to_vec(),
        ))
        .expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let mut client = connector.connect(name, tcp).await.expect("handshake");
    client.write_all(b"secret\n").await.expect("write");
    assert_eq!(read_until(&mut client, b"\n").await, b"> secret\n");
    let listed = server.clients();
    let tls_state = listed.first().and_then(|c| c.tls()).expect("tls recorded");
    assert!(tls_state.version.starts_with("1."), "{}", tls_state.version);

    // A plain-text peer is refused by the handshake, as Go refuses one.
    let mut plain = TcpStream::connect(addr).await.expect("connect");
    plain.write_all(b"hello\n").await.expect("write");
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(WAIT, plain.read_to_end(&mut rest)).await;
    assert!(rest.is_empty());
    drop(client);
    let reasons = [next_reason(&mut done).await, next_reason(&mut done).await];
    assert!(reasons.contains(&ClosedReason::ClientClosed), "{reasons:?}");
    assert!(
        reasons.contains(&ClosedReason::TlsHandshakeError),
        "{reasons:?}"
    );
}

#[tokio::test]
async fn kit_listener_over_websocket() {
    let rules = natrium_ws::Handshake::new(&natrium_ws::HandshakeConfig::default()).expect("rules");
    let server = server();
    let (tx, mut done) = mpsc::unbounded_channel();
    let addr = start_echo(&server, Wrap::WebSocket(Arc::new(rules)), 1 << 20, tx).await;
    let mut client = TcpStream::connect(addr).await.expect("connect");
    client
        .write_all(
            b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .await
        .expect("upgrade request");
    let response = read_until(&mut client, b"\r\n\r\n").await;
    assert!(response.starts_with(b"HTTP/1.1 101"), "{response:?}");
    // A masked binary frame with "hi\n".
    let mask = [1u8, 2, 3, 4];
    let mut frame = vec![0x82, 0x80 | 3];
    frame.extend_from_slice(&mask);
    frame.extend(b"hi\n".iter().zip(mask.iter().cycle()).map(|(b, m)| b ^ m));
    client.write_all(&frame).await.expect("frame");
    // The echo comes back in one unmasked binary frame.
    let reply = read_until(&mut client, b"> hi\n").await;
    assert_eq!(reply, [&[0x82u8, 5][..], b"> hi\n"].concat());
    drop(client);
    assert_eq!(next_reason(&mut done).await, ClosedReason::ClientClosed);
}
