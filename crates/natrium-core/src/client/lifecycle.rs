//! The start and end of a client connection's life, shared by the plain, TLS and websocket
//! paths: the greeting INFO, the writer task, the refusal at `max_connections`, the closing
//! record (`/connz?state=closed` and the disconnect event) and the unregistering.

use std::sync::Arc;
use std::time::Duration;

use nats_proto::WireError;
use tokio::task::JoinHandle;

use super::handle::ClientHandle;
use super::io::OutSink;
use super::writer::{run_writer, WriterFailure};
use super::ClosedReason;
use crate::closed::ClosedConn;
use crate::events::{ConnectedClient, ServerEvent};
use crate::info::Info;
use crate::server::Server;

/// Queues the INFO a new client is greeted with; returns its nonce (empty when none).
pub(crate) fn greet(server: &Server, handle: &ClientHandle) -> String {
    let info = first_info(server, handle);
    handle.send_proto(&info.to_frame());
    handle.out.flush();
    info.nonce
}

/// The INFO a new client is greeted with, with a fresh nonce when authentication signs one.
pub(crate) fn first_info(server: &Server, handle: &ClientHandle) -> Info {
    let mut info = server.client_info_for(handle);
    if server.config().auth.nonce_required() {
        info.nonce = new_nonce();
    }
    info
}

/// Starts the writer task on `socket`.
pub fn spawn_writer<W>(
    handle: &Arc<ClientHandle>,
    socket: W,
    write_deadline: Duration,
) -> JoinHandle<Option<WriterFailure>>
where
    W: OutSink + 'static,
{
    tokio::spawn(run_writer(Arc::clone(handle), socket, write_deadline))
}

/// Go's answer when max_connections is reached: an -ERR, then the connection closes.
pub(crate) fn refuse_max_connections(handle: &ClientHandle) {
    tracing::error!("{} - Maximum connections exceeded", handle.log_prefix());
    handle.send_err(&WireError::MaxConnectionsExceeded);
    handle.close(ClosedReason::MaxConnectionsExceeded);
}

/// Unregisters a connection and logs why it closed.
pub(crate) fn finish(server: &Server, handle: &ClientHandle) {
    server.unregister(handle.cid);
    let why = handle.closed_reason().unwrap_or(ClosedReason::ClientClosed);
    tracing::debug!(
        "{} - Client connection closed: {}",
        handle.log_prefix(),
        why.as_str()
    );
}

impl Server {
    /// Keeps a snapshot of a closing client (with its subscriptions) for `/connz`, and
    /// reports the close to the events listener, if there is one: as Go does, every client is
    /// reported, in `$G` when it never logged into an account, and one refused at
    /// authentication is reported as such first.
    pub(crate) fn record_closed(&self, client: &ClientHandle) {
        let shared = &self.shared;
        if !shared.closed.is_enabled() && !shared.events.is_listened() {
            return;
        }
        let snapshot = ClosedConn::snapshot(client);
        shared.closed.push(Arc::clone(&snapshot));
        if !shared.events.is_listened() {
            return;
        }
        if snapshot.reason == ClosedReason::AuthenticationViolation {
            shared
                .events
                .emit(ServerEvent::AuthFailed(Arc::clone(&snapshot)));
        }
        shared.events.emit(ServerEvent::Disconnected(snapshot));
    }

    /// Reports a client that completed CONNECT to the events listener.
    pub(crate) fn client_connected(&self, client: &ClientHandle) {
        let events = &self.shared.events;
        if events.is_listened() {
            events.emit(ServerEvent::Connected(ConnectedClient::of(client)));
        }
    }
}

/// Go's INFO nonce: 11 random bytes in unpadded URL-safe base64 (15 characters).
fn new_nonce() -> String {
    use base64::Engine as _;
    let mut raw = [0u8; 11];
    if getrandom::getrandom(&mut raw).is_err() {
        // No OS randomness: fall back to the process PRNG rather than refuse every client.
        for b in &mut raw {
            *b = fastrand::u8(..);
        }
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}
