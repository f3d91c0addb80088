//! Parses one client op from the front of a read buffer, without state between calls.
//!
//! The runtime keeps the unparsed bytes, calls [`parse_client_op`], advances by `consumed` after
//! an op, and reads more after `Incomplete`. Re-parsing a partial control line is cheap (it is at
//! most `max_control_line` plus a verb long), so no state survives between calls and a frame may
//! be split anywhere.
//!
//! Rules below were observed on Go `nats-server` v2.15.2 (see `docs/client-protocol.md`):
//! - Verbs are case-insensitive. `PUB`, `HPUB`, `SUB`, `UNSUB` and `-ERR` must be followed by a
//!   space or tab (`PUB\r\n` and `PUBfoo` are unknown ops). `CONNECT` and `INFO` take whatever
//!   follows, blanks skipped, as their argument (`CONNECTX {}` hands `X {}` to the JSON decoder).
//!   `PING`, `PONG` and `+OK` ignore anything up to the line end (`PINGX` is a PING).
//! - A line ends at LF; one CR right before it is dropped, so a bare LF works too.
//! - The limit `max_control_line` applies to the argument text: from the first non-blank after
//!   the verb to the line end, CR excluded. It is checked as soon as that many bytes are pending,
//!   line end or not. Go does not bound the blanks between a verb and its arguments nor the junk
//!   after `PING`/`PONG`/`+OK`, because it discards them as they stream by; this parser must
//!   keep them buffered, so it applies the same limit to each of those runs too.
//! - A payload must be followed by CR LF; the first wrong byte is an error at once.

use memchr::memchr;

use crate::args::{is_blank, parse_size, split_last_field, subject_and_reply, subscribe_fields};
use crate::error::{ProtoError, Verb};
use crate::limits::ParserLimits;

/// One op sent by a client, borrowing from the read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientOp<'a> {
    /// `CONNECT <json>`: the text after the verb and blanks, without the line end. It may be
    /// empty or not JSON at all; Go closes without `-ERR` when it does not decode.
    Connect(&'a [u8]),
    /// `PUB` or `HPUB`.
    Pub(Publish<'a>),
    /// `SUB subject [queue] sid`.
    Sub {
        /// Subject as sent, not validated here.
        subject: &'a [u8],
        /// Queue group, if given.
        queue: Option<&'a [u8]>,
        /// Subscription id: opaque bytes (Go accepts `abc`).
        sid: &'a [u8],
    },
    /// `UNSUB sid [max_msgs]`.
    Unsub {
        /// Subscription id.
        sid: &'a [u8],
        /// `Some(n)` (n > 0): remove after n more deliveries. `None`: remove now. Go removes at
        /// once when the max is absent, `0`, or not a valid size (`-1`, `x`, ten digits).
        max_msgs: Option<u64>,
    },
    /// `PING`, with anything up to the line end ignored.
    Ping,
    /// `PONG`, with anything up to the line end ignored.
    Pong,
    /// `INFO <json>` from the peer (Go ignores valid JSON and closes silently on invalid JSON).
    Info(&'a [u8]),
    /// `+OK` from the peer, with anything up to the line end ignored.
    Ok,
    /// `-ERR <text>` from the peer; Go logs it and closes the connection without replying.
    Err(&'a [u8]),
}

/// A message published by `PUB` or `HPUB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Publish<'a> {
    /// Subject as sent, not validated here.
    pub subject: &'a [u8],
    /// Reply subject, if given.
    pub reply: Option<&'a [u8]>,
    /// `Some` exactly for `HPUB`: the header block including its trailing CR LF CR LF. It is
    /// empty for `HPUB` with header size 0; Go then delivers a plain `MSG`.
    pub headers: Option<&'a [u8]>,
    /// Message body after the headers, without the trailing CR LF.
    pub payload: &'a [u8],
}

/// What [`parse_client_op`] found at the front of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// A whole op; drop `consumed` bytes (never more than the buffer held) before the next call.
    Op {
        /// The op.
        op: ClientOp<'a>,
        /// Bytes the op occupied, line end and payload included.
        consumed: usize,
    },
    /// More bytes are needed. `min_total` is the length the buffer must reach before the op can
    /// complete: exact once a `PUB`/`HPUB` line announced its size, else `buf.len() + 1`.
    Incomplete {
        /// Smallest buffer length worth parsing again.
        min_total: usize,
    },
}

/// Parses one client op from the start of `buf`.
///
/// Errors are final: Go closes the connection for each of them (see
/// [`ProtoError::wire_error`] for the `-ERR` it sends first, if any).
pub fn parse_client_op<'a>(buf: &'a [u8], limits: &ParserLimits) -> Result<Parsed<'a>, ProtoError> {
    let Some(&first) = buf.first() else {
        return Ok(incomplete(buf));
    };
    match first.to_ascii_uppercase() {
        b'P' => match buf.get(1).map(u8::to_ascii_uppercase) {
            Some(b'U') => parse_pub(buf, limits),
            Some(b'I') => bare_verb(buf, b"PING", ClientOp::Ping, limits),
            Some(b'O') => bare_verb(buf, b"PONG", ClientOp::Pong, limits),
            Some(_) => Err(ProtoError::UnknownOp),
            None => Ok(incomplete(buf)),
        },
        b'H' => parse_hpub(buf, limits),
        b'S' => parse_sub(buf, limits),
        b'U' => parse_unsub(buf, limits),
        b'C' => text_verb(buf, b"CONNECT", After::Anything, ClientOp::Connect, limits),
        b'I' => text_verb(buf, b"INFO", After::Anything, ClientOp::Info, limits),
        b'-' => text_verb(buf, b"-ERR", After::Blank, ClientOp::Err, limits),
        b'+' => bare_verb(buf, b"+OK", ClientOp::Ok, limits),
        _ => Err(ProtoError::UnknownOp),
    }
}

