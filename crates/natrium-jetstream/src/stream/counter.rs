//! Distributed counters (ADR-49): on a stream with `allow_msg_counter` every message carries
//! `Nats-Incr: <integer of any size>` and no payload; the stream stores, on the message's
//! subject, the subject's new total as `{"val":"<total>"}` (the headers as published) and
//! acknowledges with the total in `val`.
//!
//! Go's checks, in Go's order: [`check_incr`] first among the header checks, [`require_incr`]
//! after the rollup check, [`apply`] after every check.

use std::collections::BTreeMap;

use bytes::Bytes;
use natrium_store::{Filter, StreamStore};

use super::decimal::BigInt;
use super::header_edit;
use super::headers::{PublishHeaders, INCR};
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};

/// Per origin stream and subject, the last total sourced from it (a counter stream sourcing
/// counters keeps it on every message it stores).
pub const COUNTER_SOURCES: &[u8] = b"Nats-Counter-Sources";
/// Set on a message a stream took from one of its sources.
pub const STREAM_SOURCE: &[u8] = b"Nats-Stream-Source";

type Sources = BTreeMap<String, BTreeMap<String, String>>;

/// A counter message ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub headers: Bytes,
    pub payload: Bytes,
    /// The new total, for the acknowledgement.
    pub val: String,
}

/// The first header check: a `Nats-Incr` that is not an integer is refused on any stream; one
/// on a stream without counters, with a payload, or with a rollup or an expectation (which a
/// counter cannot honour) is refused, unless `sourced` (Go takes a sourced total as it is).
pub fn check_incr(
    config: &StreamConfig,
    hdrs: &PublishHeaders<'_>,
    payload_len: usize,
    sourced: bool,
) -> Result<(), ApiError> {
    let Some(text) = hdrs.incr else {
        return Ok(());
    };
    if BigInt::parse(text).is_none() {
        return Err(table::MESSAGE_INCR_INVALID.err());
    }
    if sourced {
        return Ok(());
    }
    if !config.allow_msg_counter {
        return Err(table::MESSAGE_INCR_DISABLED.err());
    }
    if payload_len > 0 {
        return Err(table::MESSAGE_INCR_PAYLOAD.err());
    }
    let expects = hdrs.rollup.is_some()
        || hdrs.expected_stream.is_some()
        || hdrs.expected_last_msg_id.is_some()
        || hdrs.expected_last_subject_seq_subject.is_some()
        || hdrs.expected_last_seq.is_some()
        || hdrs.expected_last_subject_seq.is_some();
    if expects {
        return Err(table::MESSAGE_INCR_INVALID.err());
    }
    Ok(())
}

/// A counter stream takes nothing but increments.
pub fn require_incr(config: &StreamConfig, hdrs: &PublishHeaders<'_>) -> Result<(), ApiError> {
    if config.allow_msg_counter && hdrs.incr.is_none() {
        return Err(table::MESSAGE_INCR_MISSING.err());
    }
    Ok(())
}

/// The message a counter stream stores for an increment on `subject`: the subject's last
/// total plus the increment (a message taken from a source replaces what that source gave
/// before instead), with the sources' totals carried over.
pub fn apply(
    store: &dyn StreamStore,
    subject: &[u8],
    headers: &[u8],
    payload: &[u8],
    incr: &[u8],
) -> Result<Counted, ApiError> {
    apply_on(store, None, subject, headers, payload, incr)
}

/// [`apply`] on top of `last` (headers and payload of the subject's last counter message, an
/// atomic batch's own) when given, else of the subject's last message in `store`.
pub fn apply_on(
    store: &dyn StreamStore,
    last: Option<(Bytes, Bytes)>,
    subject: &[u8],
    headers: &[u8],
    payload: &[u8],
    incr: &[u8],
) -> Result<Counted, ApiError> {
    let broken = || table::MESSAGE_COUNTER_BROKEN.err();
    let mut incr = BigInt::parse(incr).ok_or_else(|| table::MESSAGE_INCR_INVALID.err())?;
    let mut total = BigInt::default();
    let mut sources = Sources::new();
    let last = last.or_else(|| {
        let filter = Filter::new(subject).ok()?;
        let msg = store.load_last_msg(&filter).ok()?;
        Some((msg.headers, msg.payload))
    });
    if let Some((last_headers, last_payload)) = last {
        total = read_value(&last_payload).ok_or_else(broken)?;
        if let Some(field) = field(&last_headers, COUNTER_SOURCES) {
            sources = serde_json::from_slice(field).map_err(|_| broken())?;
        }
    }
    let mut headers = headers.to_vec();
    if let Some(origin) = field(&headers, STREAM_SOURCE) {
        // A total taken from a source: the increment is how far it moved since the last one
        // from that origin and subject.
        let (stream, origin_subject) = source_origin(origin, subject);
        let sourced = read_value(payload).ok_or_else(broken)?;
        let per_subject = sources.entry(stream).or_default();
        let previous = per_subject
            .insert(origin_subject, sourced.to_string())
            .and_then(|v| BigInt::parse(v.as_bytes()))
            .unwrap_or_default();
        incr = sourced.sub(&previous);
        headers = header_edit::set_field(&headers, INCR, incr.to_string().as_bytes());
    }
    total = total.add(&incr);
    if !sources.is_empty() {
        let json = go_json(&sources).ok_or_else(broken)?;
        headers = header_edit::set_field(&headers, COUNTER_SOURCES, json.as_bytes());
    }
    let val = total.to_string();
    Ok(Counted {
        headers: Bytes::from(headers),
        payload: Bytes::from(format!("{{\"val\":\"{val}\"}}")),
        val,
    })
}

