//! Request bodies decoded as the Go server decodes them: a stream of JSON values read one
//! after another into the same document (an empty body is an empty request), unknown fields
//! refused, and on failure the 10025 `invalid JSON: <Go's message>` error.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::gotype::{self, GoStruct, GoType};
use super::scan::Values;
use super::stream::StreamConfig;
use crate::errors::{table, ApiError};

/// The body of `STREAM.CREATE` and `STREAM.UPDATE`: the config and Go's `pedantic` flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StreamConfigRequest {
    #[serde(flatten)]
    pub config: StreamConfig,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pedantic: bool,
    /// Whether the body named a `storage`: Go checks a create's reservation on the config as
    /// sent, where a missing storage is neither memory nor file.
    #[serde(skip)]
    pub storage_sent: bool,
}

pub(crate) fn invalid_json(message: &str) -> ApiError {
    table::INVALID_JSON.with(&[("err", &message)])
}

/// The body's values merged in order (later fields replace earlier ones, objects merge), each
/// handed to `check` before the next is scanned, as Go decodes each before reading on.
fn merged_values(
    body: &[u8],
    mut check: impl FnMut(Value) -> Result<Value, String>,
) -> Result<Value, ApiError> {
    let mut doc = Value::Null;
    for value in Values::new(body) {
        let text = value.map_err(|e| invalid_json(&e.go_message()))?;
        let parsed: Value =
            serde_json::from_slice(text).map_err(|e| invalid_json(&e.to_string()))?;
        let checked = check(parsed).map_err(|e| invalid_json(&e))?;
        merge(&mut doc, checked);
    }
    Ok(doc)
}

fn merge(doc: &mut Value, next: Value) {
    match (doc, next) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                match into.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        into.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Decodes a request body as Go's API does. Syntax errors have Go's exact text (with the
/// ` at offset N` Go 2.15 adds); type errors and unknown fields are worded as Go words them
/// but without Go's field path, which needs the Go types ([`decode_stream_request`] has them
/// for the stream requests).
///
/// # Errors
/// 10025 `invalid JSON: …`.
pub fn decode_request<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let doc = merged_values(body, Ok)?;
    let doc = if doc.is_null() {
        Value::Object(Map::new())
    } else {
        doc
    };
    serde_json::from_value(doc).map_err(|e| invalid_json(&serde_to_go(&e.to_string())))
}

/// Decodes a request body as Go's API does, with Go's exact errors for the fields of
/// `schema` (`json: cannot unmarshal string into Go struct field JSApiMsgGetRequest.seq of
/// type uint64`); `top_name` is the Go type named when the body is not an object.
///
/// # Errors
/// 10025 `invalid JSON: …`.
pub fn decode_checked<T: DeserializeOwned>(
    body: &[u8],
    schema: &'static GoStruct,
    top_name: &str,
) -> Result<T, ApiError> {
    decode_checked_embedded(body, schema, top_name, "")
}

/// As [`decode_checked`], for a schema whose fields belong to a struct embedded in the
/// request (`JSApiConsumersRequest.ApiPagedRequest.offset`): `embedded` names it in paths.
///
/// # Errors
/// 10025 `invalid JSON: …`.
pub fn decode_checked_embedded<T: DeserializeOwned>(
    body: &[u8],
    schema: &'static GoStruct,
    top_name: &str,
    embedded: &'static str,
) -> Result<T, ApiError> {
    let doc = merged_values(body, |v| gotype::check(v, schema, top_name, embedded))?;
    let doc = if doc.is_null() {
        Value::Object(Map::new())
    } else {
        doc
    };
    serde_json::from_value(doc).map_err(|e| invalid_json(&serde_to_go(&e.to_string())))
}

/// serde's wording of the common failures in Go's.
fn serde_to_go(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or_default();
        return format!("json: unknown field {}", natrium_gofmt::go_quote(field));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let word = rest.split('`').next().unwrap_or_default();
        let raw = serde_json::to_string(word).unwrap_or_default();
        return format!("can not unmarshal {}", natrium_gofmt::go_quote(&raw));
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        let what = rest.split([' ', ',']).next().unwrap_or_default();
        let what = match what {
            "integer" | "floating" => "number",
            "sequence" => "array",
            "map" => "object",
            "boolean" => "bool",
            other => other,
        };
        return format!("json: cannot unmarshal {what} into Go value");
    }
    message.to_owned()
}

/// Decodes a `STREAM.CREATE`/`STREAM.UPDATE` body with Go's exact errors, field paths
/// included (`json: cannot unmarshal string into Go struct field
/// StreamConfigRequest.StreamConfig.max_msgs of type int64`).
///
/// # Errors
/// 10025 `invalid JSON: …`.
pub fn decode_stream_request(body: &[u8]) -> Result<StreamConfigRequest, ApiError> {
    let doc = merged_values(body, |v| {
        let (pedantic, config) = split_pedantic(v)?;
        let mut config = gotype::check(
            config,
            &STREAM_CONFIG,
            "server.StreamConfigRequest",
            "StreamConfig",
        )?;
        if let (Some(p), Value::Object(map)) = (pedantic, &mut config) {
            map.insert("pedantic".to_owned(), p);
        }
        Ok(config)
    })?;
    let doc = if doc.is_null() {
        Value::Object(Map::new())
    } else {
        doc
    };
    let storage_sent = doc
        .as_object()
        .is_some_and(|m| m.keys().any(|k| k.eq_ignore_ascii_case("storage")));
    let request: StreamConfigRequest =
        serde_json::from_value(doc).map_err(|e| invalid_json(&serde_to_go(&e.to_string())))?;
    Ok(StreamConfigRequest {
        storage_sent,
        ..request
    })
}

