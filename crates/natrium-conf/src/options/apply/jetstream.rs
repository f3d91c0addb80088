//! The `jetstream` key, at the top level and in an account, read as Go reads it: `true`,
//! `"enabled"`, or a block (on unless it says `enabled: false`), with every key Go knows
//! checked as Go checks it and kept in `ServerOptions::jetstream`.
//!
//! Go's positions differ by kind of mistake and we keep them: a failed type assertion is
//! reported at the `jetstream` key (Go's panic handler only knows the top-level token), a
//! value Go checks itself at the inner key.

use std::time::Duration;

use natrium_gofmt::go_quote;

use super::convert::go_plus_v;
use super::Report;
use crate::error::ConfError;
use crate::lang::{Entry, Map, Value};
use natrium_auth::account::JsAccountLimits;

use crate::options::{convert, ServerOptions, SyncPolicy};

/// The server's `jetstream` key.
pub(super) fn server(o: &mut ServerOptions, e: &Entry, report: &mut Report) {
    let enabled = match &e.node.value {
        Value::Bool(on) => *on,
        Value::Str(word) => match on_off(word) {
            Some(on) => on,
            None => return report.invalid(e, bad_word(word)),
        },
        Value::Map(block) => match block_enabled(block) {
            Ok(on) => on,
            Err(message) => return report.invalid(e, message),
        },
        other => return report.invalid(e, bad_type(other)),
    };
    o.jetstream.enabled = enabled;
    if let Value::Map(block) = &e.node.value {
        if let Err(message) = block_keys(o, block, report) {
            report.invalid(e, message);
        }
    }
}

/// `enabled: false` inside the block; without the key the block turns JetStream on.
fn block_enabled(block: &Map) -> Result<bool, String> {
    let mut on = true;
    for inner in block {
        if matches!(
            inner.key.to_ascii_lowercase().as_str(),
            "enable" | "enabled"
        ) {
            on = convert::boolean(&inner.node.value)?;
        }
    }
    Ok(on)
}

fn on_off(word: &str) -> Option<bool> {
    match word.to_ascii_lowercase().as_str() {
        "enabled" | "enable" => Some(true),
        "disabled" | "disable" => Some(false),
        _ => None,
    }
}

fn bad_word(word: &str) -> String {
    format!("Expected 'enabled' or 'disabled' for string value, got '{word}'")
}

fn bad_type(v: &Value) -> String {
    format!(
        "Expected map, bool or string to define JetStream, got {}",
        v.go_type_name()
    )
}

/// Checks every key of a disabled block. `Err` is a failed type assertion, reported at the
/// `jetstream` key; Go stops reading the block at the first checked value it refuses.
fn block_keys(o: &mut ServerOptions, block: &Map, report: &mut Report) -> Result<(), String> {
    for inner in block {
        let v = &inner.node.value;
        let key = inner.key.to_ascii_lowercase();
        let refused = match key.as_str() {
            "strict" => match v {
                Value::Bool(on) => {
                    o.jetstream.strict = *on;
                    None
                }
                other => Some(format!(
                    "Expected 'true' or 'false' for bool value, got '{}'",
                    go_percent_s(other)
                )),
            },
            "store" | "store_dir" | "storedir" => {
                if o.store_dir.is_empty() {
                    o.store_dir = convert::string(v)?;
                    None
                } else {
                    Some("Duplicate 'store_dir' configuration".to_owned())
                }
            }
            "sync" | "sync_interval" => {
                let always = matches!(v, Value::Str(s) if s.eq_ignore_ascii_case("always"));
                o.jetstream.sync = if always {
                    SyncPolicy::Always
                } else {
                    sync_duration(inner, report)?.map_or(o.jetstream.sync, SyncPolicy::Interval)
                };
                None
            }
            "max_memory_store"
            | "max_mem_store"
            | "max_mem"
            | "max_file_store"
            | "max_file"
            | "max_outstanding_catchup"
            | "max_buffered_size" => size_key(o, &key, v),
            "meta_compact_size" => match storage_size(v) {
                Err(err) => Some(format!("{key} {err}")),
                Ok(n) if n < 0 => Some(absolute_size(&inner.key, v)),
                Ok(_) => None,
            },
            "domain" => {
                o.jetstream_domain = convert::string(v)?;
                None
            }
            "enable" | "enabled" | "meta_compact_sync" => convert::boolean(v).map(|_| None)?,
            "key"
            | "ek"
            | "encryption_key"
            | "prev_key"
            | "prev_ek"
            | "prev_encryption_key"
            | "unique_tag"
            | "extension_hint"
            | "cipher" => text_key(o, &key, v)?,
            "limits" => limits(o, inner, report)?,
            "tpm" => tpm(inner, report)?,
            "max_buffered_msgs" | "request_queue_limit" | "info_queue_limit" => {
                count_key(o, &key, &inner.key, v)
            }
            "meta_compact" => match v {
                Value::Int(n) if *n >= 0 => None,
                other => Some(absolute_size(&inner.key, other)),
            },
            "max_concurrent_io" => match v {
                Value::Int(n) if (4..=8192).contains(n) => None,
                other => Some(format!(
                    "Expected an absolute size for {} between 4 and 8192, got {}",
                    go_quote(&inner.key),
                    go_plus_v(other)
                )),
            },
            _ if inner.node.used_as_variable() => None,
            _ => {
                report.unknown(inner);
                None
            }
        };
        match refused {
            // Already reported where Go reports it.
            Some(message) if message.is_empty() => return Ok(()),
            Some(message) => {
                report.invalid(inner, message);
                return Ok(());
            }
            None => {}
        }
    }
    Ok(())
}

