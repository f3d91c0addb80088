//! The body of `CONSUMER.CREATE` and `CONSUMER.DURABLE.CREATE` (Go's `CreateConsumerRequest`)
//! decoded with Go's exact errors, field paths included (`json: cannot unmarshal string into
//! Go struct field ConsumerConfig.config.ack_wait of type time.Duration`).

use serde::Deserialize;

use super::config::{ConsumerAction, ConsumerConfig};
use crate::config::decode_checked;
use crate::config::gotype::{GoStruct, GoType};
use crate::errors::ApiError;

/// `CreateConsumerRequest`.
#[derive(Debug, Clone, Default)]
pub struct CreateRequest {
    pub stream_name: String,
    pub config: ConsumerConfig,
    pub action: ConsumerAction,
    pub pedantic: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Wire {
    stream_name: String,
    config: ConsumerConfig,
    action: String,
    pedantic: bool,
}

/// Decodes a create request.
///
/// # Errors
/// 10025 `invalid JSON: …`.
pub fn decode_create(body: &[u8]) -> Result<CreateRequest, ApiError> {
    let wire: Wire = decode_checked(body, &CREATE_REQUEST, "server.CreateConsumerRequest")?;
    let action = match wire.action.as_str() {
        "create" => ConsumerAction::Create,
        "update" => ConsumerAction::Update,
        _ => ConsumerAction::CreateOrUpdate,
    };
    Ok(CreateRequest {
        stream_name: wire.stream_name,
        config: wire.config,
        action,
        pedantic: wire.pedantic,
    })
}

const INT: GoType = GoType::Int("int", 64);
const DURATION: GoType = GoType::Int("time.Duration", 64);

static CONSUMER_CONFIG: GoStruct = GoStruct {
    name: "ConsumerConfig",
    fields: &[
        ("durable_name", GoType::Str),
        ("name", GoType::Str),
        ("description", GoType::Str),
        (
            "deliver_policy",
            GoType::Words(
                &[
                    "all",
                    "undefined",
                    "last",
                    "new",
                    "by_start_sequence",
                    "by_start_time",
                    "last_per_subject",
                ],
                false,
            ),
        ),
        ("opt_start_seq", GoType::Uint64),
        ("opt_start_time", GoType::Time),
        (
            "ack_policy",
            GoType::Words(&["none", "all", "explicit", "flow_control"], false),
        ),
        ("ack_wait", DURATION),
        ("max_deliver", INT),
        ("backoff", GoType::Durations),
        ("filter_subject", GoType::Str),
        ("filter_subjects", GoType::StrSlice),
        (
            "replay_policy",
            GoType::Words(&["instant", "original"], false),
        ),
        ("rate_limit_bps", GoType::Uint64),
        ("sample_freq", GoType::Str),
        ("max_waiting", INT),
        ("max_ack_pending", INT),
        ("flow_control", GoType::Bool),
        ("headers_only", GoType::Bool),
        ("max_batch", INT),
        ("max_expires", DURATION),
        ("max_bytes", INT),
        ("deliver_subject", GoType::Str),
        ("deliver_group", GoType::Str),
        ("idle_heartbeat", DURATION),
        ("inactive_threshold", DURATION),
        ("num_replicas", INT),
        ("mem_storage", GoType::Bool),
        ("direct", GoType::Bool),
        ("sourcing", GoType::Bool),
        ("metadata", GoType::StrMap),
        ("pause_until", GoType::Time),
        ("priority_groups", GoType::StrSlice),
        (
            "priority_policy",
            GoType::Enum(
                &["none", "overflow", "pinned_client", "prioritized"],
                "unknown priority policy: ",
            ),
        ),
        ("priority_timeout", DURATION),
    ],
};

static CREATE_REQUEST: GoStruct = GoStruct {
    name: "CreateConsumerRequest",
    fields: &[
        ("stream_name", GoType::Str),
        ("config", GoType::Struct(&CONSUMER_CONFIG)),
        (
            "action",
            GoType::Enum(&["", "create", "update"], "unknown consumer action: "),
        ),
        ("pedantic", GoType::Bool),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> String {
        decode_create(body.as_bytes()).unwrap_err().description
    }

    #[test]
    fn consumer_decode_errors_as_go() {
        assert_eq!(
            err(r#"{"config":{"ack_wait":"1s"}}"#),
            "invalid JSON: json: cannot unmarshal string into Go struct field \
             ConsumerConfig.config.ack_wait of type time.Duration"
        );
        assert_eq!(
            err(r#"{"config":{"backoff":["1s"]}}"#),
            "invalid JSON: json: cannot unmarshal string into Go struct field \
             ConsumerConfig.config.backoff of type time.Duration"
        );
        assert_eq!(
            err(r#"{"config":{"ack_policy":null}}"#),
            r#"invalid JSON: can not unmarshal "null""#
        );
        assert_eq!(
            err(r#"{"config":{"priority_policy":"foo"}}"#),
            r#"invalid JSON: unknown priority policy: "foo""#
        );
        assert_eq!(
            err(r#"{"action":null}"#),
            "invalid JSON: unknown consumer action: null"
        );
        assert_eq!(
            err(r#"{"config":5}"#),
            "invalid JSON: json: cannot unmarshal number into Go struct field \
             CreateConsumerRequest.config of type server.ConsumerConfig"
        );
        assert_eq!(
            err(r#"{"bogus":1}"#),
            r#"invalid JSON: json: unknown field "bogus""#
        );
    }

    #[test]
    fn consumer_decode_reads_every_field() {
        let req = decode_create(
            br#"{"stream_name":"S","action":"create","pedantic":true,"config":{
                "durable_name":"D","deliver_policy":"undefined","ack_policy":"explicit",
                "backoff":[1,2],"opt_start_time":"2030-01-01T00:00:00Z",
                "priority_policy":"pinned_client"}}"#,
        )
        .unwrap();
        assert_eq!(req.action, ConsumerAction::Create);
        assert!(req.pedantic);
        assert_eq!(req.config.backoff, vec![1, 2]);
        assert_eq!(
            req.config.deliver_policy,
            super::super::config::DeliverPolicy::All
        );
    }
}
