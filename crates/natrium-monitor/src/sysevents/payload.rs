//! The JSON documents of system events and system request replies, with the Go server's field
//! names, nesting and omission rules, so that tools subscribed to `$SYS.>` decode them as-is.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use natrium_core::account::{Account, AccountStats};
use serde::Serialize;

use crate::varz::rfc3339;

/// The `server` object every event and reply carries: who sent it, and a per-server sequence
/// number so that receivers can order and de-duplicate.
#[derive(Serialize, Clone)]
pub struct ServerHeader {
    pub name: String,
    pub host: String,
    pub id: String,
    pub ver: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    pub jetstream: bool,
    pub flags: u64,
    pub seq: u64,
    pub time: String,
}

/// The identity part of [`ServerHeader`]; `stamp` adds the sequence number and time.
///
/// Tags and metadata are taken when the services start: Go's event loop also reads them once,
/// and keeps sending the old ones after a reload.
pub struct ServerIdentity {
    pub name: String,
    pub host: String,
    pub id: String,
    /// `server_tags`, as configured at start.
    pub tags: Vec<String>,
    /// `server_metadata`, as configured at start.
    pub metadata: BTreeMap<String, String>,
    seq: AtomicU64,
    /// The server, to tell whether JetStream runs when stamping.
    server: Option<natrium_core::Server>,
}

impl ServerIdentity {
    pub fn new(name: String, host: String, id: String) -> Self {
        Self {
            name,
            host,
            id,
            tags: Vec::new(),
            metadata: BTreeMap::new(),
            seq: AtomicU64::new(0),
            server: None,
        }
    }

    /// The same identity, stamping whether `server` runs JetStream.
    #[must_use]
    pub fn with_server(mut self, server: natrium_core::Server) -> Self {
        self.server = Some(server);
        self
    }

    /// The same identity, with the server's tags and metadata.
    #[must_use]
    pub fn with_description(
        mut self,
        tags: Vec<String>,
        metadata: BTreeMap<String, String>,
    ) -> Self {
        self.tags = tags;
        self.metadata = metadata;
        self
    }

