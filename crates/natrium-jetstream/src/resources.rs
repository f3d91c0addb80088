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

/// One signed counter per storage.
#[derive(Debug, Default)]
struct PerStorage {
    memory: AtomicI64,
    file: AtomicI64,
}

impl PerStorage {
    fn of(&self, storage: Storage) -> &AtomicI64 {
        match storage {
            Storage::Memory => &self.memory,
            Storage::File => &self.file,
        }
    }
}

/// Bytes an account (or the server) stores, per storage, the account's limit per storage
/// (here, not in each stream's [`Quota`], so a reload that changes it reaches running
/// streams), and when its "limits exceeded" lines were last logged.
#[derive(Debug, Default)]
pub struct Usage {
    bytes: PerStorage,
    /// `max_mem` and `max_file`; negative is unlimited.
    limit: PerStorage,
    /// Unix milliseconds of the last "limits exceeded for account" line for each storage.
    logged_ms: PerStorage,
    /// Unix milliseconds of the last "limits exceeded for server" line, either storage (Go
    /// keeps one time for both).
    alerted_ms: AtomicI64,
}

impl Usage {
    /// Adds (or, negative, removes) `bytes` of `storage`.
    pub fn add(&self, storage: Storage, bytes: i64) {
        self.bytes.of(storage).fetch_add(bytes, Ordering::Relaxed);
    }

    /// Sets the account's limit for `storage` (negative is unlimited).
    pub fn set_limit(&self, storage: Storage, limit: i64) {
        self.limit.of(storage).store(limit, Ordering::Relaxed);
    }

    pub fn limit(&self, storage: Storage) -> i64 {
        self.limit.of(storage).load(Ordering::Relaxed)
    }

