//! Server events for whoever listens: a connection that finished CONNECT, one that closed,
//! one refused at authentication, the server entering lame duck mode or shutting down, an
//! account created, reloaded or removed by a configuration reload, and a traced message's
//! event. The runtime only queues them; it does not know how they are formatted or where they
//! go. Any number of listeners may register ([`Server::events`]); each gets every event.
//!
//! Each listener's queue is bounded (`CLIENT_EVENTS_QUEUED_MAX`); when it is full, the event
//! is dropped for that listener and counted rather than making a connecting or closing client
//! wait. A listener that went away is forgotten at the next event. Without a listener nothing
//! is built or queued. Shutdown alone waits, briefly (`SHUTDOWN_EVENT_WAIT`), until every
//! listener has handled its event, so that subscribers get it before their connections close.
//!
//! Message trace events travel the same queues: Go too publishes them from its system event
//! loop, stamped with the server's identity and event sequence.
//!
//! The server's side (which events a closing client causes) is here too, as `impl Server`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use tokio::sync::mpsc;

use crate::account::Account;
use crate::client::ClientHandle;
use crate::closed::ClosedConn;
use crate::limits::{CLIENT_EVENTS_QUEUED_MAX, SHUTDOWN_EVENT_WAIT};

/// One event, shared by every listener.
#[derive(Clone)]
pub enum ServerEvent {
    Connected(Arc<ConnectedClient>),
    Disconnected(Arc<ClosedConn>),
    /// A client refused at authentication (its close is reported as `Disconnected` too).
    AuthFailed(Arc<ClosedConn>),
    /// Lame duck mode began.
    LameDuck,
    /// The server is about to close every connection: handle it, then acknowledge.
    ShuttingDown(ShutdownAck),
    /// A traced message's event, to publish in its account (see `crate::deliver::trace`).
    MsgTrace(Arc<crate::deliver::trace::TraceReport>),
    /// An account's life, as a reload changes it (accounts made at start are not reported).
    Account(AccountEvent),
}

/// What happened to an account.
#[derive(Clone)]
pub enum AccountEvent {
    /// New, and can be logged into from now on.
    Created(Arc<Account>),
    /// Kept through a reload that changed the accounts: same subscriptions and clients, its
    /// definition (exports, imports, limits) as now configured.
    Reloaded(Arc<Account>),
    /// Gone from the configuration; its clients are closed or moved by the reload.
    Removed(Arc<Account>),
}

/// A listener's acknowledgement of the shutdown event: dropping it (or calling
/// [`ShutdownAck::done`]) says the listener has handled it.
#[derive(Clone)]
pub struct ShutdownAck(#[allow(dead_code)] mpsc::Sender<()>);

impl ShutdownAck {
    pub fn done(self) {}
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
    pub fn of(handle: &ClientHandle) -> Arc<Self> {
        Arc::new(Self {
            cid: handle.cid,
            addr: handle.addr,
            started: handle.started,
            meta: handle.meta.lock().clone(),
            account: handle.account_name(),
            client_type: handle.client_type(),
        })
    }
}

/// The listeners' queues.
#[derive(Default)]
pub struct EventHook {
    listeners: RwLock<Vec<mpsc::Sender<ServerEvent>>>,
    /// Whether any listener is registered: one relaxed load when nobody listens.
    listened: AtomicBool,
    dropped: AtomicU64,
}

impl EventHook {
    /// A new listener: every event from now on arrives on the returned receiver.
    pub fn listen(&self) -> mpsc::Receiver<ServerEvent> {
        let (tx, rx) = mpsc::channel(CLIENT_EVENTS_QUEUED_MAX);
        self.listeners.write().push(tx);
        self.listened.store(true, Ordering::Relaxed);
        rx
    }

    pub fn is_listened(&self) -> bool {
        self.listened.load(Ordering::Relaxed)
    }

    pub fn emit(&self, event: ServerEvent) {
        if !self.is_listened() {
            return;
        }
        let mut gone = false;
        let listeners = self.listeners.read();
        // Each listener gets a clone but the last, which gets the event itself.
        let mut event = Some(event);
        for (i, tx) in listeners.iter().enumerate() {
            let one = if i + 1 == listeners.len() {
                event.take()
            } else {
                event.clone()
            };
            let Some(one) = one else { break };
            match tx.try_send(one) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(mpsc::error::TrySendError::Closed(_)) => gone = true,
            }
        }
        drop(listeners);
        if gone {
            let mut listeners = self.listeners.write();
            listeners.retain(|tx| !tx.is_closed());
            self.listened
                .store(!listeners.is_empty(), Ordering::Relaxed);
        }
    }

    /// Events lost to a full queue (counted once per listener that missed one).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Queues the shutdown event behind those already queued and waits until every listener
    /// has handled it, or `SHUTDOWN_EVENT_WAIT` has passed.
    pub async fn announce_shutdown(&self) {
        let listeners: Vec<_> = self.listeners.read().clone();
        if listeners.is_empty() {
            return;
        }
        let (ack, mut acked) = mpsc::channel::<()>(1);
        let wait = async {
            for tx in &listeners {
                let _ = tx
                    .send(ServerEvent::ShuttingDown(ShutdownAck(ack.clone())))
                    .await;
            }
            drop(ack);
            // Resolves once every acknowledgement has been dropped.
            let _ = acked.recv().await;
        };
        let _ = tokio::time::timeout(SHUTDOWN_EVENT_WAIT, wait).await;
    }
}

/// A fresh id for an event or advisory document (`id` of Go's `TypedEvent`): 22 random
/// base-62 characters, as Go's NUIDs look.
pub fn event_id() -> String {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..22)
        .filter_map(|_| {
            DIGITS
                .get(fastrand::usize(..DIGITS.len()))
                .copied()
                .map(char::from)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run_listener(mut rx: mpsc::Receiver<ServerEvent>) -> Vec<&'static str> {
        let mut seen = Vec::new();
        while let Some(event) = rx.recv().await {
            match event {
                ServerEvent::ShuttingDown(ack) => {
                    seen.push("shutdown");
                    ack.done();
                    return seen;
                }
                ServerEvent::LameDuck => seen.push("ldm"),
                _ => seen.push("other"),
            }
        }
        seen
    }

    #[tokio::test]
    async fn events_every_listener_gets_them_and_shutdown_waits_for_all() {
        let hook = EventHook::default();
        // Nobody listens: nothing to wait for.
        hook.announce_shutdown().await;
        let first = tokio::spawn(run_listener(hook.listen()));
        let second = tokio::spawn(run_listener(hook.listen()));
        // A listener that went away is forgotten.
        drop(hook.listen());
        hook.emit(ServerEvent::LameDuck);
        hook.announce_shutdown().await;
        for listener in [first, second] {
            assert_eq!(listener.await.unwrap_or_default(), ["ldm", "shutdown"]);
        }
        assert_eq!(hook.listeners.read().len(), 2);
    }
}
