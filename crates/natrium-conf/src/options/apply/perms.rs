//! `permissions` blocks (in a user, or `default_permissions`): `publish`/`subscribe` as a
//! subject, a list, or `{allow, deny}`, and `allow_responses`, with Go's messages.
//!
//! Go quirks kept on purpose: an empty list or map means "no list" (everything allowed);
//! `allow_responses` without a publish allow list leaves the client an empty one, so it may
//! publish only replies; errors in the old (list) style carry no position, because Go has
//! already unwrapped the value's token when it checks the subjects.

use natrium_auth::{
    entry_problem, EntryProblem, Permissions, ResponsePermission, SubjectPermission,
};
use natrium_gofmt::{go_quote, nanos_to_duration, parse_go_duration};

use super::{convert, Report};
use crate::error::ConfError;
use crate::lang::{Entry, Node, Value};

/// Where an error in a subject list is reported.
#[derive(Clone, Copy)]
enum At<'a> {
    /// At this key (map style).
    Key(&'a Entry),
    /// Nowhere (old style).
    Nowhere,
}

impl Report {
    fn invalid_at(&mut self, at: At<'_>, message: String) {
        match at {
            At::Key(entry) => self.invalid(entry, message),
            At::Nowhere => self.errors.push(ConfError::Unpositioned { message }),
        }
    }

    fn invalid_node(&mut self, node: &Node, message: String) {
        self.errors.push(ConfError::Invalid {
            pos: node.pos.clone(),
            message,
        });
    }
}

/// A `permissions` block: `publish`/`subscribe` as a subject, a list, or `{allow, deny}`.
pub(super) fn permissions(e: &Entry, report: &mut Report) -> Option<Permissions> {
    let Value::Map(map) = &e.node.value else {
        report.invalid(
            e,
            format!(
                "Expected permissions to be a map/struct, got {}",
                convert::go_plus_v(&e.node.value)
            ),
        );
        return None;
    };
    let mut out = Permissions::default();
    for field in map {
        match field.key.to_ascii_lowercase().as_str() {
            "publish" | "pub" | "import" => {
                out.publish = subject_permission(field, false, report);
            }
            "subscribe" | "sub" | "export" => {
                out.subscribe = subject_permission(field, true, report);
            }
            "allow_responses" | "publish_allow_responses" => {
                out.response = allow_responses(field, report);
            }
            _ if field.node.used_as_variable() => {}
            _ => report.invalid(
                field,
                format!("Unknown field {} parsing permissions", go_quote(&field.key)),
            ),
        }
    }
    if out.response.is_some() {
        // Responses only: without its own allow list the client may publish nothing else.
        let publish = out.publish.get_or_insert_with(SubjectPermission::default);
        publish.allow.get_or_insert_with(Vec::new);
    }
    Some(out)
}

/// One direction; `None` when it places no restriction (an empty map) or failed to parse.
fn subject_permission(
    e: &Entry,
    allow_queue: bool,
    report: &mut Report,
) -> Option<SubjectPermission> {
    let Value::Map(map) = &e.node.value else {
        let allow = subjects(&e.node, At::Nowhere, allow_queue, report).ok()?;
        return Some(SubjectPermission {
            allow,
            deny: Vec::new(),
        });
    };
    if map.is_empty() {
        return None;
    }
    let mut out = SubjectPermission::default();
    for field in map {
        match field.key.to_ascii_lowercase().as_str() {
            "allow" => {
                if let Ok(allow) = subjects(&field.node, At::Key(field), allow_queue, report) {
                    out.allow = allow;
                }
            }
            "deny" => {
                if let Ok(deny) = subjects(&field.node, At::Key(field), allow_queue, report) {
                    out.deny = deny.unwrap_or_default();
                }
            }
            _ if field.node.used_as_variable() => {}
            _ => report.invalid(
                field,
                format!(
                    "Unknown field name {} parsing subject permissions, only 'allow' or 'deny' \
                     are permitted",
                    go_quote(&field.key)
                ),
            ),
        }
    }
    Some(out)
}

/// A subject or a list of subjects, each checked; `Ok(None)` for an empty list (Go's nil).
fn subjects(
    node: &Node,
    at: At<'_>,
    allow_queue: bool,
    report: &mut Report,
) -> Result<Option<Vec<String>>, ()> {
    let list = match &node.value {
        Value::Str(s) => vec![s.clone()],
        Value::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for item in items {
                let Value::Str(s) = &item.value else {
                    report.invalid_node(
                        item,
                        "Subject in permissions array cannot be cast to string".to_owned(),
                    );
                    return Err(());
                };
                list.push(s.clone());
            }
            list
        }
        other => {
            report.invalid_at(
                at,
                format!(
                    "Expected subject permissions to be a subject, or array of subjects, got {}",
                    other.go_type_name()
                ),
            );
            return Err(());
        }
    };
    if let Some(message) = list.iter().find_map(|s| invalid_subject(s, allow_queue)) {
        report.invalid_at(at, message);
        return Err(());
    }
    Ok((!list.is_empty()).then_some(list))
}

/// Go's complaint about a permission entry, if any. Subscribe entries may be
/// `"subject queue"`.
fn invalid_subject(entry: &str, allow_queue: bool) -> Option<String> {
    Some(match entry_problem(entry, allow_queue)? {
        EntryProblem::Subject(s) => format!("subject {} is not a valid subject", go_quote(s)),
        EntryProblem::Queue(q) => format!("queue {} is not a valid queue", go_quote(q)),
    })
}

/// `allow_responses: true | false | { max, expires }`. Go abandons the whole setting (and
/// reports why) when `expires` is not a valid duration string or `max` not an integer.
fn allow_responses(e: &Entry, report: &mut Report) -> Option<ResponsePermission> {
    let map = match &e.node.value {
        Value::Bool(on) => return on.then(ResponsePermission::default),
        Value::Map(map) => map,
        _ => {
            report.invalid(
                e,
                "error parsing response permissions, expected a boolean or a map".to_owned(),
            );
            return None;
        }
    };
    let mut out = ResponsePermission::default();
    for field in map {
        match field.key.to_ascii_lowercase().as_str() {
            "max" | "max_msgs" | "max_messages" | "max_responses" => {
                match convert::int(&field.node.value) {
                    // Zero keeps the default; a negative number means no limit.
                    Ok(0) => {}
                    Ok(n) => out.max_msgs = u64::try_from(n).ok(),
                    Err(message) => {
                        report.invalid(field, message);
                        return None;
                    }
                }
            }
            "expires" | "expiration" | "ttl" => {
                let Value::Str(text) = &field.node.value else {
                    report.invalid(
                        field,
                        "error parsing expires, not a duration string".to_owned(),
                    );
                    return None;
                };
                match parse_go_duration(text) {
                    // Zero keeps the default; a negative duration means forever.
                    Ok(0) => {}
                    Ok(nanos) => out.expires = nanos_to_duration(nanos),
                    Err(err) => {
                        report.invalid(field, format!("error parsing expires: {err}"));
                        return None;
                    }
                }
            }
            _ if field.node.used_as_variable() => {}
            _ => report.invalid(
                field,
                format!("Unknown field {} parsing permissions", go_quote(&field.key)),
            ),
        }
    }
    Some(out)
}
