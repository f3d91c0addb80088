//! The server's accounts: `$G`, the configured ones, and the system account, linked according
//! to their imports. A registry is never changed once built: a configuration reload builds a
//! new one from the old ([`Accounts::rebuild`]) and the server swaps it in whole.
//!
//! The system account is Go's: the one `system_account` names (which must exist), else a
//! configured `$SYS`, else a `$SYS` created for the purpose; none with `no_system_account`.

use std::collections::HashMap;
use std::sync::Arc;

use natrium_auth::account::{AccountSpec, ExportKind, ImportKind, ResponseType};
use nats_subject::subject_is_subset;
use rustc_hash::FxHashMap;

use super::links::{Links, Mapping, ServiceForward, StreamForward};
use super::{Account, GLOBAL_ACCOUNT, SYSTEM_ACCOUNT};
use crate::config::CoreConfig;

/// Why the accounts could not be set up (Go's start-up errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountsError {
    #[error("error resolving system account: account missing")]
    SystemAccountMissing,
}

pub struct Accounts {
    by_name: FxHashMap<String, Arc<Account>>,
    /// Every account in creation order: `$G`, the configured ones, a created `$SYS`.
    all: Vec<Arc<Account>>,
    global: Arc<Account>,
    system: Option<Arc<Account>>,
}

/// An account with the definition it is about to be given.
struct Entry {
    account: Arc<Account>,
    spec: AccountSpec,
}

impl Accounts {
    /// Creates and links the accounts `config` describes.
    ///
    /// # Errors
    /// When `system_account` names an account that does not exist.
    pub fn build(config: &CoreConfig) -> Result<Self, AccountsError> {
        Self::assemble(None, config)
    }

    /// The accounts after a reload to `config`: each account still configured is this
    /// registry's object (its subscriptions, counters and response table kept) with the new
    /// definition; new ones are created; `$G` and a created `$SYS` are kept. Also returns the
    /// accounts left out, whose clients the caller deals with. On error nothing has changed.
    ///
    /// # Errors
    /// As [`Accounts::build`].
    pub fn rebuild(&self, config: &CoreConfig) -> Result<(Self, Vec<Arc<Account>>), AccountsError> {
        let next = Self::assemble(Some(self), config)?;
        let removed = self
            .all
            .iter()
            .filter(|a| !next.by_name.contains_key(&a.name))
            .cloned()
            .collect();
        Ok((next, removed))
    }

    fn assemble(previous: Option<&Self>, config: &CoreConfig) -> Result<Self, AccountsError> {
        let cache_enabled = !config.disable_sublist_cache;
        // Kept accounts stay registered or not; new ones in operator mode wait for first use.
        let create = |spec: &AccountSpec| {
            let account = Account::from_spec(spec.clone(), cache_enabled);
            if config.accounts_on_demand {
                account.set_registered(false);
            }
            Arc::new(account)
        };
        let reuse = |name: &str| previous.and_then(|p| p.by_name.get(name)).cloned();
        let global = previous.map_or_else(
            || Arc::new(Account::new(GLOBAL_ACCOUNT, cache_enabled)),
            |p| Arc::clone(&p.global),
        );
        // Go updates `$G` only from a configuration that defines it (top-level `mappings`):
        // once they are removed, its mappings stay as they were.
        let mut global_spec = named(GLOBAL_ACCOUNT);
        if previous.is_some() {
            global_spec
                .mappings
                .clone_from(&global.state().spec.mappings);
        }
        let mut entries = vec![Entry {
            account: Arc::clone(&global),
            spec: global_spec,
        }];
        for spec in &config.accounts {
            if spec.name == GLOBAL_ACCOUNT {
                // Go lets the configuration define `$G`: it updates the global account.
                if let Some(first) = entries.first_mut() {
                    first.spec = spec.clone();
                }
                continue;
            }
            let account = reuse(&spec.name).unwrap_or_else(|| create(spec));
            entries.push(Entry {
                account,
                spec: spec.clone(),
            });
        }
        let find = |entries: &[Entry], name: &str| {
            entries
                .iter()
                .find(|e| e.account.name == name)
                .map(|e| Arc::clone(&e.account))
        };
        let system = if config.no_system_account {
            None
        } else {
            let name = if config.system_account.is_empty() {
                SYSTEM_ACCOUNT
            } else {
                config.system_account.as_str()
            };
            match find(&entries, name) {
                Some(account) => Some(account),
                None if name == SYSTEM_ACCOUNT => {
                    let account = reuse(SYSTEM_ACCOUNT)
                        .unwrap_or_else(|| Arc::new(Account::new(SYSTEM_ACCOUNT, cache_enabled)));
                    entries.push(Entry {
                        account: Arc::clone(&account),
                        spec: named(SYSTEM_ACCOUNT),
                    });
                    Some(account)
                }
                None => return Err(AccountsError::SystemAccountMissing),
            }
        };
        if let Some(system) = &system {
            // The system account is always in use.
            system.set_registered(true);
        }
        let mut links = link(&entries);
        for entry in &entries {
            let l = links.remove(&entry.account.name).filter(|l| !l.is_empty());
            entry.account.set_state(entry.spec.clone(), l);
        }
        let all: Vec<Arc<Account>> = entries.into_iter().map(|e| e.account).collect();
        let by_name = all
            .iter()
            .map(|a| (a.name.clone(), Arc::clone(a)))
            .collect();
        Ok(Self {
            by_name,
            all,
            global,
            system,
        })
    }

