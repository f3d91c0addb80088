//! The server's accounts: `$G`, the configured ones, and the system account, built once at
//! start and linked according to their imports. Lookups by name are read-only afterwards, so
//! the registry needs no lock.
//!
//! The system account is Go's: the one `system_account` names (which must exist), else a
//! configured `$SYS`, else a `$SYS` created for the purpose; none with `no_system_account`.

use std::collections::HashMap;
use std::sync::Arc;

use natrium_auth::account::{AccountSpec, ExportKind, ImportKind, ResponseType};
use nats_subject::subject_is_subset;

use super::links::{Links, Mapping, ServiceForward, StreamForward};
use super::{Account, GLOBAL_ACCOUNT, SYSTEM_ACCOUNT};
use crate::fxhash::FxHashMap;

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

impl Accounts {
    /// Creates and links the accounts. `system` is `system_account` (empty: `$SYS`).
    ///
    /// # Errors
    /// When `system_account` names an account that does not exist.
    pub fn build(
        specs: &[AccountSpec],
        system: &str,
        no_system: bool,
        cache_enabled: bool,
    ) -> Result<Self, AccountsError> {
        let global = Arc::new(Account::new(GLOBAL_ACCOUNT, cache_enabled));
        let mut all = vec![Arc::clone(&global)];
        for spec in specs {
            all.push(Arc::new(Account::from_spec(spec.clone(), cache_enabled)));
        }
        let mut by_name: FxHashMap<String, Arc<Account>> = all
            .iter()
            .map(|a| (a.name.clone(), Arc::clone(a)))
            .collect();
        let system = if no_system {
            None
        } else {
            let name = if system.is_empty() {
                SYSTEM_ACCOUNT
            } else {
                system
            };
            match by_name.get(name) {
                Some(account) => Some(Arc::clone(account)),
                None if name == SYSTEM_ACCOUNT => {
                    let account = Arc::new(Account::new(SYSTEM_ACCOUNT, cache_enabled));
                    by_name.insert(SYSTEM_ACCOUNT.to_owned(), Arc::clone(&account));
                    all.push(Arc::clone(&account));
                    Some(account)
                }
                None => return Err(AccountsError::SystemAccountMissing),
            }
        };
        let accounts = Self {
            by_name,
            all,
            global,
            system,
        };
        accounts.link();
        Ok(accounts)
    }

    /// Operator mode: configured accounts other than the system account wait for first use
    /// before monitoring lists them.
    pub fn register_on_demand(&self) {
        for account in &self.all {
            let system = self
                .system
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, account));
            if !Arc::ptr_eq(account, &self.global) && !system {
                account.set_registered(false);
            }
        }
    }

    /// Marks `account` in use, with the accounts it imports from.
    pub fn register(&self, account: &Account) {
        if account.is_registered() {
            return;
        }
        account.set_registered(true);
        for import in &account.spec.imports {
            if let Some(exporter) = self.by_name.get(&import.account) {
                exporter.set_registered(true);
            }
        }
    }

    /// Compiles every account's imports into links on both sides.
    fn link(&self) {
        let mut links: HashMap<String, Links> = HashMap::new();
        for importer in &self.all {
            for import in &importer.spec.imports {
                let Some(exporter) = self.by_name.get(&import.account) else {
                    continue;
                };
                match import.kind {
                    ImportKind::Stream => {
                        links
                            .entry(exporter.name.clone())
                            .or_default()
                            .streams
                            .push(StreamForward {
                                from: import.subject.as_bytes().into(),
                                mapping: Mapping::new(&import.subject, &import.local),
                                to: Arc::downgrade(importer),
                            });
                    }
                    ImportKind::Service { share } => {
                        let (response, threshold) = service_terms(exporter, &import.subject);
                        links
                            .entry(importer.name.clone())
                            .or_default()
                            .services
                            .push(ServiceForward {
                                local: import.local.as_bytes().into(),
                                mapping: Mapping::service(&import.local, &import.subject),
                                to: Arc::downgrade(exporter),
                                share,
                                response,
                                threshold,
                            });
                        links.entry(exporter.name.clone()).or_default().responds = true;
                    }
                }
            }
        }
        for (name, l) in links {
            if let Some(account) = self.by_name.get(&name) {
                if !l.is_empty() {
                    account.set_links(l);
                }
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

/// The response type and threshold of the exporter's service export covering `subject`.
fn service_terms(exporter: &Account, subject: &str) -> (ResponseType, std::time::Duration) {
    let services = exporter.spec.exports.iter().filter_map(|e| match e.kind {
        ExportKind::Service {
            response,
            threshold,
        } => Some((e, response, threshold)),
        ExportKind::Stream => None,
    });
    let mut best = None;
    for (export, response, threshold) in services {
        if export.subject == subject {
            return (response, threshold);
        }
        if best.is_none() && subject_is_subset(subject.as_bytes(), export.subject.as_bytes()) {
            best = Some((response, threshold));
        }
    }
    best.unwrap_or((
        ResponseType::Singleton,
        natrium_auth::account::RESPONSE_THRESHOLD_DEFAULT,
    ))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use natrium_auth::account::{Export, Import};

    fn spec(name: &str) -> AccountSpec {
        AccountSpec {
            name: name.into(),
            ..AccountSpec::default()
        }
    }

    #[test]
    fn account_registry_system_account_like_go() {
        let a = Accounts::build(&[spec("A")], "", false, true).expect("accounts");
        let names: Vec<_> = a.all().iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["$G", "A", "$SYS"]);
        assert_eq!(a.system().map(|s| s.name.as_str()), Some("$SYS"));
        let a = Accounts::build(&[spec("A")], "A", false, true).expect("accounts");
        assert_eq!(a.all().len(), 2);
        assert_eq!(a.system().map(|s| s.name.as_str()), Some("A"));
        let a = Accounts::build(&[spec("A")], "", true, true).expect("accounts");
        assert!(a.system().is_none());
        assert_eq!(
            Accounts::build(&[spec("A")], "Z", false, true).err(),
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
                kind: ImportKind::Stream,
            },
            Import {
                account: "A".into(),
                subject: "svc.x".into(),
                local: "local.x".into(),
                kind: ImportKind::Service { share: false },
            },
        ];
        let accounts = Accounts::build(&[a, b, spec("C")], "", false, true).expect("accounts");
        let get = |n: &str| Arc::clone(accounts.get(n).expect("account"));
        let a_links = get("A")
            .links()
            .map(|l| (l.streams.len(), l.services.len(), l.responds));
        assert_eq!(a_links, Some((1, 0, true)));
        let b = get("B");
        let svc = b.links().and_then(|l| l.services.first());
        assert_eq!(svc.map(|s| s.response), Some(ResponseType::Streamed));
        assert!(get("C").links().is_none());
        assert!(get("$G").links().is_none());
    }
}