/// The string settings of the block; `Ok(Some(_))` refuses the value at its key.
fn text_key(o: &mut ServerOptions, key: &str, v: &Value) -> Result<Option<String>, String> {
    if key == "cipher" {
        let refused = cipher(v)?;
        if refused.is_none() {
            o.jetstream.cipher = convert::string(v)?.to_ascii_lowercase();
        }
        return Ok(refused);
    }
    let text = convert::string(v)?;
    match key {
        "key" | "ek" | "encryption_key" => o.jetstream.key = text,
        "prev_key" | "prev_ek" | "prev_encryption_key" => o.jetstream.prev_key = text,
        "unique_tag" => o.jetstream.unique_tag = text,
        _ => {}
    }
    Ok(None)
}

/// The counts of the block (`max_buffered_msgs`, `request_queue_limit`, `info_queue_limit`).
fn count_key(o: &mut ServerOptions, key: &str, written: &str, v: &Value) -> Option<String> {
    let Value::Int(n) = v else {
        return Some(format!(
            "Expected a parseable size for {}, got {}",
            go_quote(written),
            go_plus_v(v)
        ));
    };
    match key {
        "max_buffered_msgs" => o.jetstream.max_buffered_msgs = *n,
        "request_queue_limit" => o.jetstream.request_queue_limit = *n,
        _ => {}
    }
    None
}

/// The byte sizes of the block, kept where JetStream reads them.
fn size_key(o: &mut ServerOptions, key: &str, v: &Value) -> Option<String> {
    let n = match storage_size(v) {
        Ok(n) => n,
        Err(err) => {
            let name = match key {
                "max_memory_store" | "max_mem_store" | "max_mem" => "max_mem_store",
                "max_file_store" | "max_file" => "max_file_store",
                other => other,
            };
            return Some(format!("{name} {err}"));
        }
    };
    match key {
        "max_memory_store" | "max_mem_store" | "max_mem" => o.jetstream.max_memory = n,
        "max_file_store" | "max_file" => o.jetstream.max_store = n,
        "max_buffered_size" => o.jetstream.max_buffered_size = n,
        _ => {}
    }
    None
}

fn absolute_size(key: &str, v: &Value) -> String {
    format!(
        "Expected an absolute size for {}, got {}",
        go_quote(key),
        go_plus_v(v)
    )
}

/// `cipher`: `chacha`, `chachapoly` or `aes`, any case.
fn cipher(v: &Value) -> Result<Option<String>, String> {
    let name = convert::string(v)?;
    Ok(match name.to_ascii_lowercase().as_str() {
        "chacha" | "chachapoly" | "aes" => None,
        _ => Some(format!("Unknown cipher type: {}", go_quote(&name))),
    })
}

/// `limits { max_ack_pending, max_ha_assets, max_request_batch, default_max_consumers,
/// duplicate_window, batch {} }`.
/// `Ok(Some(_))` is a refusal at the `limits` key (or `batch`), which ends the block.
fn limits(
    o: &mut ServerOptions,
    limits: &Entry,
    report: &mut Report,
) -> Result<Option<String>, String> {
    let Value::Map(block) = &limits.node.value else {
        return Ok(Some(map_expected("JetStreamLimits", &limits.node.value)));
    };
    for inner in block {
        let v = &inner.node.value;
        match inner.key.to_ascii_lowercase().as_str() {
            "max_ack_pending" => o.jetstream.limits.max_ack_pending = convert::int(v)?,
            "max_ha_assets" => o.jetstream.limits.max_ha_assets = convert::int(v)?,
            "max_request_batch" => o.jetstream.limits.max_request_batch = convert::int(v)?,
            "default_max_consumers" => {
                o.jetstream.limits.default_max_consumers = convert::int(v)?;
            }
            "duplicate_window" => {
                o.jetstream.limits.duplicate_window = duration_or_bare_error(v, report)?;
            }
            "batch" => {
                let Value::Map(batch) = v else {
                    // Go reports it at the `batch` key.
                    report.invalid(inner, map_expected("batch limits", v));
                    return Ok(Some(String::new()));
                };
                let limits = &mut o.jetstream.limits.batch;
                for field in batch {
                    let v = &field.node.value;
                    match field.key.to_ascii_lowercase().as_str() {
                        "max_inflight_per_stream" => {
                            limits.max_inflight_per_stream = convert::int(v)?;
                        }
                        "max_inflight_total" => limits.max_inflight_total = convert::int(v)?,
                        "max_msgs" => limits.max_msgs = convert::int(v)?,
                        "timeout" => limits.timeout = duration_or_bare_error(v, report)?,
                        _ if field.node.used_as_variable() => {}
                        _ => report.unknown(field),
                    }
                }
            }
            _ if inner.node.used_as_variable() => {}
            _ => report.unknown(inner),
        }
    }
    Ok(None)
}

