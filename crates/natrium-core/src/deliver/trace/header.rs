//! Reading a message's header block for tracing, the way Go's server reads it: a block must
//! start with a bare `NATS/1.0` line; each `Name: value` line with a non-empty name and value
//! counts (names keep their case, values lose surrounding blanks); `Nats-Trace-Dest` is
//! matched exactly, `traceparent` in any case.
//!
//! [`may_trace`] is the publish path's only cost for messages with headers that are not
//! traced: two substring searches over the block.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use nats_proto::headers::{write_field, write_version_line};

/// `Nats-Trace-Dest`: the subject trace events go to.
pub const TRACE_DEST: &[u8] = b"Nats-Trace-Dest";
/// `Nats-Trace-Only`: trace without delivering (`1`, `true`, `on`).
pub const TRACE_ONLY: &[u8] = b"Nats-Trace-Only";
/// A header from older servers' cross-account tracing; its presence disables tracing.
pub const TRACE_ORIGIN_ACCOUNT: &[u8] = b"Nats-Trace-Origin-Account";
/// The W3C trace context header; its sampled flag triggers tracing in accounts with
/// `msg_trace`.
pub const TRACE_PARENT: &[u8] = b"traceparent";
/// The `Nats-Trace-Dest` value that turns tracing off (it is not a valid subject).
pub const TRACE_DEST_DISABLED: &[u8] = b"trace disabled";

const BLOCK_START: &[u8] = b"NATS/1.0\r\n";

/// Whether the header block may ask for tracing; false means it certainly does not. A
/// `traceparent` counts only where `parent` says the account traces them.
#[inline]
pub fn may_trace(block: &[u8], parent: bool) -> bool {
    static DEST: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(TRACE_DEST));
    DEST.find(block).is_some() || (parent && contains_traceparent(block))
}

fn contains_traceparent(block: &[u8]) -> bool {
    let Some(last) = block.len().checked_sub(TRACE_PARENT.len()) else {
        return false;
    };
    memchr::memchr2_iter(b't', b'T', block)
        .take_while(|&at| at <= last)
        .any(|at| {
            block
                .get(at..at + TRACE_PARENT.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(TRACE_PARENT))
        })
}

/// The header fields Go reports in a trace, and which trigger was found.
#[derive(Debug, Default)]
pub struct TraceHeaders {
    pub fields: BTreeMap<String, Vec<String>>,
    /// `Nats-Trace-Dest` with a value other than `trace disabled`.
    pub dest_found: bool,
    /// A `traceparent` whose flags have the sampled bit.
    pub sampled_parent: bool,
}

impl TraceHeaders {
    /// Reads `block`; `None` when it asks for no tracing (or tracing was disabled upstream).
    pub fn parse(block: &[u8]) -> Option<Self> {
        let mut rest = block.strip_prefix(BLOCK_START)?;
        let mut out = Self::default();
        let mut pairs: Vec<(&[u8], &[u8])> = Vec::new();
        while let Some(colon) = memchr::memchr(b':', rest) {
            let key = rest.get(..colon).unwrap_or_default();
            let after = rest.get(colon + 1..).unwrap_or_default();
            let Some(end) = memchr::memmem::find(after, b"\r\n") else {
                break;
            };
            let value = trim_blanks(after.get(..end).unwrap_or_default());
            rest = after.get(end + 2..).unwrap_or_default();
            if key.is_empty() || value.is_empty() {
                continue;
            }
            if !out.sampled_parent && key.eq_ignore_ascii_case(TRACE_PARENT) {
                out.sampled_parent = is_sampled(value);
            } else if !out.dest_found && key == TRACE_DEST {
                if value == TRACE_DEST_DISABLED {
                    return None;
                }
                out.dest_found = true;
            }
            pairs.push((key, value));
        }
        if !out.dest_found && !out.sampled_parent {
            return None;
        }
        for (key, value) in pairs {
            out.fields
                .entry(String::from_utf8_lossy(key).into_owned())
                .or_default()
                .push(String::from_utf8_lossy(value).into_owned());
        }
        Some(out)
    }

    /// The first value of `name` (exact case), if any.
    pub fn first(&self, name: &[u8]) -> Option<&str> {
        let name = std::str::from_utf8(name).ok()?;
        self.fields
            .get(name)
            .and_then(|v| v.first())
            .map(String::as_str)
    }
}