#[inline]
fn incomplete(buf: &[u8]) -> Parsed<'_> {
    Parsed::Incomplete {
        min_total: buf.len().saturating_add(1),
    }
}

/// What must follow a verb before its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    /// At least one space or tab.
    Blank,
    /// Anything; blanks, if any, are skipped.
    Anything,
}

/// A complete control line.
struct Line<'a> {
    /// Argument text: after the verb and its blanks, without CR LF.
    args: &'a [u8],
    /// Index just past the LF.
    end: usize,
}

/// Checks that `buf` starts with `verb` (upper case, compared case-insensitively).
/// `Ok(false)`: the buffer ends inside a still-matching verb.
#[inline]
fn match_verb(buf: &[u8], verb: &[u8]) -> Result<bool, ProtoError> {
    for (i, &want) in verb.iter().enumerate() {
        match buf.get(i) {
            None => return Ok(false),
            Some(&b) if b.to_ascii_uppercase() == want => {}
            Some(_) => return Err(ProtoError::UnknownOp),
        }
    }
    Ok(true)
}

/// Position of the first LF in `s`. Control lines are short (a PUB line is ~20 bytes), where
/// the call into `memchr`'s CPU-dispatched search costs more than the search itself, so the
/// first 64 bytes are scanned eight at a time in plain code.
#[inline]
fn find_lf(s: &[u8]) -> Option<usize> {
    const LF: u64 = u64::from_ne_bytes([b'\n'; 8]);
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SHORT_BYTES: usize = 64;
    let mut chunks = s.chunks_exact(8);
    for (k, chunk) in chunks.by_ref().take(SHORT_BYTES / 8).enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let x = word ^ LF;
        // Classic zero-byte test; the lowest flagged byte is always a true match.
        let found = x.wrapping_sub(ONES) & !x & HIGHS;
        if found != 0 {
            return Some(k * 8 + (found.trailing_zeros() / 8) as usize);
        }
    }
    let scanned = s.len().min(SHORT_BYTES) / 8 * 8;
    let rest = s.get(scanned..).unwrap_or_default();
    if scanned < SHORT_BYTES {
        return rest.iter().position(|&b| b == b'\n').map(|i| scanned + i);
    }
    memchr(b'\n', rest).map(|i| scanned + i)
}

/// Length of `pending` that counts towards `max_control_line` while no LF has arrived: a final
/// CR may be the start of the line end, so it does not count.
#[inline]
fn pending_len(pending: &[u8]) -> usize {
    pending.strip_suffix(b"\r").unwrap_or(pending).len()
}

