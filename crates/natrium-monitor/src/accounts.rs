//! `/accountz` (the account list, or one account with `?acc=`) and `/accstatz` (per-account
//! traffic), in Go's JSON shape, also answered over NATS (`$SYS.REQ.ACCOUNT.<acc>.INFO` and
//! `STATZ`). Go lists accounts in its map's random order; ours is `$G`, then the configured
//! accounts, then a created `$SYS`. With a system account, every account lists the system
//! request services it may use as imports (`$SYS.REQ.USER.INFO` …), as Go's do; the system
//! account's exports of them are not listed.

use natrium_auth::account::{ExportKind, ImportKind};
use natrium_core::account::{Account, AccountStats};
use std::sync::Arc;

use natrium_core::Server;
use serde::Serialize;

use crate::query::{Query, QueryError};
use crate::varz::rfc3339;

#[derive(Serialize)]
pub struct SublistStatsDoc {
    num_subscriptions: u64,
    num_cache: u64,
    num_inserts: u64,
    num_removes: u64,
    num_matches: u64,
    #[serde(serialize_with = "crate::varz::go_float")]
    cache_hit_rate: f64,
    max_fanout: u64,
    #[serde(serialize_with = "crate::varz::go_float")]
    avg_fanout: f64,
}

impl SublistStatsDoc {
    pub fn of(s: &nats_subject::SublistStats) -> Self {
        Self {
            num_subscriptions: s.num_subs,
            num_cache: s.num_cache,
            num_inserts: s.num_inserts,
            num_removes: s.num_removes,
            num_matches: s.num_matches,
            cache_hit_rate: s.cache_hit_rate,
            max_fanout: s.max_fanout,
            avg_fanout: s.avg_fanout,
        }
    }
}

/// Go's `ExtExport`: the JWT export fields it fills, and the approved accounts.
#[derive(Serialize)]
pub struct ExportDoc {
    subject: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    response_type: &'static str,
    #[serde(skip_serializing_if = "is_zero_u32")]
    account_token_position: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    approved_accounts: Vec<String>,
}

