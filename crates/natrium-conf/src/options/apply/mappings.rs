//! `mappings` (or `maps`), at the top level for the global account and inside an account
//! block: `src: "dest"`, `src: {destination: d, weight: 50%}`, or a list of such weighted
//! destinations, read and checked with Go's messages (each mapping is built as the server
//! will build it, so a refused transform is a configuration error).
//!
//! Go reads a map in random order; we read it in file order. Like Go, a destination item that
//! fails is left out and the rest of its list is still added, and a type Go asserts (a
//! non-map block, a non-string destination) stops the block with Go's panic text.

use natrium_auth::account::{AccountSpec, SubjectMapping};
use natrium_gofmt::go_quote;
use nats_subject::{is_valid_subject, MapDest, WeightedMapping};

use super::accounts::GLOBAL_ACCOUNT;
use super::{convert, Report};
use crate::error::ConfError;
use crate::lang::{Entry, Node, Value};
use crate::options::ServerOptions;

/// Go stops reading the block at a failed type assertion.
struct Abort;

/// The top-level `mappings`: Go adds a `$G` account definition carrying them.
pub(super) fn global(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let mut spec = AccountSpec {
        name: GLOBAL_ACCOUNT.to_owned(),
        ..AccountSpec::default()
    };
    parse(&mut spec.mappings, e, report);
    o.accounts.push(spec);
}

/// Reads the block of `e` into `out` (a later entry for the same source replaces an earlier).
pub(super) fn parse(out: &mut Vec<SubjectMapping>, e: &Entry, report: &mut Report) {
    let Value::Map(block) = &e.node.value else {
        report.invalid(
            e,
            convert::conversion(&e.node.value, "map[string]interface {}"),
        );
        return;
    };
    for field in block {
        if one(out, e, field, report).is_err() {
            return;
        }
    }
}

fn one(
    out: &mut Vec<SubjectMapping>,
    block: &Entry,
    field: &Entry,
    report: &mut Report,
) -> Result<(), Abort> {
    let source = &field.key;
    if !is_valid_subject(source.as_bytes()) {
        report.invalid(
            block,
            format!("Subject {} is not a valid subject", go_quote(source)),
        );
        return Ok(());
    }
    let (dests, single) = match &field.node.value {
        Value::Str(dest) => (
            vec![MapDest {
                subject: dest.clone(),
                weight: 100,
                cluster: String::new(),
            }],
            Some(dest),
        ),
        Value::Array(items) => {
            let mut dests = Vec::with_capacity(items.len());
            for item in items {
                if let Some(d) = destination(item, None, report)? {
                    dests.push(d);
                }
            }
            (dests, None)
        }
        _ => match destination(&field.node, Some(field), report)? {
            Some(d) => (vec![d], None),
            None => return Ok(()),
        },
    };
    match WeightedMapping::new(source, &dests) {
        Ok(_) => {
            let mapping = SubjectMapping {
                source: source.clone(),
                dests,
            };
            match out.iter_mut().find(|m| m.source == *source) {
                Some(old) => *old = mapping,
                None => out.push(mapping),
            }
        }
        Err(err) => {
            let message = match single {
                Some(dest) => format!(
                    "Error adding mapping for {} to {} : {err}",
                    go_quote(source),
                    go_quote(dest)
                ),
                None => format!("Error adding mapping for {} : {err}", go_quote(source)),
            };
            report.invalid(field, message);
        }
    }
    Ok(())
}

/// One weighted destination; `None` (with the error reported) when Go leaves it out. Go
/// reports the item's problems at the item of a list, or at the mapping's key (`entry`).
/// A wrong type stops the block: Go's type assertion panics.
fn destination(
    node: &Node,
    entry: Option<&Entry>,
    report: &mut Report,
) -> Result<Option<MapDest>, Abort> {
    let Value::Map(map) = &node.value else {
        let message = "Expected an entry for the mapping destination".to_owned();
        match entry {
            Some(e) => report.invalid(e, message),
            None => report.invalid_node_pos(node, message),
        }
        return Ok(None);
    };
    // A list item's problems are placed where Go places a map item: after its brace.
    let at = |report: &mut Report, message: String| match entry {
        Some(e) => report.invalid(e, message),
        None => report.errors.push(ConfError::Invalid {
            pos: map.end_pos().unwrap_or(&node.pos).clone(),
            message,
        }),
    };
    let mut dest = MapDest::default();
    let mut weighted = false;
    for field in map {
        let v = &field.node.value;
        match field.key.to_ascii_lowercase().as_str() {
            "dest" | "destination" => match v {
                Value::Str(s) => dest.subject.clone_from(s),
                other => {
                    at(report, convert::conversion(other, "string"));
                    return Err(Abort);
                }
            },
            "weight" => match weight(v) {
                Ok(w) => {
                    dest.weight = w;
                    weighted = true;
                }
                Err(message) => {
                    report.invalid(field, message);
                    return Ok(None);
                }
            },
            "cluster" => match v {
                Value::Str(s) => dest.cluster.clone_from(s),
                other => {
                    at(report, convert::conversion(other, "string"));
                    return Err(Abort);
                }
            },
            _ => {
                report.invalid(
                    field,
                    format!(
                        "Unknown field {} for mapping destination",
                        go_quote(&field.key)
                    ),
                );
                return Ok(None);
            }
        }
    }
    if !weighted {
        at(
            report,
            format!(
                "Missing weight for mapping destination {}",
                go_quote(&dest.subject)
            ),
        );
        return Ok(None);
    }
    Ok(Some(dest))
}

/// A weight: an integer, or a string of one with an optional `%`, from 0 to 100.
fn weight(v: &Value) -> Result<u8, String> {
    let n = match v {
        Value::Str(s) => {
            let digits = s.strip_suffix('%').unwrap_or(s);
            convert::go_atoi(digits).ok_or_else(|| {
                format!(
                    "Invalid weight {} for mapping destination",
                    go_quote(digits)
                )
            })?
        }
        Value::Int(n) => *n,
        other => {
            return Err(format!(
                "Unknown entry type for weight of {}\n",
                convert::go_plus_v(other)
            ))
        }
    };
    u8::try_from(n)
        .ok()
        .filter(|w| *w <= 100)
        .ok_or_else(|| format!("Invalid weight {n} for mapping destination"))
}
