//! `/connz`: open and closed client connections with Go's query parameters (`sort`, `subs`,
//! `offset`, `limit`, `cid`, `state`, `auth`, `user`, `acc`, `filter_subject`) and Go's 400
//! texts. `/subsz` lives in
//! [`crate::subsz`].

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use natrium_core::account::GLOBAL_ACCOUNT;
use natrium_core::closed::{snapshot_subs, SubSnapshot, TlsSummary};
use natrium_core::tls::PeerCert;
use natrium_core::Server;
use serde::Serialize;

use crate::query::{Query, QueryError};
use crate::varz::{rfc3339, uptime_string};

pub const CONNZ_DEFAULT_LIMIT: usize = 1024;

/// One `subscriptions_list_detail` entry (Go's `SubDetail`, without the account fields that
/// Go leaves out here).
#[derive(Serialize)]
pub struct SubDetail {
    subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    qgroup: Option<String>,
    sid: String,
    msgs: u64,
    #[serde(skip_serializing_if = "is_zero")]
    max: u64,
    cid: u64,
}

/// One `tls_peer_certs` entry (Go's `TLSPeerCert`).
#[derive(Serialize)]
pub struct TlsPeerCert {
    #[serde(skip_serializing_if = "String::is_empty")]
    subject: String,
    spki_sha256: String,
    cert_sha256: String,
}

impl TlsPeerCert {
    fn of(cert: &PeerCert) -> Self {
        Self {
            subject: cert.subject.clone(),
            spki_sha256: cert.spki_sha256_hex(),
            cert_sha256: cert.cert_sha256_hex(),
        }
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(v: &u64) -> bool {
    *v == 0
}

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
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    /// Always present, as in Go (`0s` before any measurement).
    rtt: String,
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
    /// With `auth=1`, open connections only (Go leaves them out of the closed list).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tls_peer_certs: Vec<TlsPeerCert>,
    #[serde(skip_serializing_if = "is_false")]
    tls_first: bool,
    /// With `auth=1`.
    #[serde(skip_serializing_if = "String::is_empty")]
    authorized_user: String,
    /// With `auth=1`, for clients outside the global account.
    #[serde(skip_serializing_if = "String::is_empty")]
    account: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    subscriptions_list: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subscriptions_list_detail: Option<Vec<SubDetail>>,
    /// With `auth=1`: the account's name tag (its name); Go leaves it out for closed
    /// connections of the global account.
    #[serde(skip_serializing_if = "String::is_empty")]
    name_tag: String,
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
    /// `null` when `acc=` names an unknown account, as in Go.
    connections: Option<Vec<ConnInfo>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Closed,
    All,
}

/// Go's sort options; the direction of each is Go's (see [`sort_rows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SortBy {
    Cid,
    Start,
    Subs,
    Pending,
    MsgsTo,
    MsgsFrom,
    BytesTo,
    BytesFrom,
    Last,
    Idle,
    Uptime,
    Stop,
    Reason,
    Rtt,
}

impl SortBy {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "cid" => Self::Cid,
            "start" => Self::Start,
            "subs" => Self::Subs,
            "pending" => Self::Pending,
            "msgs_to" => Self::MsgsTo,
            "msgs_from" => Self::MsgsFrom,
            "bytes_to" => Self::BytesTo,
            "bytes_from" => Self::BytesFrom,
            "last" => Self::Last,
            "idle" => Self::Idle,
            "uptime" => Self::Uptime,
            "stop" => Self::Stop,
            "reason" => Self::Reason,
            "rtt" => Self::Rtt,
            _ => return None,
        })
    }
}

/// The parsed `/connz` query.
pub struct ConnzOptions {
    sort: SortBy,
    subs: bool,
    detail: bool,
    offset: usize,
    limit: usize,
    cid: u64,
    state: State,
    /// `auth=1`: user names and peer certificates.
    auth: bool,
    /// `user=`: only connections authorized as this user.
    user: Option<String>,
    /// `acc=`: only connections of this account.
    account: Option<String>,
    /// `filter_subject=` (with `acc=`): only connections with a subscription overlapping it.
    filter_subject: Option<String>,
}

