//! HTTPS monitoring (`https_port`): the TLS handshake in front of the HTTP service, with the
//! certificate of the server's `tls` block as it is at the moment of the handshake (so a
//! reload that changes the certificate applies to the next monitoring connection, as Go's
//! `GetConfigForClient` does). Client certificates are never asked for here, even with
//! `verify`, as in Go.
//!
//! A plain HTTP request on the HTTPS port gets the answer Go's HTTP server gives:
//! `HTTP/1.0 400 Bad Request` and `Client sent an HTTP request to an HTTPS server.`

use natrium_core::Server;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// First byte of a TLS handshake record.
const RECORD_HANDSHAKE: u8 = 0x16;
/// Go's reply to plain HTTP on an HTTPS port (`net/http`).
const PLAIN_HTTP_REPLY: &[u8] =
    b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// Runs the handshake; `None` when the connection is done (not TLS, failed, slower than
/// [`crate::limits::TLS_HANDSHAKE_TIMEOUT`], or TLS no longer configured).
pub(crate) async fn accept(server: &Server, mut stream: TcpStream) -> Option<TlsStream<TcpStream>> {
    let config = server.config();
    let tls = config.tls.as_ref()?;
    let acceptor = TlsAcceptor::from(std::sync::Arc::clone(&tls.monitor_config));
    let handshake = async {
        let mut first = [0u8; 1];
        let n = stream.peek(&mut first).await.ok()?;
        if n == 0 {
            return None;
        }
        if first[0] != RECORD_HANDSHAKE {
            let _ = stream.write_all(PLAIN_HTTP_REPLY).await;
            let _ = stream.shutdown().await;
            return None;
        }
        acceptor.accept(stream).await.ok()
    };
    tokio::time::timeout(crate::limits::TLS_HANDSHAKE_TIMEOUT, handshake)
        .await
        .ok()
        .flatten()
}
