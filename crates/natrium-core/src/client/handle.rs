//! The part of a client connection other tasks may touch: its outbound buffer, the close
//! signal, the account it is in, and what monitoring reports about it.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use nats_proto::WireError;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use tokio_util::sync::CancellationToken;

use super::activity::Activity;
use super::allow_responses::Responses;
use super::closed_reason::ClosedReason;
use super::outbound::{Enqueued, Outbound};
use super::stored_auth::StoredAuth;
use crate::account::Account;
use crate::endpoint::Subscription;
use crate::tls::{PeerCert, TlsConnInfo};

/// What a client said about itself in CONNECT, for logs and monitoring.
#[derive(Debug, Clone, Default)]
pub struct ClientMeta {
    /// CONNECT `protocol`: 1 means the client understands asynchronous INFO (lame duck).
    pub protocol: i64,
    pub name: String,
    pub lang: String,
    pub version: String,
    /// Who the client authenticated as, as Go's `/connz?auth=1` shows it (`authorized_user`):
    /// the nkey, user name or `[REDACTED]` for a token that CONNECT carried, the
    /// `no_auth_user`, or the user a certificate mapped to. Kept for refused clients too.
    pub auth_user: String,
}

/// The part of a connection shared with other tasks.
pub struct ClientHandle {
    pub cid: u64,
    pub addr: SocketAddr,
    pub out: Outbound,
    /// Cancelled when the connection must close; both tasks watch it.
    pub closing: CancellationToken,
    reason: Mutex<Option<ClosedReason>>,
    pub meta: Mutex<ClientMeta>,
    pub in_msgs: AtomicU64,
    pub in_bytes: AtomicU64,
    /// Subscriptions by sid. Shared because a publisher that delivers a subscription's last
    /// auto-unsubscribe message removes it here too.
    pub subs: Mutex<FxHashMap<Box<[u8]>, Arc<Subscription>>>,
    pub started: chrono::DateTime<chrono::Utc>,
    /// Set once, when a TLS handshake completes. Boxed, as is `responses`: most connections
    /// have neither, and every byte here is held by every connection.
    tls: OnceLock<Box<TlsConnInfo>>,
    /// Last activity and round-trip time, for monitoring.
    pub activity: Activity,
    /// Set at CONNECT: the credentials (for re-checking after a reload) and the permissions
    /// in force. Lock order: `subs` before `auth`.
    pub(crate) auth: Mutex<Option<StoredAuth>>,
    /// A reload replaced the permissions in `auth`: the read loop takes them at its next event.
    pub(crate) perms_changed: AtomicBool,
    /// Set at CONNECT for a user with `allow_responses`: the reply subjects it may publish to,
    /// recorded by publishers as they deliver requests to it.
    pub(crate) responses: OnceLock<Box<Responses>>,
    /// Set for a client that came through the websocket listener.
    websocket: Option<WsPeer>,
    /// What Go's log prefix adds after the first CONNECT: ` - "v1.2:lang:name" - "ACC/user:u"`
    /// (either part only when known); see [`ClientHandle::log_prefix`].
    log_tag: OnceLock<Box<str>>,
    /// The account the client logged into at CONNECT; unset means `$G`. A repeated CONNECT as
    /// a user of another account moves the connection (as Go re-runs the login), so it can
    /// change; read only off the delivery hot path.
    account: arc_swap::ArcSwapOption<Account>,
    /// Whether the client takes messages with headers (CONNECT `headers`); others get the
    /// payload alone, as Go delivers to them.
    headers: AtomicBool,
}

/// What a websocket client's upgrade request said about where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WsPeer {
    /// The `X-Forwarded-For` address, when the request had a valid one. Go shows it in log
    /// lines only; INFO and `/connz` keep the socket's address.
    pub client_ip: Option<IpAddr>,
}

impl ClientHandle {
    pub fn new(cid: u64, addr: SocketAddr, max_pending: usize, closing: CancellationToken) -> Self {
        Self {
            cid,
            addr,
            out: Outbound::new(max_pending),
            closing,
            reason: Mutex::new(None),
            meta: Mutex::new(ClientMeta::default()),
            in_msgs: AtomicU64::new(0),
            in_bytes: AtomicU64::new(0),
            subs: Mutex::new(FxHashMap::default()),
            started: chrono::Utc::now(),
            tls: OnceLock::new(),
            activity: Activity::default(),
            auth: Mutex::new(None),
            perms_changed: AtomicBool::new(false),
            responses: OnceLock::new(),
            websocket: None,
            log_tag: OnceLock::new(),
            account: arc_swap::ArcSwapOption::empty(),
            headers: AtomicBool::new(false),
        }
    }