impl ConnzOptions {
    /// Decodes the parameters in Go's order, with Go's error texts.
    pub fn parse(q: &Query) -> Result<Self, QueryError> {
        let sort_raw = q.get("sort").unwrap_or_default();
        let auth = q.bool("auth")?;
        let detail = q
            .get("subs")
            .is_some_and(|v| v.eq_ignore_ascii_case("detail"));
        let subs = if detail { false } else { q.bool("subs")? };
        let offset = q.int("offset")?;
        let limit = q.int("limit")?;
        let cid = q.uint("cid")?;
        let state = match q.get("state").map(|s| s.to_ascii_lowercase()).as_deref() {
            None | Some("" | "open") => State::Open,
            Some("closed") => State::Closed,
            Some("any" | "all") => State::All,
            Some(_) => {
                return Err(QueryError(format!(
                    "Error decoding state for {}",
                    q.get("state").unwrap_or_default()
                )))
            }
        };
        let sort = if sort_raw.is_empty() {
            SortBy::Cid
        } else {
            SortBy::parse(&sort_raw)
                .ok_or_else(|| QueryError(format!("invalid sorting option: {sort_raw}")))?
        };
        if sort == SortBy::Stop && state != State::Closed {
            return Err(QueryError(
                "sort by stop only valid on closed connections".to_owned(),
            ));
        }
        if sort == SortBy::Reason && state != State::Closed {
            return Err(QueryError(
                "sort by reason only valid on closed connections".to_owned(),
            ));
        }
        let account = q.get("acc").filter(|a| !a.is_empty());
        let filter_subject = q
            .get("filter_subject")
            .filter(|f| !f.is_empty() && f != ">");
        if filter_subject.is_some() && account.is_none() {
            return Err(QueryError(
                "filter by subject only valid with account filtering".to_owned(),
            ));
        }
        let mut limit = usize::try_from(limit)
            .ok()
            .filter(|l| *l > 0)
            .unwrap_or(CONNZ_DEFAULT_LIMIT);
        if cid > 0 {
            limit = 1;
        }
        Ok(Self {
            sort,
            subs,
            detail,
            offset: usize::try_from(offset).unwrap_or(0),
            limit,
            cid,
            state,
            auth,
            user: q.get("user").filter(|u| !u.is_empty()),
            account,
            filter_subject,
        })
    }
}

/// A connection, open or closed, with the raw values the sorts need.
struct Row {
    cid: u64,
    addr: std::net::SocketAddr,
    meta: natrium_core::client::ClientMeta,
    start: DateTime<Utc>,
    last: DateTime<Utc>,
    stop: Option<DateTime<Utc>>,
    reason: Option<&'static str>,
    rtt_nanos: u64,
    pending: usize,
    in_msgs: u64,
    in_bytes: u64,
    out_msgs: u64,
    out_bytes: u64,
    subs: Vec<SubSnapshot>,
    tls: Option<TlsSummary>,
    client_type: &'static str,
    /// Open connections only: the client's certificate chain.
    peer_certs: Vec<TlsPeerCert>,
    account: String,
}

impl Row {
    fn end(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        self.stop.unwrap_or(now)
    }
}

fn open_rows(server: &Server, cid: u64, auth: bool) -> Vec<Row> {
    server
        .clients()
        .into_iter()
        .filter(|c| cid == 0 || c.cid == cid)
        .map(|c| {
            let (out_msgs, out_bytes) = c.out.out_counts();
            Row {
                cid: c.cid,
                addr: c.addr,
                meta: c.meta.lock().clone(),
                start: c.started,
                last: c.activity.last(c.started),
                stop: None,
                reason: None,
                rtt_nanos: c.activity.rtt_nanos(),
                pending: c.out.pending_bytes(),
                in_msgs: c.in_msgs.load(Ordering::Relaxed),
                in_bytes: c.in_bytes.load(Ordering::Relaxed),
                out_msgs,
                out_bytes,
                subs: snapshot_subs(&c),
                tls: TlsSummary::of(&c),
                client_type: c.client_type(),
                peer_certs: match c.tls() {
                    Some(t) if auth => t.peer_certs.iter().map(TlsPeerCert::of).collect(),
                    _ => Vec::new(),
                },
                account: c.account_name(),
            }
        })
        .collect()
}