fn map_expected(what: &str, v: &Value) -> String {
    format!("Expected a map to define {what}, got {}", v.go_type_name())
}

/// A duration string whose parse error Go appends bare, without a position.
fn duration_or_bare_error(v: &Value, report: &mut Report) -> Result<Option<Duration>, String> {
    let text = convert::string(v)?;
    match natrium_gofmt::parse_go_duration(&text) {
        Ok(d) => Ok(Some(nanos(d))),
        Err(err) => {
            report.errors.push(ConfError::Unpositioned { message: err });
            Ok(None)
        }
    }
}

/// `tpm { keys_file, encryption_password, srk_password, pcr, cipher }`; results as [`limits`].
fn tpm(tpm: &Entry, report: &mut Report) -> Result<Option<String>, String> {
    // Go's message names the limits here too.
    let Value::Map(block) = &tpm.node.value else {
        return Ok(Some(map_expected("JetStreamLimits", &tpm.node.value)));
    };
    for inner in block {
        let v = &inner.node.value;
        match inner.key.to_ascii_lowercase().as_str() {
            "keys_file" | "encryption_password" | "srk_password" => {
                convert::string(v)?;
            }
            "pcr" => {
                convert::int(v)?;
            }
            "cipher" => {
                if let Some(message) = cipher(v)? {
                    report.invalid(inner, message);
                    return Ok(Some(String::new()));
                }
            }
            _ if inner.node.used_as_variable() => {}
            _ => report.unknown(inner),
        }
    }
    Ok(None)
}

/// `sync`: a duration string, or (with Go's warning) a number of seconds. A string that does
/// not parse is an error at the key; Go reads on.
fn sync_duration(inner: &Entry, report: &mut Report) -> Result<Option<Duration>, String> {
    match &inner.node.value {
        Value::Str(text) => match natrium_gofmt::parse_go_duration(text) {
            Ok(d) => Ok(Some(nanos(d))),
            Err(err) => {
                report.invalid(inner, format!("error parsing {}: {err}", inner.key));
                Ok(None)
            }
        },
        other => {
            report.warn(
                inner,
                format!(
                    "invalid use of field {}: {} should be converted to a duration",
                    go_quote(&inner.key),
                    inner.key
                ),
            );
            let secs = convert::int(other)?;
            Ok(Some(Duration::from_secs(secs.max(0) as u64)))
        }
    }
}

/// Go's `time.Duration` nanoseconds as a `Duration` (negative as zero).
fn nanos(n: i64) -> Duration {
    Duration::from_nanos(n.max(0) as u64)
}

/// Go's `getStorageSize`: an integer, or a string of decimal digits ending in `K`, `M`, `G`
/// or `T` (powers of 1024; the empty string is 0).
pub(super) fn storage_size(v: &Value) -> Result<i64, String> {
    let text = match v {
        Value::Int(n) => return Ok(*n),
        Value::Str(s) => s,
        _ => return Err("must be int64 or string".to_owned()),
    };
    let Some(&last) = text.as_bytes().last() else {
        return Ok(0);
    };
    let prefix = text.get(..text.len() - 1).unwrap_or("");
    let num = parse_decimal(prefix)?;
    let shift = match last {
        b'K' => 10,
        b'M' => 20,
        b'G' => 30,
        b'T' => 40,
        _ => return Err("sizes defined as strings must end in K, M, G, T".to_owned()),
    };
    Ok(num.wrapping_shl(shift))
}

/// `strconv.ParseInt(s, 10, 64)` with its error text.
fn parse_decimal(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.strip_prefix('+').unwrap_or(s).parse().map_err(|_| {
        format!(
            "strconv.ParseInt: parsing {}: value out of range",
            go_quote(s)
        )
    })
}

