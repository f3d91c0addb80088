//! The connection's timers on a paused clock: a real connection task (read loop, writer,
//! PING timer, closing deadline) over an in-memory duplex stream, so tokio's paused clock
//! advances exactly and the tests take no wall time. What they check is Go's timing: the
//! authentication timeout only when authentication is required, the first PING within
//! `min(ping_interval, 2 s)` plus a fifth after CONNECT, then one per interval, and a stale
//! connection closed at the `ping_max + 1`th unanswered PING; and lame duck mode's pacing.

#![allow(clippy::panic, clippy::unwrap_used, clippy::unchecked_time_subtraction)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::time::Instant;

use super::io::{PlainRead, PlainWrite};
use super::{greet, serve, spawn_writer, ClientHandle};
use crate::{CoreConfig, Server};

/// A connection to `server` over an in-memory stream; returns the client's end.
fn connect(server: &Server) -> DuplexStream {
    let (client, socket) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(socket);
    let config = server.config();
    let cid = server.shared.next_cid();
    let addr = SocketAddr::from(([127, 0, 0, 1], 40_000));
    let closing = server.shared.connections.child_token();
    let handle = Arc::new(ClientHandle::new(cid, addr, config.max_pending, closing));
    let nonce = greet(server, &handle);
    let writer = spawn_writer(&handle, PlainWrite(write), config.write_deadline);
    assert!(server.register(&handle));
    let server = server.clone();
    tokio::spawn(serve(server, handle, nonce, PlainRead(read), writer, None));
    client
}

/// Reads until `needle` has arrived or the stream ends; returns everything read.
async fn read_until(client: &mut DuplexStream, needle: &str) -> String {
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains(needle) {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(buf.get(..n).unwrap_or_default())),
        }
    }
    text
}

fn server(config: CoreConfig) -> Server {
    Server::new(config).unwrap_or_else(|e| panic!("server: {e}"))
}

#[tokio::test(start_paused = true)]
async fn paused_auth_timeout_only_with_authentication() {
    let with_auth = server(CoreConfig {
        auth: natrium_auth::AuthConfig::Token("t".to_owned()),
        auth_timeout: Duration::from_secs(3),
        ..CoreConfig::default()
    });
    let start = Instant::now();
    let mut client = connect(&with_auth);
    let text = read_until(&mut client, "Authentication Timeout").await;
    assert!(
        text.ends_with("-ERR 'Authentication Timeout'\r\n"),
        "{text:?}"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(3));

    // Without authentication, a client that never sends CONNECT is only ever PINGed.
    let without = server(CoreConfig {
        auth_timeout: Duration::from_secs(3),
        ping_interval: Duration::from_secs(60),
        ..CoreConfig::default()
    });
    let start = Instant::now();
    let mut client = connect(&without);
    let text = read_until(&mut client, "PING\r\n").await;
    assert!(!text.contains("-ERR"), "{text:?}");
    assert_eq!(start.elapsed(), Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn paused_pings_follow_go_timing_and_stale_connections_close() {
    let server = server(CoreConfig {
        ping_interval: Duration::from_secs(30),
        ping_max: 2,
        ..CoreConfig::default()
    });
    let mut client = connect(&server);
    let _info = read_until(&mut client, "\r\n").await;
    let connected = Instant::now();
    let connect = b"CONNECT {\"verbose\":false}\r\n";
    client
        .write_all(connect)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // The first PING after CONNECT: min(ping_interval, 2 s) plus up to a fifth of that.
    let text = read_until(&mut client, "PING\r\n").await;
    assert_eq!(text, "PING\r\n");
    let first = connected.elapsed();
    assert!(
        first >= Duration::from_secs(2) && first <= Duration::from_millis(2400),
        "{first:?}"
    );
    // Unanswered: the next two ticks send PINGs (ping_max 2 outstanding), the one after that
    // closes the connection as stale.
    assert_eq!(read_until(&mut client, "PING\r\n").await, "PING\r\n");
    assert_eq!(connected.elapsed() - first, Duration::from_secs(30));
    let text = read_until(&mut client, "Stale Connection").await;
    assert_eq!(text, "-ERR 'Stale Connection'\r\n");
    assert_eq!(connected.elapsed() - first, Duration::from_secs(60));
    // The connection is gone.
    let mut rest = Vec::new();
    let _ = client.read_to_end(&mut rest).await;
    assert!(rest.is_empty(), "{rest:?}");
}

/// Lame duck: the INFO with `ldm` at once, nobody closed during the grace period, then the
/// clients closed one by one, each pause in [interval/2, interval) with the interval capped at
/// one second, and a shutdown requested after the last.
#[tokio::test(start_paused = true)]
async fn paused_lame_duck_paces_the_closes() {
    let server = server(CoreConfig {
        host: "127.0.0.1".to_owned(),
        port: -1,
        lame_duck_duration: Duration::from_secs(30),
        lame_duck_grace_period: Duration::from_secs(10),
        ..CoreConfig::default()
    });
    server
        .listen()
        .await
        .unwrap_or_else(|e| panic!("listen: {e}"));
    let mut clients = Vec::new();
    for _ in 0..3 {
        let mut client = connect(&server);
        let _info = read_until(&mut client, "\r\n").await;
        let connect = b"CONNECT {\"verbose\":false,\"protocol\":1}\r\nPING\r\n";
        client
            .write_all(connect)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let _pong = read_until(&mut client, "PONG\r\n").await;
        clients.push(client);
    }
    let start = Instant::now();
    let ldm = tokio::spawn({
        let server = server.clone();
        async move { server.lame_duck().await }
    });
    let mut closed_at = Vec::new();
    for client in &mut clients {
        let text = read_until(client, "\"ldm\":true").await;
        assert!(text.contains("\"ldm\":true"), "{text:?}");
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
    for mut client in clients {
        let mut rest = Vec::new();
        let _ = client.read_to_end(&mut rest).await;
        closed_at.push(start.elapsed());
    }
    closed_at.sort();
    let grace = Duration::from_secs(10);
    assert!(closed_at.iter().all(|t| *t >= grace), "{closed_at:?}");
    for pair in closed_at.windows(2) {
        if let [a, b] = pair {
            let pause = *b - *a;
            let ok = pause >= Duration::from_millis(500) && pause < Duration::from_secs(1);
            assert!(ok, "{closed_at:?}");
        }
    }
    ldm.await.unwrap_or_else(|e| panic!("{e}"));
    server.shutdown_requested().await;
}