    /// Marks `account` in use, with the accounts it imports from.
    pub fn register(&self, account: &Account) {
        if account.is_registered() {
            return;
        }
        account.set_registered(true);
        for import in &account.state().spec.imports {
            if let Some(exporter) = self.by_name.get(&import.account) {
                exporter.set_registered(true);
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Account>> {
        self.by_name.get(name)
    }

    pub fn global(&self) -> &Arc<Account> {
        &self.global
    }

    pub fn system(&self) -> Option<&Arc<Account>> {
        self.system.as_ref()
    }

    /// Every account, `$G` first, then in configuration order.
    pub fn all(&self) -> &[Arc<Account>] {
        &self.all
    }
}

fn named(name: &str) -> AccountSpec {
    AccountSpec {
        name: name.to_owned(),
        ..AccountSpec::default()
    }
}

/// Compiles every account's imports into links on both sides, by account name.
fn link(entries: &[Entry]) -> HashMap<String, Links<Account>> {
    let by_name: HashMap<&str, &Entry> = entries
        .iter()
        .map(|e| (e.account.name.as_str(), e))
        .collect();
    let mut links: HashMap<String, Links<Account>> = HashMap::new();
    for importer in entries {
        for import in &importer.spec.imports {
            let Some(exporter) = by_name.get(import.account.as_str()) else {
                continue;
            };
            match import.kind {
                ImportKind::Stream { allow_trace } => {
                    links
                        .entry(exporter.account.name.clone())
                        .or_default()
                        .streams
                        .push(StreamForward {
                            from: import.subject.as_bytes().into(),
                            local: import.local.as_bytes().into(),
                            mapping: Mapping::new(&import.subject, &import.local),
                            to: Arc::downgrade(&importer.account),
                            allow_trace,
                        });
                }
                ImportKind::Service { share } => {
                    let (response, threshold, allow_trace) =
                        service_terms(&exporter.spec, &import.subject);
                    links
                        .entry(importer.account.name.clone())
                        .or_default()
                        .services
                        .push(ServiceForward {
                            local: import.local.as_bytes().into(),
                            mapping: Mapping::service(&import.local, &import.subject),
                            to: Arc::downgrade(&exporter.account),
                            share,
                            response,
                            threshold,
                            allow_trace,
                        });
                    links
                        .entry(exporter.account.name.clone())
                        .or_default()
                        .responds = true;
                }
            }
        }
    }
    links
}

/// The response type, threshold and `allow_trace` of the exporter's service export covering
/// `subject`.
fn service_terms(
    exporter: &AccountSpec,
    subject: &str,
) -> (ResponseType, std::time::Duration, bool) {
    let services = exporter.exports.iter().filter_map(|e| match e.kind {
        ExportKind::Service {
            response,
            threshold,
            allow_trace,
        } => Some((e, (response, threshold, allow_trace))),
        ExportKind::Stream => None,
    });
    let mut best = None;
    for (export, terms) in services {
        if export.subject == subject {
            return terms;
        }
        if best.is_none() && subject_is_subset(subject.as_bytes(), export.subject.as_bytes()) {
            best = Some(terms);
        }
    }
    best.unwrap_or((
        ResponseType::Singleton,
        natrium_auth::account::RESPONSE_THRESHOLD_DEFAULT,
        false,
    ))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use natrium_auth::account::{Export, Import};

    fn spec(name: &str) -> AccountSpec {
        named(name)
    }

    fn config(specs: &[AccountSpec], system: &str, no_system: bool) -> CoreConfig {
        CoreConfig {
            accounts: specs.to_vec(),
            system_account: system.to_owned(),
            no_system_account: no_system,
            ..CoreConfig::default()
        }
    }

    #[test]
    fn account_registry_system_account_like_go() {
        let a = Accounts::build(&config(&[spec("A")], "", false)).expect("accounts");
        let names: Vec<_> = a.all().iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["$G", "A", "$SYS"]);
        assert_eq!(a.system().map(|s| s.name.as_str()), Some("$SYS"));
        let a = Accounts::build(&config(&[spec("A")], "A", false)).expect("accounts");
        assert_eq!(a.all().len(), 2);
        assert_eq!(a.system().map(|s| s.name.as_str()), Some("A"));
        let a = Accounts::build(&config(&[spec("A")], "", true)).expect("accounts");
        assert!(a.system().is_none());
        assert_eq!(
            Accounts::build(&config(&[spec("A")], "Z", false)).err(),
            Some(AccountsError::SystemAccountMissing)
        );
    }

    #[test]
    fn account_registry_links_imports() {
        let mut a = spec("A");
        a.exports = vec![
            Export {
                subject: "s.>".into(),
                kind: ExportKind::Stream,
                accounts: None,
                token_position: 0,
            },
            Export {
                subject: "svc.>".into(),
                kind: ExportKind::Service {
                    response: ResponseType::Streamed,
                    threshold: std::time::Duration::from_secs(9),
                    allow_trace: false,
                },
                accounts: None,
                token_position: 0,
            },
        ];
        let mut b = spec("B");
        b.imports = vec![
            Import {
                account: "A".into(),
                subject: "s.>".into(),
                local: "p.s.>".into(),
                kind: ImportKind::Stream { allow_trace: false },
            },
            Import {
                account: "A".into(),
                subject: "svc.x".into(),
                local: "local.x".into(),
                kind: ImportKind::Service { share: false },
            },
        ];
        let accounts = Accounts::build(&config(&[a, b, spec("C")], "", false)).expect("accounts");
        let get = |n: &str| Arc::clone(accounts.get(n).expect("account"));
        let a_links = get("A")
            .links()
            .map(|l| (l.streams.len(), l.services.len(), l.responds));
        assert_eq!(a_links, Some((1, 0, true)));
        let b = get("B");
        let svc = b
            .links()
            .and_then(|l| l.services.first().map(|s| s.response));
        assert_eq!(svc, Some(ResponseType::Streamed));
        assert!(get("C").links().is_none());
        assert!(get("$G").links().is_none());
    }

    #[test]
    fn account_registry_rebuild_keeps_accounts_by_name() {
        let mut a = spec("A");
        a.exports = vec![Export {
            subject: "s.>".into(),
            kind: ExportKind::Stream,
            accounts: None,
            token_position: 0,
        }];
        let before = Accounts::build(&config(&[a.clone(), spec("B"), spec("C")], "", false))
            .expect("accounts");
        let get = |r: &Accounts, n: &str| Arc::clone(r.get(n).expect("account"));
        let mut b = spec("B");
        b.imports = vec![Import {
            account: "A".into(),
            subject: "s.>".into(),
            local: "s.>".into(),
            kind: ImportKind::Stream { allow_trace: false },
        }];
        let (after, removed) = before
            .rebuild(&config(&[a, b, spec("D")], "", false))
            .expect("rebuild");
        for name in ["$G", "A", "B", "$SYS"] {
            assert!(
                Arc::ptr_eq(&get(&before, name), &get(&after, name)),
                "{name}"
            );
        }
        let removed: Vec<_> = removed.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(removed, ["C"]);
        assert!(after.get("D").is_some() && after.get("C").is_none());
        // The kept exporter gained a link to the new importer.
        assert_eq!(get(&after, "A").links().map(|l| l.streams.len()), Some(1));
        assert_eq!(get(&after, "B").state().spec.imports.len(), 1);
        // A refused rebuild changes nothing.
        let refused = after.rebuild(&config(&[spec("A")], "Z", false));
        assert_eq!(refused.err(), Some(AccountsError::SystemAccountMissing));
        assert_eq!(get(&after, "A").links().map(|l| l.streams.len()), Some(1));
    }
}