    /// Bytes of `storage` in use (never negative, as Go reports it).
    pub fn used(&self, storage: Storage) -> u64 {
        u64::try_from(self.bytes.of(storage).load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// Whether the account's "limits exceeded" line for `storage` may be logged now.
    fn may_warn(&self, storage: Storage) -> bool {
        rate_limited(self.logged_ms.of(storage), ACCOUNT_WARN_INTERVAL)
    }

    /// Whether the server's "limits exceeded" line may be logged now.
    fn may_alert(&self) -> bool {
        rate_limited(&self.alerted_ms, SERVER_ALERT_INTERVAL)
    }
}

/// Whether a line last logged at `slot` (Unix ms, 0 for never) may be logged again after
/// `every`; if so, `slot` takes the time.
fn rate_limited(slot: &AtomicI64, every: Duration) -> bool {
    let now = crate::clock::now_ns() / 1_000_000;
    let last = slot.load(Ordering::Relaxed);
    let every = i64::try_from(every.as_millis()).unwrap_or(i64::MAX);
    if last != 0 && now.saturating_sub(last) < every {
        return false;
    }
    slot.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

/// Bytes reserved by streams' `max_bytes` on the whole server (Go's `memReserved` and
/// `storeReserved`).
#[derive(Debug, Default)]
pub struct Reserved(PerStorage);

impl Reserved {
    /// Adds (or, negative, gives back) `bytes` of `storage`.
    pub fn add(&self, storage: Storage, bytes: i64) {
        self.0.of(storage).fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn get(&self, storage: Storage) -> i64 {
        self.0.of(storage).load(Ordering::Relaxed)
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

/// The stream's `max_consumers` against the account's.
///
/// # Errors
/// 10026.
pub fn check_consumers(cfg: &StreamConfig, limits: &JsAccountLimits) -> Result<(), ApiError> {
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

/// Go's check of a reload that changes an enabled account's limits from `old` to `new` on a
/// single server: only growth needs room, beside what streams reserve and beside every
/// enabled account's limits (`others`, the account itself left out).
///
/// # Errors
/// 10028 or 10047.
pub fn account_update_fits<'a>(
    old: &JsAccountLimits,
    new: &JsAccountLimits,
    others: impl IntoIterator<Item = &'a JsAccountLimits>,
    reserved: (i64, i64),
    server: (i64, i64),
) -> Result<(), ApiError> {
    let growth = |new: i64, old: i64| new.saturating_sub(old).max(0);
    let memory = growth(new.max_memory, old.max_memory);
    let file = growth(new.max_store, old.max_store);
    if reserved.0.saturating_add(memory) > server.0 {
        return Err(exceeded(Storage::Memory));
    }
    if reserved.1.saturating_add(file) > server.1 {
        return Err(exceeded(Storage::File));
    }
    let (mut memory_all, mut file_all) = (old.max_memory.max(0), old.max_store.max(0));
    for limits in others {
        memory_all = memory_all.saturating_add(limits.max_memory.max(0));
        file_all = file_all.saturating_add(limits.max_store.max(0));
    }
    if memory_all.saturating_add(memory) > server.0 {
        return Err(exceeded(Storage::Memory));
    }
    if file_all.saturating_add(file) > server.1 {
        return Err(exceeded(Storage::File));
    }
    Ok(())
}

/// One stream's view of the limits a publish is checked against, and the counters its store
/// keeps up to date. The limits are read from the account's and the server's [`Usage`] at each
/// check, so a reload that raises one reaches running streams.
pub struct Quota {
    storage: Storage,
    account_name: Arc<str>,
    account: Arc<Usage>,
    server: Arc<Usage>,
}

impl Quota {
    /// The limits of a stream of `storage` in account `account_name`: the account's, which
    /// its `account` usage holds, and the server's, which `server` holds.
    pub fn new(
        storage: Storage,
        account_name: Arc<str>,
        account: Arc<Usage>,
        server: Arc<Usage>,
    ) -> Self {
        Self {
            storage,
            account_name,
            account,
            server,
        }
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
        let server_limit = self.server.limit(self.storage);
        if i64::try_from(self.server.used(self.storage)).unwrap_or(i64::MAX) > server_limit {
            if self.server.may_alert() {
                tracing::error!(
                    "JetStream {} resource limits exceeded for server",
                    self.kind()
                );
            }
            return Err(table::INSUFFICIENT_RESOURCES.err());
        }
        let account_limit = self.account.limit(self.storage);
        if account_limit >= 0 {
            let sizing = match self.storage {
                Storage::Memory => MsgSizing::Memory,
                Storage::File => MsgSizing::File,
            };
            let total = self
                .account
                .used(self.storage)
                .saturating_add(sizing.size(subject, headers, payload));
            if total > u64::try_from(account_limit).unwrap_or(0) {
                if self.account.may_warn(self.storage) {
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

#[cfg(test)]
mod tests {
    use natrium_store::{StorageUpdate, UpdateReason};

    use super::*;

    fn budget(account_limit: i64, account_reserved: i64, server_reserved: i64) -> Budget {
        Budget {
            account_limit,
            account_reserved,
            server_limit: 10_000,
            server_reserved,
        }
    }

    fn stream(storage: Storage, max_bytes: i64) -> StreamConfig {
        StreamConfig {
            name: "S".into(),
            storage,
            max_bytes,
            num_replicas: 1,
            ..StreamConfig::default()
        }
    }

    #[test]
    fn resources_reservation_fits_to_the_byte() {
        let b = budget(2000, 1500, 1500);
        assert!(check_bytes(Storage::Memory, 500, 1, &b).is_ok());
        let err = check_bytes(Storage::Memory, 501, 1, &b).unwrap_err();
        assert!(err.is(&table::MEMORY_RESOURCES_EXCEEDED));
        let err = check_bytes(Storage::File, 501, 1, &b).unwrap_err();
        assert!(err.is(&table::STORAGE_RESOURCES_EXCEEDED));
    }

    #[test]
    fn resources_no_max_bytes_counts_one_byte() {
        // A stream without max_bytes needs one byte left; none is left at the limit.
        assert!(check_bytes(Storage::Memory, -1, 1, &budget(2000, 1999, 0)).is_ok());
        assert!(check_bytes(Storage::Memory, -1, 1, &budget(2000, 2000, 0)).is_err());
        assert!(check_bytes(Storage::Memory, -1, 1, &budget(0, 0, 0)).is_err());
        // Zero (a config as sent, before defaults) needs nothing.
        assert!(check_bytes(Storage::Memory, 0, 1, &budget(2000, 2000, 0)).is_ok());
        assert!(check_bytes(Storage::Memory, 0, 1, &budget(2000, 2001, 0)).is_err());
    }

    #[test]
    fn resources_server_limit_counts_every_account() {
        // An unlimited account is still bound by the server.
        assert!(check_bytes(Storage::File, 1000, 1, &budget(-1, 0, 9000)).is_ok());
        assert!(check_bytes(Storage::File, 1001, 1, &budget(-1, 0, 9000)).is_err());
        assert!(check_bytes(Storage::File, 0, 1, &budget(-1, 0, 10_001)).is_err());
    }

    #[test]
    fn resources_untiered_account_counts_replicas() {
        assert!(check_bytes(Storage::File, 700, 3, &budget(2000, 0, 0)).is_err());
        assert!(check_bytes(Storage::File, 600, 3, &budget(2000, 0, 0)).is_ok());
    }

    #[test]
    fn resources_max_consumers_against_the_account() {
        let limits = JsAccountLimits {
            max_consumers: 7,
            ..JsAccountLimits::default()
        };
        let mut cfg = stream(Storage::File, -1);
        cfg.max_consumers = 8;
        let err = check_config(&cfg, &limits, &budget(-1, 0, 0)).unwrap_err();
        assert!(err.is(&table::MAXIMUM_CONSUMERS_LIMIT));
        cfg.max_consumers = 7;
        assert!(check_config(&cfg, &limits, &budget(-1, 0, 0)).is_ok());
        cfg.max_consumers = -1;
        assert!(check_config(&cfg, &limits, &budget(-1, 0, 0)).is_ok());
    }

    #[test]
    fn resources_update_reserves_only_the_growth() {
        let limits = JsAccountLimits::default();
        let old = stream(Storage::Memory, 1500);
        // The account holds 500 elsewhere; the server 2000 in all, this stream's 1500 included.
        let b = Budget {
            account_limit: 2000,
            account_reserved: 500,
            server_limit: 2000,
            server_reserved: 2000,
        };
        let grown = stream(Storage::Memory, 1501);
        let err = check_update(&grown, &old, &limits, &b).unwrap_err();
        assert!(err.is(&table::MEMORY_RESOURCES_EXCEEDED));
        assert!(check_update(&old, &old, &limits, &b).is_ok());
        assert!(check_update(&stream(Storage::Memory, 1000), &old, &limits, &b).is_ok());
        assert!(check_update(&stream(Storage::Memory, -1), &old, &limits, &b).is_ok());
        // A smaller server leaves room for the growth once the stream's own bytes are back.
        let roomy = Budget {
            server_reserved: 1000,
            ..b
        };
        let err = check_update(&grown, &old, &limits, &roomy).unwrap_err();
        assert!(
            err.is(&table::MEMORY_RESOURCES_EXCEEDED),
            "the account is full"
        );
    }

    #[test]
    fn resources_update_refused_when_the_account_is_over() {
        // Limits lowered below what is reserved: even an unchanged config is refused.
        let cfg = stream(Storage::File, 3000);
        let b = Budget {
            account_limit: 2000,
            account_reserved: 0,
            server_limit: 10_000,
            server_reserved: 3000,
        };
        assert!(check_update(&cfg, &cfg, &JsAccountLimits::default(), &b).is_err());
    }

    fn limits(mem: i64, file: i64) -> JsAccountLimits {
        JsAccountLimits {
            max_memory: mem,
            max_store: file,
            ..JsAccountLimits::default()
        }
    }

    #[test]
    fn resources_account_fits_beside_the_others() {
        let server = (10_000, 100_000);
        let a = limits(9500, 5000);
        assert!(account_fits(&a, &[], (0, 0), server).is_ok());
        let err = account_fits(&limits(1000, 50_000), &[a], (0, 0), server).unwrap_err();
        assert!(err.is(&table::MEMORY_RESOURCES_EXCEEDED));
        let err = account_fits(&limits(500, 95_001), &[a], (0, 0), server).unwrap_err();
        assert!(err.is(&table::STORAGE_RESOURCES_EXCEEDED));
        // Unlimited accounts count nothing; streams' reservations count.
        assert!(account_fits(&limits(-1, -1), &[a], (0, 0), server).is_ok());
        let err = account_fits(&limits(1000, 0), &[], (9001, 0), server).unwrap_err();
        assert!(err.is(&table::MEMORY_RESOURCES_EXCEEDED));
    }

    fn quota(storage: Storage, account_limit: i64, server_limit: i64) -> Quota {
        let account = Arc::new(Usage::default());
        account.set_limit(storage, account_limit);
        let server = Arc::new(Usage::default());
        server.set_limit(storage, server_limit);
        Quota::new(storage, Arc::from("A"), account, server)
    }

    #[test]
    fn resources_a_changed_account_limit_reaches_existing_quotas() {
        let q = quota(Storage::File, 1000, i64::MAX);
        assert!(q.admit(2, 0, 2000).is_err());
        q.account.set_limit(Storage::File, 10_000);
        assert!(q.admit(2, 0, 2000).is_ok());
        q.account.set_limit(Storage::File, -1);
        assert!(q.admit(2, 0, 1 << 30).is_ok());
    }

    #[test]
    fn resources_a_raised_server_limit_reaches_existing_quotas() {
        let q = quota(Storage::Memory, -1, 1000);
        q.server.add(Storage::Memory, 1500);
        let err = q.admit(2, 0, 10).unwrap_err();
        assert!(err.is(&table::INSUFFICIENT_RESOURCES));
        q.server.set_limit(Storage::Memory, 4000);
        assert!(q.admit(2, 0, 10).is_ok());
    }

    #[test]
    fn resources_an_account_update_needs_room_for_its_growth_only() {
        let server = (10_000, 10_000);
        let (old, others) = (limits(4000, 0), [limits(4000, 0)]);
        // 4000 + 4000 enabled; growing to 6000 needs 2000 more than the 2000 left.
        assert!(account_update_fits(&old, &limits(6000, 0), &others, (0, 0), server).is_ok());
        let err = account_update_fits(&old, &limits(6001, 0), &others, (0, 0), server).unwrap_err();
        assert!(err.is(&table::MEMORY_RESOURCES_EXCEEDED));
        // Shrinking always fits, even on a server already short.
        assert!(account_update_fits(&old, &limits(10, 0), &others, (9999, 0), server).is_ok());
        let err = account_update_fits(&limits(0, 10), &limits(0, 20), &[], (0, 9995), server)
            .unwrap_err();
        assert!(err.is(&table::STORAGE_RESOURCES_EXCEEDED));
    }

    #[test]
    fn resources_publish_fits_the_account_with_the_message() {
        // A file record of a 1000-byte payload on "f1": 22 + 2 + 1000 + 8 = 1032 bytes.
        let q = quota(Storage::File, 5000, i64::MAX);
        q.count(4 * 1032);
        let err = q.admit(2, 0, 1000).unwrap_err();
        assert!(err.is(&table::ACCOUNT_RESOURCES_EXCEEDED));
        assert!(q.admit(2, 0, 5000 - 4 * 1032 - 32).is_ok());
        assert!(q.admit(2, 0, 5000 - 4 * 1032 - 31).is_err());
        q.count(-4 * 1032);
        assert!(q.admit(2, 0, 1000).is_ok());
    }

    #[test]
    fn resources_publish_refused_once_the_server_is_over() {
        let q = quota(Storage::Memory, -1, 10_000);
        q.count(10_000);
        assert!(
            q.admit(2, 0, 3000).is_ok(),
            "the server is at, not over, its limit"
        );
        q.count(1);
        let err = q.admit(2, 0, 1).unwrap_err();
        assert!(err.is(&table::INSUFFICIENT_RESOURCES));
    }

    #[test]
    fn resources_store_updates_reach_both_counters() {
        let q = quota(Storage::Memory, -1, i64::MAX);
        let mut updates = q.updates();
        for bytes in [118_i64, 118, -118] {
            updates(&StorageUpdate {
                msgs: bytes.signum(),
                bytes,
                seq: 1,
                subject: b"m1",
                reason: UpdateReason::Stored,
            });
        }
        assert_eq!(q.account.used(Storage::Memory), 118);
        assert_eq!(q.server.used(Storage::Memory), 118);
        assert_eq!(q.account.used(Storage::File), 0);
        q.count(-1000);
        assert_eq!(
            q.account.used(Storage::Memory),
            0,
            "never reported negative"
        );
    }

    #[test]
    fn resources_log_lines_are_rate_limited() {
        let usage = Usage::default();
        assert!(usage.may_warn(Storage::File));
        assert!(!usage.may_warn(Storage::File));
        assert!(usage.may_warn(Storage::Memory));
        assert!(usage.may_alert());
        assert!(!usage.may_alert());
    }
}