fn closed_rows(server: &Server, cid: u64) -> Vec<Row> {
    server
        .closed_clients()
        .into_iter()
        .filter(|c| cid == 0 || c.cid == cid)
        .map(|c| Row {
            cid: c.cid,
            addr: c.addr,
            meta: c.meta.clone(),
            start: c.started,
            last: c.last_activity,
            stop: Some(c.stopped),
            reason: Some(c.reason.as_str()),
            rtt_nanos: c.rtt_nanos,
            pending: 0,
            in_msgs: c.in_msgs,
            in_bytes: c.in_bytes,
            out_msgs: c.out_msgs,
            out_bytes: c.out_bytes,
            subs: c.subs.clone(),
            tls: c.tls,
            client_type: c.client_type,
            peer_certs: Vec::new(),
            account: c.account.clone(),
        })
        .collect()
}

/// Go's directions: cid, start, uptime and reason ascending, everything else descending.
fn sort_rows(rows: &mut [Row], by: SortBy, now: DateTime<Utc>) {
    match by {
        SortBy::Cid | SortBy::Start => rows.sort_by_key(|r| r.cid),
        SortBy::Subs => rows.sort_by_key(|r| std::cmp::Reverse(r.subs.len())),
        SortBy::Pending => rows.sort_by_key(|r| std::cmp::Reverse(r.pending)),
        SortBy::MsgsTo => rows.sort_by_key(|r| std::cmp::Reverse(r.out_msgs)),
        SortBy::MsgsFrom => rows.sort_by_key(|r| std::cmp::Reverse(r.in_msgs)),
        SortBy::BytesTo => rows.sort_by_key(|r| std::cmp::Reverse(r.out_bytes)),
        SortBy::BytesFrom => rows.sort_by_key(|r| std::cmp::Reverse(r.in_bytes)),
        SortBy::Last => rows.sort_by_key(|r| std::cmp::Reverse(r.last)),
        SortBy::Idle => rows.sort_by_key(|r| std::cmp::Reverse(now - r.last)),
        SortBy::Uptime => rows.sort_by_key(|r| r.end(now) - r.start),
        SortBy::Stop => rows.sort_by_key(|r| std::cmp::Reverse(r.stop)),
        SortBy::Reason => rows.sort_by_key(|r| r.reason),
        SortBy::Rtt => rows.sort_by_key(|r| std::cmp::Reverse(r.rtt_nanos)),
    }
}

fn seconds(d: chrono::TimeDelta) -> i64 {
    d.num_seconds().max(0)
}

