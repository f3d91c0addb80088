//! The server: identity, the client listener and accept loop, the registry of live clients,
//! lame duck mode and shutdown.
//!
//! Shutdown is one tree: the root token is cancelled, every connection's token is its child,
//! and all connection tasks are tracked so that shutdown waits for their final flushes. Lame duck
//! mode only *requests* shutdown when it is done; the binary then runs [`Server::shutdown`], so
//! that every way of stopping logs the same lines in the same order.
//!
//! Listening itself (Go's port check, dual-stack wildcard binds, Go's error texts) is in
//! [`crate::listen`], shared by every listener; its names are re-exported here.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rustc_hash::FxHashMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::account::{Account, Accounts};
use crate::client::{ClientHandle, ClosedReason};
use crate::config::CoreConfig;
use crate::events::ServerEvent;
use crate::info::{Info, InfoHead, COMPATIBLE_VERSION, PROTO_VERSION};
use crate::limits::INFO_HEADS_KEPT;
pub use crate::listen::{bind_tcp, go_os_error, host_port, ListenError};
use crate::stats::ServerStats;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Go: `Error listening on port: 127.0.0.1:4222, "listen tcp 127.0.0.1:4222: bind: address
    /// already in use"` (the cause is quoted with Go's `%q`).
    #[error("Error listening on port: {addr}, {:?}", .cause.0)]
    Listen { addr: String, cause: ListenError },
    #[error("{0}")]
    Config(String),
}

pub(crate) struct Shared {
    /// The settings in force; a reload swaps the whole `Arc`. Readers take a snapshot once per
    /// connection event (accept, CONNECT, a read batch that sees a new epoch), never per message.
    config: RwLock<Arc<CoreConfig>>,
    /// Bumped after every swap of `config`, so connections notice with one relaxed load.
    pub config_epoch: AtomicU64,
    /// When the configuration was last (re)loaded and the file's digest, for `/varz`.
    pub config_loaded: Mutex<ConfigLoaded>,
    pub server_id: String,
    /// Shared with every connection's publisher (a client's detailed request info names it).
    pub server_name: Arc<str>,
    pub stats: Arc<ServerStats>,
    /// Swapped whole by a reload that changes the accounts; `$G` and the system account are
    /// the same objects in every registry.
    accounts: RwLock<Arc<Accounts>>,
    /// Told whenever `accounts` is swapped (the expiry watcher re-reads it).
    pub(crate) accounts_changed: tokio::sync::Notify,
    /// `$G`, also reachable through `accounts`; kept apart for the common path.
    pub global: Arc<Account>,
    /// What [`Server::system_account`] returns under `no_system_account`.
    detached_system: Arc<Account>,
    pub clients: Mutex<FxHashMap<u64, Arc<ClientHandle>>>,
    next_cid: AtomicU64,
    /// Cancelled last in shutdown: services stop (see `crate::shutdown`).
    pub shutdown: CancellationToken,
    /// Cancelled when shutdown begins (it stops lame duck's pacing).
    pub(crate) shutdown_begun: CancellationToken,
    /// Parent of every connection's token (and of WebSocket handshakes): cancelled once
    /// shutdown has closed the clients, so that a connection still handshaking ends too.
    pub(crate) connections: CancellationToken,
    /// Connection tasks and the accept loops: shutdown waits for them before services drain.
    pub(crate) conn_tracker: TaskTracker,
    /// What services do between the last connection's end and their stop.
    pub(crate) drains: crate::shutdown::drains::DrainHooks,
    pub(crate) stop_accepting: CancellationToken,
    /// Cancelled once the accept loop has dropped the client listener.
    pub(crate) accept_stopped: CancellationToken,
    /// Cancelled when something (lame duck mode) asks the binary to shut the server down.
    shutdown_request: CancellationToken,
    lame_duck: AtomicBool,
    pub tracker: TaskTracker,
    pub started: chrono::DateTime<chrono::Utc>,
    pub(crate) client_addr: Mutex<Option<SocketAddr>>,
    /// The websocket listener's bound address, once listening.
    pub ws_addr: Mutex<Option<SocketAddr>>,
    pub closed: crate::closed::ClosedRing,
    pub events: crate::events::EventHook,
    /// Serialized INFO heads, newest last, at most `INFO_HEADS_KEPT` (see `crate::info`).
    info_heads: Mutex<Vec<Arc<InfoHead>>>,
    /// What in-process subsystems report to monitoring (`crate::report`).
    pub(crate) reports: crate::report::ReportSlot,
}

