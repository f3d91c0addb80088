//! The items of an account's `exports` and `imports` lists, read with Go's messages:
//! `{stream: "s.>"}`, `{service: "svc.>", accounts: [B], response_type: stream}`,
//! `{stream: {account: A, subject: "s.>"}, prefix: "p"}`,
//! `{service: {account: A, subject: "svc.x"}, to: "local.x"}`.
//!
//! Keys are read in file order; where Go's answer depends on the order of two keys (a stream
//! and a service in one item), Go's own order is random and ours is the file's.

use std::time::Duration;

use natrium_auth::account::{Export, ExportKind, ResponseType, RESPONSE_THRESHOLD_DEFAULT};
use natrium_gofmt::{go_quote, nanos_to_duration, parse_go_duration};

use super::{convert, Report};
use crate::lang::{Entry, Map, Value};

/// An import as written, before the exporting account is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImportDraft {
    pub(crate) account: String,
    pub(crate) subject: String,
    pub(crate) prefix: String,
    pub(crate) to: String,
    pub(crate) service: bool,
    pub(crate) share: bool,
    pub(crate) allow_trace: bool,
}

/// `exports = [ … ]`.
pub(super) fn exports(e: &Entry, report: &mut Report) -> Vec<Export> {
    let Value::Array(items) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "Exports should be an array, got {}",
                e.node.value.go_type_name()
            ),
        );
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match &item.value {
            Value::Map(map) => export(map, report),
            other => {
                report.invalid_node_pos(
                    item,
                    format!(
                        "Export Items should be a map with type entry, got {}",
                        other.go_type_name()
                    ),
                );
                None
            }
        })
        .collect()
}

/// What one export item has said so far.
#[derive(Default)]
struct ExportDraft<'a> {
    stream: Option<String>,
    service: Option<String>,
    response: Option<ResponseType>,
    response_at: Option<&'a Entry>,
    threshold: Option<Duration>,
    threshold_seen: bool,
    latency_at: Option<&'a Entry>,
    trace_at: Option<&'a Entry>,
    allow_trace: bool,
    accounts: Option<Vec<String>>,
    token_position: u32,
}

/// Go's reader gave up on the whole item (its type assertion panicked).
struct Dropped;

fn export(map: &Map, report: &mut Report) -> Option<Export> {
    let mut d = ExportDraft::default();
    for field in map {
        if d.field(field, report).is_err() {
            return None;
        }
    }
    finish_export(d)
}

impl<'a> ExportDraft<'a> {
    fn field(&mut self, field: &'a Entry, report: &mut Report) -> Result<(), Dropped> {
        let v = &field.node.value;
        match field.key.to_ascii_lowercase().as_str() {
            "stream" => self.stream(field, report),
            "service" => {
                if self.stream.is_some() {
                    report.invalid(
                        field,
                        format!(
                            "Detected service {} but already saw a stream",
                            convert::go_q(v)
                        ),
                    );
                    return Ok(());
                }
                match v {
                    Value::Str(s) => self.service = Some(s.clone()),
                    other => report.invalid(
                        field,
                        format!(
                            "Expected service name to be string, got {}",
                            other.go_type_name()
                        ),
                    ),
                }
            }
            "response" | "response_type" => self.response(field, report),
            "threshold" | "response_threshold" | "response_max_time" | "response_time" => {
                if self.threshold_seen {
                    report.invalid(field, "Duplicate response threshold detected".to_owned());
                    return Ok(());
                }
                self.threshold_seen = true;
                match threshold(v) {
                    Ok(t) => self.threshold = Some(t),
                    Err(message) => {
                        report.invalid(field, message);
                        return Ok(());
                    }
                }
                if self.stream.is_some() {
                    report.invalid(
                        field,
                        "Detected response directive on non-service".to_owned(),
                    );
                }
            }
            "accounts" => match names(v) {
                Ok(list) => self.accounts = list,
                Err(message) => {
                    report.invalid(field, message);
                    return Err(Dropped);
                }
            },
            "latency" => {
                self.latency_at = Some(field);
                if self.stream.is_some() {
                    report.invalid(
                        field,
                        "Detected latency directive on non-service".to_owned(),
                    );
                } else {
                    report.not_supported(field, "exports.latency".to_owned());
                }
            }
            "account_token_position" => match convert::int(v) {
                Ok(n) => self.token_position = u32::try_from(n).unwrap_or(0),
                Err(message) => {
                    report.invalid(field, message);
                    return Err(Dropped);
                }
            },
            "allow_trace" => {
                self.trace_at = Some(field);
                match convert::boolean(v) {
                    Ok(b) => self.allow_trace = b,
                    Err(message) => {
                        report.invalid(field, message);
                        return Err(Dropped);
                    }
                }
                if self.stream.is_some() {
                    report.invalid(
                        field,
                        "Detected allow_trace directive on non-service".to_owned(),
                    );
                }
            }
            _ if field.node.used_as_variable() => {}
            _ => report.unknown(field),
        }
        Ok(())
    }

