//! The trace event's JSON, with Go's field names, order and omission rules (ADR-41, Go's
//! `MsgTraceEvent`): what the traced message looked like (`request`) and what happened to it
//! in this server (`events`). The `server` object is added by whoever publishes the event
//! (the system services), who owns the server's identity and event sequence.
//!
//! Each entry of `events` is one [`TraceStep`], told apart by its `type`. Hops to other
//! servers (routes, gateways, leaf nodes) and JetStream add variants and egress kinds here.

use std::collections::BTreeMap;

use serde::Serialize;

/// How the event's body is encoded, from the traced message's `Accept-Encoding` (Go's
/// choice: `snappy` or `s2` anywhere in it, else `gzip`, else none it knows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// No `Accept-Encoding`: plain JSON, no header.
    #[default]
    None,
    Gzip,
    /// Snappy's framing format.
    Snappy,
    /// An encoding the server does not offer: plain JSON, `Content-Encoding: identity`.
    Identity,
}

impl Compression {
    pub fn from_accept_encoding(value: Option<&str>) -> Self {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Self::None;
        };
        let value = value.to_ascii_lowercase();
        if value.contains("snappy") || value.contains("s2") {
            Self::Snappy
        } else if value.contains("gzip") {
            Self::Gzip
        } else {
            Self::Identity
        }
    }
}

/// Go's connection kinds, as the `kind` of ingress and egress entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnKind {
    Client,
}

impl ConnKind {
    /// Go's number for the kind (`CLIENT` 0, `ROUTER` 1, `GATEWAY` 2, `SYSTEM` 3, `LEAF` 4,
    /// `JETSTREAM` 5, `ACCOUNT` 6).
    pub fn code(self) -> u8 {
        match self {
            Self::Client => 0,
        }
    }
}

impl Serialize for ConnKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.code())
    }
}

/// One server's report on one traced message, without its `server` object.
#[derive(Debug, Clone, Serialize)]
pub struct MsgTraceEvent {
    pub request: TraceRequest,
    /// How many other servers the message was sent on to (none yet: single server).
    #[serde(skip_serializing_if = "is_zero")]
    pub hops: u32,
    pub events: Vec<TraceStep>,
}

/// The traced message: its header fields with a value (names as sent, values in order,
/// names sorted as Go's JSON encoder sorts a map) and its size, headers included.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceRequest {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub header: BTreeMap<String, Vec<String>>,
    #[serde(rename = "msgsize", skip_serializing_if = "is_zero_usize")]
    pub msg_size: usize,
}

/// One thing that happened to the message, in the order it happened.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum TraceStep {
    /// How the message entered the server.
    #[serde(rename = "in")]
    Ingress(Ingress),
    /// A subject mapping sent it on to another subject.
    #[serde(rename = "sm")]
    SubjectMapping(SubjectMapping),
    /// It crossed a stream export into an importing account.
    #[serde(rename = "se")]
    StreamExport(StreamExport),
    /// It crossed a service import into the exporting account.
    #[serde(rename = "si")]
    ServiceImport(ServiceImport),
    /// It left (or would have left) the server to one subscriber.
    #[serde(rename = "eg")]
    Egress(Egress),
}

#[derive(Debug, Clone, Serialize)]
pub struct Ingress {
    pub ts: String,
    pub kind: ConnKind,
    pub cid: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    pub acc: String,
    pub subj: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SubjectMapping {
    pub ts: String,
    /// The subject the message was mapped to.
    pub to: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamExport {
    pub ts: String,
    /// The importing account.
    pub acc: String,
    /// The subject in the importing account.
    pub to: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServiceImport {
    pub ts: String,
    /// The account the message crossed into.
    pub acc: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Egress {
    pub ts: String,
    pub kind: ConnKind,
    pub cid: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The subscriber's account, when it is not the ingress account.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub acc: String,
    /// The subscription's subject (as the publishing account sees it).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub sub: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub queue: String,
    /// Why the message was not delivered, if it was not.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference.
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

/// Now, as Go's JSON writes a `time.Time`: RFC 3339 with the nanoseconds' trailing zeros cut.
pub fn now_ts() -> String {
    let text = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
    match text.strip_suffix('Z').and_then(|t| t.split_once('.')) {
        Some((whole, frac)) => {
            let frac = frac.trim_end_matches('0');
            if frac.is_empty() {
                format!("{whole}Z")
            } else {
                format!("{whole}.{frac}Z")
            }
        }
        None => text,
    }
}
