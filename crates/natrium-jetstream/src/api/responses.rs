//! The JSON documents the API answers with, in Go's field order.

use serde::Serialize;

use crate::config::StreamConfig;
use crate::errors::ApiError;

/// Every response: `{"type":"io.nats.jetstream.api.v1.<kind>","error":{…}, …}`.
#[derive(Serialize)]
pub struct Response<'a, T: Serialize> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a ApiError>,
    #[serde(flatten)]
    pub body: T,
}

/// Nothing beside the type and error.
#[derive(Serialize)]
pub struct Empty {}

/// `total`, `offset`, `limit` of paged responses.
#[derive(Serialize, Default, Clone, Copy)]
pub struct Paged {
    pub total: usize,
    pub offset: usize,
    pub limit: usize,
}

/// `StreamState`.
#[derive(Serialize, Default)]
pub struct StreamStateJson {
    pub messages: u64,
    pub bytes: u64,
    pub first_seq: u64,
    pub first_ts: String,
    pub last_seq: u64,
    pub last_ts: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub num_subjects: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subjects: Option<std::collections::BTreeMap<String, u64>>,
    #[serde(skip_serializing_if = "is_zero")]
    pub num_deleted: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost: Option<LostJson>,
    pub consumer_count: u64,
}

impl StreamStateJson {
    /// The document of a store's state (no consumers yet).
    pub fn of(state: &natrium_store::StreamState) -> Self {
        let rfc = natrium_gofmt::time::rfc3339_nanos;
        Self {
            messages: state.msgs,
            bytes: state.bytes,
            first_seq: state.first_seq,
            first_ts: rfc(state.first_ts),
            last_seq: state.last_seq,
            last_ts: rfc(state.last_ts),
            num_subjects: state.num_subjects,
            subjects: None,
            num_deleted: state.num_deleted,
            deleted: Vec::new(),
            lost: state.lost.as_ref().map(|lost| LostJson {
                msgs: lost
                    .ranges
                    .iter()
                    .flat_map(|&(first, last)| first..=last)
                    .take(100_000)
                    .collect(),
                bytes: lost.bytes,
            }),
            consumer_count: 0,
        }
    }
}

/// `LostStreamData`.
#[derive(Serialize)]
pub struct LostJson {
    pub msgs: Vec<u64>,
    pub bytes: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `ClusterInfo` of a single server: it leads everything.
#[derive(Serialize)]
pub struct ClusterJson {
    pub leader: String,
}

/// `StreamInfo` (info, create, update, list entries).
#[derive(Serialize)]
pub struct StreamInfoJson {
    pub config: StreamConfig,
    pub created: String,
    pub state: StreamStateJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<crate::stream::sourcing::status::SourceInfoJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<crate::stream::sourcing::status::SourceInfoJson>,
    pub ts: String,
}

/// `stream_info_response`.
#[derive(Serialize)]
pub struct StreamInfoResponse {
    #[serde(flatten)]
    pub paged: Paged,
    #[serde(flatten)]
    pub info: StreamInfoJson,
}

/// `stream_create_response`.
#[derive(Serialize)]
pub struct StreamCreateResponse {
    #[serde(flatten)]
    pub info: StreamInfoJson,
    pub did_create: bool,
}

/// `stream_restore_response`: where to send the chunks.
#[derive(Serialize, Default)]
pub struct RestoreResponse {
    pub deliver_subject: String,
}

/// `stream_snapshot_response`: the stream's configuration and state as the snapshot began.
#[derive(Serialize)]
pub struct SnapshotResponse {
    pub config: crate::config::StreamConfig,
    pub state: StreamStateJson,
}

/// `stream_names_response`.
#[derive(Serialize)]
pub struct StreamNamesResponse {
    #[serde(flatten)]
    pub paged: Paged,
    pub streams: Option<Vec<String>>,
}

/// `stream_list_response`.
#[derive(Serialize)]
pub struct StreamListResponse {
    #[serde(flatten)]
    pub paged: Paged,
    pub streams: Vec<StreamInfoJson>,
    /// Offline streams of the page (`crate::offline`), by name, and their reasons.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub offline: std::collections::BTreeMap<String, String>,
}

/// `stream_delete_response`, `stream_msg_delete_response`.
#[derive(Serialize)]
pub struct Success {
    pub success: bool,
}

/// `stream_purge_response`.
#[derive(Serialize)]
pub struct PurgeResponse {
    pub success: bool,
    pub purged: u64,
}

/// `StoredMsg` of `stream_msg_get_response`.
#[derive(Serialize)]
pub struct StoredMsgJson {
    pub subject: String,
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdrs: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    pub time: String,
}

/// `stream_msg_get_response`.
#[derive(Serialize)]
pub struct MsgGetResponse {
    pub message: StoredMsgJson,
}

/// `account_info_response`.
#[derive(Serialize)]
pub struct AccountInfoResponse {
    pub memory: u64,
    pub storage: u64,
    pub reserved_memory: u64,
    pub reserved_storage: u64,
    pub streams: usize,
    pub consumers: usize,
    pub limits: AccountLimitsJson,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub domain: String,
    pub api: ApiStatsJson,
}

/// `JetStreamAccountLimits`.
#[derive(Serialize)]
pub struct AccountLimitsJson {
    pub max_memory: i64,
    pub max_storage: i64,
    pub max_streams: i64,
    pub max_consumers: i64,
    pub max_ack_pending: i64,
    pub memory_max_stream_bytes: i64,
    pub storage_max_stream_bytes: i64,
    pub max_bytes_required: bool,
}

impl From<&natrium_auth::account::JsAccountLimits> for AccountLimitsJson {
    fn from(l: &natrium_auth::account::JsAccountLimits) -> Self {
        Self {
            max_memory: l.max_memory,
            max_storage: l.max_store,
            max_streams: l.max_streams,
            max_consumers: l.max_consumers,
            max_ack_pending: l.max_ack_pending,
            memory_max_stream_bytes: l.memory_max_stream_bytes,
            storage_max_stream_bytes: l.store_max_stream_bytes,
            max_bytes_required: l.max_bytes_required,
        }
    }
}

/// `JetStreamAPIStats`.
#[derive(Serialize)]
pub struct ApiStatsJson {
    pub level: u32,
    pub total: u64,
    pub errors: u64,
}

/// Serializes a response document.
pub fn encode<T: Serialize>(kind: &str, error: Option<&ApiError>, body: T) -> Vec<u8> {
    let full = format!("io.nats.jetstream.api.v1.{kind}");
    crate::config::to_go_json(&Response {
        kind: &full,
        error,
        body,
    })
}