/// The value of field `name` (exact name), if the block has a non-empty one.
fn field<'a>(block: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let headers = nats_proto::headers::Headers::parse(block).ok()?;
    headers.get(name).filter(|v| !v.is_empty())
}

/// `{"val":"<integer>"}`: `None` when the payload is not such an object (Go's "broken"). A
/// missing or null `val`, or one that is not an integer, reads as zero, as Go's `big.Int`
/// left unset does.
fn read_value(payload: &[u8]) -> Option<BigInt> {
    #[derive(serde::Deserialize)]
    struct Value {
        val: Option<String>,
    }
    let value: Option<Value> = serde_json::from_slice(payload).ok()?;
    let text = value.and_then(|v| v.val).unwrap_or_default();
    Some(BigInt::parse(text.as_bytes()).unwrap_or_default())
}

/// From `Nats-Stream-Source` (`<stream> <seq> <filter> <dest> <subject>`): the origin stream
/// and the subject at the origin (the local subject when the header has no fifth field).
fn source_origin(field: &[u8], subject: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(field);
    let parts: Vec<&str> = text.split(' ').collect();
    let stream = parts.first().copied().unwrap_or_default().to_owned();
    let origin_subject = match parts.get(4) {
        Some(s) => (*s).to_owned(),
        None => String::from_utf8_lossy(subject).into_owned(),
    };
    (stream, origin_subject)
}

/// JSON as Go's `encoding/json` writes it: sorted keys, and `<`, `>`, `&`, U+2028, U+2029
/// escaped.
fn go_json(sources: &Sources) -> Option<String> {
    let plain = serde_json::to_string(sources).ok()?;
    let mut out = String::with_capacity(plain.len());
    for c in plain.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use natrium_store::{MemStore, NewMsg, StoreConfig};

    fn store_counted(store: &mut MemStore, subject: &str, counted: &Counted) {
        let msg = NewMsg::new(
            subject.as_bytes(),
            counted.headers.clone(),
            counted.payload.clone(),
            1,
        );
        store.store_msg(msg).unwrap();
    }

    #[test]
    fn stream_counter_apply_adds_to_the_subject_total() {
        let mut store = MemStore::new(StoreConfig::default());
        let hdr = b"NATS/1.0\r\nNats-Incr: 5\r\n\r\n";
        let first = apply(&store, b"c.a", hdr, b"", b"5").unwrap();
        assert_eq!(first.payload, Bytes::from_static(br#"{"val":"5"}"#));
        assert_eq!(first.headers, Bytes::from_static(hdr));
        store_counted(&mut store, "c.a", &first);
        let second = apply(&store, b"c.a", hdr, b"", b"-99999999999999999999").unwrap();
        assert_eq!(second.val, "-99999999999999999994");
        let other = apply(&store, b"c.b", hdr, b"", b"1").unwrap();
        assert_eq!(other.val, "1");
    }

    #[test]
    fn stream_counter_apply_refuses_a_broken_total() {
        let mut store = MemStore::new(StoreConfig::default());
        let msg = NewMsg::new(b"c.a", Bytes::new(), Bytes::from_static(b"not json"), 1);
        store.store_msg(msg).unwrap();
        let err = apply(&store, b"c.a", b"NATS/1.0\r\n\r\n", b"", b"1").unwrap_err();
        assert_eq!(err, table::MESSAGE_COUNTER_BROKEN.err());
    }

    #[test]
    fn stream_counter_apply_sourced_total_moves_by_its_difference() {
        let mut store = MemStore::new(StoreConfig::default());
        let hdr = b"NATS/1.0\r\nNats-Incr: 1\r\nNats-Stream-Source: O 7 > > o.a\r\n\r\n";
        let first = apply(&store, b"c.a", hdr, br#"{"val":"10"}"#, b"1").unwrap();
        assert_eq!(first.val, "10");
        assert_eq!(
            first.headers,
            Bytes::from_static(
                b"NATS/1.0\r\nNats-Incr: 10\r\nNats-Stream-Source: O 7 > > o.a\r\n\
                  Nats-Counter-Sources: {\"O\":{\"o.a\":\"10\"}}\r\n\r\n"
            )
        );
        store_counted(&mut store, "c.a", &first);
        let second = apply(&store, b"c.a", hdr, br#"{"val":"4"}"#, b"1").unwrap();
        assert_eq!(second.val, "4");
        store_counted(&mut store, "c.a", &second);
        let local = apply(
            &store,
            b"c.a",
            b"NATS/1.0\r\nNats-Incr: 2\r\n\r\n",
            b"",
            b"2",
        )
        .unwrap();
        assert_eq!(local.val, "6");
        assert!(local
            .headers
            .ends_with(b"Nats-Counter-Sources: {\"O\":{\"o.a\":\"4\"}}\r\n\r\n"));
    }

    #[test]
    fn stream_counter_sources_json_escapes_as_go() {
        let mut sources = Sources::new();
        sources
            .entry("<s&>".into())
            .or_default()
            .insert("a".into(), "1".into());
        assert_eq!(
            go_json(&sources).unwrap(),
            r#"{"\u003cs\u0026\u003e":{"a":"1"}}"#
        );
    }
}