/// When and from what the configuration in force was loaded (Go's `config_load_time` and
/// `config_digest` in `/varz`).
#[derive(Debug, Clone)]
pub struct ConfigLoaded {
    pub at: chrono::DateTime<chrono::Utc>,
    /// `sha256:<hex>` of the file, empty without one.
    pub digest: String,
}

impl Shared {
    /// A new connection id; ids are shared by every kind of client connection.
    pub(crate) fn next_cid(&self) -> u64 {
        self.next_cid.fetch_add(1, Ordering::Relaxed)
    }
}

/// A running (or about to run) server. Cheap to clone: all clones drive the same server.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<Shared>,
}

/// What the binary keeps to stop the server.
pub type ServerHandle = Server;

impl Server {
    pub fn new(config: CoreConfig) -> Result<Self, StartError> {
        // The listen host is resolved by `listen`, after the banner, as Go does.
        if config.max_payload > config.max_pending {
            return Err(StartError::Config(format!(
                "max_payload ({}) cannot be higher than max_pending ({})",
                config.max_payload, config.max_pending
            )));
        }
        let server_id = nkeys::KeyPair::new_server().public_key();
        let server_name: Arc<str> = if config.server_name.is_empty() {
            Arc::from(server_id.as_str())
        } else {
            Arc::from(config.server_name.as_str())
        };
        let closed_cap = config.max_closed_clients;
        let accounts = Accounts::build(&config).map_err(|e| StartError::Config(e.to_string()))?;
        let global = Arc::clone(accounts.global());
        let started = chrono::Utc::now();
        let shutdown = CancellationToken::new();
        Ok(Self {
            shared: Arc::new(Shared {
                config: RwLock::new(Arc::new(config)),
                config_epoch: AtomicU64::new(0),
                config_loaded: Mutex::new(ConfigLoaded {
                    at: started,
                    digest: String::new(),
                }),
                server_id,
                server_name,
                stats: Arc::new(ServerStats::default()),
                accounts: RwLock::new(Arc::new(accounts)),
                accounts_changed: tokio::sync::Notify::new(),
                global,
                detached_system: Arc::new(Account::new(crate::account::SYSTEM_ACCOUNT, false)),
                clients: Mutex::new(FxHashMap::default()),
                next_cid: AtomicU64::new(1),
                shutdown_begun: CancellationToken::new(),
                connections: shutdown.child_token(),
                conn_tracker: TaskTracker::new(),
                drains: crate::shutdown::drains::DrainHooks::default(),
                shutdown,
                stop_accepting: CancellationToken::new(),
                accept_stopped: CancellationToken::new(),
                shutdown_request: CancellationToken::new(),
                lame_duck: AtomicBool::new(false),
                tracker: TaskTracker::new(),
                started,
                client_addr: Mutex::new(None),
                ws_addr: Mutex::new(None),
                closed: crate::closed::ClosedRing::new(closed_cap),
                events: crate::events::EventHook::default(),
                info_heads: Mutex::new(Vec::new()),
                reports: crate::report::ReportSlot::default(),
            }),
        })
    }

    /// Server events from now on, for a new listener.
    pub fn events(&self) -> mpsc::Receiver<ServerEvent> {
        self.shared.events.listen()
    }

    /// The live connection with client id `cid` (a request handler's requester).
    pub fn client(&self, cid: u64) -> Option<Arc<ClientHandle>> {
        self.shared.clients.lock().get(&cid).cloned()
    }

