//! What an account is made of, whether the configuration file or an account JWT describes it:
//! the subjects it exports to other accounts, what it imports from them, and its limits. Also
//! the rules that decide whether an import is allowed ([`export_allows`]) and whether adding
//! one would make requests or streams go round in a circle ([`ImportGraph`]).
//!
//! Subjects are kept as written; the runtime compiles them. An import's `subject` is always
//! the exporter's subject and `local` the importer's (Go's `local_subject`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use nats_subject::{subject_is_subset, subjects_collide};

/// Go's response threshold when an export sets none (`DEFAULT_SERVICE_EXPORT_RESPONSE_THRESHOLD`).
pub const RESPONSE_THRESHOLD_DEFAULT: Duration = Duration::from_secs(120);

/// Go's `MaxAccountCycleSearchDepth`: accounts visited before a cycle search gives up.
pub const CYCLE_SEARCH_DEPTH_MAX: usize = 1024;

/// One account's definition.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountSpec {
    pub name: String,
    pub exports: Vec<Export>,
    pub imports: Vec<Import>,
    pub limits: AccountLimits,
    /// The account JWT's `name` (operator mode), which Go's log lines add to the account's
    /// public key; empty for configured accounts.
    pub name_tag: String,
    /// Unix seconds at which the account's JWT expires (operator mode); its clients are then
    /// closed, as Go closes them.
    pub expires: Option<i64>,
    /// `msg_trace`: where messages carrying a sampled W3C `traceparent` header are traced.
    pub msg_trace: Option<MsgTraceDest>,
    /// `jetstream`: JetStream on for this account, with these limits.
    pub jetstream: Option<JsAccountLimits>,
    /// `mappings`: subjects published in the account rewritten to weighted destinations, in
    /// the order written (a later entry for the same source replaces the earlier one).
    pub mappings: Vec<SubjectMapping>,
}

/// One `mappings` entry: a source subject and its destinations as configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubjectMapping {
    pub source: String,
    pub dests: Vec<nats_subject::MapDest>,
}

/// An account's JetStream limits (`jetstream { max_memory … }`); `-1` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsAccountLimits {
    pub max_memory: i64,
    pub max_store: i64,
    pub max_streams: i64,
    pub max_consumers: i64,
    pub max_ack_pending: i64,
    pub memory_max_stream_bytes: i64,
    pub store_max_stream_bytes: i64,
    pub max_bytes_required: bool,
}

impl Default for JsAccountLimits {
    fn default() -> Self {
        Self {
            max_memory: -1,
            max_store: -1,
            max_streams: -1,
            max_consumers: -1,
            max_ack_pending: -1,
            memory_max_stream_bytes: -1,
            store_max_stream_bytes: -1,
            max_bytes_required: false,
        }
    }
}

/// An account's `msg_trace` (or `trace_dest`) setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MsgTraceDest {
    /// The subject trace events are published on, in the account.
    pub dest: String,
    /// Percentage (1 to 100) of sampled `traceparent` messages that are traced.
    pub sampling: u8,
}

/// Per-account limits; `-1` means unlimited, as in Go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountLimits {
    pub max_connections: i64,
    pub max_subscriptions: i64,
    pub max_payload: i64,
    pub max_leafnodes: i64,
}

impl Default for AccountLimits {
    fn default() -> Self {
        Self {
            max_connections: -1,
            max_subscriptions: -1,
            max_payload: -1,
            max_leafnodes: -1,
        }
    }
}

/// What a service export promises about responses (Go's `ServiceRespType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseType {
    /// One response per request.
    #[default]
    Singleton,
    /// Any number of responses until the threshold passes without one.
    Streamed,
    /// Any number of responses until an empty one.
    Chunked,
}

impl ResponseType {
    /// The name Go's monitoring prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Singleton => "Singleton",
            Self::Streamed => "Streamed",
            Self::Chunked => "Chunked",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Stream,
    Service {
        response: ResponseType,
        /// How long a response may take before its mapping is dropped.
        threshold: Duration,
        /// `allow_trace`: message tracing goes on into the exporting account.
        allow_trace: bool,
    },
}

