//! Closed connections for `/connz?state=closed`: a bounded ring of snapshots taken when a
//! client goes away, oldest dropped first once `max_closed_clients` are kept (Go's default
//! 10000; 0 keeps none).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::client::{ClientHandle, ClientMeta, ClosedReason};
use crate::endpoint::Subscription;

/// One subscription as it was when its connection closed.
#[derive(Debug, Clone)]
pub struct SubSnapshot {
    pub subject: String,
    pub queue: Option<String>,
    pub sid: String,
    pub msgs: u64,
    pub max: u64,
}

/// What monitoring reports about a connection that has closed.
#[derive(Debug, Clone)]
pub struct ClosedConn {
    pub cid: u64,
    pub addr: SocketAddr,
    pub meta: ClientMeta,
    pub started: chrono::DateTime<chrono::Utc>,
    pub stopped: chrono::DateTime<chrono::Utc>,
    pub last_activity: chrono::DateTime<chrono::Utc>,
    pub rtt_nanos: u64,
    pub reason: ClosedReason,
    pub in_msgs: u64,
    pub in_bytes: u64,
    pub out_msgs: u64,
    pub out_bytes: u64,
    pub subs: Vec<SubSnapshot>,
    /// What the connection negotiated, without its peer certificates (kept small: the ring
    /// holds up to `max_closed_clients` of these).
    pub tls: Option<TlsSummary>,
    /// Go's client type: `nats` or `websocket`.
    pub client_type: &'static str,
    /// The account the client was logged into.
    pub account: String,
}

/// The TLS facts `/connz` shows for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsSummary {
    pub version: &'static str,
    pub cipher_suite: &'static str,
    pub handshake_first: bool,
}

impl TlsSummary {
    pub fn of(handle: &ClientHandle) -> Option<Self> {
        handle.tls().map(|t| Self {
            version: t.version,
            cipher_suite: t.cipher_suite,
            handshake_first: t.handshake_first,
        })
    }
}

impl SubSnapshot {
    /// One live subscription as monitoring shows it.
    pub fn of(sub: &Subscription) -> Self {
        Self {
            subject: String::from_utf8_lossy(&sub.subject).into_owned(),
            queue: sub
                .queue
                .as_deref()
                .map(|q| String::from_utf8_lossy(q).into_owned()),
            sid: String::from_utf8_lossy(&sub.sid).into_owned(),
            msgs: sub.delivered.load(Ordering::Relaxed),
            max: sub.max_msgs.load(Ordering::Relaxed),
        }
    }
}

/// Snapshots the subscriptions of a live connection (sorted by nothing in particular).
pub fn snapshot_subs(handle: &ClientHandle) -> Vec<SubSnapshot> {
    handle
        .subs
        .lock()
        .values()
        .map(|sub| SubSnapshot::of(sub))
        .collect()
}

/// The ring itself; O(1) under its lock (the snapshot is built before locking).
pub struct ClosedRing {
    cap: usize,
    ring: Mutex<VecDeque<Arc<ClosedConn>>>,
}

impl ClosedRing {
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            ring: Mutex::new(VecDeque::new()),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.cap != 0
    }

    pub fn record(&self, handle: &ClientHandle) {
        if self.cap != 0 {
            self.push(ClosedConn::snapshot(handle));
        }
    }

    pub fn push(&self, snapshot: Arc<ClosedConn>) {
        if self.cap == 0 {
            return;
        }
        let mut ring = self.ring.lock();
        if ring.len() >= self.cap {
            ring.pop_front();
        }
        ring.push_back(snapshot);
    }

    /// Oldest first.
    pub fn list(&self) -> Vec<Arc<ClosedConn>> {
        self.ring.lock().iter().cloned().collect()
    }
}

impl ClosedConn {
    /// What a closing connection looked like; built before any lock is taken.
    pub fn snapshot(handle: &ClientHandle) -> Arc<Self> {
        let (out_msgs, out_bytes) = handle.out.out_counts();
        Arc::new(ClosedConn {
            cid: handle.cid,
            addr: handle.addr,
            meta: handle.meta.lock().clone(),
            started: handle.started,
            stopped: chrono::Utc::now(),
            last_activity: handle.activity.last(handle.started),
            rtt_nanos: handle.activity.rtt_nanos(),
            reason: handle.closed_reason().unwrap_or(ClosedReason::ClientClosed),
            in_msgs: handle.in_msgs.load(Ordering::Relaxed),
            in_bytes: handle.in_bytes.load(Ordering::Relaxed),
            out_msgs,
            out_bytes,
            subs: snapshot_subs(handle),
            tls: TlsSummary::of(handle),
            client_type: handle.client_type(),
            account: handle.account_name(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_util::sync::CancellationToken;

    fn handle(cid: u64) -> ClientHandle {
        let addr = SocketAddr::from(([127, 0, 0, 1], 4222));
        ClientHandle::new(cid, addr, 1024, CancellationToken::new())
    }

    #[test]
    fn monitor_closed_ring_keeps_the_last_ones() {
        let ring = ClosedRing::new(3);
        for cid in 1..=5 {
            let h = handle(cid);
            h.close(ClosedReason::StaleConnection);
            ring.record(&h);
        }
        let cids: Vec<u64> = ring.list().iter().map(|c| c.cid).collect();
        assert_eq!(cids, [3, 4, 5]);
        assert!(ring
            .list()
            .iter()
            .all(|c| c.reason == ClosedReason::StaleConnection));
    }

    #[test]
    fn monitor_closed_ring_zero_keeps_none() {
        let ring = ClosedRing::new(0);
        ring.record(&handle(1));
        assert!(ring.list().is_empty());
    }
}