    /// The INFO for one client.
    pub(crate) fn client_info(&self, cid: u64, client_ip: String) -> Info {
        let shared = &self.shared;
        let config = self.config();
        Info {
            server_id: shared.server_id.clone(),
            server_name: shared.server_name.to_string(),
            version: COMPATIBLE_VERSION.to_owned(),
            proto: PROTO_VERSION,
            go: concat!("natrium-", env!("CARGO_PKG_VERSION")).to_owned(),
            host: config.host.clone(),
            port: self.client_addr().map_or(0, |a| a.port()),
            headers: !config.no_header_support,
            auth_required: config.auth.required(),
            tls_required: config.tls.as_ref().is_some_and(|t| !t.allow_non_tls),
            tls_verify: config.tls.as_ref().is_some_and(|t| t.verify),
            tls_available: config.tls.as_ref().is_some_and(|t| t.allow_non_tls),
            max_payload: config.max_payload,
            jetstream: config.jetstream.is_some(),
            connect_urls: Vec::new(),
            ldm: shared.lame_duck.load(Ordering::Relaxed),
            connect_info: false,
            remote_account: String::new(),
            acc_is_sys: false,
            api_lvl: config.jetstream.as_ref().map_or(0, |js| js.api_level),
            domain: config
                .jetstream
                .as_ref()
                .map(|js| js.domain.clone())
                .unwrap_or_default(),
            client_id: cid,
            client_ip,
            nonce: String::new(),
            head: None,
        }
    }

    /// The INFO for one connected client: the server's, with the websocket listener's address,
    /// TLS and authentication override for a websocket client, as Go sends it.
    pub(crate) fn client_info_for(&self, client: &ClientHandle) -> Info {
        let mut info = self.client_info(client.cid, client.addr.ip().to_string());
        if client.websocket().is_some() {
            if let Some(ws) = &self.config().websocket {
                let tls = ws.tls.is_some();
                info.tls_available = tls;
                info.tls_required = tls;
                info.host.clone_from(&ws.host);
                info.port = self.websocket_addr().map_or(0, |a| a.port());
                info.auth_required |= ws.auth_required();
            }
        }
        info.head = Some(self.info_head(&info));
        info
    }

    /// The serialized head for `info`: one kept from an earlier client when its fields are the
    /// same (the common case: they change only with the configuration), else a new one, kept
    /// in place of the oldest.
    fn info_head(&self, info: &Info) -> Arc<InfoHead> {
        let mut heads = self.shared.info_heads.lock();
        if let Some(head) = heads.iter().find(|h| h.matches(info)) {
            return Arc::clone(head);
        }
        let head = Arc::new(InfoHead::new(info));
        if heads.len() >= INFO_HEADS_KEPT {
            heads.remove(0);
        }
        heads.push(Arc::clone(&head));
        head
    }

    /// Adds a connection to the registry; refuses it when max_connections is reached.
    pub(crate) fn register(&self, client: &Arc<ClientHandle>) -> bool {
        let mut clients = self.shared.clients.lock();
        if clients.len() >= self.config().max_connections {
            return false;
        }
        clients.insert(client.cid, Arc::clone(client));
        true
    }

    pub(crate) fn unregister(&self, cid: u64) {
        self.shared.clients.lock().remove(&cid);
    }

    /// Closed connections still remembered, oldest first.
    pub fn closed_clients(&self) -> Vec<Arc<crate::closed::ClosedConn>> {
        self.shared.closed.list()
    }

    pub fn client_addr(&self) -> Option<SocketAddr> {
        *self.shared.client_addr.lock()
    }

    /// A snapshot of the settings in force (a reload may replace them at any time).
    pub fn config(&self) -> Arc<CoreConfig> {
        Arc::clone(&self.shared.config.read())
    }

    /// Installs new settings; connections pick them up at their next event.
    pub(crate) fn swap_config(&self, config: CoreConfig) -> Arc<CoreConfig> {
        let old = std::mem::replace(&mut *self.shared.config.write(), Arc::new(config));
        self.shared.config_epoch.fetch_add(1, Ordering::Release);
        old
    }

    pub(crate) fn config_epoch(&self) -> u64 {
        self.shared.config_epoch.load(Ordering::Acquire)
    }

    /// When the configuration in force was loaded, and its digest.
    pub fn config_loaded(&self) -> ConfigLoaded {
        self.shared.config_loaded.lock().clone()
    }