/// One export. `accounts: None` is a public export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub subject: String,
    pub kind: ExportKind,
    pub accounts: Option<Vec<String>>,
    /// `account_token_position`: when set (1-based), the importer's name must be that token
    /// of the imported subject.
    pub token_position: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportKind {
    Stream {
        /// `allow_trace`: message tracing goes on into the importing account.
        allow_trace: bool,
    },
    Service {
        /// Share the requester's details with the exporter (`share`).
        share: bool,
    },
}

/// One import of another account's export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The exporting account.
    pub account: String,
    /// The subject in the exporting account.
    pub subject: String,
    /// The subject in the importing account (prefix or `to` applied).
    pub local: String,
    pub kind: ImportKind,
}

impl Import {
    pub fn is_service(&self) -> bool {
        matches!(self.kind, ImportKind::Service { .. })
    }
}

/// Whether `key` is a public account nkey (`A…`, with a valid checksum).
pub fn is_public_account_key(key: &str) -> bool {
    key.starts_with('A') && nkeys::KeyPair::from_public_key(key).is_ok()
}

/// Whether account `importer` may import `subject` from an account with `exports`: an export
/// of the same kind with the same subject, or one the subject is a subset of, must let it.
pub fn export_allows(exports: &[Export], service: bool, importer: &str, subject: &str) -> bool {
    let of_kind = |e: &&Export| matches!(e.kind, ExportKind::Service { .. }) == service;
    if let Some(exact) = exports
        .iter()
        .filter(of_kind)
        .find(|e| e.subject == subject)
    {
        return grants(exact, importer, subject);
    }
    exports
        .iter()
        .filter(of_kind)
        .filter(|e| subject_is_subset(subject.as_bytes(), e.subject.as_bytes()))
        .any(|e| grants(e, importer, subject))
}

fn grants(export: &Export, importer: &str, subject: &str) -> bool {
    if export.token_position > 0 {
        let position = export.token_position as usize;
        return subject.split('.').nth(position - 1) == Some(importer);
    }
    export
        .accounts
        .as_ref()
        .is_none_or(|list| list.iter().any(|a| a == importer))
}

/// Why an import was refused by [`ImportGraph`]; the texts are Go's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CycleError {
    #[error("import forms a cycle")]
    FormsCycle,
    #[error("search cycle depth exhausted")]
    DepthExhausted,
}

/// Imports accepted so far, with each account's exports, for cycle checks as imports are
/// added one by one (the order decides which import of a cycle is refused, as in Go).
#[derive(Debug, Default)]
pub struct ImportGraph {
    exports: HashMap<String, Vec<Export>>,
    imports: HashMap<String, Vec<Import>>,
}

impl ImportGraph {
    pub fn new(accounts: &[AccountSpec]) -> Self {
        Self {
            exports: accounts
                .iter()
                .map(|a| (a.name.clone(), a.exports.clone()))
                .collect(),
            imports: HashMap::new(),
        }
    }

    /// Adds `import` of account `importer` unless it closes a cycle.
    ///
    /// # Errors
    /// [`CycleError`] when it would; the import is then not added.
    pub fn add(&mut self, importer: &str, import: &Import) -> Result<(), CycleError> {
        let mut visited = HashSet::from([importer.to_owned()]);
        if import.is_service() {
            self.service_cycles(&import.account, &import.local, &mut visited)?;
        } else {
            self.stream_cycles(&import.account, &import.local, &mut visited)?;
            let mut visited = HashSet::from([importer.to_owned()]);
            self.stream_cycles(&import.account, &import.subject, &mut visited)?;
        }
        self.imports
            .entry(importer.to_owned())
            .or_default()
            .push(import.clone());
        Ok(())
    }

    fn imports_of(&self, account: &str, service: bool) -> Vec<&Import> {
        self.imports
            .get(account)
            .map(|list| list.iter().filter(|i| i.is_service() == service).collect())
            .unwrap_or_default()
    }

    /// Go's walk: an import of `account` whose exporter-side subject overlaps `subject` leads
    /// to its exporter, and reaching an account already on the path is a cycle.
    fn service_cycles(
        &self,
        account: &str,
        subject: &str,
        visited: &mut HashSet<String>,
    ) -> Result<(), CycleError> {
        if visited.len() >= CYCLE_SEARCH_DEPTH_MAX {
            return Err(CycleError::DepthExhausted);
        }
        for si in self.imports_of(account, true) {
            if !subjects_collide(subject.as_bytes(), si.subject.as_bytes()) {
                continue;
            }
            if visited.contains(si.account.as_str()) {
                return Err(CycleError::FormsCycle);
            }
            visited.insert(account.to_owned());
            let next = if subject_is_subset(si.local.as_bytes(), subject.as_bytes()) {
                si.local.as_str()
            } else {
                subject
            };
            self.service_cycles(&si.account, next, visited)?;
        }
        Ok(())
    }

