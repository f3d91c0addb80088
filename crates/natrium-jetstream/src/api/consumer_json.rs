//! The JSON documents of the consumer verbs, in Go's field order, and a consumer's info.

use serde::Serialize;

use super::responses::{encode, Empty, Paged};
use crate::clock::now_ns;
use crate::consumer::running::num_pending;
use crate::consumer::update::with_dynamic_metadata;
use crate::consumer::{Consumer, ConsumerConfig};
use crate::errors::ApiError;
use crate::stream::Stream;
use natrium_core::account::Account;

/// `SequenceInfo` (no `last_active` before a first delivery or ack).
#[derive(Serialize, Default)]
pub struct SequenceJson {
    pub consumer_seq: u64,
    pub stream_seq: u64,
}

/// `PriorityGroupState`.
#[derive(Serialize)]
pub struct PriorityGroupJson {
    pub group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub pinned_client_id: String,
    pub pinned_ts: String,
}

/// `ConsumerInfo`.
#[derive(Serialize)]
pub struct ConsumerInfoJson {
    pub stream_name: String,
    pub name: String,
    pub created: String,
    /// Left out of `/jsz`'s consumer details unless asked for, as Go's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<ConsumerConfig>,
    pub delivered: SequenceJson,
    pub ack_floor: SequenceJson,
    pub num_ack_pending: usize,
    pub num_redelivered: usize,
    pub num_waiting: usize,
    pub num_pending: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub push_bound: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    #[serde(skip_serializing_if = "is_zero")]
    pub pause_remaining: i64,
    pub ts: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priority_groups: Vec<PriorityGroupJson>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// Go's zero time in JSON.
pub const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// Whether anyone in the consumer's account subscribes to `subject`.
pub fn has_interest(account: &Account, subject: &str) -> bool {
    let result = account.sublist.matches(subject.as_bytes());
    !(result.plain.is_empty() && result.queues.is_empty())
}

/// A consumer's info now; `dynamic` adds the server's version keys to its metadata (create and
/// info answers; Go's `LIST` shows the stored map).
pub fn consumer_info(
    account: &Account,
    stream: &Stream,
    consumer: &Consumer,
    dynamic: bool,
) -> ConsumerInfoJson {
    let snap = consumer.snapshot(|config, next| {
        let core = stream.core.lock();
        num_pending(config, next, core.ingest.store.as_ref())
    });
    let now = now_ns();
    let config = if dynamic {
        with_dynamic_metadata(&snap.config)
    } else {
        snap.config.clone()
    };
    let remaining = config
        .pause_until
        .map_or(0, |t| t.unix_nanos().saturating_sub(now).max(0));
    let pin = consumer.core.lock().delivery.pin.clone();
    let rfc = natrium_gofmt::time::rfc3339_nanos;
    ConsumerInfoJson {
        stream_name: consumer.stream.clone(),
        name: consumer.name.clone(),
        created: rfc(consumer.created_ns),
        delivered: SequenceJson {
            consumer_seq: snap.state.delivered.consumer,
            stream_seq: snap.state.delivered.stream,
        },
        ack_floor: SequenceJson {
            consumer_seq: snap.state.ack_floor.consumer,
            stream_seq: snap.state.ack_floor.stream,
        },
        num_ack_pending: snap.state.pending.len(),
        num_redelivered: snap.state.redelivered.len(),
        num_waiting: snap.num_waiting,
        num_pending: snap.num_pending,
        push_bound: config.is_push() && has_interest(account, &config.deliver_subject),
        paused: remaining > 0,
        pause_remaining: remaining,
        ts: rfc(now),
        priority_groups: config
            .priority_groups
            .first()
            .map(|g| PriorityGroupJson {
                group: g.clone(),
                pinned_ts: if pin.is_set() {
                    rfc(pin.ts)
                } else {
                    ZERO_TIME.to_owned()
                },
                pinned_client_id: pin.id,
            })
            .into_iter()
            .collect(),
        config: Some(config),
    }
}

/// `consumer_names_response`.
#[derive(Serialize)]
pub struct NamesResponse {
    #[serde(flatten)]
    pub paged: Paged,
    pub consumers: Vec<String>,
}

/// `consumer_list_response`.
#[derive(Serialize)]
pub struct ListResponse {
    #[serde(flatten)]
    pub paged: Paged,
    pub consumers: Vec<ConsumerInfoJson>,
    /// Offline consumers of the page (`crate::offline`), by name, and their reasons.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub offline: std::collections::BTreeMap<String, String>,
}

/// `consumer_pause_response`.
#[derive(Serialize)]
pub struct PauseResponse {
    pub paused: bool,
    pub pause_until: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub pause_remaining: i64,
}

/// `consumer_delete_response`.
#[derive(Serialize)]
pub struct Success {
    pub success: bool,
}

/// The error document of a consumer verb, with the zero fields Go's responses carry.
pub fn error_response(kind: &str, err: &ApiError) -> Vec<u8> {
    match kind {
        "consumer_names_response" => encode(
            kind,
            Some(err),
            NamesResponse {
                paged: Paged::default(),
                consumers: Vec::new(),
            },
        ),
        "consumer_list_response" => encode(
            kind,
            Some(err),
            ListResponse {
                paged: Paged::default(),
                consumers: Vec::new(),
                missing: Vec::new(),
                offline: std::collections::BTreeMap::new(),
            },
        ),
        "consumer_pause_response" => encode(
            kind,
            Some(err),
            PauseResponse {
                paused: false,
                pause_until: ZERO_TIME.to_owned(),
                pause_remaining: 0,
            },
        ),
        _ => encode(kind, Some(err), Empty {}),
    }
}