/// Finds the control line of `verb`. `Ok(None)`: not complete yet (and within limits).
#[inline]
fn control_line<'a>(
    buf: &'a [u8],
    verb: &[u8],
    after: After,
    limits: &ParserLimits,
) -> Result<Option<Line<'a>>, ProtoError> {
    if !match_verb(buf, verb)? {
        return Ok(None);
    }
    let rest = buf.get(verb.len()..).unwrap_or_default();
    if after == After::Blank {
        match rest.first() {
            None => return Ok(None),
            Some(&b) if is_blank(b) => {}
            Some(_) => return Err(ProtoError::UnknownOp),
        }
    }
    let Some(blanks) = rest.iter().position(|&b| !is_blank(b)) else {
        // Only blanks so far; see the module doc for why their run is bounded.
        return if rest.len() > limits.max_control_line {
            Err(ProtoError::ControlLineTooLong)
        } else {
            Ok(None)
        };
    };
    if blanks > limits.max_control_line {
        return Err(ProtoError::ControlLineTooLong);
    }
    let args_start = verb.len() + blanks;
    let tail = buf.get(args_start..).unwrap_or_default();
    let Some(lf) = find_lf(tail) else {
        return if pending_len(tail) > limits.max_control_line {
            Err(ProtoError::ControlLineTooLong)
        } else {
            Ok(None)
        };
    };
    let line = tail.get(..lf).unwrap_or_default();
    let args = line.strip_suffix(b"\r").unwrap_or(line);
    if args.len() > limits.max_control_line {
        return Err(ProtoError::ControlLineTooLong);
    }
    Ok(Some(Line {
        args,
        end: args_start + lf + 1,
    }))
}

/// `PING`, `PONG`, `+OK`: the verb, then anything up to LF.
fn bare_verb<'a>(
    buf: &'a [u8],
    verb: &[u8],
    op: ClientOp<'a>,
    limits: &ParserLimits,
) -> Result<Parsed<'a>, ProtoError> {
    if !match_verb(buf, verb)? {
        return Ok(incomplete(buf));
    }
    let tail = buf.get(verb.len()..).unwrap_or_default();
    // The junk before LF is bounded whether or not the LF has arrived, so that where a read
    // happened to end cannot change the outcome.
    if let [b'\r', b'\n', ..] = tail {
        return Ok(Parsed::Op {
            op,
            consumed: verb.len() + 2,
        });
    }
    let (junk, found) = match find_lf(tail) {
        Some(lf) => (tail.get(..lf).unwrap_or_default(), Some(lf)),
        None => (tail, None),
    };
    if pending_len(junk) > limits.max_control_line {
        return Err(ProtoError::ControlLineTooLong);
    }
    match found {
        Some(lf) => Ok(Parsed::Op {
            op,
            consumed: verb.len() + lf + 1,
        }),
        None => Ok(incomplete(buf)),
    }
}

/// `CONNECT`, `INFO`, `-ERR`: the whole argument text is the op.
fn text_verb<'a>(
    buf: &'a [u8],
    verb: &[u8],
    after: After,
    make: fn(&'a [u8]) -> ClientOp<'a>,
    limits: &ParserLimits,
) -> Result<Parsed<'a>, ProtoError> {
    match control_line(buf, verb, after, limits)? {
        Some(line) => Ok(Parsed::Op {
            op: make(line.args),
            consumed: line.end,
        }),
        None => Ok(incomplete(buf)),
    }
}

/// Where a payload of `size` bytes starting at `start` stands in `buf`.
enum Body<'a> {
    /// Payload and the index just past its CR LF.
    Complete(&'a [u8], usize),
    /// The buffer must reach this length.
    Incomplete(usize),
}

#[inline]
fn body(buf: &[u8], start: usize, size: usize) -> Result<Body<'_>, ProtoError> {
    // `size` has at most nine digits and `start` is an index into `buf`, so these cannot
    // overflow on 64-bit targets; checked anyway because both come from the peer.
    let too_large = ProtoError::PayloadTooLarge {
        size,
        max: usize::MAX,
    };
    let end = start.checked_add(size).ok_or(too_large)?;
    let total = end.checked_add(2).ok_or(too_large)?;
    // Check whatever part of the terminator has arrived, so garbage fails early, as in Go.
    match buf.get(end) {
        None => return Ok(Body::Incomplete(total)),
        Some(b'\r') => {}
        Some(_) => return Err(ProtoError::PayloadNotTerminated),
    }
    match buf.get(end + 1) {
        None => return Ok(Body::Incomplete(total)),
        Some(b'\n') => {}
        Some(_) => return Err(ProtoError::PayloadNotTerminated),
    }
    match buf.get(start..end) {
        Some(payload) => Ok(Body::Complete(payload, total)),
        None => Ok(Body::Incomplete(total)),
    }
}

