//! The account itself: its subscription index, its definition and links (swapped whole on a
//! reload), its counters, its response table and its interest listeners.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};

use natrium_auth::account::AccountSpec;
use nats_subject::{Mapped, Sublist, SublistError};

use super::interest::{self, InterestListener};
use super::links::Links;
use super::mappings::Mappings;
use super::responses::Responses;
use super::stats::AccountStats;
use crate::endpoint::Subscription;

/// A subscription as stored in the index: identity is the allocation, not the contents.
#[derive(Clone)]
pub struct SubRef(pub Arc<Subscription>);

impl PartialEq for SubRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SubRef {}

/// Hashes the handle's address, consistent with the pointer equality above.
impl std::hash::Hash for SubRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0), state);
    }
}

impl std::ops::Deref for SubRef {
    type Target = Subscription;
    fn deref(&self) -> &Subscription {
        &self.0
    }
}

/// An account's definition and what the registry compiled from it, replaced together.
#[derive(Debug, Default)]
pub struct AccountState {
    /// Exports, imports and limits as configured (empty for `$G` and a default `$SYS`).
    pub spec: AccountSpec,
    /// `None` while nothing links this account to another.
    pub links: Option<Links<Account>>,
    /// The subject mappings compiled from `spec`.
    pub mappings: Mappings,
}

/// An account's links, held for the length of one publish.
pub struct LinksRef(Guard<Arc<AccountState>>);

impl std::ops::Deref for LinksRef {
    type Target = Links<Account>;
    fn deref(&self) -> &Links<Account> {
        static NONE: Links<Account> = Links {
            streams: Vec::new(),
            services: Vec::new(),
            responds: false,
        };
        self.0.links.as_ref().unwrap_or(&NONE)
    }
}

pub struct Account {
    pub name: String,
    pub sublist: Sublist<SubRef>,
    /// Replaced whole by the registry (at start and on reload).
    state: ArcSwap<AccountState>,
    /// Whether `state` has links, so that the publish path of an unlinked account stops at
    /// one relaxed load.
    linked: AtomicBool,
    /// Whether `state` has mappings, so that publishing in an account without stops at one
    /// relaxed load.
    mapped: AtomicBool,
    /// Whether `state` has `msg_trace`: only then may a `traceparent` header start a trace,
    /// so other accounts' messages are not searched for one.
    parent_traced: AtomicBool,
    pub stats: AccountStats,
    /// Reply subjects handed to this account's responders for requests imported from others.
    pub responses: Responses<Account>,
    /// When the account was created (Go's `update_time`).
    pub updated: chrono::DateTime<chrono::Utc>,
    /// Whether the account is in use: monitoring lists only those. Operator mode's accounts
    /// become so when a user logs into them (or into an account importing from them), as Go
    /// registers resolver accounts on first use; others are from the start.
    registered: AtomicBool,
    /// Interest listeners; their lock also orders the account's subscription changes.
    interest: interest::InterestHooks,
}

impl Account {
    pub fn new(name: &str, cache_enabled: bool) -> Self {
        Self::from_spec(
            AccountSpec {
                name: name.to_owned(),
                ..AccountSpec::default()
            },
            cache_enabled,
        )
    }

    pub fn from_spec(spec: AccountSpec, cache_enabled: bool) -> Self {
        let mappings = Mappings::compile(&spec);
        Self {
            name: spec.name.clone(),
            parent_traced: AtomicBool::new(spec.msg_trace.is_some()),
            sublist: Sublist::new(cache_enabled),
            mapped: AtomicBool::new(!mappings.is_empty()),
            state: ArcSwap::from_pointee(AccountState {
                spec,
                links: None,
                mappings,
            }),
            linked: AtomicBool::new(false),
            stats: AccountStats::default(),
            responses: Responses::new(),
            updated: chrono::Utc::now(),
            registered: AtomicBool::new(true),
            interest: interest::InterestHooks::default(),
        }
    }

