//! A consumer's configuration as the API carries it: Go's field names, order and encodings
//! (durations in integer nanoseconds, policies as words, `omitempty` where Go has it), so what
//! a client sends is echoed back as Go echoes it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::gotime::GoTime;

/// `ConsumerConfig`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ConsumerConfig {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub durable_name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub deliver_policy: DeliverPolicy,
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub opt_start_seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opt_start_time: Option<GoTime>,
    pub ack_policy: AckPolicy,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub ack_wait: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_deliver: i64,
    /// Nanoseconds each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub backoff: Vec<i64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub filter_subject: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filter_subjects: Vec<String>,
    pub replay_policy: ReplayPolicy,
    /// Bits per second.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub rate_limit_bps: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub sample_freq: String,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_waiting: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_ack_pending: i64,
    #[serde(skip_serializing_if = "is_false")]
    pub flow_control: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub headers_only: bool,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_batch: i64,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_expires: i64,
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub max_bytes: i64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub deliver_subject: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub deliver_group: String,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub idle_heartbeat: i64,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub inactive_threshold: i64,
    pub num_replicas: i64,
    #[serde(skip_serializing_if = "is_false")]
    pub mem_storage: bool,
    /// Internal consumers of a stream (sources, mirrors): not listed.
    #[serde(skip_serializing_if = "is_false")]
    pub direct: bool,
    #[serde(skip_serializing_if = "is_false")]
    pub sourcing: bool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_until: Option<GoTime>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub priority_groups: Vec<String>,
    #[serde(skip_serializing_if = "PriorityPolicy::is_none")]
    pub priority_policy: PriorityPolicy,
    /// Nanoseconds.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub priority_timeout: i64,
}

impl ConsumerConfig {
    /// A durable consumer names itself with `durable_name`.
    pub fn is_durable(&self) -> bool {
        !self.durable_name.is_empty()
    }

    /// Push consumers deliver to `deliver_subject`; pull consumers wait for requests.
    pub fn is_push(&self) -> bool {
        !self.deliver_subject.is_empty()
    }

    /// The subject filters, `filter_subject` or `filter_subjects` (Go's
    /// `gatherSubjectFilters`: empty ones dropped).
    pub fn filters(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        if !self.filter_subject.is_empty() {
            out.push(&self.filter_subject);
        }
        out.extend(
            self.filter_subjects
                .iter()
                .map(String::as_str)
                .filter(|s| !s.is_empty()),
        );
        out
    }
}

/// `deliver_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DeliverPolicy {
    /// Go reads `undefined` as `all` too.
    #[default]
    #[serde(alias = "undefined")]
    All,
    Last,
    New,
    ByStartSequence,
    ByStartTime,
    LastPerSubject,
}

/// `ack_policy`; Go's zero value is `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AckPolicy {
    #[default]
    None,
    All,
    Explicit,
    FlowControl,
}

/// `replay_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ReplayPolicy {
    #[default]
    Instant,
    Original,
}

/// `priority_policy` (ADR-42).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PriorityPolicy {
    #[default]
    None,
    Overflow,
    PinnedClient,
    Prioritized,
}

impl PriorityPolicy {
    #[allow(clippy::trivially_copy_pass_by_ref)]
    fn is_none(&self) -> bool {
        *self == PriorityPolicy::None
    }
}

/// A create request's `action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConsumerAction {
    /// `""`: create, or update one that exists.
    #[default]
    CreateOrUpdate,
    Create,
    Update,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(b: &bool) -> bool {
    !*b
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}
