//! Comparing JSON documents of ours and Go's by shape: every key path with its JSON type, so
//! that counters, ids and times may differ while names, nesting and types must not.

use serde_json::Value;

fn shape(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                shape(v, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                shape(first, &format!("{path}[]"), out);
            }
        }
        Value::Null => out.push(format!("{path}:null")),
        Value::Bool(_) => out.push(format!("{path}:bool")),
        Value::Number(_) => out.push(format!("{path}:number")),
        Value::String(_) => out.push(format!("{path}:string")),
    }
}

/// Every key path of `value` with its type (`.data.conns:number`), sorted; an array stands
/// for its first element (`.list[].name:string`).
pub fn shape_of(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    shape(value, "", &mut out);
    out.sort();
    out
}

/// Drops the key paths of Go-only fields Natrium leaves out on purpose (the event server
/// object's JetStream feature flags, JetStream details, the Go runtime's version; see
/// docs/system-events.md). A `VARZ` reply's `data.feature_flags` stays: `/varz` has them.
pub fn without_go_only(mut keys: Vec<String>) -> Vec<String> {
    keys.retain(|k| {
        (!k.contains("feature_flags") || k.starts_with(".data.feature_flags"))
            && !k.ends_with(".go:string")
            && !k.contains(".jetstream.")
    });
    keys
}

/// [`shape_of`] without the Go-only fields.
pub fn comparable_shape(value: &Value) -> Vec<String> {
    without_go_only(shape_of(value))
}
