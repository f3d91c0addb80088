//! An account's `msg_trace` (alias `trace_dest`): the subject that messages carrying a sampled
//! W3C `traceparent` header are traced to, and which percentage of them, with Go's messages.
//!
//! `msg_trace: "subj"` names the destination alone; `msg_trace: {dest: "subj", sampling: 50}`
//! (or `"50%"`) adds the sampling, 100 when left out.

use natrium_auth::account::MsgTraceDest;
use natrium_gofmt::go_quote;
use nats_subject::is_valid_publish_subject;

use super::{convert, Report};
use crate::lang::{Entry, Value};

/// Applies `e` to the account's setting; errors and warnings go to `report`.
pub(super) fn parse(out: &mut Option<MsgTraceDest>, e: &Entry, report: &mut Report) {
    let mut dest = out.as_ref().map(|t| t.dest.clone()).unwrap_or_default();
    let mut sampling = out.as_ref().map_or(0, |t| t.sampling);
    if let Err((at, message)) = read(e, &mut dest, &mut sampling) {
        report.invalid(at, message);
        return;
    }
    if dest.is_empty() {
        if sampling > 0 {
            report.warn(
                e,
                "Trace destination sampling ignored since no destination was set".to_owned(),
            );
        }
        *out = None;
        return;
    }
    *out = Some(MsgTraceDest {
        dest,
        sampling: if sampling == 0 { 100 } else { sampling },
    });
}

type Failure<'a> = (&'a Entry, String);

fn read<'a>(e: &'a Entry, dest: &mut String, sampling: &mut u8) -> Result<(), Failure<'a>> {
    match &e.node.value {
        Value::Str(_) => read_dest(e, &e.key, dest),
        Value::Map(fields) => {
            for field in fields {
                match field.key.to_ascii_lowercase().as_str() {
                    "dest" => read_dest(field, &field.key, dest)?,
                    "sampling" => *sampling = read_sampling(field)?,
                    _ if field.node.used_as_variable() => {}
                    _ => {
                        return Err((
                            field,
                            format!(
                                "Unknown field {} parsing account message trace map/struct {}",
                                go_quote(&field.key),
                                go_quote(&e.key)
                            ),
                        ))
                    }
                }
            }
            Ok(())
        }
        other => Err((
            e,
            format!(
                "Expected account message trace {} to be a string or a map/struct, got {}",
                go_quote(&e.key),
                other.go_type_name()
            ),
        )),
    }
}

fn read_dest<'a>(e: &'a Entry, key: &str, dest: &mut String) -> Result<(), Failure<'a>> {
    let Value::Str(text) = &e.node.value else {
        return Err((
            e,
            format!(
                "Field {} should be a string, got {}",
                go_quote(key),
                e.node.value.go_type_name()
            ),
        ));
    };
    if !is_valid_publish_subject(text.as_bytes()) {
        return Err((
            e,
            format!("Trace destination {} is not valid", go_quote(text)),
        ));
    }
    dest.clone_from(text);
    Ok(())
}

fn read_sampling(e: &Entry) -> Result<u8, Failure<'_>> {
    let n = match &e.node.value {
        Value::Int(n) => *n,
        Value::Str(text) => {
            convert::go_atoi(text.strip_suffix('%').unwrap_or(text)).ok_or_else(|| {
                (
                    e,
                    format!(
                        "Invalid trace destination sampling value {}",
                        go_quote(text)
                    ),
                )
            })?
        }
        other => {
            return Err((
                e,
                format!(
                    "Trace destination sampling field {} should be an integer or a percentage, \
                     got {}",
                    go_quote(&e.key),
                    other.go_type_name()
                ),
            ))
        }
    };
    u8::try_from(n)
        .ok()
        .filter(|n| (1..=100).contains(n))
        .ok_or_else(|| {
            // Go's message, spelling included.
            (
                e,
                format!("Ttrace destination sampling value {n} is invalid, needs to be [1..100]"),
            )
        })
}