/// Go's `%s` of a value that is not a string: `%!s(int64=5)`.
fn go_percent_s(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        other => format!("%!s({}={})", other.go_type_name(), go_plus_v(other)),
    }
}

/// An account's `jetstream`: `None` when off. Go reports a bad word or type without a
/// position, as its account reader hands the bare value on.
pub(super) fn account(e: &Entry, report: &mut Report) -> Option<JsAccountLimits> {
    let unpositioned = |report: &mut Report, message: String| {
        report.errors.push(ConfError::Unpositioned { message });
    };
    match &e.node.value {
        Value::Bool(on) => on.then(JsAccountLimits::default),
        Value::Str(word) => {
            if let Some(on) = on_off(word) {
                on.then(JsAccountLimits::default)
            } else {
                unpositioned(report, bad_word(word));
                None
            }
        }
        Value::Map(block) => Some(account_limits(block, report)),
        other => {
            unpositioned(report, bad_type(other));
            None
        }
    }
}

fn account_limits(block: &Map, report: &mut Report) -> JsAccountLimits {
    let mut limits = JsAccountLimits::default();
    for inner in block {
        let v = &inner.node.value;
        let key = inner.key.to_ascii_lowercase();
        let refused = match key.as_str() {
            "max_memory"
            | "max_mem"
            | "mem"
            | "memory"
            | "max_store"
            | "max_file"
            | "max_disk"
            | "store"
            | "disk"
            | "max_streams"
            | "streams"
            | "max_consumers"
            | "consumers"
            | "mem_max_stream_bytes"
            | "memory_max_stream_bytes"
            | "disk_max_stream_bytes"
            | "store_max_stream_bytes"
            | "max_ack_pending" => {
                if let Value::Int(n) = v {
                    set_account_limit(&mut limits, &key, *n);
                    None
                } else {
                    Some(format!(
                        "Expected a parseable size for {}, got {}",
                        go_quote(&inner.key),
                        go_plus_v(v)
                    ))
                }
            }
            "max_bytes_required" | "max_stream_bytes" | "max_bytes" => {
                if let Value::Bool(b) = v {
                    limits.max_bytes_required = *b;
                    None
                } else {
                    Some(format!(
                        "Expected a parseable bool for {}, got {}",
                        go_quote(&inner.key),
                        go_plus_v(v)
                    ))
                }
            }
            "cluster_traffic" => cluster_traffic(&inner.key, v),
            _ if inner.node.used_as_variable() => None,
            _ => {
                report.unknown(inner);
                None
            }
        };
        if let Some(message) = refused {
            report.invalid(inner, message);
            return limits;
        }
    }
    limits
}

fn set_account_limit(limits: &mut JsAccountLimits, key: &str, n: i64) {
    match key {
        "max_memory" | "max_mem" | "mem" | "memory" => limits.max_memory = n,
        "max_store" | "max_file" | "max_disk" | "store" | "disk" => limits.max_store = n,
        "max_streams" | "streams" => limits.max_streams = n,
        "max_consumers" | "consumers" => limits.max_consumers = n,
        "mem_max_stream_bytes" | "memory_max_stream_bytes" => {
            limits.memory_max_stream_bytes = n;
        }
        "disk_max_stream_bytes" | "store_max_stream_bytes" => {
            limits.store_max_stream_bytes = n;
        }
        "max_ack_pending" => limits.max_ack_pending = n,
        _ => {}
    }
}

fn cluster_traffic(key: &str, v: &Value) -> Option<String> {
    match v {
        Value::Str(s) if matches!(s.as_str(), "system" | "owner" | "") => None,
        Value::Str(_) => Some(format!(
            "Expected 'system' or 'owner' string value for {}, got {}",
            go_quote(key),
            go_plus_v(v)
        )),
        other => Some(format!(
            "Expected either 'system' or 'owner' string value for {}, got {}",
            go_quote(key),
            go_plus_v(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jetstream_storage_size_like_go() {
        let s = |t: &str| storage_size(&Value::Str(t.to_owned()));
        assert_eq!(s("1G"), Ok(1 << 30));
        assert_eq!(s("2K"), Ok(2048));
        assert_eq!(s(""), Ok(0));
        assert_eq!(
            s("1X"),
            Err("sizes defined as strings must end in K, M, G, T".into())
        );
        assert_eq!(
            s("abc"),
            Err("strconv.ParseInt: parsing \"ab\": invalid syntax".into())
        );
        assert_eq!(
            s("1g"),
            Err("sizes defined as strings must end in K, M, G, T".into())
        );
        assert_eq!(storage_size(&Value::Int(5)), Ok(5));
        assert_eq!(
            storage_size(&Value::Bool(true)),
            Err("must be int64 or string".into())
        );
    }
}
