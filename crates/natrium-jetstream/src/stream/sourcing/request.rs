//! The `CONSUMER.CREATE` request a mirror or source sends its origin, configured as Go's
//! `setupMirrorConsumer` and `trySetupSourceConsumer` configure it (an ephemeral push consumer:
//! no acks, one delivery, idle heartbeats every second, flow control, `direct` and
//! `sourcing`, gone ten seconds after its deliver subject loses interest), and the answer's
//! parts the task needs. Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::gotime::GoTime;
use crate::consumer::config::{AckPolicy, ConsumerConfig, DeliverPolicy};
use crate::errors::ApiError;

/// Go's `sourceHealthHB`: the origin consumer's idle heartbeat.
pub const HEARTBEAT_NS: i64 = 1_000_000_000;
/// Go's `sourceHealthCheckInterval`: the consumer's inactive threshold, and how long a
/// silent origin may stay silent before a new consumer is asked for.
pub const HEALTH_CHECK_NS: i64 = 10_000_000_000;
/// The consumer's `ack_wait` (22 hours, as Go sets it).
const ACK_WAIT_NS: i64 = 22 * 3600 * 1_000_000_000;

/// Where the consumer starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    All,
    Seq(u64),
    Time(GoTime),
}

/// What differs between a mirror's and a source's request.
pub struct Spec<'a> {
    pub origin: &'a str,
    /// `JS_MIRROR_<hash>` or `JS_SRC_<hash>`.
    pub name: String,
    pub deliver_subject: &'a str,
    pub start: Start,
    pub filter_subject: &'a str,
    pub filter_subjects: Vec<String>,
    /// `_nats.mirror.*` or `_nats.src.*`: the stream, account and domain asking.
    pub metadata: BTreeMap<String, String>,
}

/// Go's `CreateConsumerRequest`.
#[derive(Serialize)]
struct CreateRequest<'a> {
    stream_name: &'a str,
    config: ConsumerConfig,
}

/// The request body; the filter to name in the subject (Go's extended create, used when the
/// request has exactly one filter).
pub fn body(spec: Spec<'_>) -> (Vec<u8>, String) {
    let (deliver_policy, opt_start_seq, opt_start_time) = match spec.start {
        Start::All => (DeliverPolicy::All, 0, None),
        Start::Seq(seq) => (DeliverPolicy::ByStartSequence, seq, None),
        Start::Time(t) => (DeliverPolicy::ByStartTime, 0, Some(t)),
    };
    let mut config = ConsumerConfig {
        name: spec.name,
        deliver_subject: spec.deliver_subject.to_owned(),
        deliver_policy,
        opt_start_seq,
        opt_start_time,
        ack_policy: AckPolicy::None,
        ack_wait: ACK_WAIT_NS,
        max_deliver: 1,
        idle_heartbeat: HEARTBEAT_NS,
        flow_control: true,
        direct: true,
        sourcing: true,
        inactive_threshold: HEALTH_CHECK_NS,
        metadata: spec.metadata,
        filter_subject: spec.filter_subject.to_owned(),
        filter_subjects: spec.filter_subjects,
        ..ConsumerConfig::default()
    };
    if config.filter_subject.is_empty() && config.filter_subjects.len() == 1 {
        config.filter_subject = config.filter_subjects.remove(0);
    }
    let filter = config.filter_subject.clone();
    let request = CreateRequest {
        stream_name: spec.origin,
        config,
    };
    (serde_json::to_vec(&request).unwrap_or_default(), filter)
}

/// The parts of Go's `JSApiConsumerCreateResponse` the task reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Created {
    pub error: Option<ApiError>,
    pub name: String,
    pub config: Option<CreatedConfig>,
    pub delivered: Delivered,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CreatedConfig {
    pub deliver_subject: String,
    pub ack_policy: String,
}

impl Created {
    /// Whether the consumer acknowledges through flow control (a user's durable must).
    pub fn acks_by_flow_control(&self) -> bool {
        self.config
            .as_ref()
            .is_some_and(|c| c.ack_policy == "flow_control")
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Delivered {
    pub stream_seq: u64,
}

/// Reads an answer; one that does not parse is Go's 10025 (bad JSON).
pub fn parse_answer(body: &[u8]) -> Result<Created, ApiError> {
    let created: Created = serde_json::from_slice(body)
        .map_err(|e| crate::errors::table::INVALID_JSON.with(&[("err", &e)]))?;
    if let Some(err) = created.error {
        return Err(err);
    }
    if created.config.is_none() || created.name.is_empty() {
        return Err(crate::errors::table::MIRROR_CONSUMER_SETUP_FAILED
            .with(&[("err", &"invalid consumer create response")]));
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_sourcing_request_as_go_configures_it() {
        let (body, filter) = body(Spec {
            origin: "O",
            name: "JS_MIRROR_x".into(),
            deliver_subject: "$JS.M.abc",
            start: Start::Seq(5),
            filter_subject: "",
            filter_subjects: vec!["a.>".into()],
            metadata: BTreeMap::new(),
        });
        assert_eq!(filter, "a.>");
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["stream_name"], "O");
        let c = &v["config"];
        assert_eq!(c["deliver_policy"], "by_start_sequence");
        assert_eq!(c["opt_start_seq"], 5);
        assert_eq!(c["ack_policy"], "none");
        assert_eq!(c["idle_heartbeat"], HEARTBEAT_NS);
        assert_eq!(c["flow_control"], true);
        assert_eq!(c["direct"], true);
        assert_eq!(c["sourcing"], true);
        assert_eq!(c["filter_subject"], "a.>");
    }

    #[test]
    fn stream_sourcing_answer_errors() {
        let err = parse_answer(
            br#"{"error":{"code":404,"err_code":10059,"description":"stream not found"}}"#,
        )
        .unwrap_err();
        assert_eq!(err.err_code, 10059);
        assert!(parse_answer(b"nope").is_err());
        let ok = parse_answer(
            br#"{"name":"N","config":{"deliver_subject":"d"},"delivered":{"stream_seq":4}}"#,
        )
        .unwrap();
        assert_eq!(ok.delivered.stream_seq, 4);
        assert!(!ok.acks_by_flow_control());
        let reset = parse_answer(
            br#"{"name":"D","config":{"deliver_subject":"d","ack_policy":"flow_control"},"reset_seq":3}"#,
        )
        .unwrap();
        assert!(reset.acks_by_flow_control());
    }
}
