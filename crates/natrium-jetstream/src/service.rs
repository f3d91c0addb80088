//! The JetStream service: start-up (Go's banner and log lines), the accounts it serves, the
//! streams recovered from the store directory, and the drain at shutdown.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use natrium_auth::account::JsAccountLimits;
use natrium_conf::options::JetStreamOptions;
use natrium_core::account::Account;
use natrium_core::Server;
use natrium_store::filestore::at_rest::AtRest;
use natrium_store::io::StorageIo;
use natrium_store::seal::{Cipher, ServerKeys};
use parking_lot::Mutex;

use crate::account::JsAccount;
use crate::consumer::lifecycle::ConsumerFiles;
use crate::resources::{Reserved, Usage};

/// Go's JetStream API level, announced in INFO and the banner.
pub const API_LEVEL: u32 = 5;

/// What the binary resolved before start: the options, the directory and the limits (a
/// share of the machine's memory and disk when none was configured). A reload may raise
/// `max_memory` / `max_store` and replace `options.limits`: read those through
/// [`JetStream::limit`] and [`JetStream::server_limits`].
#[derive(Debug, Clone)]
pub struct JetStreamSettings {
    pub options: JetStreamOptions,
    /// `<store_dir>/jetstream`.
    pub store_dir: PathBuf,
    pub domain: String,
    pub max_memory: i64,
    pub max_store: i64,
}

/// The running service.
pub struct JetStream {
    pub server: Server,
    pub settings: JetStreamSettings,
    pub(crate) io: Arc<dyn StorageIo>,
    /// `jetstream { key, prev_key, cipher }`: streams' files are sealed with these.
    pub(crate) keys: Option<Arc<ServerKeys>>,
    accounts: Mutex<BTreeMap<String, Arc<JsAccount>>>,
    /// Bytes every account's streams store, and the server's limits (`max_memory_store`,
    /// `max_file_store`, raised by a reload).
    pub(crate) usage: Arc<Usage>,
    /// `jetstream { limits { … } }` in force (replaced by a reload).
    pub(crate) server_limits: parking_lot::RwLock<natrium_conf::options::JetStreamLimits>,
    /// Bytes every stream's `max_bytes` reserves.
    pub(crate) reserved: Reserved,
    pub api_total: AtomicU64,
    pub api_errors: AtomicU64,
    /// Snapshots and restores running (see `snapshot::guard`).
    pub(crate) transfers: Arc<AtomicUsize>,
    /// Cancelled when a reload turns JetStream off (see `reload`).
    pub(crate) stopped: tokio_util::sync::CancellationToken,
}

/// The encryption keys of the configuration; none without `key`.
fn server_keys(options: &JetStreamOptions) -> Option<Arc<ServerKeys>> {
    let cipher = if options.cipher == "aes" {
        Cipher::Aes
    } else {
        Cipher::ChaCha
    };
    ServerKeys::new(
        options.key.as_bytes(),
        Some(options.prev_key.as_bytes()),
        cipher,
    )
    .map(Arc::new)
}

pub(crate) fn banner(settings: &JetStreamSettings) {
    for line in [
        "    _ ___ _____ ___ _____ ___ ___   _   __  __",
        " _ | | __|_   _/ __|_   _| _ \\ __| /_\\ |  \\/  |",
        "| || | _|  | | \\__ \\ | | |   / _| / _ \\| |\\/| |",
        " \\__/|___| |_| |___/ |_| |_|_\\___/_/ \\_\\_|  |_|",
        "",
        "         https://docs.nats.io/jetstream",
        "",
        "---------------- JETSTREAM ----------------",
    ] {
        tracing::info!("{line}");
    }
    let opts = &settings.options;
    if opts.strict {
        tracing::info!("  Strict:          true");
    }
    tracing::info!("  Max Memory:      {}", friendly_bytes(settings.max_memory));
    tracing::info!("  Max Storage:     {}", friendly_bytes(settings.max_store));
    tracing::info!("  Store Directory: \"{}\"", settings.store_dir.display());
    if !settings.domain.is_empty() {
        tracing::info!("  Domain:          {}", settings.domain);
    }
    if !opts.key.is_empty() {
        let cipher = if opts.cipher == "aes" {
            "AES"
        } else {
            "ChaCha20"
        };
        tracing::info!("  Encryption:      {cipher}");
    }
    tracing::info!("  API Level:       {API_LEVEL}");
    tracing::info!("-------------------------------------------");
}

