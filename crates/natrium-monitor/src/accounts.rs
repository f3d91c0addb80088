//! `/accountz` (the account list, or one account with `?acc=`) and `/accstatz` (per-account
//! traffic). Natrium has one account, `$G`; Go also lists its system account `$SYS`, which
//! Natrium names the same way so that tools find what they expect. Go's `$G` detail lists the
//! service imports from `$SYS` (`$SYS.REQ.ACCOUNT.$G.CONNZ` …); Natrium has no system account
//! services yet and leaves `imports` out.

use natrium_core::stats::ServerStats;
use natrium_core::Server;
use serde::Serialize;

use crate::query::{Query, QueryError};
use crate::varz::rfc3339;

const SYSTEM_ACCOUNT: &str = "$SYS";
const GLOBAL: &str = "$G";

#[derive(Serialize)]
pub struct SublistStatsDoc {
    num_subscriptions: u64,
    num_cache: u64,
    num_inserts: u64,
    num_removes: u64,
    num_matches: u64,
    cache_hit_rate: f64,
    max_fanout: u64,
    avg_fanout: f64,
}

fn sublist_stats(server: &Server) -> SublistStatsDoc {
    let s = server.global_account().sublist.stats();
    SublistStatsDoc {
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
    name_tag: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sublist_stats: Option<SublistStatsDoc>,
}

#[derive(Serialize)]
pub struct Accountz {
    server_id: String,
    now: String,
    system_account: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    accounts: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    account_detail: Option<AccountDetail>,
}

pub fn accountz(server: &Server, q: &Query) -> Result<Accountz, QueryError> {
    let now = chrono::Utc::now();
    let acc = q.get("acc").unwrap_or_default();
    let account_detail = match acc.as_str() {
        "" => None,
        GLOBAL => Some(AccountDetail {
            account_name: GLOBAL.to_owned(),
            update_time: rfc3339(server.started()),
            is_system: false,
            expired: false,
            complete: true,
            jetstream_enabled: false,
            leafnode_connections: 0,
            client_connections: server.num_clients(),
            subscriptions: server.global_account().sublist.stats().num_subs,
            name_tag: GLOBAL.to_owned(),
            sublist_stats: Some(sublist_stats(server)),
        }),
        SYSTEM_ACCOUNT => Some(AccountDetail {
            account_name: SYSTEM_ACCOUNT.to_owned(),
            update_time: rfc3339(server.started()),
            is_system: true,
            expired: false,
            complete: true,
            jetstream_enabled: false,
            leafnode_connections: 0,
            client_connections: 0,
            subscriptions: 0,
            name_tag: SYSTEM_ACCOUNT.to_owned(),
            sublist_stats: None,
        }),
        other => return Err(QueryError(format!("Account {other} does not exist"))),
    };
    Ok(Accountz {
        server_id: server.id().to_owned(),
        now: rfc3339(now),
        system_account: SYSTEM_ACCOUNT,
        accounts: account_detail
            .is_none()
            .then(|| vec![GLOBAL, SYSTEM_ACCOUNT]),
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
    acc: &'static str,
    name: &'static str,
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

/// Go's handler lists the accounts with connections, or all of them with `unused=1` (it
/// ignores `acc=`; the system account then appears with zeros).
pub fn accstatz(server: &Server, q: &Query) -> Result<Accstatz, QueryError> {
    let unused = q.bool("unused")?;
    let conns = server.num_clients();
    let stats = server.stats();
    let mut account_statz = Vec::new();
    if unused || conns > 0 {
        account_statz.push(AccountStat {
            acc: GLOBAL,
            name: GLOBAL,
            conns,
            leafnodes: 0,
            total_conns: conns,
            num_subscriptions: server.global_account().sublist.stats().num_subs,
            sent: DataStats::local(
                ServerStats::load(&stats.out_msgs),
                ServerStats::load(&stats.out_bytes),
            ),
            received: DataStats::local(
                ServerStats::load(&stats.in_msgs),
                ServerStats::load(&stats.in_bytes),
            ),
            slow_consumers: ServerStats::load(&stats.slow_consumers),
        });
    }
    if unused {
        account_statz.push(AccountStat {
            acc: SYSTEM_ACCOUNT,
            name: SYSTEM_ACCOUNT,
            conns: 0,
            leafnodes: 0,
            total_conns: 0,
            num_subscriptions: 0,
            sent: DataStats::local(0, 0),
            received: DataStats::local(0, 0),
            slow_consumers: 0,
        });
    }
    Ok(Accstatz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        account_statz,
    })
}
