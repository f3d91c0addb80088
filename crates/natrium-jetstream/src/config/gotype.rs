//! The Go types of the stream request's fields, and a walk of a decoded JSON value against
//! them that gives `encoding/json`'s errors: `json: cannot unmarshal string into Go struct
//! field StreamConfigRequest.StreamConfig.max_msgs of type int64`, `json: unknown field
//! "foo"`, and the enum types' own `can not unmarshal "\"foo\""`. Like Go, a type error or an
//! unknown field is remembered and the walk goes on (the first one is reported), while an
//! enum's error stops the walk. Keys match case-insensitively when no key matches exactly.

use serde_json::{Map, Value};

use natrium_gofmt::go_quote;

/// A Go field type, as far as decoding tells them apart.
#[derive(Clone, Copy)]
pub enum GoType {
    Str,
    Bool,
    /// A signed integer type: its Go name and bit width.
    Int(&'static str, u32),
    Uint64,
    /// A type whose `UnmarshalJSON` accepts these words and refuses anything else with
    /// `can not unmarshal %q`; `fold` lower-cases the word first (Go's discard policy).
    Words(&'static [&'static str], bool),
    /// A type whose `UnmarshalJSON` accepts these words and refuses anything else with the
    /// message prefix followed by the raw JSON (`unknown priority policy: "foo"`).
    Enum(&'static [&'static str], &'static str),
    /// Go's `StoreCompression`.
    Compression,
    /// `*time.Time`.
    Time,
    StrSlice,
    /// `[]time.Duration`.
    Durations,
    StrMap,
    Struct(&'static GoStruct),
    Structs(&'static GoStruct),
}

/// A Go struct: its type name, the path prefix of an embedded struct, and its JSON fields.
pub struct GoStruct {
    pub name: &'static str,
    pub fields: &'static [(&'static str, GoType)],
}

/// The state of a walk: where it is and the first remembered error.
struct Walk {
    path: Vec<&'static str>,
    saved: Option<String>,
}

