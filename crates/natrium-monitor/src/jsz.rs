//! `/jsz`, `$SYS.REQ.SERVER.PING.JSZ` and `$SYS.REQ.ACCOUNT.<account>.JSZ`: JetStream's
//! settings, usage and accounts as JetStream reports them through the server
//! (`natrium_core::report`), in Go's documents (`JSInfo`, `AccountDetail`, `StreamDetail`).
//!
//! Without JetStream the document is Go's disabled one. Natrium runs one server, so it leads
//! every stream and the leader-only options filter nothing out.

use natrium_core::report::{
    JsAccountReport, JsConfigReport, JsDetail, JsLimitsReport, JsStreamReport, JsUsage,
};
use natrium_core::Server;
use serde::Serialize;

use crate::query::{Query, QueryError};
use crate::varz::rfc3339;

/// Go's page size when `limit` is not given.
const ACCOUNTS_LIMIT_DEFAULT: i64 = 1024;

/// Go's `JSLimitOpts.default_max_consumers` as the Go server reports it unconfigured.
const DEFAULT_MAX_CONSUMERS: i64 = 1000;

/// The `/jsz` parameters (Go's `JSzOptions`).
#[derive(Debug, Default, Clone)]
pub struct JszOptions {
    pub account: String,
    pub accounts: bool,
    pub streams: bool,
    pub consumers: bool,
    pub direct_consumers: bool,
    pub config: bool,
    pub leader_only: bool,
    pub offset: i64,
    pub limit: i64,
    pub raft: bool,
    pub stream_leader_only: bool,
}

impl JszOptions {
    /// Decodes the parameters in Go's order, so the first bad one is the one reported.
    pub fn parse(q: &Query) -> Result<Self, QueryError> {
        Ok(Self {
            accounts: q.bool("accounts")?,
            streams: q.bool("streams")?,
            consumers: q.bool("consumers")?,
            direct_consumers: q.bool("direct-consumers")?,
            config: q.bool("config")?,
            offset: q.int("offset")?,
            limit: q.int("limit")?,
            leader_only: q.bool("leader-only")?,
            raft: q.bool("raft")?,
            stream_leader_only: q.bool("stream-leader-only")?,
            account: q.get("acc").unwrap_or_default(),
        })
    }

    fn detail(&self) -> JsDetail {
        JsDetail {
            streams: self.streams || self.consumers,
            config: self.config,
            consumers: self.consumers,
            direct_consumers: self.consumers && self.direct_consumers,
        }
    }
}

#[derive(Serialize, Default)]
pub struct ApiStats {
    level: u32,
    total: u64,
    errors: u64,
}

/// Go's `JetStreamStats`, flattened into the documents that carry it.
#[derive(Serialize, Default)]
pub struct Stats {
    memory: u64,
    storage: u64,
    reserved_memory: u64,
    reserved_storage: u64,
    accounts: usize,
    ha_assets: usize,
    api: ApiStats,
}

