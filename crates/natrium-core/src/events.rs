//! Lifecycle events for whoever reports them (the system account's event publisher): a
//! connection that finished CONNECT, one that closed, one refused at authentication, and the
//! server entering lame duck mode or shutting down. The runtime only queues them; it does not
//! know how they are formatted or where they go.
//!
//! The queue is bounded (`CLIENT_EVENTS_QUEUED_MAX`); when it is full, events are dropped and
//! counted rather than making a connecting or closing client wait. Without a listener nothing
//! is built or queued. Shutdown alone waits, briefly (`SHUTDOWN_EVENT_WAIT`), for its event to
//! be published, so that subscribers get it before their connections close.
//!
//! Message trace events travel the same queue: Go too publishes them from its system event
//! loop, stamped with the server's identity and event sequence.
//!
//! The server's side (which events a closing client causes) is here too, as `impl Server`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::{mpsc, oneshot};

use crate::client::{ClientHandle, ClosedReason};
use crate::closed::ClosedConn;
use crate::limits::{CLIENT_EVENTS_QUEUED_MAX, SHUTDOWN_EVENT_WAIT};
use crate::Server;

pub enum ClientEvent {
    Connected(Box<ConnectedClient>),
    Disconnected(Arc<ClosedConn>),
    /// A client refused at authentication (its close is reported as `Disconnected` too).
    AuthFailed(Arc<ClosedConn>),
    /// Lame duck mode began.
    LameDuck,
    /// The server is about to close every connection: report it, then answer.
    ShuttingDown(oneshot::Sender<()>),
    /// A traced message's event, to publish in its account (see `crate::deliver::trace`).
    MsgTrace(Box<crate::deliver::trace::TraceReport>),
}

/// What a connect event reports: a small copy, so that a queued event never keeps a
/// connection's buffers alive.
pub struct ConnectedClient {
    pub cid: u64,
    pub addr: std::net::SocketAddr,
    pub started: chrono::DateTime<chrono::Utc>,
    pub meta: crate::client::ClientMeta,
    pub account: String,
    pub client_type: &'static str,
}

impl ConnectedClient {
    pub fn of(handle: &ClientHandle) -> Box<Self> {
        Box::new(Self {
            cid: handle.cid,
            addr: handle.addr,
            started: handle.started,
            meta: handle.meta.lock().clone(),
            account: handle.account_name(),
            client_type: handle.client_type(),
        })
    }
}

#[derive(Default)]
pub struct EventHook {
    tx: OnceLock<mpsc::Sender<ClientEvent>>,
    dropped: AtomicU64,
}

impl EventHook {
    /// The receiving end, for the first caller only.
    pub fn listen(&self) -> Option<mpsc::Receiver<ClientEvent>> {
        let (tx, rx) = mpsc::channel(CLIENT_EVENTS_QUEUED_MAX);
        self.tx.set(tx).ok().map(|()| rx)
    }

    pub fn is_listened(&self) -> bool {
        self.tx.get().is_some()
    }

    pub fn emit(&self, event: ClientEvent) {
        if let Some(tx) = self.tx.get() {
            if tx.try_send(event).is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Events lost to a full queue.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Queues the shutdown event behind those already queued and waits until the listener
    /// has published it, or `SHUTDOWN_EVENT_WAIT` has passed, or the listener is gone.
    pub async fn announce_shutdown(&self) {
        let Some(tx) = self.tx.get() else { return };
        let (done, published) = oneshot::channel();
        let wait = async {
            if tx.send(ClientEvent::ShuttingDown(done)).await.is_ok() {
                let _ = published.await;
            }
        };
        let _ = tokio::time::timeout(SHUTDOWN_EVENT_WAIT, wait).await;
    }
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
                .emit(ClientEvent::AuthFailed(Arc::clone(&snapshot)));
        }
        shared.events.emit(ClientEvent::Disconnected(snapshot));
    }

    /// Reports a client that completed CONNECT to the events listener.
    pub(crate) fn client_connected(&self, client: &ClientHandle) {
        let events = &self.shared.events;
        if events.is_listened() {
            events.emit(ClientEvent::Connected(ConnectedClient::of(client)));
        }
    }

    /// Lifecycle events from now on, for the first caller only.
    pub fn client_events(&self) -> Option<mpsc::Receiver<ClientEvent>> {
        self.shared.events.listen()
    }

    /// The live connection with client id `cid` (a request handler's requester).
    pub fn client(&self, cid: u64) -> Option<Arc<ClientHandle>> {
        self.shared.clients.lock().get(&cid).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn events_shutdown_waits_for_the_listener() {
        let hook = EventHook::default();
        // Nobody listens: nothing to wait for.
        hook.announce_shutdown().await;
        let Some(mut rx) = hook.listen() else {
            unreachable!("first listener")
        };
        hook.emit(ClientEvent::LameDuck);
        let listener = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(event) = rx.recv().await {
                match event {
                    ClientEvent::ShuttingDown(done) => {
                        seen.push("shutdown");
                        let _ = done.send(());
                        return seen;
                    }
                    ClientEvent::LameDuck => seen.push("ldm"),
                    _ => seen.push("other"),
                }
            }
            seen
        });
        hook.announce_shutdown().await;
        let seen = listener.await.unwrap_or_default();
        assert_eq!(seen, ["ldm", "shutdown"]);
    }
}
