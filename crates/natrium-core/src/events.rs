//! Client lifecycle events for whoever reports them (the system account's event publisher):
//! a connection that finished CONNECT, and one that closed. The runtime only queues them; it
//! does not know how they are formatted or where they go.
//!
//! The queue is bounded (`CLIENT_EVENTS_QUEUED_MAX`); when it is full, events are dropped and
//! counted rather than making a connecting or closing client wait. Without a listener nothing
//! is built or queued.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

use crate::client::ClientHandle;
use crate::closed::ClosedConn;
use crate::limits::CLIENT_EVENTS_QUEUED_MAX;

pub enum ClientEvent {
    Connected(Box<ConnectedClient>),
    Disconnected(Arc<ClosedConn>),
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
            account: handle.account_name().to_owned(),
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
}