impl Stats {
    fn of(usage: &JsUsage, accounts: usize, level: u32) -> Self {
        Self {
            memory: usage.memory,
            storage: usage.storage,
            reserved_memory: usage.reserved_memory,
            reserved_storage: usage.reserved_storage,
            accounts,
            ha_assets: 0,
            api: ApiStats {
                level,
                total: usage.api_total,
                errors: usage.api_errors,
            },
        }
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

/// Go's `JetStreamConfig`.
#[derive(Serialize, Default)]
pub struct ConfigDoc {
    max_memory: i64,
    max_storage: i64,
    #[serde(skip_serializing_if = "String::is_empty")]
    store_dir: String,
    #[serde(skip_serializing_if = "is_zero")]
    sync_interval: u64,
    #[serde(skip_serializing_if = "is_false")]
    sync_always: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    domain: String,
    #[serde(skip_serializing_if = "is_false")]
    compress_ok: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    unique_tag: String,
    #[serde(skip_serializing_if = "is_false")]
    strict: bool,
}

impl From<JsConfigReport> for ConfigDoc {
    fn from(c: JsConfigReport) -> Self {
        Self {
            max_memory: c.max_memory,
            max_storage: c.max_storage,
            store_dir: c.store_dir,
            sync_interval: c.sync_interval_ns,
            sync_always: c.sync_always,
            domain: c.domain,
            compress_ok: c.compress_ok,
            unique_tag: c.unique_tag,
            strict: c.strict,
        }
    }
}

/// Go's `JSLimitOpts`: every configured limit, then the consumer default.
#[derive(Serialize)]
pub struct LimitsDoc {
    #[serde(skip_serializing_if = "is_zero_i64")]
    max_request_batch: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    max_ack_pending: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    max_ha_assets: i64,
    #[serde(skip_serializing_if = "is_zero")]
    max_duplicate_window: u64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    max_batch_inflight_per_stream: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    max_batch_inflight_total: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    max_batch_size: i64,
    #[serde(skip_serializing_if = "is_zero")]
    max_batch_timeout: u64,
    default_max_consumers: i64,
}

impl From<JsLimitsReport> for LimitsDoc {
    fn from(l: JsLimitsReport) -> Self {
        Self {
            max_request_batch: l.max_request_batch,
            max_ack_pending: l.max_ack_pending,
            max_ha_assets: l.max_ha_assets,
            max_duplicate_window: l.max_duplicate_window_ns,
            max_batch_inflight_per_stream: l.max_batch_inflight_per_stream,
            max_batch_inflight_total: l.max_batch_inflight_total,
            max_batch_size: l.max_batch_size,
            max_batch_timeout: l.max_batch_timeout_ns,
            default_max_consumers: DEFAULT_MAX_CONSUMERS,
        }
    }
}

/// A single server's `ClusterInfo`: it leads.
#[derive(Serialize)]
pub struct ClusterDoc {
    leader: String,
}

/// Go's `StreamDetail`.
#[derive(Serialize)]
pub struct StreamDetail {
    name: String,
    created: String,
    cluster: ClusterDoc,
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<Box<serde_json::value::RawValue>>,
    state: Box<serde_json::value::RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mirror: Option<Box<serde_json::value::RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sources: Option<Box<serde_json::value::RawValue>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    consumer_detail: Vec<Box<serde_json::value::RawValue>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    direct_consumer_detail: Vec<Box<serde_json::value::RawValue>>,
}

/// Go's `AccountDetail`.
#[derive(Serialize)]
pub struct AccountDetail {
    name: String,
    id: String,
    #[serde(flatten)]
    stats: Stats,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stream_detail: Vec<StreamDetail>,
}

fn stream_detail(server: &Server, s: JsStreamReport) -> StreamDetail {
    StreamDetail {
        name: s.name,
        created: natrium_gofmt::time::rfc3339_nanos(s.created_ns),
        cluster: ClusterDoc {
            leader: server.name().to_owned(),
        },
        config: s.config,
        state: s.state,
        mirror: s.mirror,
        sources: s.sources,
        consumer_detail: s.consumer_detail,
        direct_consumer_detail: s.direct_consumer_detail,
    }
}

/// An account's detail; its API level is 0 and its account count 0, as Go reports them.
fn account_detail(server: &Server, a: JsAccountReport) -> AccountDetail {
    AccountDetail {
        id: a.name.clone(),
        name: a.name,
        stats: Stats::of(&a.usage, 0, 0),
        stream_detail: a
            .streams
            .into_iter()
            .map(|s| stream_detail(server, s))
            .collect(),
    }
}

/// Go's `JSInfo`.
#[derive(Serialize)]
pub struct Jsz {
    #[serde(flatten)]
    stats: Stats,
    server_id: String,
    now: String,
    #[serde(skip_serializing_if = "is_false")]
    disabled: bool,
    config: ConfigDoc,
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<LimitsDoc>,
    streams: usize,
    #[serde(skip_serializing_if = "is_zero_usize")]
    streams_leader: usize,
    consumers: u64,
    #[serde(skip_serializing_if = "is_zero_u64")]
    consumers_leader: u64,
    messages: u64,
    bytes: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    account_details: Vec<AccountDetail>,
    total: usize,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

/// Go's refusal of `leader-only` by a server that does not lead (here: JetStream off).
const NOT_LEADER: &str = "filtered response: not leader";

/// The `/jsz` document; the error is Go's 400 text.
pub fn jsz(server: &Server, opts: &JszOptions) -> Result<Jsz, QueryError> {
    let mut doc = Jsz {
        stats: Stats::default(),
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        disabled: true,
        config: ConfigDoc::default(),
        limits: None,
        streams: 0,
        streams_leader: 0,
        consumers: 0,
        consumers_leader: 0,
        messages: 0,
        bytes: 0,
        account_details: Vec::new(),
        total: 0,
    };
    let Some(js) = server.jetstream_report() else {
        if opts.leader_only {
            return Err(QueryError(NOT_LEADER.to_owned()));
        }
        return Ok(doc);
    };
    let names = js.account_names();
    doc.disabled = false;
    doc.config = js.config().into();
    doc.limits = Some(js.limits().into());
    doc.stats = Stats::of(&js.usage(), names.len(), js.api_level());
    doc.total = names.len();
    let counts = JsDetail {
        streams: true,
        ..JsDetail::default()
    };
    for account in names.iter().filter_map(|n| js.account(n, counts)) {
        doc.streams += account.streams.len();
        for stream in &account.streams {
            doc.messages += stream.messages;
            doc.bytes += stream.bytes;
            doc.consumers += stream.consumers;
        }
    }
    if opts.raft {
        doc.streams_leader = doc.streams;
        doc.consumers_leader = doc.consumers;
    }
    doc.account_details = selected_accounts(&names, opts)
        .into_iter()
        .filter_map(|name| js.account(name, opts.detail()))
        .map(|a| account_detail(server, a))
        .collect();
    Ok(doc)
}

/// The accounts whose details are listed: the one named by `acc` if enabled, else a page of
/// every account (sorted by name) with `accounts`, `streams` or `consumers`, else none.
fn selected_accounts<'a>(names: &'a [String], opts: &JszOptions) -> Vec<&'a str> {
    if let Some(named) = names.iter().find(|n| **n == opts.account) {
        return vec![named.as_str()];
    }
    let listed = opts.accounts || (opts.account.is_empty() && (opts.streams || opts.consumers));
    if !listed {
        return Vec::new();
    }
    let limit = if opts.limit == 0 {
        ACCOUNTS_LIMIT_DEFAULT
    } else {
        opts.limit
    };
    // Go pages only with a positive limit; a negative one lists every account.
    let (offset, limit) = match usize::try_from(limit) {
        Ok(limit) => (usize::try_from(opts.offset).unwrap_or(0), limit),
        Err(_) => (0, usize::MAX),
    };
    names
        .iter()
        .skip(offset)
        .take(limit)
        .map(String::as_str)
        .collect()
}

/// `$SYS.REQ.ACCOUNT.<account>.JSZ`: one account's detail, with Go's errors.
pub fn account_jsz(
    server: &Server,
    account: &str,
    opts: &JszOptions,
) -> Result<AccountDetail, QueryError> {
    let Some(js) = server.jetstream_report() else {
        return Err(QueryError("jetstream not enabled".to_owned()));
    };
    if server.account(account).is_none() {
        return Err(QueryError(format!("account {account:?} not found")));
    }
    js.account(account, opts.detail())
        .map(|a| account_detail(server, a))
        .ok_or_else(|| QueryError(format!("account {account:?} not jetstream enabled")))
}

/// The JetStream section of `/varz` (Go's `JetStreamVarz`): empty without JetStream.
#[derive(Serialize, Default)]
pub struct JetStreamVarz {
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<ConfigDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<LimitsDoc>,
}

pub fn varz_section(server: &Server) -> JetStreamVarz {
    let Some(js) = server.jetstream_report() else {
        return JetStreamVarz::default();
    };
    JetStreamVarz {
        config: Some(js.config().into()),
        stats: Some(Stats::of(
            &js.usage(),
            js.account_names().len(),
            js.api_level(),
        )),
        limits: Some(js.limits().into()),
    }
}

/// Whether a system request stays unanswered, as Go's does: `leader_only` to a server that
/// does not lead JetStream (here: runs none).
pub fn skips(server: &Server, q: &Query) -> bool {
    server.jetstream_report().is_none() && q.bool("leader-only").unwrap_or(false)
}

/// Whether JetStream runs (the `jetstream` flag of event headers).
pub fn enabled(server: &Server) -> bool {
    server.jetstream_report().is_some()
}