/// `pedantic` belongs to the request, not the embedded config whose paths Go prefixes.
fn split_pedantic(v: Value) -> Result<(Option<Value>, Value), String> {
    let Value::Object(mut map) = v else {
        return Ok((None, v));
    };
    let key = map
        .keys()
        .find(|k| k.eq_ignore_ascii_case("pedantic"))
        .cloned();
    let pedantic = key.and_then(|k| map.remove(&k));
    match &pedantic {
        Some(Value::Bool(_) | Value::Null) | None => Ok((pedantic.filter(|p| !p.is_null()), Value::Object(map))),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field StreamConfigRequest.pedantic of type bool",
            match other {
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                _ => "object",
            }
        )),
    }
}

const RETENTION: GoType = GoType::Words(&["limits", "interest", "workqueue"], false);
const DISCARD: GoType = GoType::Words(&["old", "new"], true);
const STORAGE: GoType = GoType::Words(&["file", "memory"], false);
/// Go maps `""` to the default mode too.
const PERSIST: GoType = GoType::Words(&["default", "async", ""], false);
const INT: GoType = GoType::Int("int", 64);
const INT64: GoType = GoType::Int("int64", 64);
const DURATION: GoType = GoType::Int("time.Duration", 64);

static TRANSFORM: GoStruct = GoStruct {
    name: "SubjectTransformConfig",
    fields: &[("src", GoType::Str), ("dest", GoType::Str)],
};
static EXTERNAL: GoStruct = GoStruct {
    name: "ExternalStream",
    fields: &[("api", GoType::Str), ("deliver", GoType::Str)],
};
static CONSUMER: GoStruct = GoStruct {
    name: "StreamConsumerSource",
    fields: &[("name", GoType::Str), ("deliver_subject", GoType::Str)],
};
static SOURCE: GoStruct = GoStruct {
    name: "StreamSource",
    fields: &[
        ("name", GoType::Str),
        ("opt_start_seq", GoType::Uint64),
        ("opt_start_time", GoType::Time),
        ("filter_subject", GoType::Str),
        ("subject_transforms", GoType::Structs(&TRANSFORM)),
        ("external", GoType::Struct(&EXTERNAL)),
        ("consumer", GoType::Struct(&CONSUMER)),
    ],
};
static PLACEMENT: GoStruct = GoStruct {
    name: "Placement",
    fields: &[
        ("cluster", GoType::Str),
        ("tags", GoType::StrSlice),
        ("preferred", GoType::Str),
    ],
};
static REPUBLISH: GoStruct = GoStruct {
    name: "RePublish",
    fields: &[
        ("src", GoType::Str),
        ("dest", GoType::Str),
        ("headers_only", GoType::Bool),
    ],
};
static CONSUMER_LIMITS: GoStruct = GoStruct {
    name: "StreamConsumerLimits",
    fields: &[("inactive_threshold", DURATION), ("max_ack_pending", INT)],
};
/// Go's `StreamConfig` fields with their Go types (the request's `pedantic` is split off
/// before, as it is not under the embedded config's path).
static STREAM_CONFIG: GoStruct = GoStruct {
    name: "StreamConfigRequest",
    fields: &[
        ("name", GoType::Str),
        ("description", GoType::Str),
        ("subjects", GoType::StrSlice),
        ("retention", RETENTION),
        ("max_consumers", INT),
        ("max_msgs", INT64),
        ("max_bytes", INT64),
        ("max_age", DURATION),
        ("max_msgs_per_subject", INT64),
        ("max_msg_size", GoType::Int("int32", 32)),
        ("discard", DISCARD),
        ("storage", STORAGE),
        ("num_replicas", INT),
        ("no_ack", GoType::Bool),
        ("duplicate_window", DURATION),
        ("placement", GoType::Struct(&PLACEMENT)),
        ("mirror", GoType::Struct(&SOURCE)),
        ("sources", GoType::Structs(&SOURCE)),
        ("compression", GoType::Compression),
        ("first_seq", GoType::Uint64),
        ("subject_transform", GoType::Struct(&TRANSFORM)),
        ("republish", GoType::Struct(&REPUBLISH)),
        ("allow_direct", GoType::Bool),
        ("mirror_direct", GoType::Bool),
        ("discard_new_per_subject", GoType::Bool),
        ("sealed", GoType::Bool),
        ("deny_delete", GoType::Bool),
        ("deny_purge", GoType::Bool),
        ("allow_rollup_hdrs", GoType::Bool),
        ("consumer_limits", GoType::Struct(&CONSUMER_LIMITS)),
        ("allow_msg_ttl", GoType::Bool),
        ("subject_delete_marker_ttl", DURATION),
        ("allow_msg_counter", GoType::Bool),
        ("allow_atomic", GoType::Bool),
        ("allow_msg_schedules", GoType::Bool),
        ("persist_mode", PERSIST),
        ("allow_batched", GoType::Bool),
        ("metadata", GoType::StrMap),
    ],
};