    /// The permissions in force for the client (`None`: unrestricted, or not yet connected).
    pub fn permissions(&self) -> Option<Arc<natrium_auth::ClientPermissions>> {
        self.auth.lock().as_ref().and_then(|a| a.perms.clone())
    }

    /// The user JWT the client authenticated with, if any.
    pub fn user_jwt(&self) -> Option<String> {
        self.auth.lock().as_ref().and_then(|a| a.opts.jwt.clone())
    }

    /// The account the client logged into (`None` before CONNECT: the global account).
    pub fn account(&self) -> Option<Arc<Account>> {
        self.account.load_full()
    }

    /// The name of the client's account.
    pub fn account_name(&self) -> String {
        self.account
            .load()
            .as_ref()
            .map_or(crate::account::GLOBAL_ACCOUNT, |a| a.name.as_str())
            .to_owned()
    }

    pub(crate) fn set_account(&self, account: Arc<Account>) {
        self.account.store(Some(account));
    }

    /// Leaves the account (a repeated CONNECT moving to another one); the connection counts
    /// in no account until it joins the next.
    pub(crate) fn clear_account(&self) {
        self.account.store(None);
    }

    /// Whether messages with headers may be delivered to this client as they are.
    #[inline]
    pub fn accepts_headers(&self) -> bool {
        self.headers.load(Ordering::Relaxed)
    }

    pub(crate) fn set_accepts_headers(&self, on: bool) {
        self.headers.store(on, Ordering::Relaxed);
    }

    /// A handle for a client that arrived through the websocket listener.
    pub fn new_websocket(
        cid: u64,
        addr: SocketAddr,
        max_pending: usize,
        closing: CancellationToken,
        peer: WsPeer,
    ) -> Self {
        Self {
            websocket: Some(peer),
            ..Self::new(cid, addr, max_pending, closing)
        }
    }

    /// Set for a websocket client.
    pub fn websocket(&self) -> Option<&WsPeer> {
        self.websocket.as_ref()
    }

