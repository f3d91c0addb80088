//! The start of a connection on a TLS-enabled server, as Go runs it:
//!
//! 1. INFO goes out in plain text (with `tls_required`), unless `handshake_first` asks for the
//!    handshake first; the connection is registered (max_connections applies to it now).
//! 2. With `handshake_first` and a fallback delay, a client that sends nothing within the delay
//!    gets the plain INFO after all. With `allow_non_tls`, the first byte tells a TLS client
//!    (a handshake record, 0x16) from a plain one; a client silent for the TLS timeout is
//!    taken as plain.
//! 3. The handshake must finish within the TLS timeout. Bytes that are not a TLS record, a
//!    client without a certificate under `verify`, a certificate from another authority, an
//!    expired one or one whose key is not pinned end the connection with Go's log line and
//!    "TLS Handshake Failure"; no -ERR reaches the client (Go's own -ERR is written into the
//!    unfinished TLS session and never arrives).
//! 4. With `handshake_first`, INFO goes out over TLS; then the connection runs as any other,
//!    its authentication timer starting only now.
//!
//! Nothing is read from the socket before the handshake: the checks use `peek`, so rustls sees
//! the client's bytes from the first one.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use super::conn::serve;
use super::io::{PlainRead, PlainWrite, TcpRead};
use super::lifecycle::{finish, first_info, refuse_max_connections, spawn_writer};
use super::{ClientHandle, ClosedReason};
use crate::info::Info;
use crate::kit::tls::{accept_tls, RECORD_HANDSHAKE};
use crate::server::Server;
use crate::tls::ClientTls;

/// How a connection continues once its first phase is over.
enum Negotiated {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Runs a connection on a server with client TLS configured.
pub(super) async fn run(
    server: Server,
    handle: Arc<ClientHandle>,
    mut stream: TcpStream,
    tls: Arc<ClientTls>,
) {
    let config = server.config();
    let mut info = first_info(&server, &handle);
    if !tls.handshake_first && !write_plain(&mut stream, &info, config.write_deadline).await {
        handle.close(ClosedReason::WriteError);
        return;
    }
    if !server.register(&handle) {
        refuse_max_connections(&handle);
        // The -ERR goes out in plain text, as Go writes it before any handshake.
        let mut line = Vec::new();
        handle.out.take(&mut line);
        let _ = tokio::time::timeout(config.write_deadline, stream.write_all(&line)).await;
        return;
    }
    tracing::debug!("{} - Client connection created", handle.log_prefix());
    let closing = handle.closing.clone();
    let negotiated = tokio::select! {
        biased;
        () = closing.cancelled() => None,
        result = negotiate(&handle, stream, &tls, &mut info, config.write_deadline) => {
            match result {
                Ok(negotiated) => Some(negotiated),
                Err(reason) => {
                    handle.close(reason);
                    None
                }
            }
        }
    };
    let Some(negotiated) = negotiated else {
        finish(&server, &handle);
        return;
    };
    match negotiated {
        Negotiated::Plain(stream) => {
            let (read_half, write_half) = stream.into_split();
            let writer = spawn_writer(&handle, PlainWrite(write_half), config.write_deadline);
            // The INFO is not kept for the connection's life, only its nonce.
            let nonce = std::mem::take(&mut info.nonce);
            drop(info);
            serve(server, handle, nonce, TcpRead(read_half), writer, None).await;
        }
        Negotiated::Tls(stream) => {
            if tls.handshake_first {
                // Go sends the deferred INFO first thing over TLS.
                info.tls_required = true;
                handle.send_proto(&info.to_frame());
                handle.out.flush();
            }
            let (read_half, write_half) = tokio::io::split(*stream);
            let writer = spawn_writer(&handle, PlainWrite(write_half), config.write_deadline);
            if let Some(conn) = handle.tls() {
                let prefix = handle.log_prefix();
                tracing::debug!("{prefix} - TLS handshake complete");
                tracing::debug!(
                    "{prefix} - TLS version {}, cipher suite {}",
                    conn.version,
                    conn.cipher_suite
                );
            }
            let nonce = std::mem::take(&mut info.nonce);
            drop(info);
            serve(server, handle, nonce, PlainRead(read_half), writer, None).await;
        }
    }
}

/// Writes a plain-text INFO; false if the client could not take it in time.
async fn write_plain(stream: &mut TcpStream, info: &Info, deadline: Duration) -> bool {
    matches!(
        tokio::time::timeout(deadline, stream.write_all(&info.to_frame())).await,
        Ok(Ok(()))
    )
}

/// What the client did first.
enum FirstBytes {
    /// It sent something; this is its first byte.
    Byte(u8),
    /// Nothing within the wait.
    Quiet,
    /// It closed (or the socket failed).
    Closed,
}

/// Waits up to `wait` for the client's first byte, without consuming it.
async fn first_byte(stream: &TcpStream, wait: Duration) -> FirstBytes {
    let mut buf = [0u8; 1];
    match tokio::time::timeout(wait, stream.peek(&mut buf)).await {
        Err(_) => FirstBytes::Quiet,
        Ok(Ok(n)) if n > 0 => FirstBytes::Byte(buf[0]),
        Ok(_) => FirstBytes::Closed,
    }
}

/// Steps 2 and 3 of the module documentation: decides between TLS and plain text and runs the
/// handshake. On failure the reason to close with is returned (and logged).
async fn negotiate(
    handle: &ClientHandle,
    stream: TcpStream,
    tls: &ClientTls,
    info: &mut Info,
    write_deadline: Duration,
) -> Result<Negotiated, ClosedReason> {
    let mut stream = stream;
    let mut tls_first = tls.handshake_first;
    if tls_first && !tls.handshake_first_fallback.is_zero() {
        match first_byte(&stream, tls.handshake_first_fallback).await {
            FirstBytes::Byte(_) => {}
            FirstBytes::Closed => return Err(ClosedReason::ClientClosed),
            FirstBytes::Quiet => {
                // The client waits for INFO: send it in plain text and go on as without
                // handshake_first.
                if !write_plain(&mut stream, info, write_deadline).await {
                    return Err(ClosedReason::WriteError);
                }
                tls_first = false;
            }
        }
    }
    if !tls_first && tls.allow_non_tls {
        match first_byte(&stream, tls.timeout).await {
            FirstBytes::Byte(RECORD_HANDSHAKE) => {}
            FirstBytes::Byte(_) | FirstBytes::Quiet => return Ok(Negotiated::Plain(stream)),
            FirstBytes::Closed => return Err(ClosedReason::ClientClosed),
        }
    }
    tracing::debug!(
        "{} - Starting TLS client connection handshake",
        handle.log_prefix()
    );
    let stream = accept_tls(handle, stream, tls, tls_first).await?;
    Ok(Negotiated::Tls(Box::new(stream)))
}
