//! Account-scoped system requests, answered as Go answers them:
//!
//! - in the system account, `$SYS.REQ.ACCOUNT.<account>.<KIND>` for `SUBSZ`, `CONNZ`, `LEAFZ`,
//!   `JSZ`, `INFO`, `STATZ` and `CONNS`, and `$SYS.REQ.ACCOUNT.PING.STATZ` (every account with
//!   connections);
//! - in every other account, the requests Go imports there from the system account, about that
//!   account only: `$SYS.REQ.ACCOUNT.PING.CONNZ` and `$SYS.REQ.SERVER.PING.CONNZ` (its
//!   `CONNZ`) and `$SYS.REQ.ACCOUNT.PING.STATZ` (its `STATZ`).
//!
//! Bodies are the endpoint's options as for `$SYS.REQ.SERVER.…` (see [`super::requests`]), the
//! account being forced; `STATZ` takes `accounts` and `include_unused`. A `STATZ` with no
//! account to report, and a `CONNS` for an account without connections, get no answer, as in
//! Go; `CONNS` takes `{"acc": …}` (which must name the subject's account) and answers with the
//! account connections event rather than the usual envelope.

use natrium_core::Server;
use serde_json::{Map, Value};

use super::payload::{
    event_id, AccountConnsEvent, AccountStat, ServerIdentity, ACCOUNT_CONNS_TYPE,
};
use super::requests::{bad_body_reply, failed_reply, reply, Endpoint, RequestOptions};
use crate::query::QueryError;
use crate::varz::rfc3339;
use crate::{accounts, cluster, connz, subsz};

/// What `$SYS.REQ.ACCOUNT.<account>.<KIND>` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountReq {
    Subsz,
    Connz,
    Leafz,
    Jsz,
    Info,
    Statz,
    Conns,
}

impl AccountReq {
    pub const ALL: [Self; 7] = [
        Self::Subsz,
        Self::Connz,
        Self::Leafz,
        Self::Jsz,
        Self::Info,
        Self::Statz,
        Self::Conns,
    ];

    pub fn token(self) -> &'static str {
        match self {
            Self::Subsz => "SUBSZ",
            Self::Connz => "CONNZ",
            Self::Leafz => "LEAFZ",
            Self::Jsz => "JSZ",
            Self::Info => "INFO",
            Self::Statz => "STATZ",
            Self::Conns => "CONNS",
        }
    }

    /// Whose option names the body uses.
    fn endpoint(self) -> Endpoint {
        match self {
            Self::Subsz => Endpoint::Subsz,
            Self::Connz => Endpoint::Connz,
            Self::Leafz => Endpoint::Leafz,
            Self::Jsz => Endpoint::Jsz,
            Self::Info | Self::Statz | Self::Conns => Endpoint::Statsz,
        }
    }
}

/// The system account's subscriptions for account requests, with what each answers
/// (`None`: `$SYS.REQ.ACCOUNT.PING.STATZ`, every account).
pub fn system_subjects() -> Vec<(String, Option<AccountReq>)> {
    let mut out: Vec<_> = AccountReq::ALL
        .into_iter()
        .map(|r| (format!("$SYS.REQ.ACCOUNT.*.{}", r.token()), Some(r)))
        .collect();
    out.push(("$SYS.REQ.ACCOUNT.PING.STATZ".to_owned(), None));
    out
}

/// What every other account may ask about itself, and as which request.
pub const IMPORTED: [(&str, AccountReq); 3] = [
    ("$SYS.REQ.ACCOUNT.PING.CONNZ", AccountReq::Connz),
    ("$SYS.REQ.SERVER.PING.CONNZ", AccountReq::Connz),
    ("$SYS.REQ.ACCOUNT.PING.STATZ", AccountReq::Statz),
];

/// The account a `$SYS.REQ.ACCOUNT.<account>.<KIND>` subject names; Go refuses subjects of
/// another token count as malformed.
pub fn subject_account(subject: &str) -> Result<&str, QueryError> {
    let tokens: Vec<&str> = subject.split('.').collect();
    match tokens.as_slice() {
        [_, _, _, account, _] => Ok(account),
        _ => Err(QueryError(format!("subject {subject:?} is malformed"))),
    }
}

