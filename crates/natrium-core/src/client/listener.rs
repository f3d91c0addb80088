//! The client listener: binding the client port, the accept loop, and the first moments of
//! each connection (plain, or handed to the TLS front end).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};

use super::conn::serve;
use super::handle::ClientHandle;
use super::io::{PlainWrite, TcpRead};
use super::lifecycle::{greet, refuse_max_connections, spawn_writer};
use super::tls_accept;
use crate::listen::{bind_tcp, go_os_error, host_port, ListenError};
use crate::server::{Server, StartError};

/// Runs one client connection to completion.
///
/// This future is the connection's task for its whole life, so its size is memory every idle
/// connection holds: the TLS path (several times the plain one) is boxed, and nothing built
/// for the greeting stays alive across the read loop.
pub(crate) async fn run_client(server: Server, stream: TcpStream, handle: Arc<ClientHandle>) {
    let config = server.config();
    if let Some(tls) = &config.tls {
        let tls = Arc::clone(tls);
        drop(config);
        Box::pin(tls_accept::run(server, handle, stream, tls)).await;
        return;
    }
    let write_deadline = config.write_deadline;
    drop(config);
    let (read_half, write_half) = stream.into_split();
    let nonce = greet(&server, &handle);
    let writer = spawn_writer(&handle, PlainWrite(write_half), write_deadline);
    if !server.register(&handle) {
        refuse_max_connections(&handle);
        let _ = writer.await;
        return;
    }
    tracing::debug!("{} - Client connection created", handle.log_prefix());
    serve(server, handle, nonce, TcpRead(read_half), writer, None).await;
}

impl Server {
    /// Binds the client port and starts accepting. Returns the bound address.
    pub async fn listen(&self) -> Result<SocketAddr, StartError> {
        let config = self.config();
        // Go names the configured port in the error (`0.0.0.0:70000`), -1 already turned
        // into the 0 it asks the system for.
        let shown_port = if config.port == crate::listen::RANDOM_PORT {
            0
        } else {
            config.port
        };
        let shown = || host_port(&config.host, shown_port);
        let listener =
            bind_tcp(&config.host, config.port)
                .await
                .map_err(|cause| StartError::Listen {
                    addr: shown(),
                    cause,
                })?;
        let bound = listener.local_addr().map_err(|err| StartError::Listen {
            addr: shown(),
            cause: ListenError(go_os_error(&err)),
        })?;
        *self.shared.client_addr.lock() = Some(bound);
        self.spawn_service(crate::account::expiry::watch(self.clone()));
        tracing::info!(
            "Listening for client connections on {}",
            host_port(&config.host, bound.port())
        );
        if let Some(tls) = &config.tls {
            // A handshake-first server without fallback cannot serve plain clients at all.
            let first_only = tls.handshake_first && tls.handshake_first_fallback.is_zero();
            if tls.allow_non_tls && !first_only {
                tracing::info!("TLS available for client connections");
            } else {
                tracing::info!("TLS required for client connections");
            }
            if first_only {
                tracing::warn!(
                    "Clients that are not using \"TLS Handshake First\" option will fail to connect"
                );
            }
        }
        let server = self.clone();
        self.shared
            .conn_tracker
            .spawn(async move { server.accept_loop(listener).await });
        Ok(bound)
    }

    async fn accept_loop(self, listener: TcpListener) {
        self.clone()
            .accept_until_stopped(&listener, "client", |stream, addr| {
                self.accept_client(stream, addr);
            })
            .await;
        drop(listener);
        self.shared.accept_stopped.cancel();
    }

    fn accept_client(&self, stream: TcpStream, addr: SocketAddr) {
        let _ = stream.set_nodelay(true);
        let handle = self.new_connection(addr, self.config().max_pending);
        self.spawn_connection(run_client(self.clone(), stream, handle));
    }
}
