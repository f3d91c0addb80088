//! `/connz` (open connections, with `offset` and `limit`) and `/subsz` (index statistics).
//! The full query-parameter set arrives with the monitoring issue.

use natrium_core::Server;
use serde::Serialize;

use crate::varz::rfc3339;

#[derive(Serialize)]
pub struct ConnInfo {
    cid: u64,
    kind: &'static str,
    #[serde(rename = "type")]
    kind_type: &'static str,
    ip: String,
    port: u16,
    start: String,
    last_activity: String,
    uptime: String,
    idle: String,
    pending_bytes: usize,
    in_msgs: u64,
    out_msgs: u64,
    in_bytes: u64,
    out_bytes: u64,
    subscriptions: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    lang: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    version: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    tls_version: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    tls_cipher_suite: &'static str,
    #[serde(skip_serializing_if = "is_false")]
    tls_first: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_false(value: &bool) -> bool {
    !*value
}

#[derive(Serialize)]
pub struct Connz {
    server_id: String,
    now: String,
    num_connections: usize,
    total: usize,
    offset: usize,
    limit: usize,
    connections: Vec<ConnInfo>,
}

pub const CONNZ_DEFAULT_LIMIT: usize = 1024;

pub fn connz(server: &Server, offset: usize, limit: usize) -> Connz {
    let now = chrono::Utc::now();
    let clients = server.clients();
    let total = clients.len();
    let connections: Vec<ConnInfo> = clients
        .iter()
        .skip(offset)
        .take(limit)
        .map(|c| {
            let meta = c.meta.lock().clone();
            let (out_msgs, out_bytes) = c.out.out_counts();
            let load =
                |v: &std::sync::atomic::AtomicU64| v.load(std::sync::atomic::Ordering::Relaxed);
            ConnInfo {
                cid: c.cid,
                kind: "Client",
                kind_type: "nats",
                ip: c.addr.ip().to_string(),
                port: c.addr.port(),
                start: rfc3339(c.started),
                last_activity: rfc3339(now),
                uptime: crate::varz::uptime_string((now - c.started).num_seconds()),
                idle: "0s".to_owned(),
                pending_bytes: c.out.pending_bytes(),
                in_msgs: load(&c.in_msgs),
                out_msgs,
                in_bytes: load(&c.in_bytes),
                out_bytes,
                subscriptions: c.subs.lock().len() as u64,
                name: meta.name,
                lang: meta.lang,
                version: meta.version,
                tls_version: c.tls().map_or("", |t| t.version),
                tls_cipher_suite: c.tls().map_or("", |t| t.cipher_suite),
                tls_first: c.tls().is_some_and(|t| t.handshake_first),
            }
        })
        .collect();
    Connz {
        server_id: server.id().to_owned(),
        now: rfc3339(now),
        num_connections: connections.len(),
        total,
        offset,
        limit,
        connections,
    }
}

#[derive(Serialize)]
pub struct Subsz {
    server_id: String,
    now: String,
    num_subscriptions: u64,
    num_cache: u64,
    num_inserts: u64,
    num_removes: u64,
    num_matches: u64,
    cache_hit_rate: f64,
    max_fanout: u64,
    avg_fanout: f64,
    total: usize,
    offset: usize,
    limit: usize,
}

pub fn subsz(server: &Server) -> Subsz {
    let stats = server.global_account().sublist.stats();
    Subsz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        num_subscriptions: stats.num_subs,
        num_cache: stats.num_cache,
        num_inserts: stats.num_inserts,
        num_removes: stats.num_removes,
        num_matches: stats.num_matches,
        cache_hit_rate: stats.cache_hit_rate,
        max_fanout: stats.max_fanout,
        avg_fanout: stats.avg_fanout,
        total: 0,
        offset: 0,
        limit: CONNZ_DEFAULT_LIMIT,
    }
}
