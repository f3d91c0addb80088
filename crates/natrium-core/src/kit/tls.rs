//! The server side of a TLS handshake on an accepted socket, for every listener: the first
//! record checked as Go's record layer checks it, the handshake within the TLS timeout, Go's
//! log lines for each failure, pinned certificates, and what the handshake negotiated.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::client::{ClientHandle, ClosedReason};
use crate::limits::NOT_TLS_DRAIN_BYTES_MAX;
use crate::tls::verify::{describe, noting_rejected_chain, read_error_text, Rejected};
use crate::tls::x509::hex;
use crate::tls::{go_suite_name, go_version_name, ClientTls, PeerCert, TlsConnInfo};

/// First byte of a TLS handshake record.
pub(crate) const RECORD_HANDSHAKE: u8 = 0x16;
/// First byte of a TLS alert record.
const RECORD_ALERT: u8 = 0x15;

/// Runs the handshake on `stream` with `tls`'s settings, within its timeout, and checks the
/// pinned certificates; on success the connection's TLS state is recorded on `handle` (for
/// `/connz`, `verify_and_map` and the log). `handshake_first` is only reported (INFO's
/// `tls_first`, `/connz`). A failure is logged with Go's line and gives the reason to close
/// with; no bytes reach the peer.
pub async fn accept_tls(
    handle: &ClientHandle,
    stream: TcpStream,
    tls: &ClientTls,
    handshake_first: bool,
) -> Result<TlsStream<TcpStream>, ClosedReason> {
    let stream = handshake(handle, stream, tls).await?;
    let Some(conn) = connection_info(&stream, handshake_first) else {
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
    Ok(stream)
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
pub fn connection_info(
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
