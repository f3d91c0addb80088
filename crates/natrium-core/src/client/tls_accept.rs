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

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::conn::serve;
use super::io::{PlainRead, PlainWrite, TcpRead};
use super::lifecycle::{finish, first_info, refuse_max_connections, spawn_writer};
use super::{ClientHandle, ClosedReason};
use crate::info::Info;
use crate::limits::NOT_TLS_DRAIN_BYTES_MAX;
use crate::server::Server;
use crate::tls::verify::{describe, noting_rejected_chain, read_error_text, Rejected};
use crate::tls::x509::hex;
use crate::tls::{go_suite_name, go_version_name, ClientTls, PeerCert, TlsConnInfo};

/// First byte of a TLS handshake record.
const RECORD_HANDSHAKE: u8 = 0x16;
/// First byte of a TLS alert record.
const RECORD_ALERT: u8 = 0x15;

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
    let stream = handshake(handle, stream, tls).await?;
    let Some(conn) = connection_info(&stream, tls_first) else {
        return Err(ClosedReason::TlsHandshakeError);
    };
    if !pinned_ok(handle, tls, conn.peer_certificate()) {
        tracing::error!(
            "{} - TLS handshake error: certificate not pinned",
            handle.log_prefix()
        );
        return Err(ClosedReason::TlsHandshakeError);
    }
    handle.set_tls(conn);
    Ok(Negotiated::Tls(Box::new(stream)))
}

/// What Go's record layer checks before anything else: the first record must be a handshake
/// (or an alert) of a plausible version. Anything else is a client speaking another protocol,
/// logged only at debug level, as Go does for probes.
fn looks_like_tls(header: &[u8]) -> bool {
    match header {
        [] => true,
        [kind, rest @ ..] => {
            (*kind == RECORD_HANDSHAKE || *kind == RECORD_ALERT)
                && rest.first().is_none_or(|&major| major < 0x10)
        }
    }
}

async fn handshake(
    handle: &ClientHandle,
    stream: TcpStream,
    tls: &ClientTls,
) -> Result<TlsStream<TcpStream>, ClosedReason> {
    let prefix = handle.log_prefix();
    let deadline = Instant::now() + tls.timeout;
    let local = stream
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let timed_out = || {
        tracing::debug!("{prefix} - TLS handshake timeout");
        tracing::debug!(
            "{prefix} - TLS handshake error: {}",
            read_error_text(local, handle.addr, "i/o timeout")
        );
        ClosedReason::TlsHandshakeError
    };
    let mut header = [0u8; 2];
    match tokio::time::timeout_at(deadline, stream.peek(&mut header)).await {
        Err(_) => return Err(timed_out()),
        Ok(Ok(0)) => {
            tracing::error!("{prefix} - TLS handshake error: EOF");
            return Err(ClosedReason::TlsHandshakeError);
        }
        Ok(Ok(n)) if !looks_like_tls(header.get(..n).unwrap_or_default()) => {
            tracing::debug!(
                "{prefix} - TLS handshake error: tls: first record does not look like a TLS \
                 handshake"
            );
            drain_available(&stream);
            return Err(ClosedReason::TlsHandshakeError);
        }
        Ok(Ok(_)) => {}
        Ok(Err(err)) => {
            let text = describe(&err, local, handle.addr, &Rejected::default());
            tracing::error!("{prefix} - TLS handshake error: {text}");
            return Err(ClosedReason::TlsHandshakeError);
        }
    }
    let acceptor = TlsAcceptor::from(Arc::clone(&tls.config));
    let accept = tokio::time::timeout_at(deadline, acceptor.accept(stream));
    let (result, rejected_chain) = noting_rejected_chain(accept).await;
    match result {
        Err(_) => Err(timed_out()),
        Ok(Err(err)) => {
            let text = describe(&err, local, handle.addr, &rejected_chain);
            if err.kind() == io::ErrorKind::TimedOut {
                tracing::debug!("{prefix} - TLS handshake error: {text}");
            } else {
                tracing::error!("{prefix} - TLS handshake error: {text}");
            }
            Err(ClosedReason::TlsHandshakeError)
        }
        Ok(Ok(stream)) => Ok(stream),
    }
}

/// Reads and drops what the client already sent (at most `NOT_TLS_DRAIN_BYTES_MAX`), so that
/// closing sends a FIN rather than a reset, as Go's close after reading the first record does:
/// a plain-text client then sees INFO and an orderly end.
fn drain_available(stream: &TcpStream) {
    let mut chunk = [0u8; 4096];
    let mut total = 0;
    while total < NOT_TLS_DRAIN_BYTES_MAX {
        match stream.try_read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
}

/// Version, suite and client certificates of a finished handshake (websocket connections over
/// TLS record theirs too: `verify_and_map` and `/connz` read them).
pub(crate) fn connection_info(
    stream: &TlsStream<TcpStream>,
    handshake_first: bool,
) -> Option<TlsConnInfo> {
    let session = stream.get_ref().1;
    let suite = session.negotiated_cipher_suite()?;
    let peer_certs = session
        .peer_certificates()
        .unwrap_or_default()
        .iter()
        .filter_map(|der| PeerCert::parse(der).ok())
        .collect();
    Some(TlsConnInfo {
        version: go_version_name(session.protocol_version()),
        cipher_suite: go_suite_name(suite),
        handshake_first,
        peer_certs,
    })
}

/// Go's `matchesPinnedCert`, with its debug lines.
fn pinned_ok(handle: &ClientHandle, tls: &ClientTls, leaf: Option<&PeerCert>) -> bool {
    if tls.pinned_accepts(leaf.map(|c| &c.spki_sha256)) {
        return true;
    }
    match leaf {
        None => tracing::debug!(
            "{} - Failed pinned cert test as client did not provide a certificate",
            handle.log_prefix()
        ),
        Some(cert) => tracing::debug!(
            "{} - Failed pinned cert test for key id: {}",
            handle.log_prefix(),
            hex(&cert.spki_sha256)
        ),
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_first_record_check_like_go() {
        assert!(looks_like_tls(&[0x16, 0x03]));
        assert!(looks_like_tls(&[0x15, 0x03]));
        assert!(looks_like_tls(&[0x16]));
        assert!(!looks_like_tls(b"CO"));
        assert!(!looks_like_tls(&[0x16, 0x10]));
        assert!(!looks_like_tls(&[0x00, 0x01]));
    }
}
