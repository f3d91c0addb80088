//! `JSApiMsgGetRequest`: the body of `STREAM.MSG.GET` and `DIRECT.GET`.
//!
//! The two endpoints decode it differently, as Go does: the API's strict decoder for
//! `MSG.GET` (unknown fields refused, Go's error texts, answered as 10025), and a plain
//! unmarshal for `DIRECT.GET` (unknown fields ignored, any failure answered `408 Malformed
//! Request`).

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::config::gotype::{GoStruct, GoType};

/// One get request; times are Unix nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MsgGetRequest {
    pub seq: u64,
    pub last_by_subj: String,
    pub next_by_subj: String,
    pub batch: i64,
    pub max_bytes: i64,
    pub start_time: Option<i64>,
    pub multi_last: Vec<String>,
    pub up_to_seq: u64,
    pub up_to_time: Option<i64>,
    pub no_hdr: bool,
}

/// The JSON form, before the times are parsed.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct RawMsgGet {
    seq: u64,
    last_by_subj: String,
    next_by_subj: String,
    batch: i64,
    max_bytes: i64,
    start_time: Option<String>,
    multi_last: Vec<Option<String>>,
    up_to_seq: u64,
    up_to_time: Option<String>,
    no_hdr: bool,
}

/// Go's field types of `JSApiMsgGetRequest`, for the strict decoder's errors.
pub(crate) static MSG_GET_SCHEMA: GoStruct = GoStruct {
    name: "JSApiMsgGetRequest",
    fields: &[
        ("seq", GoType::Uint64),
        ("last_by_subj", GoType::Str),
        ("next_by_subj", GoType::Str),
        ("batch", GoType::Int("int", 64)),
        ("max_bytes", GoType::Int("int", 64)),
        ("start_time", GoType::Time),
        ("multi_last", GoType::StrSlice),
        ("up_to_seq", GoType::Uint64),
        ("up_to_time", GoType::Time),
        ("no_hdr", GoType::Bool),
    ],
};

/// Go's `time.RFC3339` layout, named in its parse errors.
const RFC3339_LAYOUT: &str = "2006-01-02T15:04:05Z07:00";

/// Parses a JSON time as Go's `time.Time` does (RFC 3339, fractional seconds allowed) into
/// Unix nanoseconds; the error is Go's wording for the common case.
pub fn parse_time(text: &str) -> Result<i64, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        // Go's `UnixNano` wraps past the years 1678..2262; so does this.
        .map(|t| {
            t.timestamp()
                .wrapping_mul(1_000_000_000)
                .wrapping_add(i64::from(t.timestamp_subsec_nanos()))
        })
        .ok_or_else(|| {
            let quoted = natrium_gofmt::go_quote(text);
            let year_ok = text.len() >= 4 && text.bytes().take(4).all(|b| b.is_ascii_digit());
            if year_ok {
                format!("parsing time {quoted} as \"{RFC3339_LAYOUT}\": cannot parse {quoted}")
            } else {
                format!(
                    "parsing time {quoted} as \"{RFC3339_LAYOUT}\": cannot parse {quoted} as \"2006\""
                )
            }
        })
}

impl RawMsgGet {
    /// The request with its times parsed.
    pub(crate) fn finish(self) -> Result<MsgGetRequest, String> {
        let time = |t: Option<String>| t.map(|t| parse_time(&t)).transpose();
        Ok(MsgGetRequest {
            seq: self.seq,
            last_by_subj: self.last_by_subj,
            next_by_subj: self.next_by_subj,
            batch: self.batch,
            max_bytes: self.max_bytes,
            start_time: time(self.start_time)?,
            multi_last: self
                .multi_last
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect(),
            up_to_seq: self.up_to_seq,
            up_to_time: time(self.up_to_time)?,
            no_hdr: self.no_hdr,
        })
    }
}