fn parse_pub<'a>(buf: &'a [u8], limits: &ParserLimits) -> Result<Parsed<'a>, ProtoError> {
    let Some(line) = control_line(buf, b"PUB", After::Blank, limits)? else {
        return Ok(incomplete(buf));
    };
    let bad_args = ProtoError::BadArgs(Verb::Pub);
    let (head, size) = split_last_field(line.args).ok_or(bad_args)?;
    let (subject, reply) = subject_and_reply(head).ok_or(bad_args)?;
    let size = parse_size(size).ok_or(ProtoError::BadSize(Verb::Pub))?;
    if size > limits.max_payload {
        return Err(ProtoError::PayloadTooLarge {
            size,
            max: limits.max_payload,
        });
    }
    match body(buf, line.end, size)? {
        Body::Incomplete(min_total) => Ok(Parsed::Incomplete { min_total }),
        Body::Complete(payload, consumed) => Ok(Parsed::Op {
            op: ClientOp::Pub(Publish {
                subject,
                reply,
                headers: None,
                payload,
            }),
            consumed,
        }),
    }
}

fn parse_hpub<'a>(buf: &'a [u8], limits: &ParserLimits) -> Result<Parsed<'a>, ProtoError> {
    let Some(line) = control_line(buf, b"HPUB", After::Blank, limits)? else {
        return Ok(incomplete(buf));
    };
    let bad_args = ProtoError::BadArgs(Verb::Hpub);
    let (head, total) = split_last_field(line.args).ok_or(bad_args)?;
    let (head, hdr) = split_last_field(head).ok_or(bad_args)?;
    let (subject, reply) = subject_and_reply(head).ok_or(bad_args)?;
    let hdr = parse_size(hdr).ok_or(ProtoError::BadSize(Verb::Hpub))?;
    let total = parse_size(total).ok_or(ProtoError::BadSize(Verb::Hpub))?;
    // Go checks the header/total relation before the payload limit.
    if hdr > total {
        return Err(ProtoError::HeaderSizeExceedsTotal { hdr, total });
    }
    if total > limits.max_payload {
        return Err(ProtoError::PayloadTooLarge {
            size: total,
            max: limits.max_payload,
        });
    }
    match body(buf, line.end, total)? {
        Body::Incomplete(min_total) => Ok(Parsed::Incomplete { min_total }),
        Body::Complete(all, consumed) => {
            let (headers, payload) = all.split_at_checked(hdr).unwrap_or((all, &[]));
            Ok(Parsed::Op {
                op: ClientOp::Pub(Publish {
                    subject,
                    reply,
                    headers: Some(headers),
                    payload,
                }),
                consumed,
            })
        }
    }
}

fn parse_sub<'a>(buf: &'a [u8], limits: &ParserLimits) -> Result<Parsed<'a>, ProtoError> {
    let Some(line) = control_line(buf, b"SUB", After::Blank, limits)? else {
        return Ok(incomplete(buf));
    };
    let mut fields = subscribe_fields(line.args);
    let op = match (fields.next(), fields.next(), fields.next()) {
        (Some(subject), Some(sid), None) => ClientOp::Sub {
            subject,
            queue: None,
            sid,
        },
        (Some(subject), Some(queue), Some(sid)) if fields.next().is_none() => ClientOp::Sub {
            subject,
            queue: Some(queue),
            sid,
        },
        _ => return Err(ProtoError::BadArgs(Verb::Sub)),
    };
    Ok(Parsed::Op {
        op,
        consumed: line.end,
    })
}

fn parse_unsub<'a>(buf: &'a [u8], limits: &ParserLimits) -> Result<Parsed<'a>, ProtoError> {
    let Some(line) = control_line(buf, b"UNSUB", After::Blank, limits)? else {
        return Ok(incomplete(buf));
    };
    let mut fields = subscribe_fields(line.args);
    let (Some(sid), max, None) = (fields.next(), fields.next(), fields.next()) else {
        return Err(ProtoError::BadArgs(Verb::Unsub));
    };
    // An unreadable max is not an error in Go: the subscription goes at once.
    let max_msgs = max
        .and_then(parse_size)
        .filter(|&n| n > 0)
        .map(|n| n as u64);
    Ok(Parsed::Op {
        op: ClientOp::Unsub { sid, max_msgs },
        consumed: line.end,
    })
}

#[cfg(test)]
mod tests;
