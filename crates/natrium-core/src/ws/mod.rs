//! WebSocket clients: the `websocket { }` listener, the HTTP upgrade, and client connections
//! that speak the NATS protocol inside WebSocket frames.
//!
//! Layout:
//! - this module: the listener's settings ([`WsConfig`]), binding, the accept loop and the life
//!   of one connection (TLS, upgrade, then the ordinary client tasks).
//! - [`upgrade`]: the handshake phase, reading HTTP requests until one upgrades or is refused.
//! - [`transport`]: the framing adapters the client tasks run over: [`transport::WsRead`]
//!   decodes frames into protocol bytes and answers pings and closes, [`transport::WsWrite`]
//!   frames outbound batches (vectored, no copy, or deflated) and sends the close frame.
//!
//! The codec itself (handshake rules, frames, deflate, close payloads) is `natrium_ws`, which
//! does no I/O. See `docs/websocket.md`.

mod config;
mod session;
pub(crate) mod transport;
pub(crate) mod upgrade;

pub use config::{WsConfig, WsReport};
pub(crate) use session::WsSession;

use std::net::SocketAddr;
use std::sync::Arc;

use natrium_ws::Upgrade;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::client::{finish, greet, refuse_max_connections, serve, spawn_writer, WsPeer};
use crate::server::{bind_tcp, go_os_error, host_port, ListenError, Server, StartError};
use crate::tls::verify::{describe, noting_rejected_chain};