    fn stream(&mut self, field: &Entry, report: &mut Report) {
        let v = &field.node.value;
        if self.service.is_some() {
            report.invalid(
                field,
                format!(
                    "Detected stream {} but already saw a service",
                    convert::go_q(v)
                ),
            );
            return;
        }
        let directive = [
            (self.response_at, "response"),
            (self.latency_at, "latency"),
            (self.trace_at, "allow_trace"),
        ]
        .into_iter()
        .find_map(|(at, name)| at.map(|at| (at, name)));
        if let Some((at, name)) = directive {
            report.invalid(at, format!("Detected {name} directive on non-service"));
            return;
        }
        match v {
            Value::Str(s) => self.stream = Some(s.clone()),
            other => report.invalid(
                field,
                format!(
                    "Expected stream name to be string, got {}",
                    other.go_type_name()
                ),
            ),
        }
    }

    fn response(&mut self, field: &'a Entry, report: &mut Report) {
        if self.response_at.is_some() {
            report.invalid(field, "Duplicate response type definition".to_owned());
            return;
        }
        self.response_at = Some(field);
        let Value::Str(text) = &field.node.value else {
            report.invalid(
                field,
                format!(
                    "Expected response type to be string, got {}",
                    field.node.value.go_type_name()
                ),
            );
            return;
        };
        self.response = Some(match text.to_ascii_lowercase().as_str() {
            "single" | "singleton" => ResponseType::Singleton,
            "stream" => ResponseType::Streamed,
            "chunk" | "chunked" => ResponseType::Chunked,
            _ => {
                report.invalid(field, format!("Unknown response type: {}", go_quote(text)));
                return;
            }
        });
        if self.stream.is_some() {
            report.invalid(
                field,
                "Detected response directive on non-service".to_owned(),
            );
        }
    }
}

fn finish_export(d: ExportDraft<'_>) -> Option<Export> {
    let (subject, kind) = match (d.stream, d.service) {
        (Some(s), _) => (s, ExportKind::Stream),
        (None, Some(s)) => (
            s,
            ExportKind::Service {
                response: d.response.unwrap_or_default(),
                threshold: d.threshold.unwrap_or(RESPONSE_THRESHOLD_DEFAULT),
                allow_trace: d.allow_trace,
            },
        ),
        (None, None) => return None,
    };
    Some(Export {
        subject,
        kind,
        accounts: d.accounts,
        token_position: d.token_position,
    })
}

/// A response threshold: a Go duration string.
fn threshold(v: &Value) -> Result<Duration, String> {
    let Value::Str(text) = v else {
        return Err(format!(
            "Expected response threshold to be a parseable time duration, got {}",
            v.go_type_name()
        ));
    };
    parse_go_duration(text)
        .ok()
        .and_then(nanos_to_duration)
        .ok_or_else(|| {
            format!(
                "Expected response threshold to be a parseable time duration, got {}",
                go_quote(text)
            )
        })
}

/// `accounts: [A, B]`; an empty list is no list (a public export), as in Go.
fn names(v: &Value) -> Result<Option<Vec<String>>, String> {
    let Value::Array(items) = v else {
        return Err(convert::conversion(v, "[]interface {}"));
    };
    let list = items
        .iter()
        .map(|n| convert::string(&n.value))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((!list.is_empty()).then_some(list))
}

