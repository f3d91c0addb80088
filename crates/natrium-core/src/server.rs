//! The server: identity, the client listener and accept loop, the registry of live clients,
//! lame duck mode and shutdown.
//!
//! Shutdown is one tree: the root token is cancelled, every connection's token is its child,
//! and all connection tasks are tracked so that shutdown waits for their final flushes.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::account::{Account, GLOBAL_ACCOUNT};
use crate::client::{run_client, ClientHandle, ClosedReason};
use crate::config::CoreConfig;
use crate::fxhash::FxHashMap;
use crate::info::{Info, COMPATIBLE_VERSION, PROTO_VERSION};
use crate::stats::ServerStats;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("invalid listen host {0:?}")]
    BadHost(String),
    #[error("Error listening on port: {addr}, {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Config(String),
}

pub(crate) struct Shared {
    pub config: CoreConfig,
    pub server_id: String,
    pub server_name: String,
    pub stats: Arc<ServerStats>,
    pub global: Arc<Account>,
    pub clients: Mutex<FxHashMap<u64, Arc<ClientHandle>>>,
    next_cid: AtomicU64,
    pub shutdown: CancellationToken,
    stop_accepting: CancellationToken,
    lame_duck: AtomicBool,
    pub tracker: TaskTracker,
    pub started: chrono::DateTime<chrono::Utc>,
    client_addr: Mutex<Option<SocketAddr>>,
}

/// A running (or about to run) server. Cheap to clone: all clones drive the same server.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<Shared>,
}

/// What the binary keeps to stop the server.
pub type ServerHandle = Server;

/// Formats `host:port` the way Go logs it (IPv6 in brackets).
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

impl Server {
    pub fn new(config: CoreConfig) -> Result<Self, StartError> {
        if config.listen_ip().is_none() {
            return Err(StartError::BadHost(config.host.clone()));
        }
        if config.max_payload > config.max_pending {
            return Err(StartError::Config(format!(
                "max_payload ({}) can not be higher than max_pending ({})",
                config.max_payload, config.max_pending
            )));
        }
        let server_id = nkeys::KeyPair::new_server().public_key();
        let server_name = if config.server_name.is_empty() {
            server_id.clone()
        } else {
            config.server_name.clone()
        };
        let global = Arc::new(Account::new(GLOBAL_ACCOUNT, !config.disable_sublist_cache));
        Ok(Self {
            shared: Arc::new(Shared {
                config,
                server_id,
                server_name,
                stats: Arc::new(ServerStats::default()),
                global,
                clients: Mutex::new(FxHashMap::default()),
                next_cid: AtomicU64::new(1),
                shutdown: CancellationToken::new(),
                stop_accepting: CancellationToken::new(),
                lame_duck: AtomicBool::new(false),
                tracker: TaskTracker::new(),
                started: chrono::Utc::now(),
                client_addr: Mutex::new(None),
            }),
        })
    }