/// Checks `value` against `ty`, whose Go name for a top-level mismatch is `top_name`, and
/// returns the value with keys spelled as the schema spells them. `prefix` is the embedded
/// struct's name Go puts in field paths (`StreamConfig`).
pub fn check(
    value: Value,
    schema: &'static GoStruct,
    top_name: &str,
    prefix: &'static str,
) -> Result<Value, String> {
    let mut walk = Walk {
        path: if prefix.is_empty() {
            Vec::new()
        } else {
            vec![prefix]
        },
        saved: None,
    };
    let out = match value {
        Value::Null => Value::Object(Map::new()),
        Value::Object(map) => walk.object(map, schema)?,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type {top_name}",
                kind(&other)
            ))
        }
    };
    match walk.saved {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// A field's JSON key: a field of an embedded struct is listed with its Go path
/// (`PriorityGroup.group`), which Go's errors name, and read by its last part.
fn json_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Walk {
    fn save(&mut self, message: String) {
        if self.saved.is_none() {
            self.saved = Some(message);
        }
    }

    fn mismatch(&mut self, what: &str, strukt: &str, go_type: &str) {
        let path = self.path.join(".");
        self.save(format!(
            "json: cannot unmarshal {what} into Go struct field {strukt}.{path} of type {go_type}"
        ));
    }

    fn object(
        &mut self,
        map: Map<String, Value>,
        schema: &'static GoStruct,
    ) -> Result<Value, String> {
        let mut out = Map::new();
        for (key, value) in map {
            let field = schema
                .fields
                .iter()
                .find(|(name, _)| json_name(name) == key)
                .or_else(|| {
                    schema
                        .fields
                        .iter()
                        .find(|(name, _)| json_name(name).eq_ignore_ascii_case(&key))
                });
            let Some((name, ty)) = field else {
                self.save(format!("json: unknown field {}", go_quote(&key)));
                continue;
            };
            self.path.push(name);
            let checked = self.field(value, *ty, schema.name);
            self.path.pop();
            if let Some(v) = checked? {
                out.insert(json_name(name).to_owned(), v);
            }
        }
        Ok(Value::Object(out))
    }

    /// The field's value to keep, `None` when Go would leave the field alone.
    fn field(&mut self, v: Value, ty: GoType, strukt: &str) -> Result<Option<Value>, String> {
        // Go hands `null` to a type's own `UnmarshalJSON`, which refuses it.
        if v.is_null() && !matches!(ty, GoType::Words(..) | GoType::Enum(..)) {
            return Ok(None);
        }
        let ok = match (ty, &v) {
            (GoType::Words(words, fold), _) => return words_value(&v, words, fold).map(Some),
            (GoType::Enum(words, prefix), _) => return enum_value(&v, words, prefix).map(Some),
            (GoType::Compression, Value::String(s)) if s == "s2" || s == "none" => true,
            (GoType::Compression, Value::String(_)) => {
                return Err("unknown compression algorithm".to_owned())
            }
            (GoType::Compression, other) => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    kind(other)
                ))
            }
            (GoType::Time, Value::String(s)) => {
                return super::gotime::check_rfc3339(s).map(|()| Some(v));
            }
            (GoType::Str, Value::String(_)) | (GoType::Bool, Value::Bool(_)) => true,
            (GoType::Time, _) => {
                return Err("Time.UnmarshalJSON: input is not a JSON string".to_owned())
            }
            (GoType::Int(name, bits), Value::Number(n)) => {
                let half = 1i64.checked_shl(bits.saturating_sub(1)).unwrap_or(i64::MAX);
                let fits = n
                    .as_i64()
                    .is_some_and(|i| bits >= 64 || (i >= -half && i < half));
                if !fits {
                    self.mismatch(&format!("number {n}"), strukt, name);
                }
                fits
            }
            (GoType::Uint64, Value::Number(n)) => {
                let fits = n.as_u64().is_some();
                if !fits {
                    self.mismatch(&format!("number {n}"), strukt, "uint64");
                }
                fits
            }
            (GoType::StrSlice, Value::Array(items)) => {
                let bad = items
                    .iter()
                    .find(|i| !i.is_string() && !i.is_null())
                    .map(kind);
                if let Some(k) = bad {
                    self.mismatch(k, strukt, "string");
                }
                bad.is_none()
            }
            (GoType::Durations, Value::Array(items)) => {
                let bad = items.iter().find(|i| !i.is_i64() && !i.is_null());
                if let Some(item) = bad {
                    let what = match item {
                        Value::Number(n) => format!("number {n}"),
                        other => kind(other).to_owned(),
                    };
                    self.mismatch(&what, strukt, "time.Duration");
                }
                bad.is_none()
            }
            (GoType::StrMap, Value::Object(items)) => {
                let bad = items
                    .values()
                    .find(|i| !i.is_string() && !i.is_null())
                    .map(kind);
                if let Some(k) = bad {
                    self.mismatch(k, strukt, "string");
                }
                bad.is_none()
            }
            (GoType::Struct(s), Value::Object(_)) => {
                let Value::Object(map) = v else {
                    return Ok(None);
                };
                return self.object(map, s).map(Some);
            }
            (GoType::Structs(s), Value::Array(_)) => {
                let Value::Array(items) = v else {
                    return Ok(None);
                };
                return self.structs(items, s, strukt).map(Some);
            }
            (other, value) => {
                let what = kind(value);
                let name = go_name(other);
                self.mismatch(what, strukt, &name);
                false
            }
        };
        Ok(ok.then_some(v))
    }

    fn structs(
        &mut self,
        items: Vec<Value>,
        s: &'static GoStruct,
        strukt: &str,
    ) -> Result<Value, String> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Value::Object(map) => out.push(self.object(map, s)?),
                Value::Null => out.push(Value::Null),
                other => {
                    self.mismatch(kind(&other), strukt, &format!("server.{}", s.name));
                }
            }
        }
        Ok(Value::Array(out))
    }
}

fn words_value(v: &Value, words: &[&str], fold: bool) -> Result<Value, String> {
    let raw = serde_json::to_string(v).unwrap_or_default();
    if let Value::String(s) = v {
        let word = if fold {
            s.to_ascii_lowercase()
        } else {
            s.clone()
        };
        if let Some(w) = words.iter().find(|w| **w == word) {
            return Ok(Value::String((*w).to_owned()));
        }
    }
    Err(format!("can not unmarshal {}", go_quote(&raw)))
}

fn enum_value(v: &Value, words: &[&str], prefix: &str) -> Result<Value, String> {
    if let Value::String(s) = v {
        if words.contains(&s.as_str()) {
            return Ok(v.clone());
        }
    }
    Err(format!(
        "{prefix}{}",
        serde_json::to_string(v).unwrap_or_default()
    ))
}

fn go_name(ty: GoType) -> String {
    match ty {
        GoType::Bool => "bool".to_owned(),
        GoType::Int(name, _) => name.to_owned(),
        GoType::Uint64 => "uint64".to_owned(),
        GoType::StrSlice => "[]string".to_owned(),
        GoType::Durations => "[]time.Duration".to_owned(),
        GoType::StrMap => "map[string]string".to_owned(),
        GoType::Struct(s) => format!("server.{}", s.name),
        GoType::Structs(s) => format!("[]*server.{}", s.name),
        GoType::Str | GoType::Words(..) | GoType::Enum(..) | GoType::Compression | GoType::Time => {
            "string".to_owned()
        }
    }
}