/// `imports = [ … ]`, with Go's duplicate check of service imports.
pub(super) fn imports(e: &Entry, report: &mut Report) -> Vec<ImportDraft> {
    let Value::Array(items) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "Imports should be an array, got {}",
                e.node.value.go_type_name()
            ),
        );
        return Vec::new();
    };
    let mut out: Vec<ImportDraft> = Vec::new();
    for item in items {
        let Value::Map(map) = &item.value else {
            report.invalid_node_pos(
                item,
                format!(
                    "Import Items should be a map with type entry, got {}",
                    item.value.go_type_name()
                ),
            );
            continue;
        };
        let Some(draft) = import(map, report) else {
            continue;
        };
        if draft.service {
            let dup = out
                .iter()
                .find(|d| d.service && d.to == draft.to && d.account == draft.account);
            if let Some(dup) = dup {
                report.invalid_node_pos(
                    item,
                    format!(
                        "Duplicate service import subject {}, previously used in import for \
                         account {}, subject {}",
                        go_quote(&draft.to),
                        go_quote(&dup.account),
                        go_quote(&dup.subject)
                    ),
                );
                continue;
            }
        }
        out.push(draft);
    }
    out
}

fn import(map: &Map, report: &mut Report) -> Option<ImportDraft> {
    let mut kind: Option<(bool, String, String)> = None;
    let (mut prefix, mut to, mut share) = (String::new(), String::new(), false);
    let mut trace_at: Option<&Entry> = None;
    let mut allow_trace = false;
    for field in map {
        let v = &field.node.value;
        match field.key.to_ascii_lowercase().as_str() {
            key @ ("stream" | "service") => {
                let service = key == "service";
                if let Some((other, ..)) = &kind {
                    if *other != service {
                        let (this, that) = if service {
                            ("service", "stream")
                        } else {
                            ("stream", "service")
                        };
                        report.invalid(field, format!("Detected {this} but already saw a {that}"));
                        continue;
                    }
                }
                if let (true, Some(at)) = (service, trace_at) {
                    report.invalid(
                        at,
                        "Detected allow_trace directive on a non-stream".to_owned(),
                    );
                    continue;
                }
                let Value::Map(inner) = v else {
                    let what = if service { "Service" } else { "Stream" };
                    report.invalid(
                        field,
                        format!(
                            "{what} entry should be an account map, got {}",
                            v.go_type_name()
                        ),
                    );
                    continue;
                };
                let (account, subject) = account_subject(inner, report)?;
                if account.is_empty() || subject.is_empty() {
                    report.invalid(field, "Expect an account name and a subject".to_owned());
                    continue;
                }
                kind = Some((service, account, subject));
            }
            "prefix" => prefix = text(field, report)?,
            "to" => {
                to = text(field, report)?;
                if matches!(kind, Some((false, ..))) && !prefix.is_empty() {
                    report.invalid(
                        field,
                        "Stream import can not have a 'prefix' and a 'to' property".to_owned(),
                    );
                }
            }
            "share" => match convert::boolean(v) {
                Ok(b) => share = b,
                Err(message) => {
                    report.invalid(field, message);
                    return None;
                }
            },
            "allow_trace" => {
                if matches!(kind, Some((true, ..))) {
                    report.invalid(
                        field,
                        "Detected allow_trace directive on a non-stream".to_owned(),
                    );
                    continue;
                }
                match convert::boolean(v) {
                    Ok(b) => allow_trace = b,
                    Err(message) => {
                        report.invalid(field, message);
                        return None;
                    }
                }
                trace_at = Some(field);
            }
            _ if field.node.used_as_variable() => {}
            _ => report.unknown(field),
        }
    }
    let (service, account, subject) = kind?;
    if service && to.is_empty() {
        // A service import without `to` is imported under its own subject.
        to.clone_from(&subject);
    }
    Some(ImportDraft {
        account,
        subject,
        prefix,
        to,
        service,
        share,
        allow_trace,
    })
}

/// A string field; Go's reader panics (and drops the item) on anything else.
fn text(field: &Entry, report: &mut Report) -> Option<String> {
    match convert::string(&field.node.value) {
        Ok(s) => Some(s),
        Err(message) => {
            report.invalid(field, message);
            None
        }
    }
}

/// `{account: A, subject: "s.>"}`.
fn account_subject(map: &Map, report: &mut Report) -> Option<(String, String)> {
    let (mut account, mut subject) = (String::new(), String::new());
    for field in map {
        match field.key.to_ascii_lowercase().as_str() {
            "account" => account = text(field, report)?,
            "subject" => subject = text(field, report)?,
            _ if field.node.used_as_variable() => {}
            _ => report.unknown(field),
        }
    }
    Some((account, subject))
}
