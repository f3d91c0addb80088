//! Memory and storage accounting as Go's single server does it: the bytes each account and
//! the whole server store (counted from the stores' update callbacks), the bytes streams
//! reserve with `max_bytes`, and Go's checks of both against the limits.
//!
//! - A stream config with `max_bytes` reserves that much of its account's and the server's
//!   memory or storage; one without counts as one byte when it is created. A create or an
//!   update that would take a reservation past a limit fails with 10028 (memory) or 10047
//!   (storage), the account checked before the server ([`check_config`], [`check_update`]).
//! - A publish is refused with 10023 when the server already stores more than its limit and
//!   with 10002 when the message would take the account past its limit ([`Quota::admit`]).
//!   Both read atomic counters: no lock per message.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use natrium_auth::account::JsAccountLimits;
use natrium_store::{MsgSizing, StorageUpdateFn};

use crate::config::stream::Storage;
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};

/// Go logs "resource limits exceeded for server" at most this often.
const SERVER_ALERT_INTERVAL: Duration = Duration::from_secs(10);
/// Go's rate-limited warnings repeat after this long (its `rateLimitLogging` expiry).
const ACCOUNT_WARN_INTERVAL: Duration = Duration::from_secs(1);

/// Bytes stored in memory and in files, by one account or by the whole server.
#[derive(Debug, Default)]
pub struct Usage {
    memory: AtomicI64,
    storage: AtomicI64,
    /// Unix milliseconds of the last "limits exceeded" log line for each storage.
    memory_logged_ms: AtomicI64,
    storage_logged_ms: AtomicI64,
}

impl Usage {
    fn slot(&self, storage: Storage) -> &AtomicI64 {
        match storage {
            Storage::Memory => &self.memory,
            Storage::File => &self.storage,
        }
    }

    /// Adds (or, negative, removes) `bytes` of `storage`.
    pub fn add(&self, storage: Storage, bytes: i64) {
        self.slot(storage).fetch_add(bytes, Ordering::Relaxed);
    }