    /// Records the configuration file's digest at start (the load time stays the start time,
    /// as in Go).
    pub fn set_config_digest(&self, digest: &str) {
        digest.clone_into(&mut self.shared.config_loaded.lock().digest);
    }

    /// Records a reload: the new file's digest, and now as the load time.
    pub fn set_config_loaded(&self, digest: &str) {
        *self.shared.config_loaded.lock() = ConfigLoaded {
            at: chrono::Utc::now(),
            digest: digest.to_owned(),
        };
    }

    pub fn id(&self) -> &str {
        &self.shared.server_id
    }

    pub fn name(&self) -> &str {
        &self.shared.server_name
    }

    pub fn stats(&self) -> &ServerStats {
        &self.shared.stats
    }

    pub fn started(&self) -> chrono::DateTime<chrono::Utc> {
        self.shared.started
    }

    pub fn num_clients(&self) -> usize {
        self.shared.clients.lock().len()
    }

    /// Subscriptions in every account.
    pub fn num_subscriptions(&self) -> usize {
        self.registry()
            .all()
            .iter()
            .map(|a| a.sublist.count())
            .sum()
    }

    pub fn global_account(&self) -> &Account {
        &self.shared.global
    }

    /// The accounts in force (a reload may swap them for a new registry).
    pub(crate) fn registry(&self) -> Arc<Accounts> {
        Arc::clone(&self.shared.accounts.read())
    }

    /// Installs the registry a reload built.
    pub(crate) fn set_registry(&self, accounts: Accounts) {
        *self.shared.accounts.write() = Arc::new(accounts);
        self.shared.accounts_changed.notify_waiters();
    }

    /// The system account. Without one (`no_system_account`) this is an empty, unlisted
    /// `$SYS` that no client can log into, so that callers need not handle its absence.
    pub fn system_account(&self) -> Arc<Account> {
        match self.registry().system() {
            Some(account) => Arc::clone(account),
            None => Arc::clone(&self.shared.detached_system),
        }
    }

    /// Whether the server has a system account (no `no_system_account`).
    pub fn has_system_account(&self) -> bool {
        self.registry().system().is_some()
    }

    /// Every account, `$G` first, then in configuration order (including operator mode's
    /// accounts not yet in use; see [`Account::is_registered`]).
    pub fn accounts(&self) -> Vec<Arc<Account>> {
        self.registry().all().to_vec()
    }

    /// The account named `name`, if it exists.
    pub fn account(&self, name: &str) -> Option<Arc<Account>> {
        self.registry().get(name).cloned()
    }

    /// Marks an account in use (operator mode registers accounts on first login).
    pub(crate) fn register_account(&self, account: &Account) {
        self.registry().register(account);
    }

    /// A snapshot of the live connections, ordered by cid.
    pub fn clients(&self) -> Vec<Arc<ClientHandle>> {
        let mut list: Vec<_> = self.shared.clients.lock().values().cloned().collect();
        list.sort_by_key(|c| c.cid);
        list
    }

    pub fn is_lame_duck(&self) -> bool {
        self.shared.lame_duck.load(Ordering::Relaxed)
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shared.shutdown_begun.is_cancelled()
    }

    /// Whether the client listener is open: false before it is bound, in lame duck mode and
    /// during shutdown. Go's `/healthz` answers 500 in exactly those states.
    pub fn is_accepting(&self) -> bool {
        self.client_addr().is_some()
            && !self.shared.stop_accepting.is_cancelled()
            && !self.shared.shutdown_begun.is_cancelled()
    }

    /// Asks whoever owns the server (the binary) to shut it down.
    pub fn request_shutdown(&self) {
        self.shared.shutdown_request.cancel();
    }

    /// Resolves once shutdown has been requested or has started.
    /// Runs a server-side service task; shutdown waits for it, so it must end once
    /// [`Server::shutting_down`] fires.
    pub fn spawn_service<F>(&self, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.shared.tracker.spawn(task);
    }

    /// Fires when services must stop: last in shutdown, after the connections have closed and
    /// the services have drained (not at lame duck mode's start).
    pub async fn shutting_down(&self) {
        self.shared.shutdown.cancelled().await;
    }

