//! `/varz`: server identity, configured limits and counters. Durations are integer nanoseconds
//! and times RFC 3339, as Go's encoding/json writes them.
//!
//! Every key is Go's, in Go's order, with Go's JSON type. Sections for features Natrium does
//! not run yet carry what Go reports with the feature off: `feature_flags` (JetStream) holds
//! Go's defaults under the configured flags and `disk_io_wait_stats` (the file store) zeros.
//! `cpu` is always 0 for now.

use std::collections::BTreeMap;

use natrium_core::Server;
use serde::Serialize;

use crate::process;

#[derive(Serialize, Default)]
pub struct Empty {}

#[derive(Serialize, Default)]
pub struct KindStats {
    clients: u64,
    routes: u64,
    gateways: u64,
    leafs: u64,
}

/// Go's `disk_io_wait_stats`: waits for the file store's disk I/O slots, durations in
/// nanoseconds. Always zero: Natrium has no file store yet.
#[derive(Serialize, Default)]
pub struct DiskIoWaitStats {
    waiters: u64,
    waits: u64,
    wait_time: u64,
    max_wait_time: u64,
}

/// The `websocket` section (Go's `WebsocketOptsVarz`): the configured values, every one
/// omitted when empty or zero, the port being the bound one.
#[derive(Serialize, Default)]
pub struct WebsocketVarz {
    #[serde(skip_serializing_if = "String::is_empty")]
    host: String,
    #[serde(skip_serializing_if = "is_zero_u16")]
    port: u16,
    #[serde(skip_serializing_if = "String::is_empty")]
    advertise: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    no_auth_user: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    jwt_cookie: String,
    #[serde(skip_serializing_if = "is_zero_u128")]
    handshake_timeout: u128,
    #[serde(skip_serializing_if = "is_zero_f64", serialize_with = "go_float")]
    auth_timeout: f64,
    #[serde(skip_serializing_if = "is_false")]
    no_tls: bool,
    #[serde(skip_serializing_if = "is_false")]
    tls_map: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tls_pinned_certs: Vec<String>,
    #[serde(skip_serializing_if = "is_false")]
    same_origin: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    allowed_origins: Vec<String>,
    #[serde(skip_serializing_if = "is_false")]
    compression: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tls_cert_not_after: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero_u16(value: &u16) -> bool {
    *value == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_u128(value: &u128) -> bool {
    *value == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_f64(value: &f64) -> bool {
    *value == 0.0
}

/// A certificate expiry as Go's `/varz` writes it.
fn not_after(secs: Option<i64>) -> Option<String> {
    secs.and_then(|secs| chrono::DateTime::from_timestamp(secs, 0))
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

fn websocket_varz(server: &Server) -> WebsocketVarz {
    let Some(ws) = &server.config().websocket else {
        return WebsocketVarz::default();
    };
    let r = &ws.report;
    let tls = ws.tls.as_deref();
    WebsocketVarz {
        host: ws.host.clone(),
        port: server.websocket_addr().map_or(0, |a| a.port()),
        advertise: r.advertise.clone(),
        no_auth_user: r.no_auth_user.clone(),
        jwt_cookie: r.jwt_cookie.clone(),
        handshake_timeout: ws.handshake_timeout.as_nanos(),
        auth_timeout: r.auth_timeout,
        no_tls: r.no_tls,
        tls_map: tls.is_some_and(|t| t.map),
        tls_pinned_certs: tls
            .and_then(|t| t.pinned_certs.as_ref())
            .map(|pins| pins.iter().map(|p| hex(p)).collect())
            .unwrap_or_default(),
        same_origin: r.same_origin,
        allowed_origins: r.allowed_origins.clone(),
        compression: r.compression,
        tls_cert_not_after: not_after(tls.and_then(|t| t.cert_not_after)),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[derive(Serialize)]
pub struct Varz {
    server_id: String,
    server_name: String,
    version: String,
    proto: u8,
    go: String,
    host: String,
    port: u16,
    #[serde(skip_serializing_if = "is_false")]
    auth_required: bool,
    #[serde(skip_serializing_if = "is_false")]
    tls_required: bool,
    #[serde(skip_serializing_if = "is_false")]
    tls_verify: bool,
    max_connections: usize,
    ping_interval: u128,
    ping_max: u32,
    http_host: String,
    /// As configured (`-1` for `-m -1`), like Go; the bound port is in the log and ports file.
    http_port: i64,
    http_base_path: String,
    https_port: i64,
    #[serde(serialize_with = "go_float")]
    auth_timeout: f64,
    max_control_line: usize,
    max_payload: usize,
    max_pending: usize,
    cluster: Empty,
    gateway: Empty,
    leaf: Empty,
    mqtt: Empty,
    websocket: WebsocketVarz,
    jetstream: crate::jsz::JetStreamVarz,
    #[serde(serialize_with = "go_float")]
    tls_timeout: f64,
    write_deadline: u128,
    start: String,
    now: String,
    uptime: String,
    mem: u64,
    cores: usize,
    gomaxprocs: usize,
    #[serde(serialize_with = "go_float")]
    cpu: f64,
    connections: usize,
    total_connections: u64,
    routes: u64,
    remotes: u64,
    leafnodes: u64,
    in_msgs: u64,
    in_bytes: u64,
    in_client_msgs: u64,
    in_client_bytes: u64,
    out_msgs: u64,
    out_bytes: u64,
    out_client_msgs: u64,
    out_client_bytes: u64,
    slow_consumers: u64,
    stale_connections: u64,
    stalled_clients: u64,
    subscriptions: usize,
    http_req_stats: BTreeMap<String, u64>,
    config_load_time: String,
    config_digest: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    metadata: BTreeMap<String, String>,
    /// Go's JetStream feature flags in force (a JSON object with the names sorted, as Go
    /// encodes a map); they only steer JetStream, which Natrium does not run yet.
    feature_flags: BTreeMap<String, bool>,
    #[serde(skip_serializing_if = "String::is_empty")]
    system_account: String,
    slow_consumer_stats: KindStats,
    stale_connection_stats: KindStats,
    disk_io_wait_stats: DiskIoWaitStats,
    /// The server certificate's expiry; omitted without TLS (Go's `omitzero`).
    #[serde(skip_serializing_if = "Option::is_none")]
    tls_cert_not_after: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_false(value: &bool) -> bool {
    !*value
}

/// A float as Go's encoding/json writes it: whole numbers without a fraction (`2`, not `2.0`),
/// so that typed consumers and byte comparisons see what the Go server sends.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `serialize_with` passes a reference.
pub(crate) fn go_float<S: serde::Serializer>(
    value: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    const EXACT_INTEGER_MAX: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() <= EXACT_INTEGER_MAX {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// Go's `time.Duration` string for an uptime, e.g. `1m37s`, `2h3m4s`, `1d2h3m4s`.
pub fn uptime_string(total_secs: i64) -> String {
    let secs = total_secs.max(0);
    let (days, hours, mins, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if days > 0 {
        format!("{days}d{hours}h{mins}m{s}s")
    } else if hours > 0 {
        format!("{hours}h{mins}m{s}s")
    } else if mins > 0 {
        format!("{mins}m{s}s")
    } else {
        format!("{s}s")
    }
}

pub fn rfc3339(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
}

pub struct HttpInfo {
    pub host: String,
    /// The configured monitoring port.
    pub port: i64,
    /// The configured HTTPS monitoring port.
    pub https_port: i64,
    pub base_path: String,
    pub req_stats: BTreeMap<String, u64>,
}

pub fn varz(server: &Server, http: HttpInfo) -> Varz {
    let config = server.config();
    let loaded = server.config_loaded();
    let stats = server.stats();
    let load = natrium_core::stats::ServerStats::load;
    let now = chrono::Utc::now();
    let cores = process::cores();
    let (in_msgs, in_bytes) = (load(&stats.in_msgs), load(&stats.in_bytes));
    let (out_msgs, out_bytes) = (load(&stats.out_msgs), load(&stats.out_bytes));
    Varz {
        server_id: server.id().to_owned(),
        server_name: server.name().to_owned(),
        version: natrium_core::info::COMPATIBLE_VERSION.to_owned(),
        proto: natrium_core::info::PROTO_VERSION,
        go: concat!("natrium-", env!("CARGO_PKG_VERSION")).to_owned(),
        host: config.host.clone(),
        port: server.client_addr().map_or(0, |a| a.port()),
        auth_required: config.auth.required(),
        // As the server's INFO says it: `allow_non_tls` makes TLS available, not required.
        tls_required: config.tls.as_ref().is_some_and(|t| !t.allow_non_tls),
        tls_verify: config.tls.as_ref().is_some_and(|t| t.verify),
        max_connections: config.max_connections,
        ping_interval: config.ping_interval.as_nanos(),
        ping_max: config.ping_max,
        http_host: http.host,
        http_port: http.port,
        http_base_path: http.base_path,
        https_port: http.https_port,
        auth_timeout: config.auth_timeout.as_secs_f64(),
        max_control_line: config.max_control_line,
        max_payload: config.max_payload,
        max_pending: config.max_pending,
        cluster: Empty {},
        gateway: Empty {},
        leaf: Empty {},
        mqtt: Empty {},
        websocket: websocket_varz(server),
        jetstream: crate::jsz::varz_section(server),
        tls_timeout: config.tls_timeout.as_secs_f64(),
        write_deadline: config.write_deadline.as_nanos(),
        start: rfc3339(server.started()),
        now: rfc3339(now),
        uptime: uptime_string((now - server.started()).num_seconds()),
        mem: process::resident_bytes(),
        cores,
        gomaxprocs: cores,
        cpu: 0.0,
        connections: server.num_clients(),
        total_connections: load(&stats.total_connections),
        routes: 0,
        remotes: 0,
        leafnodes: 0,
        in_msgs,
        in_bytes,
        in_client_msgs: in_msgs,
        in_client_bytes: in_bytes,
        out_msgs,
        out_bytes,
        out_client_msgs: out_msgs,
        out_client_bytes: out_bytes,
        slow_consumers: load(&stats.slow_consumers),
        stale_connections: load(&stats.stale_connections),
        stalled_clients: 0,
        subscriptions: server.num_subscriptions(),
        http_req_stats: http.req_stats,
        config_load_time: rfc3339(loaded.at),
        config_digest: loaded.digest,
        tags: config.tags.clone(),
        metadata: config.metadata.clone(),
        feature_flags: config.feature_flags.clone(),
        system_account: if server.has_system_account() {
            server.system_account().name.clone()
        } else {
            String::new()
        },
        slow_consumer_stats: KindStats {
            clients: load(&stats.slow_consumers_clients),
            ..KindStats::default()
        },
        stale_connection_stats: KindStats {
            clients: load(&stats.stale_connections),
            ..KindStats::default()
        },
        disk_io_wait_stats: DiskIoWaitStats::default(),
        tls_cert_not_after: not_after(config.tls.as_ref().and_then(|t| t.cert_not_after)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_floats_encode_like_go() {
        #[derive(Serialize)]
        struct Doc {
            #[serde(serialize_with = "go_float")]
            whole: f64,
            #[serde(serialize_with = "go_float")]
            part: f64,
        }
        let text = serde_json::to_string(&Doc {
            whole: 2.0,
            part: 0.5,
        })
        .unwrap_or_default();
        assert_eq!(text, r#"{"whole":2,"part":0.5}"#);
    }

    #[test]
    fn monitor_uptime_matches_go_format() {
        assert_eq!(uptime_string(0), "0s");
        assert_eq!(uptime_string(97), "1m37s");
        assert_eq!(uptime_string(3600 * 2 + 61), "2h1m1s");
        assert_eq!(uptime_string(86_400 + 1), "1d0h0m1s");
    }
}