/// Decodes a `DIRECT.GET` body as Go's `json.Unmarshal` does: one JSON value, `null` an empty
/// request, keys matched case-insensitively, unknown keys ignored. `None` is malformed.
pub fn decode_direct(body: &[u8]) -> Option<MsgGetRequest> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let map = match value {
        Value::Null => Map::new(),
        Value::Object(map) => map,
        _ => return None,
    };
    let mut known = Map::new();
    for (key, value) in map {
        let field = MSG_GET_SCHEMA
            .fields
            .iter()
            .find(|(name, _)| *name == key)
            .or_else(|| {
                MSG_GET_SCHEMA
                    .fields
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(&key))
            });
        if let (Some((name, _)), false) = (field, value.is_null()) {
            known.insert((*name).to_owned(), value);
        }
    }
    let raw: RawMsgGet = serde_json::from_value(Value::Object(known)).ok()?;
    raw.finish().ok()
}

/// More than one of `set` is true: options that exclude each other.
fn more_than_one_of(set: [bool; 3]) -> bool {
    set.iter().filter(|b| **b).count() > 1
}

impl MsgGetRequest {
    /// Nothing asked for (`408 Empty Request` from `DIRECT.GET`).
    pub fn direct_is_empty(&self) -> bool {
        self.seq == 0
            && self.last_by_subj.is_empty()
            && self.next_by_subj.is_empty()
            && self.multi_last.is_empty()
            && self.start_time.is_none()
    }

    /// Options that cannot go together on `DIRECT.GET` (`408 Bad Request`).
    pub fn direct_conflicts(&self) -> bool {
        let seq = self.seq > 0;
        let last = !self.last_by_subj.is_empty();
        let next = !self.next_by_subj.is_empty();
        let multi = !self.multi_last.is_empty();
        let start = self.start_time.is_some();
        more_than_one_of([seq, last, start])
            || (last && (next || multi || self.batch > 0))
            || (next && multi)
            || (self.up_to_seq > 0 && self.up_to_time.is_some())
    }

    /// Fields the subject-in-token form (`DIRECT.GET.<stream>.<subject>`) refuses.
    pub fn has_selection(&self) -> bool {
        !self.last_by_subj.is_empty()
            || !self.next_by_subj.is_empty()
            || !self.multi_last.is_empty()
            || self.seq != 0
            || self.batch != 0
            || self.start_time.is_some()
            || self.up_to_seq != 0
            || self.up_to_time.is_some()
    }

    /// What `STREAM.MSG.GET` refuses as a bad request (10003): batching, which only
    /// `DIRECT.GET` does, nothing selected, or options that cannot go together.
    pub fn msg_get_is_bad(&self) -> bool {
        let seq = self.seq > 0;
        let last = !self.last_by_subj.is_empty();
        let next = !self.next_by_subj.is_empty();
        let start = self.start_time.is_some();
        self.batch > 0
            || self.max_bytes > 0
            || !(seq || last || next || start)
            || more_than_one_of([seq, last, start])
            || (last && next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_request_decodes_like_go_unmarshal() {
        let r = decode_direct(br#"{"SEQ":3,"extra":1,"next_by_subj":null}"#).unwrap();
        assert_eq!(r.seq, 3);
        assert!(decode_direct(b"null").unwrap().direct_is_empty());
        assert!(decode_direct(b"[1]").is_none());
        assert!(decode_direct(br#"{"seq":-1}"#).is_none());
        assert!(decode_direct(br#"{"seq":1}{"seq":2}"#).is_none());
        assert!(decode_direct(br#"{"start_time":"x"}"#).is_none());
        let t = decode_direct(br#"{"start_time":"2000-01-01T00:00:00.5Z"}"#).unwrap();
        assert_eq!(t.start_time, Some(946_684_800_500_000_000));
    }

    #[test]
    fn direct_request_conflicts() {
        let bad = |b: &[u8]| decode_direct(b).unwrap().direct_conflicts();
        assert!(bad(br#"{"seq":1,"last_by_subj":"a"}"#));
        assert!(bad(br#"{"last_by_subj":"a","batch":2}"#));
        assert!(bad(br#"{"next_by_subj":"a","multi_last":["a"]}"#));
        assert!(!bad(br#"{"next_by_subj":"a","seq":2,"batch":3}"#));
        assert!(!bad(br#"{"multi_last":["a"],"seq":2}"#));
    }

    #[test]
    fn direct_time_errors_in_go_words() {
        assert_eq!(
            parse_time("x").unwrap_err(),
            r#"parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#
        );
    }
}
