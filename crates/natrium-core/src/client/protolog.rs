//! Log lines about the protocol a client sends, worded as Go's: parser errors (limits by
//! name, argument errors naming Go's handler and quoting the arguments, other errors with a
//! snippet of the input) and the short op summaries of trace lines.

use natrium_gofmt::go_quote_bytes as go_quote;
use nats_proto::{ClientOp, ProtoError, Verb};

use crate::limits::PROTO_SNIPPET_BYTES;

/// Logs a parser error with Go's wording: the limits by name, argument errors naming Go's
/// handler and quoting the arguments, anything else as a parser error with a snippet.
pub(super) fn log_protocol_error(prefix: &str, err: &ProtoError, rest: &[u8]) {
    let args = || go_quote(op_args(rest));
    match err {
        ProtoError::PayloadTooLarge { .. } | ProtoError::ControlLineTooLong => {
            tracing::error!("{prefix} - {err}");
        }
        ProtoError::BadArgs(verb) => {
            tracing::error!("{prefix} - {} Parse Error: {}", go_handler(*verb), args());
        }
        ProtoError::BadSize(verb) => {
            let what = match verb {
                Verb::Hpub if hpub_header_size_ok(op_args(rest)) => "Bad or Missing Total Size",
                Verb::Hpub => "Bad or Missing Header Size",
                Verb::Pub => "Bad or Missing Size",
                Verb::Sub | Verb::Unsub => "Parse Error",
            };
            tracing::error!("{prefix} - {} {what}: {}", go_handler(*verb), args());
        }
        ProtoError::HeaderSizeExceedsTotal { .. } => {
            tracing::error!(
                "{prefix} - processHeaderPub Header Size larger then TotalSize: {}",
                args()
            );
        }
        _ => tracing::error!(
            "{prefix} - Client parser ERROR: proto='{}...'",
            go_quote(proto_snippet(rest))
        ),
    }
}

/// The name of Go's handler for a verb, which its argument errors start with.
fn go_handler(verb: Verb) -> &'static str {
    match verb {
        Verb::Pub => "processPub",
        Verb::Hpub => "processHeaderPub",
        Verb::Sub => "processSub",
        Verb::Unsub => "processUnsub",
    }
}

/// The argument text of the control line at the front of `rest`: after the verb and the
/// blanks that follow it, up to the line end (a CR right before LF excluded).
fn op_args(rest: &[u8]) -> &[u8] {
    let line_end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let line = rest.get(..line_end).unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let verb_end = line
        .iter()
        .position(|b| !b.is_ascii_alphabetic())
        .unwrap_or(line.len());
    let after = line.get(verb_end..).unwrap_or_default();
    let blanks = after
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(after.len());
    after.get(blanks..).unwrap_or_default()
}

/// Whether the header-size field (second to last) of HPUB arguments is a valid size, so that
/// the bad one is the total size.
fn hpub_header_size_ok(args: &[u8]) -> bool {
    let fields: Vec<&[u8]> = args
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|f| !f.is_empty())
        .collect();
    fields.len() >= 2
        && fields
            .get(fields.len() - 2)
            .is_some_and(|f| (1..=9).contains(&f.len()) && f.iter().all(u8::is_ascii_digit))
}

/// What Go shows of the input at a parser error: up to 32 bytes, minus the last byte when the
/// input ends sooner (Go's snippet stops one short at the end of its buffer).
fn proto_snippet(rest: &[u8]) -> &[u8] {
    let end = if rest.len() >= PROTO_SNIPPET_BYTES {
        PROTO_SNIPPET_BYTES
    } else {
        rest.len().saturating_sub(1)
    };
    rest.get(..end).unwrap_or_default()
}

/// A short description of an op for trace logs, Go style (`PUB foo 5`).
pub(super) fn op_summary(op: &ClientOp<'_>) -> String {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match op {
        ClientOp::Connect(json) => format!("CONNECT {}", s(json)),
        ClientOp::Pub(p) => {
            let reply = p.reply.map(|r| format!(" {}", s(r))).unwrap_or_default();
            let verb = if p.headers.is_some() { "HPUB" } else { "PUB" };
            let hdr = p.headers.map_or(0, <[u8]>::len);
            format!("{verb} {}{reply} {}", s(p.subject), hdr + p.payload.len())
        }
        ClientOp::Sub {
            subject,
            queue,
            sid,
        } => {
            let queue = queue.map(|q| format!(" {}", s(q))).unwrap_or_default();
            format!("SUB {}{queue} {}", s(subject), s(sid))
        }
        ClientOp::Unsub { sid, max_msgs } => {
            let max = max_msgs.map(|m| format!(" {m}")).unwrap_or_default();
            format!("UNSUB {}{max}", s(sid))
        }
        ClientOp::Ping => "PING".to_owned(),
        ClientOp::Pong => "PONG".to_owned(),
        ClientOp::Info(_) => "INFO".to_owned(),
        ClientOp::Ok => "+OK".to_owned(),
        ClientOp::Err(e) => format!("-ERR {}", s(e)),
    }
}