    /// Counts a stamp for an event that was not built because nobody listens to it, so that
    /// the sequence numbers subscribers see are the same as if it had been sent.
    pub fn skip_stamp(&self) {
        self.seq.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stamp(&self) -> ServerHeader {
        ServerHeader {
            name: self.name.clone(),
            host: self.host.clone(),
            id: self.id.clone(),
            ver: natrium_core::info::COMPATIBLE_VERSION,
            tags: self.tags.clone(),
            metadata: self.metadata.clone(),
            jetstream: self.server.as_ref().is_some_and(crate::jsz::enabled),
            flags: 0,
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            time: rfc3339(chrono::Utc::now()),
        }
    }
}

/// Messages and bytes in one direction.
#[derive(Serialize, Clone, Copy, Default)]
pub struct MsgBytes {
    pub msgs: u64,
    pub bytes: u64,
}

/// Traffic in one direction, split by connection kind as Go reports it in account events.
#[derive(Serialize, Clone, Copy, Default)]
pub struct DataStatsByKind {
    pub msgs: u64,
    pub bytes: u64,
    pub gateways: MsgBytes,
    pub routes: MsgBytes,
    pub leafs: MsgBytes,
}

impl From<MsgBytes> for DataStatsByKind {
    fn from(client: MsgBytes) -> Self {
        Self {
            msgs: client.msgs,
            bytes: client.bytes,
            ..Self::default()
        }
    }
}

/// Go's `ClientInfo` as connect and disconnect events carry it.
#[derive(Serialize, Default)]
pub struct ClientInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub host: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub id: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub acc: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub lang: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub ver: String,
    /// Nanoseconds, as Go encodes a `time.Duration`.
    #[serde(skip_serializing_if = "is_zero")]
    pub rtt: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name_tag: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub client_type: String,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// `$SYS.ACCOUNT.<acc>.CONNECT`.
#[derive(Serialize)]
pub struct ConnectEvent {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub timestamp: String,
    pub server: ServerHeader,
    pub client: ClientInfo,
}

/// `$SYS.ACCOUNT.<acc>.DISCONNECT`.
#[derive(Serialize)]
pub struct DisconnectEvent {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub timestamp: String,
    pub server: ServerHeader,
    pub client: ClientInfo,
    pub sent: MsgBytes,
    pub received: MsgBytes,
    pub reason: &'static str,
}

/// `$SYS.SERVER.<id>.CLIENT.AUTH.ERR`: a DISCONNECT-shaped event for a refused client.
pub type AuthErrorEvent = DisconnectEvent;

pub const CONNECT_EVENT_TYPE: &str = "io.nats.server.advisory.v1.client_connect";
pub const DISCONNECT_EVENT_TYPE: &str = "io.nats.server.advisory.v1.client_disconnect";
pub const ACCOUNT_CONNS_TYPE: &str = "io.nats.server.advisory.v1.account_connections";

/// `$SYS.ACCOUNT.<acc>.SERVER.CONNS` (and the older `$SYS.SERVER.ACCOUNT.<acc>.CONNS`): an
/// account's connection count after it changed.
#[derive(Serialize)]
pub struct AccountConnsEvent {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub timestamp: String,
    pub server: ServerHeader,
    #[serde(flatten)]
    pub stat: AccountStat,
}

/// Go's `AccountStat`: one account's connections and traffic on this server.
#[derive(Serialize, Clone)]
pub struct AccountStat {
    pub acc: String,
    pub name: String,
    pub conns: usize,
    pub leafnodes: usize,
    pub total_conns: usize,
    pub num_subscriptions: u64,
    pub sent: DataStatsByKind,
    pub received: DataStatsByKind,
    pub slow_consumers: u64,
}

impl AccountStat {
    /// One account's figures now; sent and received from its clients' side, as Go reports.
    pub fn of(account: &Account) -> Self {
        let load = AccountStats::load;
        let conns = account.stats.conns();
        Self {
            acc: account.name.clone(),
            name: account.name.clone(),
            conns,
            leafnodes: 0,
            total_conns: conns,
            num_subscriptions: account.sublist.count() as u64,
            sent: MsgBytes {
                msgs: load(&account.stats.out_msgs),
                bytes: load(&account.stats.out_bytes),
            }
            .into(),
            received: MsgBytes {
                msgs: load(&account.stats.in_msgs),
                bytes: load(&account.stats.in_bytes),
            }
            .into(),
            slow_consumers: load(&account.stats.slow_consumers),
        }
    }
}

/// The `statsz` object of `$SYS.SERVER.<id>.STATSZ` and of `STATSZ`/`PING` replies.
#[derive(Serialize)]
pub struct Statsz {
    pub start: String,
    pub mem: u64,
    pub cores: usize,
    #[serde(serialize_with = "crate::varz::go_float")]
    pub cpu: f64,
    pub connections: usize,
    pub total_connections: u64,
    pub active_accounts: usize,
    pub subscriptions: usize,
    pub sent: MsgBytes,
    pub sent_to_clients: MsgBytes,
    pub received: MsgBytes,
    pub received_from_clients: MsgBytes,
    pub slow_consumers: u64,
    pub active_servers: usize,
    pub gomaxprocs: usize,
}

/// `$SYS.SERVER.<id>.STATSZ` and the `PING`/`STATSZ` replies.
#[derive(Serialize)]
pub struct StatszMsg {
    pub server: ServerHeader,
    pub statsz: Statsz,
}

/// Go's `SubjectPermission`: a direction's lists, each left out when empty.
#[derive(Serialize, Default)]
pub struct SubjectPermissionDoc {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// Go's `ResponsePermission`: `ttl` in nanoseconds; -1 stands for unlimited.
#[derive(Serialize)]
pub struct ResponsePermissionDoc {
    pub max: i64,
    pub ttl: i64,
}

/// Go's `Permissions` as `$SYS.REQ.USER.INFO` shows a client's.
#[derive(Serialize, Default)]
pub struct PermissionsDoc {
    pub publish: SubjectPermissionDoc,
    pub subscribe: SubjectPermissionDoc,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responses: Option<ResponsePermissionDoc>,
}

/// Go's `UserInfo`: the answer to `$SYS.REQ.USER.INFO`.
#[derive(Serialize, Default)]
pub struct UserInfo {
    pub user: String,
    pub account: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub account_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionsDoc>,
    /// Nanoseconds until the user's JWT expires, whole seconds.
    #[serde(skip_serializing_if = "is_zero")]
    pub expires: u64,
}

/// The error object of a failed request.
#[derive(Serialize)]
pub struct ApiError {
    pub code: u16,
    pub description: String,
}

/// The reply to `$SYS.REQ.SERVER.…` requests: the endpoint's document as `data`, or `error`.
#[derive(Serialize)]
pub struct ApiResponse<T: Serialize> {
    pub server: ServerHeader,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// A 22-character event id, as Go's NUID gives (base-62 random).
pub fn event_id() -> String {
    natrium_core::events::event_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysevents_client_info_omits_empty_fields_like_go() {
        let info = ClientInfo {
            id: 7,
            acc: "A".into(),
            kind: "Client".into(),
            ..ClientInfo::default()
        };
        let text = serde_json::to_string(&info).unwrap_or_default();
        assert_eq!(text, r#"{"id":7,"acc":"A","kind":"Client"}"#);
    }

    #[test]
    fn sysevents_sequence_numbers_increase() {
        let id = ServerIdentity::new("n".into(), "0.0.0.0".into(), "NID".into());
        assert_eq!(id.stamp().seq, 1);
        assert_eq!(id.stamp().seq, 2);
        // An event nobody listens to is not built, but keeps its place in the sequence.
        id.skip_stamp();
        assert_eq!(id.stamp().seq, 4);
    }

    #[test]
    fn sysevents_event_ids_are_22_base62_characters() {
        let id = event_id();
        assert_eq!(id.len(), 22);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