/// Go's `net/http` answer to a plain HTTP request on a TLS port (the first bytes where a TLS
/// record header should be read as an HTTP method): a 400 with its own text, and the log line
/// its TLS error gives. Returns true when it answered (the connection is then done). Only what
/// the first read brought is looked at, which for a request line is all of it.
async fn http_on_tls_port(stream: &mut TcpStream, addr: SocketAddr) -> bool {
    const METHODS: [&[u8]; 5] = [b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO"];
    const REPLY: &[u8] =
        b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
    let mut head = [0u8; 5];
    if !matches!(stream.peek(&mut head).await, Ok(5)) || !METHODS.contains(&&head[..]) {
        return false;
    }
    tracing::error!(
        "websocket: TLS handshake error from {addr}: client sent an HTTP request to an HTTPS \
         server"
    );
    let _ = tokio::io::AsyncWriteExt::write_all(stream, REPLY).await;
    let _ = tokio::io::AsyncWriteExt::shutdown(stream).await;
    true
}

impl Server {
    /// Binds the websocket port and starts accepting, when the configuration has a websocket
    /// block. Logs Go's lines; returns the bound address.
    pub async fn listen_websocket(&self) -> Result<Option<SocketAddr>, StartError> {
        let Some(ws) = self.config().websocket.clone() else {
            return Ok(None);
        };
        let fail = |cause: ListenError| {
            StartError::Config(format!(
                "Unable to listen for websocket connections: {}",
                cause.0
            ))
        };
        let listener = bind_tcp(&ws.host, ws.port).await.map_err(fail)?;
        let bound = listener
            .local_addr()
            .map_err(|e| fail(ListenError(go_os_error(&e))))?;
        *self.shared.ws_addr.lock() = Some(bound);
        let scheme = if ws.tls.is_some() { "wss" } else { "ws" };
        tracing::info!(
            "Listening for websocket clients on {scheme}://{}",
            host_port(&ws.host, bound.port())
        );
        if ws.tls.is_none() {
            tracing::warn!("Websocket not configured with TLS. DO NOT USE IN PRODUCTION!");
        }
        let server = self.clone();
        self.shared
            .conn_tracker
            .spawn(async move { server.ws_accept_loop(listener, ws).await });
        Ok(Some(bound))
    }

    /// The bound websocket address, once listening.
    pub fn websocket_addr(&self) -> Option<SocketAddr> {
        *self.shared.ws_addr.lock()
    }

    async fn ws_accept_loop(self, listener: TcpListener, ws: Arc<WsConfig>) {
        self.clone()
            .accept_until_stopped(&listener, "websocket", |stream, addr| {
                let _ = stream.set_nodelay(true);
                let server = self.clone();
                // The block in force: a reload may have changed its TLS settings (the only
                // part of it a reload may change).
                let ws = server
                    .config()
                    .websocket
                    .clone()
                    .unwrap_or_else(|| Arc::clone(&ws));
                self.shared
                    .conn_tracker
                    .spawn(async move { server.run_ws(stream, addr, ws).await });
            })
            .await;
    }

    /// One accepted websocket socket: TLS and the upgrade within the handshake timeout, then a
    /// client connection.
    async fn run_ws(self, stream: TcpStream, addr: SocketAddr, ws: Arc<WsConfig>) {
        let deadline = tokio::time::Instant::now() + ws.handshake_deadline();
        let shutdown = self.shared.connections.clone();
        match &ws.tls {
            None => {
                let mut stream = stream;
                let upgraded = tokio::select! {
                    () = shutdown.cancelled() => None,
                    up = tokio::time::timeout_at(
                        deadline,
                        upgrade::handshake(&mut stream, &ws.handshake, addr),
                    ) => up.ok().flatten(),
                };
                if let Some(up) = upgraded {
                    let (read_half, write_half) = stream.into_split();
                    self.ws_client(read_half, write_half, addr, up, ws, None)
                        .await;
                }
            }
            Some(tls) => {
                let acceptor = TlsAcceptor::from(Arc::clone(&tls.config));
                let accept = async {
                    let mut stream = stream;
                    if http_on_tls_port(&mut stream, addr).await {
                        return None;
                    }
                    let local = stream.local_addr().unwrap_or(addr);
                    let (accepted, chain) = noting_rejected_chain(acceptor.accept(stream)).await;
                    let mut stream = match accepted {
                        Ok(s) => s,
                        Err(err) => {
                            let text = describe(&err, local, addr, &chain);
                            tracing::error!("websocket: TLS handshake error from {addr}: {text}");
                            return None;
                        }
                    };
                    let up = upgrade::handshake(&mut stream, &ws.handshake, addr).await?;
                    let tls_info = crate::kit::tls::connection_info(&stream, false);
                    Some((stream, up, tls_info))
                };
                let upgraded = tokio::select! {
                    () = shutdown.cancelled() => None,
                    up = tokio::time::timeout_at(deadline, accept) => up.ok().flatten(),
                };
                if let Some((stream, up, tls_info)) = upgraded {
                    let (read_half, write_half) = tokio::io::split(stream);
                    self.ws_client(read_half, write_half, addr, up, ws, tls_info)
                        .await;
                }
            }
        }
    }

    /// Runs the client connection an upgrade opened (only NATS clients: `/mqtt` is refused by
    /// the handshake and `/leafnode` closes, as Go does without leafnodes configured).
    async fn ws_client<R, W>(
        &self,
        read_half: R,
        write_half: W,
        addr: SocketAddr,
        up: Box<Upgrade>,
        ws: Arc<WsConfig>,
        tls_info: Option<crate::tls::TlsConnInfo>,
    ) where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        if up.kind != natrium_ws::Kind::Client {
            tracing::error!("Not configured to accept leaf node connections");
            return;
        }
        let config = self.config();
        let peer = WsPeer {
            client_ip: up.client_ip,
        };
        let handle = self.new_websocket_connection(addr, config.max_pending, peer);
        if let Some(info) = tls_info {
            handle.set_tls(info);
        }
        let (reader, writer_sink) =
            crate::kit::ws::transport(read_half, write_half, &handle, &up, config.max_payload);
        // Only the cookies outlive the upgrade; the rest (its response bytes) goes now rather
        // than stay with the connection.
        let session = Box::new(WsSession {
            config: ws,
            cookies: Upgrade::into_cookies(up),
        });
        let nonce = greet(self, &handle);
        tracing::debug!("{} - Client connection created", handle.log_prefix());
        let writer = spawn_writer(&handle, writer_sink, config.write_deadline);
        if !self.register(&handle) {
            refuse_max_connections(&handle);
            let _ = writer.await;
            finish(self, &handle);
            return;
        }
        serve(self.clone(), handle, nonce, reader, writer, Some(session)).await;
    }
}
