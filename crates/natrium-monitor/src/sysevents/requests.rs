//! System requests: `$SYS.REQ.SERVER.PING[.<ENDPOINT>]` (every server answers) and
//! `$SYS.REQ.SERVER.<server id>.<ENDPOINT>` (this server answers), each answered with the same
//! document as the HTTP endpoint, wrapped as `{"server": …, "data": …}` or `{"server": …,
//! "error": {"code", "description"}}`.
//!
//! A request body is JSON: the endpoint's options under Go's JSON names, plus the server
//! filters (`server_name`, `cluster`, `host`, `tags`, `domain`, `exact_match`). A server the
//! filters exclude stays silent, as in Go. Options are turned into query pairs and decoded by
//! the same code as the HTTP parameters, so both accept and refuse the same values.

use serde::Serialize;
use serde_json::{Map, Value};

use super::payload::{ApiError, ApiResponse, ServerIdentity};
use crate::query::{Query, QueryError};

/// The endpoints a system request can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Statsz,
    Varz,
    Connz,
    Subsz,
    Healthz,
    Routez,
    Gatewayz,
    Leafz,
    Accountz,
    Jsz,
    Idz,
}

impl Endpoint {
    pub const ALL: [Endpoint; 11] = [
        Self::Statsz,
        Self::Varz,
        Self::Connz,
        Self::Subsz,
        Self::Healthz,
        Self::Routez,
        Self::Gatewayz,
        Self::Leafz,
        Self::Accountz,
        Self::Jsz,
        Self::Idz,
    ];

    pub fn token(self) -> &'static str {
        match self {
            Self::Statsz => "STATSZ",
            Self::Varz => "VARZ",
            Self::Connz => "CONNZ",
            Self::Subsz => "SUBSZ",
            Self::Healthz => "HEALTHZ",
            Self::Routez => "ROUTEZ",
            Self::Gatewayz => "GATEWAYZ",
            Self::Leafz => "LEAFZ",
            Self::Accountz => "ACCOUNTZ",
            Self::Jsz => "JSZ",
            Self::Idz => "IDZ",
        }
    }

    fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.token() == token)
    }
}

/// What a request subject asks for. `$SYS.REQ.SERVER.PING` alone is the older form of
/// `PING.STATSZ`.
pub fn parse_subject(subject: &str, server_id: &str) -> Option<Endpoint> {
    let rest = subject.strip_prefix("$SYS.REQ.SERVER.")?;
    if rest == "PING" {
        return Some(Endpoint::Statsz);
    }
    let (target, endpoint) = rest.split_once('.')?;
    if target != "PING" && target != server_id {
        return None;
    }
    Endpoint::from_token(endpoint)
}

/// The subjects this server subscribes to in the system account.
pub fn subjects(server_id: &str) -> Vec<String> {
    let mut out = vec!["$SYS.REQ.SERVER.PING".to_owned()];
    for endpoint in Endpoint::ALL {
        out.push(format!("$SYS.REQ.SERVER.PING.{}", endpoint.token()));
        out.push(format!("$SYS.REQ.SERVER.{server_id}.{}", endpoint.token()));
    }
    out
}

/// A decoded request body: the endpoint options as query pairs and the server filters.
pub struct RequestOptions {
    pub query: Query,
    filters: Filters,
    /// The body as decoded, for options that are not query parameters (account `STATZ`).
    pub body: Map<String, Value>,
}

#[derive(Default)]
struct Filters {
    server_name: String,
    cluster: String,
    host: String,
    domain: String,
    tags: Vec<String>,
    exact: bool,
}

