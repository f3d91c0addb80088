//! The handshake phase of a websocket connection: read HTTP requests into a buffer the phase
//! owns, let `natrium_ws::Handshake` decide, and write its reply. A refused request on a
//! keep-alive connection is followed by the next one, as Go's `net/http` server allows; an
//! upgrade ends the phase. The caller bounds the whole phase by the handshake timeout.
//!
//! Go logs the refusals its websocket handler makes (`<addr> - websocket handshake error:
//! <reason>`), not those of the HTTP layer before it (malformed requests), nor a client that
//! leaves or times out.

use std::net::SocketAddr;
use std::time::SystemTime;

use natrium_ws::handshake::{HandshakeError, Outcome};
use natrium_ws::{Handshake, RequestParser, Upgrade};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Each read asks for this much room; the parser bounds the head's total size.
const READ_CHUNK_BYTES: usize = 4096;

/// Runs the handshake on `stream`. Returns the upgrade once its 101 reply is written, `None`
/// when the connection must close (refused, gone, or the reply could not be written).
pub(crate) async fn handshake<S>(
    stream: &mut S,
    rules: &Handshake,
    addr: SocketAddr,
) -> Option<Box<Upgrade>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut buf: Vec<u8> = Vec::new();
    let mut parser = RequestParser::new();
    loop {
        match rules.process(&mut parser, &buf) {
            Outcome::Incomplete => {}
            Outcome::Upgrade(up) => {
                stream.write_all(&up.response).await.ok()?;
                stream.flush().await.ok()?;
                return Some(up);
            }
            Outcome::Reject {
                rejection,
                consumed,
            } => {
                if logged_by_go(&rejection.error) {
                    tracing::error!("{addr} - websocket handshake error: {}", rejection.error);
                }
                if let Some(reply) = rejection.response(SystemTime::now()) {
                    stream.write_all(&reply).await.ok()?;
                    stream.flush().await.ok()?;
                }
                if rejection.closes() || consumed == 0 {
                    let _ = stream.shutdown().await;
                    return None;
                }
                buf.drain(..consumed.min(buf.len()));
                parser = RequestParser::new();
                // A pipelined next request may already be complete.
                continue;
            }
        }
        buf.reserve(READ_CHUNK_BYTES);
        match stream.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Whether Go's websocket handler (rather than its HTTP layer) refuses this way, which is
/// when Go logs the refusal.
fn logged_by_go(error: &HandshakeError) -> bool {
    !matches!(error, HandshakeError::Http(_) | HandshakeError::StarTarget)
}
