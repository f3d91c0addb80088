//! Top-level options Go accepts that only describe the server or tune a feature Natrium does
//! not have, and so change nothing a client sees: they are accepted as Go accepts them, with
//! Go's checks and messages, rather than refused. Where a value would switch such a feature
//! on (`prof_port: 8080`, `ocsp: true`), it is refused as not supported yet. The rule and the
//! full list are in `docs/operations.md`; the `jetstream` key has its own module.

use std::collections::BTreeMap;

use natrium_gofmt::go_quote;

use super::Report;
use crate::lang::{Entry, Value};
use crate::options::{convert, ServerOptions};

/// `store_dir` (alias `storedir`): JetStream's directory, unused while JetStream is off. It
/// may be given once, here or in the `jetstream` block.
pub(super) fn store_dir(o: &mut ServerOptions, e: &Entry) -> Result<(), String> {
    if !o.store_dir.is_empty() {
        return Err("Duplicate 'store_dir' configuration".to_owned());
    }
    o.store_dir = convert::string(&e.node.value)?;
    Ok(())
}

/// Go's `TagList.Add`: trimmed, lower-cased, empty and repeated tags dropped.
pub fn add_tag(tags: &mut Vec<String>, tag: &str) {
    let tag = tag.trim().to_lowercase();
    if !tag.is_empty() && !tags.contains(&tag) {
        tags.push(tag);
    }
}

/// `server_tags`: a string or a list of strings, reported in `/varz` and system events.
pub(super) fn server_tags(o: &mut ServerOptions, e: &Entry) -> Result<(), String> {
    match &e.node.value {
        Value::Str(tag) => add_tag(&mut o.server_tags, tag),
        Value::Array(items) => {
            for item in items {
                let Value::Str(tag) = &item.value else {
                    return Err(
                        "error parsing tags: unsupported type *conf.token where string is \
                                expected"
                            .to_owned(),
                    );
                };
                add_tag(&mut o.server_tags, tag);
            }
        }
        other => {
            return Err(format!(
                "error parsing tags: unsupported type {}",
                other.go_type_name()
            ))
        }
    }
    Ok(())
}

/// `server_metadata`: string values by name, reported in `/varz` and system events. A value
/// that is not a string is reported at its own key, as Go does.
pub(super) fn server_metadata(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let Value::Map(block) = &e.node.value else {
        let message = format!(
            "error parsing metadata: unsupported type {}",
            e.node.value.go_type_name()
        );
        return report.invalid(e, message);
    };
    let mut metadata = BTreeMap::new();
    for inner in block {
        match convert::string(&inner.node.value) {
            Ok(value) => {
                metadata.insert(inner.key.clone(), value);
            }
            Err(message) => return report.invalid(inner, message),
        }
    }
    o.server_metadata.extend(metadata);
}

/// `feature_flags`: booleans by name; they tune JetStream only, so they are checked, kept
/// for the banner, and otherwise unused.
pub(super) fn feature_flags(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let Value::Map(block) = &e.node.value else {
        let message = format!(
            "error parsing feature flags: unsupported type {}",
            e.node.value.go_type_name()
        );
        return report.invalid(e, message);
    };
    for inner in block {
        let Value::Bool(on) = inner.node.value else {
            let message = format!(
                "error parsing feature flag {}: expected bool, got {}",
                go_quote(&inner.key),
                inner.node.value.go_type_name()
            );
            return report.invalid(inner, message);
        };
        o.feature_flags.insert(inner.key.clone(), on);
    }
}

/// `ocsp: false` turns off OCSP stapling, which Natrium never does; any other value asks for
/// stapling.
pub(super) fn ocsp(e: &Entry, report: &mut Report) {
    match &e.node.value {
        Value::Bool(false) => {}
        Value::Bool(true) | Value::Map(_) => report.not_supported(e, e.key.clone()),
        other => report.invalid(
            e,
            format!(
                "error parsing ocsp config: unsupported type {}",
                other.go_type_name()
            ),
        ),
    }
}

/// `ocsp_cache`: the cache of OCSP peer responses, used only by `tls { ocsp_peer }` (not
/// supported yet), so it is checked and dropped.
pub(super) fn ocsp_cache(e: &Entry, report: &mut Report) {
    let block = match &e.node.value {
        Value::Bool(_) => return,
        Value::Map(block) => block,
        // Go's message for this one does say "tags".
        other => {
            let message = format!(
                "error parsing tags: unsupported type {}",
                other.go_type_name()
            );
            return report.invalid(e, message);
        }
    };
    for inner in block {
        let v = &inner.node.value;
        let unknown = || {
            format!(
                "error parsing OCSP peer cache config, unknown field [{}]",
                go_quote(&inner.key)
            )
        };
        let refused = match (inner.key.to_ascii_lowercase().as_str(), v) {
            ("type", Value::Str(kind)) => {
                (!matches!(kind.to_ascii_lowercase().as_str(), "none" | "local"))
                    .then(|| format!("error parsing OCSP peer cache config, unknown type [{kind}]"))
            }
            ("local_store", Value::Str(_))
            | ("preserve_revoked", Value::Bool(_))
            | ("save_interval", Value::Int(_) | Value::Float(_)) => None,
            ("save_interval", Value::Str(text)) => natrium_gofmt::parse_go_duration(text)
                .err()
                .map(|err| format!("error parsing tls peer config, conversion error: {err}")),
            ("save_interval", _) => Some(
                "error parsing OCSP peer cache config, conversion error: unexpected type"
                    .to_owned(),
            ),
            _ => Some(unknown()),
        };
        if let Some(message) = refused {
            return report.invalid(inner, message);
        }
    }
}

/// `prof_port`: 0 (Go's default) leaves the profiling listener off; any other port would
/// open it.
pub(super) fn prof_port(e: &Entry, report: &mut Report) -> Result<(), String> {
    if convert::int(&e.node.value)? != 0 {
        report.not_supported(e, e.key.clone());
    }
    Ok(())
}

/// `no_fast_producer_stall: false` is what Natrium does; `true` would change how a publisher
/// to a slow subscriber is treated.
pub(super) fn no_fast_producer_stall(e: &Entry, report: &mut Report) -> Result<(), String> {
    if convert::boolean(&e.node.value)? {
        report.not_supported(e, e.key.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inert_tags_like_go_tag_list() {
        let mut tags = Vec::new();
        for t in [" X ", "", "y", "Y", "z:1", "x"] {
            add_tag(&mut tags, t);
        }
        assert_eq!(tags, ["x", "y", "z:1"]);
    }
}