/// The answer to an account request about `account` (`None`: every account, for
/// `$SYS.REQ.ACCOUNT.PING.STATZ`); `None` when the server stays silent.
pub fn answer(
    server: &Server,
    id: &ServerIdentity,
    account: Option<&str>,
    req: AccountReq,
    body: &[u8],
) -> Option<Vec<u8>> {
    if req == AccountReq::Conns {
        return conns(server, id, account.unwrap_or_default(), body);
    }
    let opts = match RequestOptions::parse(req.endpoint(), body) {
        Ok(opts) => opts,
        Err(err) => return Some(bad_body_reply(id, err.0)),
    };
    if !opts.selects(id) {
        return None;
    }
    if req == AccountReq::Statz {
        return statz(server, id, account, &opts.body);
    }
    let account = account.unwrap_or_default();
    let mut q = opts.query;
    let result = match req {
        AccountReq::Connz => {
            q.set("acc", account);
            connz::ConnzOptions::parse(&q).map(|o| reply(id, connz::connz(server, &o)))
        }
        AccountReq::Subsz => {
            q.set("acc", account);
            q.set("subs", "true");
            subsz::SubszOptions::parse(&q).map(|o| reply(id, subsz::subsz(server, &o)))
        }
        AccountReq::Leafz => Ok(reply(id, cluster::leafz(server))),
        AccountReq::Info => accounts::account_info(server, account).map(|d| reply(id, d)),
        AccountReq::Jsz => crate::jsz::JszOptions::parse(&q)
            .and_then(|o| crate::jsz::account_jsz(server, account, &o))
            .map(|d| reply(id, d)),
        // `STATZ` and `CONNS` were answered above.
        AccountReq::Statz | AccountReq::Conns => {
            Err(QueryError("jetstream not enabled".to_owned()))
        }
    };
    Some(result.unwrap_or_else(|err| failed_reply(id, err.0)))
}

/// Go's `AccountStatzOptions` from a request body, with the type errors its decoder reports.
fn statz_options(body: &Map<String, Value>) -> Result<(Vec<String>, bool), String> {
    let mismatch = |field: &str, value: &Value, want: &str| {
        let got = match value {
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => "null",
        };
        format!(
            "json: cannot unmarshal {got} into Go struct field \
             AccountStatzEventOptions.{field} of type {want}"
        )
    };
    let accounts = match body.get("accounts") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| mismatch("accounts", v, "string"))
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(mismatch("accounts", other, "[]string")),
    };
    let unused = match body.get("include_unused") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(mismatch("include_unused", other, "bool")),
    };
    Ok((accounts, unused))
}

fn statz(
    server: &Server,
    id: &ServerIdentity,
    account: Option<&str>,
    body: &Map<String, Value>,
) -> Option<Vec<u8>> {
    let (mut names, unused) = match statz_options(body) {
        Ok(options) => options,
        Err(err) => return Some(bad_body_reply(id, err)),
    };
    match account {
        // `$SYS.REQ.ACCOUNT.PING.STATZ` also matches `$SYS.REQ.ACCOUNT.*.STATZ`; Go answers
        // it once, as the ping.
        Some("PING") => return None,
        Some(account) => names = vec![account.to_owned()],
        None => {}
    }
    let doc = accounts::statz_for(server, &names, unused);
    if doc.is_empty() && !unused {
        return None;
    }
    Some(reply(id, doc))
}

/// `CONNS`: the account connections event, if the account has connections here.
fn conns(server: &Server, id: &ServerIdentity, account: &str, body: &[u8]) -> Option<Vec<u8>> {
    let body = body.trim_ascii();
    if !body.is_empty() {
        let asked: Map<String, Value> = match serde_json::from_slice(body) {
            Ok(map) => map,
            Err(err) => {
                tracing::error!(
                    "SYSTEM - Error unmarshalling account connections request message: {err}"
                );
                return None;
            }
        };
        if let Some(named) = asked.get("acc") {
            if named.as_str() != Some(account) {
                tracing::error!("SYSTEM - Error unmarshalled account does not match subject");
                return None;
            }
        }
    }
    let found = server
        .accounts()
        .iter()
        .find(|a| a.name == account && a.is_registered())
        .map(|a| AccountStat::of(a))?;
    if found.conns == 0 {
        return None;
    }
    serde_json::to_vec(&conns_event(id, found)).ok()
}

/// The account connections event for `stat`.
pub fn conns_event(id: &ServerIdentity, stat: AccountStat) -> AccountConnsEvent {
    AccountConnsEvent {
        kind: ACCOUNT_CONNS_TYPE,
        id: event_id(),
        timestamp: rfc3339(chrono::Utc::now()),
        server: id.stamp(),
        stat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysevents_account_subject_names_the_account() {
        assert_eq!(subject_account("$SYS.REQ.ACCOUNT.A.CONNZ").ok(), Some("A"));
        assert!(subject_account("$SYS.REQ.ACCOUNT.A.B.CONNZ").is_err());
        assert_eq!(system_subjects().len(), AccountReq::ALL.len() + 1);
    }

    #[test]
    fn sysevents_account_statz_options_like_go() {
        let parse = |text: &str| {
            let map: Map<String, Value> = serde_json::from_str(text).unwrap_or_default();
            statz_options(&map)
        };
        assert_eq!(parse("{}"), Ok((Vec::new(), false)));
        assert_eq!(
            parse(r#"{"accounts":["A","B"],"include_unused":true}"#),
            Ok((vec!["A".to_owned(), "B".to_owned()], true))
        );
        assert_eq!(
            parse(r#"{"include_unused":"yes"}"#),
            Err("json: cannot unmarshal string into Go struct field \
                 AccountStatzEventOptions.include_unused of type bool"
                .to_owned())
        );
        assert!(parse(r#"{"accounts":"A"}"#).is_err());
    }
}
