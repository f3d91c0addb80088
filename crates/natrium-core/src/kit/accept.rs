//! The accept loop every listener runs.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use crate::client::{ClientHandle, WsPeer};
use crate::server::Server;

impl Server {
    /// The shared state of a connection a listener just accepted: a fresh connection id (ids
    /// are shared by every kind of connection), an outbound buffer bounded by `max_pending`,
    /// and a close signal that shutdown cancels. Counted in `/varz` `total_connections`.
    pub fn new_connection(&self, addr: SocketAddr, max_pending: usize) -> Arc<ClientHandle> {
        self.connection_handle(addr, max_pending, None)
    }

    /// [`Server::new_connection`] for a client that came through the websocket listener.
    pub(crate) fn new_websocket_connection(
        &self,
        addr: SocketAddr,
        max_pending: usize,
        peer: WsPeer,
    ) -> Arc<ClientHandle> {
        self.connection_handle(addr, max_pending, Some(peer))
    }

    fn connection_handle(
        &self,
        addr: SocketAddr,
        max_pending: usize,
        peer: Option<WsPeer>,
    ) -> Arc<ClientHandle> {
        let shared = &self.shared;
        shared
            .stats
            .total_connections
            .fetch_add(1, Ordering::Relaxed);
        let cid = shared.next_cid();
        let closing = shared.connections.child_token();
        Arc::new(match peer {
            None => ClientHandle::new(cid, addr, max_pending, closing),
            Some(peer) => ClientHandle::new_websocket(cid, addr, max_pending, closing, peer),
        })
    }

    /// Lists the connection among the server's clients (`/connz`, lame duck, shutdown and
    /// reload reach it from then on), unless `max_connections` is reached: then it returns
    /// false and the caller refuses the connection in its protocol's words.
    pub fn register_connection(&self, handle: &Arc<ClientHandle>) -> bool {
        self.register(handle)
    }

    /// Takes the connection off the server's list; its task calls this as it ends.
    pub fn unregister_connection(&self, handle: &ClientHandle) {
        self.unregister(handle.cid);
    }

    /// Runs a connection's task (or a listener's accept loop) so that shutdown waits for it
    /// after closing the clients, before the services drain.
    pub fn spawn_connection<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.shared.conn_tracker.spawn(task);
    }

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
