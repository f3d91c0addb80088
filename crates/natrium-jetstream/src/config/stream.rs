//! A stream's configuration as the API carries it: Go's field names and JSON encodings
//! (durations in integer nanoseconds, enums as lower-case words, `-1` for no limit), so what a
//! client sends is echoed back as Go echoes it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `StreamConfig`. Fields keep Go's types so a value a client sends survives the round trip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StreamConfig {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
    pub retention: Retention,
    pub max_consumers: i64,
    pub max_msgs: i64,
    pub max_bytes: i64,
    /// Nanoseconds; 0 is no limit.
    pub max_age: i64,
    pub max_msgs_per_subject: i64,
    /// Go's `int32` with `omitempty`.
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub max_msg_size: i32,
    pub discard: Discard,
    pub storage: Storage,
    pub num_replicas: i64,
    #[serde(skip_serializing_if = "is_false")]
    pub no_ack: bool,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub duplicate_window: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<StreamSource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<StreamSource>,
    pub compression: Compression,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub first_seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject_transform: Option<SubjectTransform>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub republish: Option<RePublish>,
    pub allow_direct: bool,
    pub mirror_direct: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub discard_new_per_subject: bool,
    pub sealed: bool,
    pub deny_delete: bool,
    pub deny_purge: bool,
    pub allow_rollup_hdrs: bool,
    pub consumer_limits: ConsumerLimits,
    pub allow_msg_ttl: bool,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub subject_delete_marker_ttl: i64,
    #[serde(skip_serializing_if = "is_false")]
    pub allow_msg_counter: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub allow_atomic: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub allow_msg_schedules: bool,
    #[serde(skip_serializing_if = "PersistMode::is_default")]
    pub persist_mode: PersistMode,
    #[serde(skip_serializing_if = "is_false")]
    pub allow_batched: bool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

/// `retention`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Retention {
    #[default]
    Limits,
    Interest,
    #[serde(rename = "workqueue")]
    WorkQueue,
}

/// `discard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Discard {
    #[default]
    Old,
    New,
}

/// `storage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    #[default]
    File,
    Memory,
}

/// `compression`; the word stays `s2` whatever codec the store uses on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    #[default]
    None,
    S2,
}

/// `persist_mode`: `default` acknowledges after the sync policy's durability point, `async`
/// right after the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PersistMode {
    #[default]
    Default,
    Async,
}

impl PersistMode {
    #[allow(clippy::trivially_copy_pass_by_ref)]
    fn is_default(&self) -> bool {
        *self == PersistMode::Default
    }
}

/// `placement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Placement {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub cluster: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub preferred: String,
}

/// `mirror` and each of `sources`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StreamSource {
    pub name: String,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub opt_start_seq: u64,
    /// RFC 3339 as sent; parsed where it is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opt_start_time: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub filter_subject: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subject_transforms: Vec<SubjectTransform>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalStream>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer: Option<ConsumerSource>,
}

/// `external`: another domain's or account's API and delivery prefixes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ExternalStream {
    pub api: String,
    pub deliver: String,
}

/// A source's `consumer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ConsumerSource {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub deliver_subject: String,
}

/// `subject_transform` and a source's `subject_transforms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct SubjectTransform {
    pub src: String,
    pub dest: String,
}

/// `republish`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct RePublish {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub src: String,
    pub dest: String,
    #[serde(skip_serializing_if = "is_false")]
    pub headers_only: bool,
}

/// `consumer_limits`: defaults for the stream's consumers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ConsumerLimits {
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub inactive_threshold: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_ack_pending: i64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}