    fn stream_cycles(
        &self,
        account: &str,
        subject: &str,
        visited: &mut HashSet<String>,
    ) -> Result<(), CycleError> {
        if visited.len() >= CYCLE_SEARCH_DEPTH_MAX {
            return Err(CycleError::DepthExhausted);
        }
        let exports = self.exports.get(account).map_or(&[][..], Vec::as_slice);
        let exported = exports.iter().any(|e| {
            matches!(e.kind, ExportKind::Stream)
                && subject_is_subset(subject.as_bytes(), e.subject.as_bytes())
        });
        if !exported {
            return Ok(());
        }
        for si in self.imports_of(account, false) {
            if !subjects_collide(subject.as_bytes(), si.local.as_bytes()) {
                continue;
            }
            if visited.contains(si.account.as_str()) {
                return Err(CycleError::FormsCycle);
            }
            visited.insert(account.to_owned());
            let next = if subject_is_subset(si.local.as_bytes(), subject.as_bytes()) {
                si.local.as_str()
            } else {
                subject
            };
            self.stream_cycles(&si.account, next, visited)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(subject: &str, service: bool, accounts: Option<&[&str]>) -> Export {
        Export {
            subject: subject.into(),
            kind: if service {
                ExportKind::Service {
                    response: ResponseType::Singleton,
                    threshold: RESPONSE_THRESHOLD_DEFAULT,
                    allow_trace: false,
                }
            } else {
                ExportKind::Stream
            },
            accounts: accounts.map(|l| l.iter().map(|s| (*s).to_owned()).collect()),
            token_position: 0,
        }
    }

    fn import(account: &str, subject: &str, local: &str, service: bool) -> Import {
        Import {
            account: account.into(),
            subject: subject.into(),
            local: local.into(),
            kind: if service {
                ImportKind::Service { share: false }
            } else {
                ImportKind::Stream { allow_trace: false }
            },
        }
    }

    #[test]
    fn account_export_authorization() {
        let exports = vec![
            export("s.>", false, None),
            export("svc.>", true, Some(&["B"])),
            export("svc.open", true, None),
        ];
        assert!(export_allows(&exports, false, "B", "s.x"));
        assert!(export_allows(&exports, false, "C", "s.>"));
        assert!(!export_allows(&exports, false, "B", "svc.x"));
        assert!(export_allows(&exports, true, "B", "svc.x"));
        assert!(!export_allows(&exports, true, "C", "svc.x"));
        assert!(export_allows(&exports, true, "C", "svc.open"));
        assert!(!export_allows(&exports, true, "B", "other"));
        let positional = vec![Export {
            token_position: 2,
            ..export("req.*", true, Some(&[]))
        }];
        assert!(export_allows(&positional, true, "B", "req.B"));
        assert!(!export_allows(&positional, true, "B", "req.C"));
    }

    #[test]
    fn account_import_cycles_refused() {
        let a = AccountSpec {
            name: "A".into(),
            exports: vec![export("svc.x", true, None), export("s.>", false, None)],
            imports: vec![
                import("B", "svc.x", "svc.x", true),
                import("B", "s.>", "s.>", false),
            ],
            ..AccountSpec::default()
        };
        let b = AccountSpec {
            name: "B".into(),
            exports: vec![export("svc.x", true, None), export("s.>", false, None)],
            imports: vec![
                import("A", "svc.x", "svc.x", true),
                import("A", "s.>", "s.>", false),
            ],
            ..AccountSpec::default()
        };
        let accounts = [a, b];
        let mut graph = ImportGraph::new(&accounts);
        let [a, b] = &accounts;
        assert_eq!(graph.add("A", &a.imports[0]), Ok(()));
        assert_eq!(graph.add("B", &b.imports[0]), Err(CycleError::FormsCycle));
        assert_eq!(graph.add("A", &a.imports[1]), Ok(()));
        assert_eq!(graph.add("B", &b.imports[1]), Err(CycleError::FormsCycle));
    }
}