/// Go's `ExtImport`.
#[derive(Serialize)]
pub struct ImportDoc {
    subject: String,
    account: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    to: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    local_subject: String,
    #[serde(rename = "type")]
    kind: &'static str,
    invalid: bool,
    share: bool,
    tracking: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

#[derive(Serialize)]
pub struct AccountDetail {
    account_name: String,
    update_time: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    is_system: bool,
    expired: bool,
    complete: bool,
    jetstream_enabled: bool,
    leafnode_connections: u64,
    client_connections: usize,
    subscriptions: u64,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    mappings: std::collections::BTreeMap<String, Vec<MapDestDoc>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    exports: Vec<ExportDoc>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    imports: Vec<ImportDoc>,
    name_tag: String,
    sublist_stats: SublistStatsDoc,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    responses: std::collections::BTreeMap<String, ImportDoc>,
}

/// One destination of a subject mapping, with its cumulative weight (Go's `MapDest`).
#[derive(Serialize)]
pub struct MapDestDoc {
    subject: String,
    weight: u8,
    #[serde(skip_serializing_if = "str::is_empty")]
    cluster: String,
}

/// The account's subject mappings by source, each destination's weight cumulative, as Go
/// shows them.
fn mappings(account: &Account) -> std::collections::BTreeMap<String, Vec<MapDestDoc>> {
    let state = account.state();
    state
        .mappings
        .iter()
        .map(|m| {
            let dests = m
                .destinations()
                .into_iter()
                .map(|d| MapDestDoc {
                    subject: d.subject,
                    weight: d.weight,
                    cluster: d.cluster,
                })
                .collect();
            (m.source().to_owned(), dests)
        })
        .collect()
}

#[derive(Serialize)]
pub struct Accountz {
    server_id: String,
    now: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    system_account: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    accounts: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    account_detail: Option<AccountDetail>,
}

fn exports(account: &Account) -> Vec<ExportDoc> {
    // Go lists service exports before stream exports.
    let state = account.state();
    let services = state
        .spec
        .exports
        .iter()
        .filter(|e| matches!(e.kind, ExportKind::Service { .. }));
    let streams = state
        .spec
        .exports
        .iter()
        .filter(|e| matches!(e.kind, ExportKind::Stream));
    services
        .chain(streams)
        .map(|e| ExportDoc {
            subject: e.subject.clone(),
            kind: match e.kind {
                ExportKind::Stream => "stream",
                ExportKind::Service { .. } => "service",
            },
            response_type: match e.kind {
                ExportKind::Service { response, .. } => response.as_str(),
                ExportKind::Stream => "",
            },
            account_token_position: e.token_position,
            approved_accounts: e.accounts.clone().unwrap_or_default(),
        })
        .collect()
}

fn imports(account: &Account) -> Vec<ImportDoc> {
    // Go lists stream imports before service imports.
    let state = account.state();
    let streams = state.spec.imports.iter().filter(|i| !i.is_service());
    let services = state.spec.imports.iter().filter(|i| i.is_service());
    streams
        .chain(services)
        .map(|i| {
            let (kind, to, share) = match i.kind {
                ImportKind::Stream { .. } => ("stream", String::new(), false),
                ImportKind::Service { share } => ("service", i.local.clone(), share),
            };
            ImportDoc {
                subject: i.subject.clone(),
                account: i.account.clone(),
                to,
                local_subject: i.local.clone(),
                kind,
                invalid: false,
                share,
                tracking: false,
            }
        })
        .collect()
}

fn detail(server: &Server, account: &Account) -> AccountDetail {
    let is_system =
        server.has_system_account() && std::ptr::eq(Arc::as_ptr(&server.system_account()), account);
    let responses = account
        .responses
        .snapshot(|a| a.name.clone())
        .into_iter()
        .map(|(key, requester, reply)| {
            let doc = ImportDoc {
                subject: reply,
                account: requester,
                to: key.clone(),
                local_subject: key.clone(),
                kind: "service",
                invalid: false,
                share: false,
                tracking: false,
            };
            (key, doc)
        })
        .collect();
    let stats = account.sublist.stats();
    AccountDetail {
        account_name: account.name.clone(),
        update_time: rfc3339(account.updated),
        is_system,
        expired: false,
        complete: true,
        jetstream_enabled: false,
        leafnode_connections: 0,
        client_connections: account.stats.conns(),
        subscriptions: stats.num_subs,
        mappings: mappings(account),
        exports: exports(account),
        imports: imports(account)
            .into_iter()
            .chain(system_imports(server, account, is_system))
            .collect(),
        name_tag: account.name.clone(),
        sublist_stats: SublistStatsDoc::of(&stats),
        responses,
    }
}

/// The system request services an account may use, as Go lists its imports of them: every
/// account asks for its own user info; accounts other than the system account also for their
/// own `CONNZ` (on two subjects) and `STATZ` (see `crate::sysevents`).
fn system_imports(server: &Server, account: &Account, is_system: bool) -> Vec<ImportDoc> {
    if !server.has_system_account() {
        return Vec::new();
    }
    let system = server.system_account().name.clone();
    let name = &account.name;
    let import = |local: &str, subject: String, share: bool| ImportDoc {
        subject,
        account: system.clone(),
        to: local.to_owned(),
        local_subject: local.to_owned(),
        kind: "service",
        invalid: false,
        share,
        tracking: false,
    };
    let mut list = vec![import(
        "$SYS.REQ.USER.INFO",
        format!("$SYS.REQ.USER.{name}.INFO"),
        true,
    )];
    if !is_system {
        let connz = format!("$SYS.REQ.ACCOUNT.{name}.CONNZ");
        list.push(import("$SYS.REQ.ACCOUNT.PING.CONNZ", connz.clone(), false));
        list.push(import("$SYS.REQ.SERVER.PING.CONNZ", connz, false));
        let statz = format!("$SYS.REQ.ACCOUNT.{name}.STATZ");
        list.push(import("$SYS.REQ.ACCOUNT.PING.STATZ", statz, false));
    }
    list
}

/// One account's detail (`/accountz?acc=`, `$SYS.REQ.ACCOUNT.<acc>.INFO`).
pub fn account_info(server: &Server, name: &str) -> Result<AccountDetail, QueryError> {
    let account = server
        .accounts()
        .iter()
        .find(|a| a.name == name && a.is_registered())
        .map(Arc::clone)
        .ok_or_else(|| QueryError(format!("Account {name} does not exist")))?;
    Ok(detail(server, &account))
}

pub fn accountz(server: &Server, q: &Query) -> Result<Accountz, QueryError> {
    let now = chrono::Utc::now();
    let acc = q.get("acc").unwrap_or_default();
    let account_detail = if acc.is_empty() {
        None
    } else {
        Some(account_info(server, &acc)?)
    };
    let system_account = if server.has_system_account() {
        server.system_account().name.clone()
    } else {
        String::new()
    };
    Ok(Accountz {
        server_id: server.id().to_owned(),
        now: rfc3339(now),
        system_account,
        accounts: account_detail.is_none().then(|| {
            server
                .accounts()
                .iter()
                .filter(|a| a.is_registered())
                .map(|a| a.name.clone())
                .collect()
        }),
        account_detail,
    })
}

#[derive(Serialize)]
pub struct MsgBytes {
    msgs: u64,
    bytes: u64,
}

#[derive(Serialize)]
pub struct DataStats {
    msgs: u64,
    bytes: u64,
    gateways: MsgBytes,
    routes: MsgBytes,
    leafs: MsgBytes,
}

impl DataStats {
    fn local(msgs: u64, bytes: u64) -> Self {
        let zero = || MsgBytes { msgs: 0, bytes: 0 };
        Self {
            msgs,
            bytes,
            gateways: zero(),
            routes: zero(),
            leafs: zero(),
        }
    }
}

#[derive(Serialize)]
pub struct AccountStat {
    acc: String,
    name: String,
    conns: usize,
    leafnodes: u64,
    total_conns: usize,
    num_subscriptions: u64,
    sent: DataStats,
    received: DataStats,
    slow_consumers: u64,
}

#[derive(Serialize)]
pub struct Accstatz {
    server_id: String,
    now: String,
    account_statz: Vec<AccountStat>,
}

fn account_stat(account: &Account) -> AccountStat {
    let s = &account.stats;
    let conns = s.conns();
    AccountStat {
        acc: account.name.clone(),
        name: account.name.clone(),
        conns,
        leafnodes: 0,
        total_conns: conns,
        num_subscriptions: account.sublist.count() as u64,
        sent: DataStats::local(
            AccountStats::load(&s.out_msgs),
            AccountStats::load(&s.out_bytes),
        ),
        received: DataStats::local(
            AccountStats::load(&s.in_msgs),
            AccountStats::load(&s.in_bytes),
        ),
        slow_consumers: AccountStats::load(&s.slow_consumers),
    }
}

impl Accstatz {
    pub fn is_empty(&self) -> bool {
        self.account_statz.is_empty()
    }
}

/// The `STATZ` system requests: the accounts `names` lists (all when empty), each only if it
/// has connections unless `unused`, as Go's `AccountStatz`.
pub fn statz_for(server: &Server, names: &[String], unused: bool) -> Accstatz {
    let accounts = server.accounts();
    let wanted = |a: &&Arc<Account>| a.is_registered() && (unused || a.stats.conns() > 0);
    let account_statz = if names.is_empty() {
        accounts
            .iter()
            .filter(wanted)
            .map(|a| account_stat(a))
            .collect()
    } else {
        names
            .iter()
            .filter_map(|n| accounts.iter().find(|a| &a.name == n))
            .filter(wanted)
            .map(|a| account_stat(a))
            .collect()
    };
    Accstatz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        account_statz,
    }
}

/// Go's handler lists the accounts with connections, or all of them with `unused=1` (it
/// ignores `acc=`).
pub fn accstatz(server: &Server, q: &Query) -> Result<Accstatz, QueryError> {
    let unused = q.bool("unused")?;
    let account_statz = server
        .accounts()
        .iter()
        .filter(|a| a.is_registered() && (unused || a.stats.conns() > 0))
        .map(|a| account_stat(a))
        .collect();
    Ok(Accstatz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        account_statz,
    })
}