/// Go's `friendlyBytes`: `512 B`, `17.66 GB` (powers of 1024, two decimals).
pub fn friendly_bytes(bytes: i64) -> String {
    let mut value = bytes as f64;
    if value < 1024.0 {
        return format!("{bytes} B");
    }
    let mut unit = 0;
    while value >= 1024.0 && unit < 6 {
        value /= 1024.0;
        unit += 1;
    }
    let prefix = ["", "K", "M", "G", "T", "P", "E"]
        .get(unit)
        .copied()
        .unwrap_or("E");
    format!("{value:.2} {prefix}B")
}

impl JetStream {
    /// The service before any account is enabled, storing through `io`.
    pub fn new(server: Server, settings: JetStreamSettings, io: Arc<dyn StorageIo>) -> Self {
        let keys = server_keys(&settings.options);
        let usage = Arc::new(Usage::default());
        usage.set_limit(crate::config::stream::Storage::Memory, settings.max_memory);
        usage.set_limit(crate::config::stream::Storage::File, settings.max_store);
        let server_limits = parking_lot::RwLock::new(settings.options.limits.clone());
        Self {
            server,
            settings,
            io,
            keys,
            accounts: Mutex::new(BTreeMap::new()),
            usage,
            server_limits,
            reserved: Reserved::default(),
            api_total: AtomicU64::new(0),
            api_errors: AtomicU64::new(0),
            transfers: Arc::new(AtomicUsize::new(0)),
            stopped: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Turns JetStream on for `account` and recovers its streams; `None` once JetStream was
    /// turned off (checked under the lock [`JetStream::shut_down`] empties the accounts with).
    pub fn enable_account(
        &self,
        account: &Arc<Account>,
        limits: JsAccountLimits,
    ) -> Option<Arc<JsAccount>> {
        let mut accounts = self.accounts.lock();
        if self.stopped.is_cancelled() {
            return None;
        }
        if let Some(existing) = accounts.get(&*account.name) {
            return Some(Arc::clone(existing));
        }
        let dir = self.settings.store_dir.join(&*account.name);
        let jsa = Arc::new(JsAccount::new(Arc::clone(account), dir, limits));
        tracing::debug!("Recovering JetStream state for account {:?}", account.name);
        jsa.recover(self);
        tracing::debug!("JetStream state for account {:?} recovered", account.name);
        accounts.insert(account.name.clone(), Arc::clone(&jsa));
        Some(jsa)
    }

    /// Whether an account with `limits` fits beside the streams' reservations and the limits
    /// of the accounts enabled so far (Go's single-server check before enabling one).
    ///
    /// # Errors
    /// 10028 or 10047.
    pub fn check_account_fits(
        &self,
        limits: &JsAccountLimits,
    ) -> Result<(), crate::errors::ApiError> {
        let enabled: Vec<JsAccountLimits> = self.accounts().iter().map(|a| a.limits()).collect();
        let (reserved, server) = self.reserved_and_limits();
        crate::resources::account_fits(limits, &enabled, reserved, server)
    }

    /// What streams reserve and the server's limits, memory then file each.
    fn reserved_and_limits(&self) -> ((i64, i64), (i64, i64)) {
        use crate::config::stream::Storage;
        let reserved = (
            self.reserved.get(Storage::Memory),
            self.reserved.get(Storage::File),
        );
        let limits = (self.limit(Storage::Memory), self.limit(Storage::File));
        (reserved, limits)
    }

    /// Gives an enabled account the limits a reload configured, when they fit beside the
    /// other accounts' limits and the streams' reservations (Go's check of the growth only).
    ///
    /// # Errors
    /// 10028 or 10047; the account keeps its limits.
    pub fn update_account_limits(
        &self,
        jsa: &JsAccount,
        limits: JsAccountLimits,
    ) -> Result<(), crate::errors::ApiError> {
        let others: Vec<JsAccountLimits> = self
            .accounts()
            .iter()
            .filter(|a| a.name() != jsa.name())
            .map(|a| a.limits())
            .collect();
        let (reserved, server) = self.reserved_and_limits();
        crate::resources::account_update_fits(&jsa.limits(), &limits, &others, reserved, server)?;
        jsa.set_limits(limits);
        Ok(())
    }

    /// Turns JetStream off in the account named `name` (its configuration no longer turns
    /// it on, or it was removed): its streams and consumers stop, their files stay, and its
    /// API requests are answered with 10039 from now on. What its streams reserved is given
    /// back, so the limits of other accounts may use it.
    pub fn disable_account(&self, name: &str) {
        let Some(jsa) = self.accounts.lock().remove(name) else {
            return;
        };
        self.stop_account(&jsa);
    }

    /// Stops what `jsa` runs and gives back what its streams reserved.
    pub(crate) fn stop_account(&self, jsa: &JsAccount) {
        jsa.stop_all();
        jsa.release_reservations(self);
    }

    /// Takes every enabled account out (JetStream turned off).
    pub(crate) fn take_accounts(&self) -> BTreeMap<String, Arc<JsAccount>> {
        std::mem::take(&mut *self.accounts.lock())
    }

    /// The JetStream state of the account named `name`, if it is enabled there.
    pub fn account(&self, name: &str) -> Option<Arc<JsAccount>> {
        self.accounts.lock().get(name).cloned()
    }

    /// Every enabled account.
    pub fn accounts(&self) -> Vec<Arc<JsAccount>> {
        self.accounts.lock().values().cloned().collect()
    }

    /// Stores what every stream captured, syncs and closes the stores (shutdown).
    pub fn stop_all(&self) {
        for jsa in self.accounts() {
            jsa.stop_all();
        }
    }

    /// Asks the binary's heap trimmer to give freed memory back (after a purge or a delete).
    pub fn release_heap(&self) {
        self.server
            .stats()
            .heap_release_requests
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_api(&self, error: bool) {
        self.api_total.fetch_add(1, Ordering::Relaxed);
        if error {
            self.api_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How stream `stream` of `account` seals its files, when keys are configured.
    /// Where stream `stream` of `account` keeps its consumers' files, and with which keys.
    pub(crate) fn consumer_files(&self, account: &str, stream: &str) -> ConsumerFiles {
        ConsumerFiles {
            io: Arc::clone(&self.io),
            at_rest: self.at_rest(account, stream),
        }
    }

    pub(crate) fn at_rest(&self, account: &str, stream: &str) -> Option<AtRest> {
        self.keys.as_ref().map(|keys| AtRest {
            keys: Arc::clone(keys),
            account: account.to_owned(),
            stream: stream.to_owned(),
        })
    }

    /// The server's limit for `storage` (`max_memory_store`, `max_file_store`) in force.
    pub fn limit(&self, storage: crate::config::stream::Storage) -> i64 {
        self.usage.limit(storage)
    }

    /// The directory of the streams of `account`.
    pub fn streams_dir(&self, account: &str) -> PathBuf {
        self.settings.store_dir.join(account).join("streams")
    }
}

/// Go's "global account only": no configured account besides the global and the system one.
pub(crate) fn global_only(server: &Server) -> bool {
    let config = server.config();
    let system = server.system_account();
    !config.accounts_on_demand
        && config.accounts.iter().all(|spec| {
            spec.name == system.name || spec.name == natrium_core::account::GLOBAL_ACCOUNT
        })
}

/// The JetStream limits `account` is configured with now, `None` when its configuration
/// leaves JetStream off (the global account of a server without accounts has it on).
pub(crate) fn configured_limits(server: &Server, account: &Account) -> Option<JsAccountLimits> {
    if account.name == natrium_core::account::GLOBAL_ACCOUNT && global_only(server) {
        return Some(JsAccountLimits::default());
    }
    account.state().spec.jetstream
}

#[cfg(test)]
mod tests {
    use super::friendly_bytes;

    #[test]
    fn service_friendly_bytes_like_go() {
        assert_eq!(friendly_bytes(512), "512 B");
        assert_eq!(friendly_bytes(1536), "1.50 KB");
        assert_eq!(friendly_bytes(18_963_124_224), "17.66 GB");
    }
}