    /// Go's client type as `/connz` reports it: `nats` or `websocket`.
    pub fn client_type(&self) -> &'static str {
        if self.websocket.is_some() {
            "websocket"
        } else {
            "nats"
        }
    }

    /// What the TLS handshake negotiated; `None` for a plain connection (or before the
    /// handshake has completed).
    pub fn tls(&self) -> Option<&TlsConnInfo> {
        self.tls.get().map(Box::as_ref)
    }

    /// The client's certificate, verified against the configured CAs when `verify` is on.
    /// This is what `verify_and_map` maps to a user: Go tries the certificate's email
    /// addresses, then DNS names, then URIs, then the subject ([`PeerCert::subject_rdn`], with
    /// domain components from [`PeerCert::subject_rdns`]) against the configured user names.
    pub fn peer_certificate(&self) -> Option<&PeerCert> {
        self.tls().and_then(TlsConnInfo::peer_certificate)
    }

    /// The `allow_responses` state, for a client that has it.
    pub fn responses(&self) -> Option<&Responses> {
        self.responses.get().map(Box::as_ref)
    }

    pub(crate) fn set_tls(&self, info: TlsConnInfo) {
        let _ = self.tls.set(Box::new(info));
    }

    /// Closes a client whose queued bytes would pass `max_pending` (messages and protocol
    /// replies alike), with Go's log line. Returns whether this call closed it. The counters
    /// are added when the connection's task ends (`conn::serve`), once for either path.
    pub(crate) fn close_slow_consumer(&self) -> bool {
        if !self.close(ClosedReason::SlowConsumerPendingBytes) {
            return false;
        }
        tracing::info!(
            "{} - Slow Consumer Detected: MaxPending of {} Exceeded",
            self.log_prefix(),
            self.out.max_pending()
        );
        true
    }

    /// Queues a protocol line (PONG, `+OK`, `-ERR`, INFO, PING). Its bytes count toward
    /// `max_pending` as messages' do, as in Go: a client that pipelines PINGs (or anything
    /// answered) and never reads is cut as a slow consumer instead of making the server hold
    /// its replies. Returns whether the line was queued.
    pub fn send_proto(&self, line: &[u8]) -> bool {
        match self.out.enqueue_proto(line) {
            Enqueued::Queued | Enqueued::QueuedStall => true,
            Enqueued::SlowConsumer => {
                self.close_slow_consumer();
                false
            }
            Enqueued::Closed => false,
        }
    }

    /// Starts closing the connection; the first reason given wins. Returns true for that first
    /// call, so that side effects (logs, counters) happen once.
    pub fn close(&self, reason: ClosedReason) -> bool {
        let mut slot = self.reason.lock();
        if slot.is_some() {
            return false;
        }
        *slot = Some(reason);
        drop(slot);
        if !reason.flushes_on_close() {
            self.out.discard();
        }
        self.out.close();
        self.closing.cancel();
        true
    }

    pub fn closed_reason(&self) -> Option<ClosedReason> {
        *self.reason.lock()
    }

    /// The log prefix Go uses for a client: `ip:port - cid:N`; for a websocket client
    /// `ip:port - wid:N`, led by the `X-Forwarded-For` address when there is one
    /// (`1.2.3.4/127.0.0.1:5555 - wid:N`, IPv6 in brackets).
    /// After the first CONNECT, Go adds who the client is: its description from CONNECT and
    /// `account/user` (`… - cid:5 - "v1.2:python:svc" - "A/user:bob"`).
    pub fn log_prefix(&self) -> String {
        let tag = self.log_tag.get().map_or("", |t| &**t);
        match self.websocket {
            None => format!("{} - cid:{}{tag}", self.addr, self.cid),
            Some(WsPeer {
                client_ip: Some(IpAddr::V6(ip)),
            }) => format!("[{ip}]/{} - wid:{}{tag}", self.addr, self.cid),
            Some(WsPeer {
                client_ip: Some(ip),
            }) => format!("{ip}/{} - wid:{}{tag}", self.addr, self.cid),
            Some(WsPeer { client_ip: None }) => {
                format!("{} - wid:{}{tag}", self.addr, self.cid)
            }
        }
    }

    /// Sets the log prefix's tag (see [`ClientHandle::log_prefix`]); only the first CONNECT's
    /// counts, as in Go.
    pub(crate) fn set_log_tag(&self, tag: String) {
        if !tag.is_empty() {
            let _ = self.log_tag.set(tag.into_boxed_str());
        }
    }

    /// Queues Go's `-ERR` line for `err` and wakes the writer.
    pub(crate) fn send_err(&self, err: &WireError) {
        let mut line = Vec::with_capacity(64);
        err.write_frame(&mut line);
        self.send_proto(&line);
        self.out.flush();
    }

    pub fn add_in(&self, msgs: u64, bytes: u64) {
        if msgs != 0 {
            self.in_msgs.fetch_add(msgs, Ordering::Relaxed);
            self.in_bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every byte of these is held by every connection, idle or not (8.4 KB per idle client
    /// before this was watched, 3.5 KB after): a new field that is large and rarely used
    /// belongs behind a `Box` or an `Option<Box<_>>`.
    #[test]
    fn client_per_connection_structs_stay_small() {
        assert!(std::mem::size_of::<ClientHandle>() <= 832);
        assert!(std::mem::size_of::<super::super::readbuf::ReadBuf>() <= 64);
    }

    #[test]
    fn client_log_prefix_like_go() {
        let addr: SocketAddr = "127.0.0.1:5555".parse().unwrap();
        let token = CancellationToken::new;
        let ws = |ip: Option<&str>| {
            let peer = WsPeer {
                client_ip: ip.map(|s| s.parse().unwrap()),
            };
            ClientHandle::new_websocket(7, addr, 1024, token(), peer).log_prefix()
        };
        assert_eq!(
            ClientHandle::new(7, addr, 1024, token()).log_prefix(),
            "127.0.0.1:5555 - cid:7"
        );
        assert_eq!(ws(None), "127.0.0.1:5555 - wid:7");
        assert_eq!(ws(Some("1.2.3.4")), "1.2.3.4/127.0.0.1:5555 - wid:7");
        assert_eq!(ws(Some("::1")), "[::1]/127.0.0.1:5555 - wid:7");
        assert_eq!(ClientHandle::new(1, addr, 1, token()).client_type(), "nats");
    }
}