fn trim_blanks(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Whether a `traceparent` value (`version-traceid-parentid-flags`) has the sampled flag.
fn is_sampled(value: &[u8]) -> bool {
    let mut parts = value.split(|&b| b == b'-');
    let (Some(_), Some(_), Some(_), Some(flags), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    flags.len() == 2
        && std::str::from_utf8(flags)
            .ok()
            .and_then(|f| u8::from_str_radix(f, 16).ok())
            .is_some_and(|f| f & 1 == 1)
}

/// `block` with every `name` field removed and `name: value` added last, as Go rewrites a
/// header (an absent or empty block becomes a fresh one).
pub fn with_field(block: Option<&[u8]>, name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(block.map_or(0, <[u8]>::len) + name.len() + value.len() + 16);
    let body = block
        .and_then(|b| b.strip_suffix(b"\r\n"))
        .filter(|b| b.ends_with(b"\r\n"));
    match body {
        Some(body) => {
            let mut lines = body.split_inclusive(|&b| b == b'\n');
            if let Some(first) = lines.next() {
                out.extend_from_slice(first);
            }
            for line in lines {
                let named = line
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.first() == Some(&b':'));
                if !named {
                    out.extend_from_slice(line);
                }
            }
        }
        None => write_version_line(&mut out, None, b""),
    }
    write_field(&mut out, name, value);
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn msg_trace_headers_found_as_go_reads_them() {
        let block =
            b"NATS/1.0\r\nNats-Trace-Dest: \r\nX-A: 1\r\nX-A:  2 \r\nNats-Trace-Dest: t\r\n\r\n";
        assert!(may_trace(block, false));
        let h = TraceHeaders::parse(block).unwrap();
        assert!(h.dest_found && !h.sampled_parent);
        assert_eq!(h.first(TRACE_DEST), Some("t"));
        assert_eq!(h.fields["X-A"], ["1", "2"]);
        // Go matches `Nats-Trace-Dest` exactly.
        assert!(TraceHeaders::parse(b"NATS/1.0\r\nnats-trace-dest: t\r\n\r\n").is_none());
        assert!(
            TraceHeaders::parse(b"NATS/1.0\r\nNats-Trace-Dest: trace disabled\r\n\r\n").is_none()
        );
        // A status line is not a bare version line.
        assert!(TraceHeaders::parse(b"NATS/1.0 503\r\nNats-Trace-Dest: t\r\n\r\n").is_none());
        assert!(!may_trace(b"NATS/1.0\r\nX: y\r\n\r\n", true));
    }

    #[test]
    fn msg_trace_parent_needs_the_sampled_flag() {
        let sampled = b"NATS/1.0\r\nTraceParent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03\r\n\r\n";
        assert!(may_trace(sampled, true) && !may_trace(sampled, false));
        let h = TraceHeaders::parse(sampled).unwrap();
        assert!(h.sampled_parent && !h.dest_found);
        let unsampled = b"NATS/1.0\r\ntraceparent: 00-0af7-b7ad-00\r\n\r\n";
        assert!(TraceHeaders::parse(unsampled).is_none());
        assert!(TraceHeaders::parse(b"NATS/1.0\r\ntraceparent: 00-a-b-1\r\n\r\n").is_none());
    }

    #[test]
    fn msg_trace_accept_encoding_read_as_go() {
        use crate::deliver::trace::Compression;
        let of = |v| Compression::from_accept_encoding(Some(v));
        assert_eq!(of("GZIP, deflate"), Compression::Gzip);
        assert_eq!(of("s2"), Compression::Snappy);
        assert_eq!(of("gzip, snappy"), Compression::Snappy);
        assert_eq!(of("br"), Compression::Identity);
        assert_eq!(Compression::from_accept_encoding(None), Compression::None);
    }

    #[test]
    fn msg_trace_header_rewritten_last() {
        let block = b"NATS/1.0\r\nNats-Trace-Dest: t\r\nX: 1\r\n\r\n";
        assert_eq!(
            with_field(Some(block), TRACE_DEST, TRACE_DEST_DISABLED),
            b"NATS/1.0\r\nX: 1\r\nNats-Trace-Dest: trace disabled\r\n\r\n"
        );
        assert_eq!(
            with_field(None, TRACE_DEST, b"x"),
            b"NATS/1.0\r\nNats-Trace-Dest: x\r\n\r\n"
        );
    }
}