    /// Bytes of `storage` in use (never negative, as Go reports it).
    pub fn used(&self, storage: Storage) -> u64 {
        u64::try_from(self.slot(storage).load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// Whether a "limits exceeded" line for `storage` may be logged now (and if so, notes it).
    fn may_log(&self, storage: Storage, every: Duration) -> bool {
        let slot = match storage {
            Storage::Memory => &self.memory_logged_ms,
            Storage::File => &self.storage_logged_ms,
        };
        let now = crate::stream::running::now_ns() / 1_000_000;
        let last = slot.load(Ordering::Relaxed);
        let every = i64::try_from(every.as_millis()).unwrap_or(i64::MAX);
        if last != 0 && now.saturating_sub(last) < every {
            return false;
        }
        slot.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }
}

/// Bytes reserved by streams' `max_bytes` on the whole server (Go's `memReserved` and
/// `storeReserved`).
#[derive(Debug, Default)]
pub struct Reserved {
    memory: AtomicI64,
    storage: AtomicI64,
}

impl Reserved {
    fn slot(&self, storage: Storage) -> &AtomicI64 {
        match storage {
            Storage::Memory => &self.memory,
            Storage::File => &self.storage,
        }
    }

    /// Adds (or, negative, gives back) `bytes` of `storage`.
    pub fn add(&self, storage: Storage, bytes: i64) {
        self.slot(storage).fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn get(&self, storage: Storage) -> i64 {
        self.slot(storage).load(Ordering::Relaxed)
    }
}

/// What a stream config reserves: its `max_bytes` when it has one.
pub fn reservation(max_bytes: i64) -> i64 {
    max_bytes.max(0)
}

/// An account's and the server's limit and reservation for one storage, as a check sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The account's `max_mem` or `max_file`; negative is unlimited.
    pub account_limit: i64,
    /// What the account's other streams of this storage reserve.
    pub account_reserved: i64,
    /// The server's `max_memory_store` or `max_file_store`.
    pub server_limit: i64,
    /// What every stream of the server reserves in this storage.
    pub server_reserved: i64,
}

/// The error for a storage whose reservation does not fit.
fn exceeded(storage: Storage) -> ApiError {
    match storage {
        Storage::Memory => table::MEMORY_RESOURCES_EXCEEDED.err(),
        Storage::File => table::STORAGE_RESOURCES_EXCEEDED.err(),
    }
}

/// Go's byte check of a reservation growing by `add` bytes (a negative `add`, a stream
/// without `max_bytes`, counts as one byte). Untiered account limits count every replica;
/// the server holds one.
///
/// # Errors
/// 10028 or 10047 when the account's or the server's reservation would pass its limit.
pub fn check_bytes(
    storage: Storage,
    add: i64,
    replicas: i64,
    budget: &Budget,
) -> Result<(), ApiError> {
    let add = if add < 0 { 1 } else { add };
    let account_add = if replicas > 1 && add > 0 {
        add.saturating_mul(replicas)
    } else {
        add
    };
    let fits = |limit: i64, reserved: i64, add: i64| reserved <= limit && add <= limit - reserved;
    if budget.account_limit >= 0
        && !fits(budget.account_limit, budget.account_reserved, account_add)
    {
        return Err(exceeded(storage));
    }
    if !fits(budget.server_limit, budget.server_reserved, add) {
        return Err(exceeded(storage));
    }
    Ok(())
}

/// Go's account and server checks of a new stream config: its `max_consumers` against the
/// account's, then its reservation ([`check_bytes`]). The stream count is the caller's.
///
/// # Errors
/// 10026, 10028 or 10047.
pub fn check_config(
    cfg: &StreamConfig,
    limits: &JsAccountLimits,
    budget: &Budget,
) -> Result<(), ApiError> {
    check_consumers(cfg, limits)?;
    check_bytes(cfg.storage, cfg.max_bytes, cfg.num_replicas, budget)
}

fn check_consumers(cfg: &StreamConfig, limits: &JsAccountLimits) -> Result<(), ApiError> {
    if cfg.max_consumers > 0 && limits.max_consumers > 0 && cfg.max_consumers > limits.max_consumers
    {
        return Err(table::MAXIMUM_CONSUMERS_LIMIT.err());
    }
    Ok(())
}

/// Go's checks of an updated config `new` replacing `old`: only the growth of `max_bytes` is
/// reserved anew, and the account's budget holds the stream's new reservation besides the
/// others' (`budget.account_reserved` counts the other streams only).
///
/// # Errors
/// 10026, 10028 or 10047.
pub fn check_update(
    new: &StreamConfig,
    old: &StreamConfig,
    limits: &JsAccountLimits,
    budget: &Budget,
) -> Result<(), ApiError> {
    check_consumers(new, limits)?;
    let growth = (reservation(new.max_bytes) - reservation(old.max_bytes)).max(0);
    let kept = new.max_bytes - growth;
    let kept = if kept > 0 && new.num_replicas > 1 {
        kept.saturating_mul(new.num_replicas)
    } else {
        kept.max(0)
    };
    let budget = Budget {
        account_reserved: budget.account_reserved.saturating_add(kept),
        ..*budget
    };
    check_bytes(new.storage, growth, new.num_replicas, &budget)
}

/// Go's check, before an account is enabled on a single server, that its `max_mem` and
/// `max_file` fit the server beside what streams reserve already and beside the limits of
/// the accounts enabled before it (`enabled`). Memory is checked before storage.
///
/// # Errors
/// 10028 or 10047.
pub fn account_fits<'a>(
    new: &JsAccountLimits,
    enabled: impl IntoIterator<Item = &'a JsAccountLimits>,
    reserved: (i64, i64),
    server: (i64, i64),
) -> Result<(), ApiError> {
    let positive = |n: i64| n.max(0);
    let (memory, file) = (positive(new.max_memory), positive(new.max_store));
    if reserved.0.saturating_add(memory) > server.0 {
        return Err(exceeded(Storage::Memory));
    }
    if reserved.1.saturating_add(file) > server.1 {
        return Err(exceeded(Storage::File));
    }
    let (mut memory_others, mut file_others) = (0i64, 0i64);
    for limits in enabled {
        memory_others = memory_others.saturating_add(positive(limits.max_memory));
        file_others = file_others.saturating_add(positive(limits.max_store));
    }
    if memory_others.saturating_add(memory) > server.0 {
        return Err(exceeded(Storage::Memory));
    }
    if file_others.saturating_add(file) > server.1 {
        return Err(exceeded(Storage::File));
    }
    Ok(())
}

/// One stream's view of the limits a publish is checked against, and the counters its store
/// keeps up to date.
pub struct Quota {
    storage: Storage,
    account_name: Arc<str>,
    account: Arc<Usage>,
    account_limit: i64,
    server: Arc<Usage>,
    server_limit: i64,
}

impl Quota {
    /// The limits of a stream of `storage` in account `account_name`: the account's
    /// `max_mem`/`max_file` (negative is unlimited) and the server's.
    pub fn new(
        storage: Storage,
        account_name: Arc<str>,
        account: (Arc<Usage>, i64),
        server: (Arc<Usage>, i64),
    ) -> Self {
        Self {
            storage,
            account_name,
            account: account.0,
            account_limit: account.1,
            server: server.0,
            server_limit: server.1,
        }
    }