    pub async fn shutdown_requested(&self) {
        tokio::select! {
            () = self.shared.shutdown_request.cancelled() => {}
            () = self.shared.shutdown.cancelled() => {}
        }
    }

    /// Sleeps `duration`; false if shutdown started meanwhile.
    async fn sleep_unless_shutdown(&self, duration: Duration) -> bool {
        tokio::select! {
            () = tokio::time::sleep(duration) => true,
            () = self.shared.shutdown_begun.cancelled() => false,
        }
    }

    /// Lame duck mode, as Go's: close the client listener, tell every client (INFO with
    /// `ldm:true`), wait the grace period, then close the connections one by one, spread over the
    /// rest of `lame_duck_duration` but at most about a second apart, then request shutdown.
    /// With no clients connected the server shuts down at once. Does nothing before the client
    /// listener is open or once shutdown has started.
    pub async fn lame_duck(&self) {
        let shared = &self.shared;
        if self.client_addr().is_none()
            || self.is_shutting_down()
            || shared.lame_duck.swap(true, Ordering::SeqCst)
        {
            return;
        }
        tracing::info!("Entering lame duck mode, stop accepting new clients");
        shared.events.emit(crate::events::ServerEvent::LameDuck);
        shared.stop_accepting.cancel();
        // No client may connect once the INFO below has gone out.
        tokio::select! {
            () = shared.accept_stopped.cancelled() => {}
            () = shared.shutdown_begun.cancelled() => return,
        }
        let clients = self.clients();
        if clients.is_empty() {
            self.request_shutdown();
            return;
        }
        let config = self.config();
        let interval = lame_duck_interval(
            config.lame_duck_duration,
            config.lame_duck_grace_period,
            clients.len(),
        );
        for client in &clients {
            // Go sends the lame-duck INFO only to clients that can take an asynchronous INFO.
            if client.meta.lock().protocol < 1 {
                continue;
            }
            let mut info = self.client_info_for(client);
            info.ldm = true;
            if client.send_proto(&info.to_frame()) {
                client.out.flush();
            }
        }
        if !self
            .sleep_unless_shutdown(config.lame_duck_grace_period)
            .await
        {
            return;
        }
        tracing::info!("Closing existing clients");
        let last = clients.len().saturating_sub(1);
        for (i, client) in clients.iter().enumerate() {
            // Go records these as closed by server shutdown.
            client.close(ClosedReason::ServerShutdown);
            if i == last {
                break;
            }
            // A random pause in [interval/2, interval) so that clients of several servers
            // entering lame duck together do not reconnect in lockstep.
            let half = interval / 2;
            let jitter = Duration::from_nanos(fastrand::u64(
                0..u64::try_from(interval.saturating_sub(half).as_nanos())
                    .unwrap_or(1)
                    .max(1),
            ));
            if !self.sleep_unless_shutdown(half + jitter).await {
                return;
            }
        }
        self.request_shutdown();
    }
}

/// The pause between two lame-duck closes: what is left of `lame_duck_duration` after the grace
/// period (at least a second), shared among the clients, at most a second.
pub fn lame_duck_interval(duration: Duration, grace: Duration, clients: usize) -> Duration {
    let spread = duration.saturating_sub(grace);
    let spread = if spread.is_zero() {
        Duration::from_secs(1)
    } else {
        spread
    };
    let clients = u32::try_from(clients.max(1)).unwrap_or(u32::MAX);
    (spread / clients)
        .max(Duration::from_nanos(1))
        .min(Duration::from_secs(1))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn server_lame_duck_interval_like_go() {
        let s = Duration::from_secs;
        assert_eq!(lame_duck_interval(s(30), s(1), 2), s(1));
        assert_eq!(
            lame_duck_interval(s(30), s(1), 58),
            Duration::from_millis(500)
        );
        assert_eq!(
            lame_duck_interval(s(30), s(30), 4),
            Duration::from_millis(250)
        );
        assert_eq!(lame_duck_interval(s(30), s(10), 0), s(1));
    }
}