/// Renames from an endpoint's JSON option names to its HTTP parameter names.
fn param_name(endpoint: Endpoint, key: &str) -> Option<&str> {
    Some(match (endpoint, key) {
        (Endpoint::Connz | Endpoint::Subsz, "subscriptions") => "subs",
        (Endpoint::Subsz | Endpoint::Accountz | Endpoint::Jsz, "account") => "acc",
        (Endpoint::Jsz, "consumer") => "consumers",
        (Endpoint::Jsz, "direct_consumer") => "direct-consumers",
        (Endpoint::Jsz, "leader_only") => "leader-only",
        (Endpoint::Jsz, "stream_leader_only") => "stream-leader-only",
        (_, "server_name" | "cluster" | "host" | "domain" | "tags" | "exact_match") => return None,
        _ => key,
    })
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Go's `ConnState` travels as a number in JSON (0 open, 1 closed, 2 all).
fn connz_state(value: &Value) -> Option<String> {
    match value.as_u64() {
        Some(0) => Some("open".to_owned()),
        Some(1) => Some("closed".to_owned()),
        Some(2) => Some("all".to_owned()),
        _ => scalar(value),
    }
}

impl RequestOptions {
    /// Decodes a request body; an empty body means defaults. The error text is serde's, where
    /// Go gives its `encoding/json` wording; tools test the code, not the text.
    pub fn parse(endpoint: Endpoint, body: &[u8]) -> Result<Self, QueryError> {
        let trimmed = body.trim_ascii();
        if trimmed.is_empty() {
            return Ok(Self {
                query: Query::from_pairs(Vec::new()),
                filters: Filters::default(),
                body: Map::new(),
            });
        }
        let object: Map<String, Value> =
            serde_json::from_slice(trimmed).map_err(|err| QueryError(err.to_string()))?;
        let mut filters = Filters::default();
        let mut pairs = Vec::new();
        let mut detail = false;
        for (key, value) in &object {
            let text = || scalar(value).unwrap_or_default();
            match key.as_str() {
                "server_name" => filters.server_name = text(),
                "cluster" => filters.cluster = text(),
                "host" => filters.host = text(),
                "domain" => filters.domain = text(),
                "exact_match" => filters.exact = value.as_bool().unwrap_or(false),
                "tags" => {
                    filters.tags = value
                        .as_array()
                        .map(|tags| tags.iter().filter_map(scalar).collect())
                        .unwrap_or_default();
                }
                "subscriptions_detail" if endpoint == Endpoint::Connz => {
                    detail = value.as_bool().unwrap_or(false);
                }
                "state" if endpoint == Endpoint::Connz => {
                    if let Some(state) = connz_state(value) {
                        pairs.push(("state".to_owned(), state));
                    }
                }
                _ => {
                    if let (Some(name), Some(v)) = (param_name(endpoint, key), scalar(value)) {
                        pairs.push((name.to_owned(), v));
                    }
                }
            }
        }
        if detail {
            pairs.retain(|(k, _)| k != "subs");
            pairs.push(("subs".to_owned(), "detail".to_owned()));
        }
        Ok(Self {
            query: Query::from_pairs(pairs),
            filters,
            body: object,
        })
    }

    /// Whether this server should answer: every filter given must match (substring, or exact
    /// with `exact_match`; names compared case-insensitively as Go does). Tags must all be
    /// ours. Natrium has no cluster or JetStream domain yet, so a request naming one is not
    /// for it.
    pub fn selects(&self, identity: &ServerIdentity) -> bool {
        let f = &self.filters;
        let matches = |want: &str, have: &str| {
            if want.is_empty() {
                return true;
            }
            let (want, have) = (want.to_ascii_lowercase(), have.to_ascii_lowercase());
            if f.exact {
                want == have
            } else {
                have.contains(&want)
            }
        };
        // Go's `TagList.Contains`: each tag asked for, trimmed and lower-cased, is one of ours.
        let has_tag = |t: &String| identity.tags.contains(&t.trim().to_lowercase());
        matches(&f.server_name, &identity.name)
            && matches(&f.host, &identity.host)
            && f.cluster.is_empty()
            && f.domain.is_empty()
            && f.tags.iter().all(has_tag)
    }
}

/// A reply as Go encodes it (`<`, `>`, `&` escaped).
fn go_json<T: Serialize>(doc: &T) -> Vec<u8> {
    natrium_gofmt::json::go_escape(&serde_json::to_vec(doc).unwrap_or_default())
}

/// Serialises a reply with the endpoint's document.
pub fn reply<T: Serialize>(identity: &ServerIdentity, data: T) -> Vec<u8> {
    let doc = ApiResponse {
        server: identity.stamp(),
        data: Some(data),
        error: None,
    };
    go_json(&doc)
}

/// Serialises the reply to a body that is not JSON: code 400, no `data`, as Go.
pub fn bad_body_reply(identity: &ServerIdentity, description: String) -> Vec<u8> {
    let doc: ApiResponse<()> = ApiResponse {
        server: identity.stamp(),
        data: None,
        error: Some(ApiError {
            code: 400,
            description,
        }),
    };
    serde_json::to_vec(&doc).unwrap_or_default()
}

/// Serialises the reply to options the endpoint refused: code 500 and `"data": null`, as Go
/// answers when the endpoint itself fails.
pub fn failed_reply(identity: &ServerIdentity, description: String) -> Vec<u8> {
    #[derive(Serialize)]
    struct Failed {
        server: super::payload::ServerHeader,
        data: Option<()>,
        error: ApiError,
    }
    let doc = Failed {
        server: identity.stamp(),
        data: None,
        error: ApiError {
            code: 500,
            description,
        },
    };
    serde_json::to_vec(&doc).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const ID: &str = "NSERVER";

    #[test]
    fn sysevents_request_subjects_parse() {
        assert_eq!(
            parse_subject("$SYS.REQ.SERVER.PING", ID),
            Some(Endpoint::Statsz)
        );
        assert_eq!(
            parse_subject("$SYS.REQ.SERVER.PING.VARZ", ID),
            Some(Endpoint::Varz)
        );
        assert_eq!(
            parse_subject("$SYS.REQ.SERVER.NSERVER.CONNZ", ID),
            Some(Endpoint::Connz)
        );
        assert_eq!(parse_subject("$SYS.REQ.SERVER.NOTME.CONNZ", ID), None);
        assert_eq!(parse_subject("$SYS.REQ.SERVER.PING.NOPE", ID), None);
        assert_eq!(subjects(ID).len(), 1 + 2 * Endpoint::ALL.len());
    }

    #[test]
    fn sysevents_connz_options_become_query_pairs() {
        let body = br#"{"subscriptions":true,"limit":5,"state":1,"sort":"cid"}"#;
        let opts = RequestOptions::parse(Endpoint::Connz, body);
        let opts = opts.unwrap_or_else(|_| unreachable!());
        assert_eq!(opts.query.get("subs").as_deref(), Some("true"));
        assert_eq!(opts.query.get("limit").as_deref(), Some("5"));
        assert_eq!(opts.query.get("state").as_deref(), Some("closed"));
        let detail = RequestOptions::parse(
            Endpoint::Connz,
            br#"{"subscriptions":true,"subscriptions_detail":true}"#,
        );
        let detail = detail.unwrap_or_else(|_| unreachable!());
        assert_eq!(detail.query.get("subs").as_deref(), Some("detail"));
    }

    #[test]
    fn sysevents_filters_select_servers() {
        let me = ServerIdentity::new("alpha-1".into(), "0.0.0.0".into(), ID.into());
        let parse =
            |b: &[u8]| RequestOptions::parse(Endpoint::Varz, b).unwrap_or_else(|_| unreachable!());
        assert!(parse(b"").selects(&me));
        assert!(parse(br#"{"server_name":"ALPHA"}"#).selects(&me));
        assert!(!parse(br#"{"server_name":"alpha","exact_match":true}"#).selects(&me));
        assert!(!parse(br#"{"cluster":"c1"}"#).selects(&me));
        assert!(RequestOptions::parse(Endpoint::Varz, b"{nope").is_err());
        assert!(!parse(br#"{"tags":["az:1"]}"#).selects(&me));
        let tagged = ServerIdentity::new("alpha-1".into(), "0.0.0.0".into(), ID.into())
            .with_description(vec!["az:1".into(), "ssd".into()], BTreeMap::new());
        assert!(parse(br#"{"tags":["AZ:1"]}"#).selects(&tagged));
        assert!(parse(br#"{"tags":["ssd", " az:1 "]}"#).selects(&tagged));
        assert!(!parse(br#"{"tags":["ssd", "gpu"]}"#).selects(&tagged));
    }
}
