//! The accept loop every listener runs.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use crate::server::Server;

impl Server {
    /// Accepts on `listener` until the server stops accepting or shuts down, handing each
    /// socket (with the peer address as Go reports it) to `on_accept`. Every listener runs it:
    /// the client and websocket listeners here, and those of other crates. Accept errors (out
    /// of file descriptors and the like) back off from 10 ms to 1 s instead of spinning.
    pub async fn accept_until_stopped<F>(self, listener: &TcpListener, kind: &str, mut on_accept: F)
    where
        F: FnMut(TcpStream, SocketAddr),
    {
        let shared = &self.shared;
        let mut backoff = Duration::from_millis(10);
        loop {
            let accepted = tokio::select! {
                biased;
                () = shared.stop_accepting.cancelled() => break,
                () = shared.shutdown.cancelled() => break,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, addr)) => {
                    backoff = Duration::from_millis(10);
                    // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; Go reports them
                    // as plain IPv4 (logs, INFO client_ip, /connz).
                    let addr = SocketAddr::new(addr.ip().to_canonical(), addr.port());
                    on_accept(stream, addr);
                }
                Err(err) => {
                    // Out of file descriptors and the like: back off rather than spin.
                    tracing::error!("Temporary accept error: {err}, sleeping {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        }
        tracing::debug!("{kind} accept loop exiting");
    }
}