    /// No limits and counters of its own (tests).
    pub fn unlimited(storage: Storage) -> Self {
        let usage = || (Arc::new(Usage::default()), -1);
        Self::new(
            storage,
            Arc::from(""),
            usage(),
            (Arc::new(Usage::default()), i64::MAX),
        )
    }

    fn kind(&self) -> &'static str {
        match self.storage {
            Storage::Memory => "memory",
            Storage::File => "file",
        }
    }

    /// Go's checks before a message is stored: the server already over its limit (10023),
    /// then the account over its limit with this message (10002). Sizes as the store counts
    /// them.
    ///
    /// # Errors
    /// 10023 or 10002.
    pub fn admit(&self, subject: usize, headers: usize, payload: usize) -> Result<(), ApiError> {
        if i64::try_from(self.server.used(self.storage)).unwrap_or(i64::MAX) > self.server_limit {
            if self.server.may_log(self.storage, SERVER_ALERT_INTERVAL) {
                tracing::error!(
                    "JetStream {} resource limits exceeded for server",
                    self.kind()
                );
            }
            return Err(table::INSUFFICIENT_RESOURCES.err());
        }
        if self.account_limit >= 0 {
            let sizing = match self.storage {
                Storage::Memory => MsgSizing::Memory,
                Storage::File => MsgSizing::File,
            };
            let total = self
                .account
                .used(self.storage)
                .saturating_add(sizing.size(subject, headers, payload));
            if total > u64::try_from(self.account_limit).unwrap_or(0) {
                if self.account.may_log(self.storage, ACCOUNT_WARN_INTERVAL) {
                    tracing::warn!(
                        "JetStream {} resource limits exceeded for account: {}",
                        self.kind(),
                        natrium_gofmt::go_quote(&self.account_name)
                    );
                }
                return Err(table::ACCOUNT_RESOURCES_EXCEEDED.err());
            }
        }
        Ok(())
    }

    /// Adds `bytes` already in the store (a recovered stream) to the counters.
    pub fn count(&self, bytes: i64) {
        self.account.add(self.storage, bytes);
        self.server.add(self.storage, bytes);
    }

    /// The store's update callback: every stored and removed byte reaches the counters.
    pub fn updates(&self) -> StorageUpdateFn {
        let (account, server, storage) = (
            Arc::clone(&self.account),
            Arc::clone(&self.server),
            self.storage,
        );
        Box::new(move |update| {
            account.add(storage, update.bytes);
            server.add(storage, update.bytes);
        })
    }
}