fn conn_info(row: Row, opts: &ConnzOptions, now: DateTime<Utc>) -> ConnInfo {
    let end = row.end(now);
    let mut subs = row.subs;
    subs.sort_by(|a, b| {
        a.sid
            .len()
            .cmp(&b.sid.len())
            .then_with(|| a.sid.cmp(&b.sid))
    });
    let subscriptions_list =
        (opts.subs && !subs.is_empty()).then(|| subs.iter().map(|s| s.subject.clone()).collect());
    let subscriptions_list_detail = (opts.detail && !subs.is_empty()).then(|| {
        subs.iter()
            .map(|s| SubDetail {
                subject: s.subject.clone(),
                qgroup: s.queue.clone(),
                sid: s.sid.clone(),
                msgs: s.msgs,
                max: s.max,
                cid: row.cid,
            })
            .collect()
    });
    ConnInfo {
        cid: row.cid,
        kind: "Client",
        kind_type: row.client_type,
        ip: row.addr.ip().to_canonical().to_string(),
        port: row.addr.port(),
        start: rfc3339(row.start),
        last_activity: rfc3339(row.last),
        stop: row.stop.map(rfc3339),
        reason: row.reason,
        rtt: go_rtt(row.rtt_nanos),
        uptime: uptime_string(seconds(end - row.start)),
        idle: uptime_string(seconds(end - row.last)),
        pending_bytes: row.pending,
        in_msgs: row.in_msgs,
        out_msgs: row.out_msgs,
        in_bytes: row.in_bytes,
        out_bytes: row.out_bytes,
        subscriptions: subs.len() as u64,
        name: row.meta.name,
        lang: row.meta.lang,
        version: row.meta.version,
        tls_version: row.tls.map_or("", |t| t.version),
        tls_cipher_suite: row.tls.map_or("", |t| t.cipher_suite),
        tls_peer_certs: row.peer_certs,
        tls_first: row.tls.is_some_and(|t| t.handshake_first),
        authorized_user: if opts.auth {
            row.meta.auth_user
        } else {
            String::new()
        },
        subscriptions_list,
        subscriptions_list_detail,
        name_tag: if opts.auth && (row.stop.is_none() || row.account != GLOBAL_ACCOUNT) {
            row.account.clone()
        } else {
            String::new()
        },
        account: if opts.auth && row.account != GLOBAL_ACCOUNT {
            row.account
        } else {
            String::new()
        },
    }
}

pub fn connz(server: &Server, opts: &ConnzOptions) -> Connz {
    let now = Utc::now();
    let mut rows = match opts.state {
        State::Open => open_rows(server, opts.cid, opts.auth),
        State::Closed => closed_rows(server, opts.cid),
        State::All => {
            let mut rows = open_rows(server, opts.cid, opts.auth);
            rows.extend(closed_rows(server, opts.cid));
            rows
        }
    };
    if let Some(account) = &opts.account {
        if server.account(account).is_none() {
            // Go answers an unknown account with an almost empty document.
            return Connz {
                server_id: String::new(),
                now: rfc3339(now),
                num_connections: 0,
                total: 0,
                offset: opts.offset,
                limit: opts.limit,
                connections: None,
            };
        }
        rows.retain(|r| &r.account == account);
    }
    // Go counts the connections before it filters by user.
    let total = rows.len();
    if let (Some(filter), Some(_)) = (&opts.filter_subject, &opts.account) {
        rows.retain(|r| {
            r.stop.is_some()
                || r.subs.iter().any(|s| {
                    nats_subject::subjects_collide(filter.as_bytes(), s.subject.as_bytes())
                })
        });
    }
    if let Some(user) = &opts.user {
        rows.retain(|r| &r.meta.auth_user == user);
    }
    sort_rows(&mut rows, opts.sort, now);
    let first = opts.offset.min(rows.len());
    let connections: Vec<ConnInfo> = rows
        .into_iter()
        .skip(first)
        .take(opts.limit)
        .map(|row| conn_info(row, opts, now))
        .collect();
    Connz {
        server_id: server.id().to_owned(),
        now: rfc3339(now),
        num_connections: connections.len(),
        total,
        offset: opts.offset,
        limit: opts.limit,
        connections: Some(connections),
    }
}

/// Go's `time.Duration.String()` for a round trip, truncated to microseconds below a
/// millisecond as Go's `getRTT` does ("405µs", "1.234567ms", "0s" when unknown).
pub fn go_rtt(nanos: u64) -> String {
    let nanos = if (1_000..1_000_000).contains(&nanos) {
        nanos - nanos % 1_000
    } else {
        nanos
    };
    natrium_gofmt::go_duration_nanos(i64::try_from(nanos).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_go_duration_strings() {
        assert_eq!(go_rtt(0), "0s");
        assert_eq!(go_rtt(405_123), "405µs");
        assert_eq!(go_rtt(1_234_567), "1.234567ms");
        assert_eq!(go_rtt(1_500_000), "1.5ms");
        assert_eq!(go_rtt(61_500_000_000), "1m1.5s");
        assert_eq!(go_rtt(3_600_000_000_000), "1h0m0s");
    }
}