    pub fn is_registered(&self) -> bool {
        self.registered.load(Ordering::Relaxed)
    }

    pub(crate) fn set_registered(&self, on: bool) {
        self.registered.store(on, Ordering::Relaxed);
    }

    /// The definition in force (exports, imports, limits) with its links.
    pub fn state(&self) -> Arc<AccountState> {
        self.state.load_full()
    }

    /// The links to other accounts, if any is in use.
    #[inline]
    pub fn links(&self) -> Option<LinksRef> {
        if !self.linked.load(Ordering::Acquire) {
            return None;
        }
        let state = self.state.load();
        state.links.is_some().then(|| LinksRef(state))
    }

    /// Installs a definition and its links; only the registry does, at start and on reload.
    pub(crate) fn set_state(&self, spec: AccountSpec, links: Option<Links<Account>>) {
        let linked = links.is_some();
        let parent_traced = spec.msg_trace.is_some();
        let mappings = Mappings::compile(&spec);
        let mapped = !mappings.is_empty();
        self.state.store(Arc::new(AccountState {
            spec,
            links,
            mappings,
        }));
        self.linked.store(linked, Ordering::Release);
        self.mapped.store(mapped, Ordering::Release);
        self.parent_traced.store(parent_traced, Ordering::Relaxed);
    }

    /// Whether the account has subject mappings (one relaxed load: the publish path's check).
    #[inline]
    pub fn has_mappings(&self) -> bool {
        self.mapped.load(Ordering::Relaxed)
    }

    /// Maps a published `subject` with the account's mappings; the new subject goes to `out`.
    pub fn map_subject(&self, subject: &[u8], out: &mut Vec<u8>) -> Mapped {
        if !self.has_mappings() {
            return Mapped::Unmatched;
        }
        self.state.load().mappings.apply(subject, out)
    }

    /// Whether a sampled `traceparent` header starts a trace here (`msg_trace` is set).
    #[inline]
    pub fn traces_parent(&self) -> bool {
        self.parent_traced.load(Ordering::Relaxed)
    }

    /// Counts a client in, unless the account's `max_connections` is reached.
    /// How Go's log lines name the account: its name, and the JWT's name after it when it
    /// has one (`AKEY…/Sales`).
    pub fn log_label(&self) -> String {
        let state = self.state();
        if state.spec.name_tag.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.name, state.spec.name_tag)
        }
    }

    /// Puts `sub` in the account's index; interest listeners hear of interest that appears
    /// with it (see [`interest`]).
    pub fn subscribe(&self, sub: SubRef) -> Result<(), SublistError> {
        let hooks = self.interest.hold();
        let held = Arc::clone(&sub.0);
        let change = self
            .sublist
            .insert(&held.subject, held.queue.as_deref(), sub)?;
        hooks.tell(&self.name, &held.subject, held.queue.as_deref(), change);
        Ok(())
    }

    /// Takes `sub` out of the account's index; interest listeners hear of interest that goes
    /// with it.
    pub fn unsubscribe(&self, sub: &SubRef) -> Result<(), SublistError> {
        let hooks = self.interest.hold();
        let change = self
            .sublist
            .remove(&sub.subject, sub.queue.as_deref(), sub)?;
        hooks.tell(&self.name, &sub.subject, sub.queue.as_deref(), change);
        Ok(())
    }

    /// Registers `listener` for this account's interest changes from now on.
    pub fn add_interest_listener(&self, listener: Arc<dyn InterestListener>) {
        self.interest.add(listener);
    }

    /// Unregisters `listener` (the same `Arc`).
    pub fn remove_interest_listener(&self, listener: &Arc<dyn InterestListener>) {
        self.interest.remove(listener);
    }

    pub fn try_add_client(&self) -> bool {
        let max = self.state.load().spec.limits.max_connections;
        self.stats.try_add_conn(max)
    }

    pub fn remove_client(&self) {
        self.stats.remove_conn();
    }
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