    /// Binds the client port and starts accepting. Returns the bound address.
    pub async fn listen(&self) -> Result<SocketAddr, StartError> {
        let config = &self.shared.config;
        let ip = config
            .listen_ip()
            .ok_or_else(|| StartError::BadHost(config.host.clone()))?;
        let port = u16::try_from(config.port.max(0)).unwrap_or(0);
        let addr = SocketAddr::new(ip, port);
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Listen {
                addr: host_port(&config.host, port),
                source,
            })?;
        let bound = listener.local_addr().map_err(|source| StartError::Listen {
            addr: host_port(&config.host, port),
            source,
        })?;
        *self.shared.client_addr.lock() = Some(bound);
        tracing::info!(
            "Listening for client connections on {}",
            host_port(&config.host, bound.port())
        );
        let server = self.clone();
        self.shared
            .tracker
            .spawn(async move { server.accept_loop(listener).await });
        Ok(bound)
    }

    async fn accept_loop(self, listener: TcpListener) {
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
                    self.accept_client(stream, addr);
                }
                Err(err) => {
                    // Out of file descriptors and the like: back off rather than spin.
                    tracing::error!("Temporary accept error: {err}, sleeping {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            }
        }
        tracing::debug!("client accept loop exiting");
    }

    fn accept_client(&self, stream: TcpStream, addr: SocketAddr) {
        let shared = &self.shared;
        let _ = stream.set_nodelay(true);
        let cid = shared.next_cid.fetch_add(1, Ordering::Relaxed);
        shared
            .stats
            .total_connections
            .fetch_add(1, Ordering::Relaxed);
        let server = self.clone();
        shared
            .tracker
            .spawn(async move { run_client(server, stream, addr, cid).await });
    }

    /// The INFO for one client.
    pub(crate) fn client_info(&self, cid: u64, client_ip: String) -> Info {
        let shared = &self.shared;
        let config = &shared.config;
        Info {
            server_id: shared.server_id.clone(),
            server_name: shared.server_name.clone(),
            version: COMPATIBLE_VERSION.to_owned(),
            proto: PROTO_VERSION,
            go: concat!("natrium-", env!("CARGO_PKG_VERSION")).to_owned(),
            host: config.host.clone(),
            port: self.client_addr().map_or(0, |a| a.port()),
            headers: !config.no_header_support,
            auth_required: false,
            tls_required: false,
            tls_verify: false,
            tls_available: false,
            max_payload: config.max_payload,
            jetstream: false,
            connect_urls: Vec::new(),
            ldm: shared.lame_duck.load(Ordering::Relaxed),
            client_id: cid,
            client_ip,
            nonce: String::new(),
        }
    }

    /// Adds a connection to the registry; refuses it when max_connections is reached.
    pub(crate) fn register(&self, client: &Arc<ClientHandle>) -> bool {
        let mut clients = self.shared.clients.lock();
        if clients.len() >= self.shared.config.max_connections {
            return false;
        }
        clients.insert(client.cid, Arc::clone(client));
        true
    }

    pub(crate) fn unregister(&self, cid: u64) {
        self.shared.clients.lock().remove(&cid);
    }

    pub fn client_addr(&self) -> Option<SocketAddr> {
        *self.shared.client_addr.lock()
    }

    pub fn config(&self) -> &CoreConfig {
        &self.shared.config
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

    pub fn num_subscriptions(&self) -> usize {
        self.shared.global.sublist.count()
    }

    pub fn global_account(&self) -> &Account {
        &self.shared.global
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
        self.shared.shutdown.is_cancelled()
    }

    /// Resolves once shutdown has been requested.
    pub async fn shutdown_requested(&self) {
        self.shared.shutdown.cancelled().await;
    }

    /// Closes every connection (flushing what they have queued) and waits for their tasks.
    pub async fn shutdown(&self) {
        let shared = &self.shared;
        shared.stop_accepting.cancel();
        for client in self.clients() {
            client.close(ClosedReason::ServerShutdown);
        }
        shared.shutdown.cancel();
        shared.tracker.close();
        shared.tracker.wait().await;
    }

    /// Lame duck mode: stop accepting, tell clients (INFO with `ldm`), wait the grace period,
    /// then close the connections spread over the rest of `lame_duck_duration`, then shut down.
    pub async fn lame_duck(&self) {
        let shared = &self.shared;
        if shared.lame_duck.swap(true, Ordering::SeqCst) {
            return;
        }
        tracing::info!("Entering lame duck mode, stop accepting new clients");
        shared.stop_accepting.cancel();
        let clients = self.clients();
        for client in &clients {
            let mut info = self.client_info(0, String::new());
            info.ldm = true;
            if client.out.enqueue_proto(&info.to_frame()) {
                client.out.flush();
            }
        }
        let config = &shared.config;
        let grace = config.lame_duck_grace_period.min(config.lame_duck_duration);
        let spread = config.lame_duck_duration.saturating_sub(grace);
        tokio::select! {
            () = tokio::time::sleep(grace) => {}
            () = shared.shutdown.cancelled() => return,
        }
        let clients = self.clients();
        if !clients.is_empty() {
            tracing::info!("Closing existing clients");
            let per_client = spread / u32::try_from(clients.len()).unwrap_or(u32::MAX).max(1);
            for client in clients {
                client.close(ClosedReason::LameDuckMode);
                if !per_client.is_zero() {
                    tokio::select! {
                        () = tokio::time::sleep(per_client) => {}
                        () = shared.shutdown.cancelled() => break,
                    }
                }
            }
        }
        self.shutdown().await;
    }
}
