//! The reply subject of a fast batch message (`allow_batched`), read as Go v2.15.2 reads it:
//! `<prefix>.<id>.<flow>.<ok|fail>.<batch seq>.<op>.$FI`, tokens taken from the right. A reply
//! ending in `.$FI` whose tokens do not fit is still a fast batch message, refused with
//! "batch publish pattern is invalid" (or "disabled" on a stream without `allow_batched`).

use std::borrow::Cow;

use nats_proto::headers::{Headers, NATS_REQUEST_INFO};

/// The suffix that sends a publish down the fast batch path.
pub const SUFFIX: &[u8] = b".$FI";

/// The prefix of a reply mapped by a service import.
const SERVICE_REPLY_PREFIX: &[u8] = b"_R_.";

/// Go's default flow (acks every N messages) when the reply's is zero or not a number.
const FLOW_DEFAULT: u16 = 10;

/// What a fast batch message asks (the `<op>` token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `0`: the first message (batch sequence 1).
    Start,
    /// `1`: a later message.
    Append,
    /// `2`: this message is the last, and commits the batch.
    Commit,
    /// `3`: the batch ends before this message, which is not stored.
    CommitEob,
    /// `4`: no message; asks for the flow state again (a gap is reported).
    Ping,
}

/// A well-formed fast batch reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastReply<'a> {
    pub id: &'a [u8],
    /// The client's largest flow: the server acks at least every this many messages.
    pub flow: u16,
    /// `ok`: a gap is reported and the batch goes on; `fail`: a gap ends the batch.
    pub gap_ok: bool,
    pub seq: u64,
    pub op: Op,
}

impl FastReply<'_> {
    pub fn commits(&self) -> bool {
        matches!(self.op, Op::Commit | Op::CommitEob)
    }
}

/// How a publish's reply subject reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern<'a> {
    /// Not a fast batch message.
    No,
    /// Ends in `.$FI` but its tokens do not fit.
    Invalid,
    Fast(FastReply<'a>),
}

/// The reply a fast batch message is read from: its own, or, when it came through a service
/// import (a `_R_.` reply), the original one `Nats-Request-Info` carries.
pub fn original<'a>(reply: Option<&'a [u8]>, headers: Option<&[u8]>) -> Option<Cow<'a, [u8]>> {
    let reply = reply?;
    if reply.len() > SUFFIX.len() && reply.ends_with(SUFFIX) {
        return Some(Cow::Borrowed(reply));
    }
    if !reply.starts_with(SERVICE_REPLY_PREFIX) {
        return None;
    }
    let block = headers.filter(|b| !b.is_empty())?;
    let parsed = Headers::parse(block).ok()?;
    let info = parsed.get(NATS_REQUEST_INFO)?;
    let info: RequestInfo = serde_json::from_slice(info).ok()?;
    let original = info.reply?.into_bytes();
    (original.len() > SUFFIX.len() && original.ends_with(SUFFIX)).then_some(Cow::Owned(original))
}

/// The one field of `Nats-Request-Info` read here.
#[derive(serde::Deserialize)]
struct RequestInfo {
    reply: Option<String>,
}

/// Reads `reply` (none: not a fast batch message), as [`original`] gives it.
pub fn read(reply: Option<&[u8]>) -> Pattern<'_> {
    let Some(reply) = reply else {
        return Pattern::No;
    };
    let Some(rest) = reply.strip_suffix(SUFFIX).filter(|r| !r.is_empty()) else {
        return Pattern::No;
    };
    parse(rest).map_or(Pattern::Invalid, Pattern::Fast)
}

/// The tokens before `.$FI`, last first.
fn parse(rest: &[u8]) -> Option<FastReply<'_>> {
    let (rest, op) = last_token(rest)?;
    let op = match go_int(op) {
        0 => Op::Start,
        1 => Op::Append,
        2 => Op::Commit,
        3 => Op::CommitEob,
        4 => Op::Ping,
        _ => return None,
    };
    let (rest, seq) = last_token(rest)?;
    let seq = go_uint(seq).filter(|&s| s != 0 && s != u64::MAX)?;
    let fits = match op {
        Op::Start => seq == 1,
        Op::Append | Op::CommitEob => seq > 1,
        Op::Commit | Op::Ping => true,
    };
    if !fits {
        return None;
    }
    let (rest, gap) = last_token(rest)?;
    let gap_ok = match gap {
        b"ok" => true,
        b"fail" => false,
        _ => return None,
    };
    let (rest, flow) = last_token(rest)?;
    let flow = match go_int(flow) {
        n if n <= 0 => FLOW_DEFAULT,
        n => u16::try_from(n).unwrap_or(u16::MAX),
    };
    // The id must have a token before it (the prefix).
    let (_, id) = last_token(rest)?;
    Some(FastReply {
        id,
        flow,
        gap_ok,
        seq,
        op,
    })
}

/// `(before the last '.', after it)`; none without a '.'.
fn last_token(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let dot = s.iter().rposition(|&b| b == b'.')?;
    Some((s.get(..dot)?, s.get(dot + 1..)?))
}

/// Go's `parseInt64`: ASCII digits only, else -1 (saturating instead of wrapping).
fn go_int(v: &[u8]) -> i64 {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return -1;
    }
    v.iter().fold(0i64, |n, d| {
        n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    })
}

/// Go's `parseUint64`: ASCII digits only, no overflow.
fn go_uint(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(reply: &str) -> Pattern<'_> {
        read(Some(reply.as_bytes()))
    }

    #[test]
    fn stream_batch_fast_reply_reads_go_pattern() {
        let Pattern::Fast(r) = fast("fb.uuid1.100.ok.1.0.$FI") else {
            panic!("fast");
        };
        assert_eq!(
            (r.id, r.flow, r.gap_ok, r.seq),
            (&b"uuid1"[..], 100, true, 1)
        );
        assert_eq!(r.op, Op::Start);
        let Pattern::Fast(r) = fast("a.b.id.0.fail.7.3.$FI") else {
            panic!("fast");
        };
        assert_eq!(
            (r.flow, r.gap_ok, r.op),
            (FLOW_DEFAULT, false, Op::CommitEob)
        );
        let Pattern::Fast(r) = fast("p.id.99999999.ok.5.4.$FI") else {
            panic!("fast");
        };
        assert_eq!((r.flow, r.op), (u16::MAX, Op::Ping));
        assert_eq!(fast("p.id.x.ok.1.2.$FI").ok_flow(), Some(FLOW_DEFAULT));
    }

    #[test]
    fn stream_batch_fast_reply_refuses_misfits() {
        assert_eq!(read(None), Pattern::No);
        assert_eq!(fast("_INBOX.x"), Pattern::No);
        assert_eq!(fast(".$FI"), Pattern::No);
        for bad in [
            "id.10.ok.1.0.$FI",
            "p.id.10.ok.2.0.$FI",
            "p.id.10.ok.1.1.$FI",
            "p.id.10.ok.1.3.$FI",
            "p.id.10.ok.0.2.$FI",
            "p.id.10.maybe.1.0.$FI",
            "p.id.10.ok.1.5.$FI",
            "p.id.10.ok.18446744073709551615.2.$FI",
            "x.$FI",
        ] {
            assert_eq!(fast(bad), Pattern::Invalid, "{bad}");
        }
    }

    #[test]
    fn stream_batch_fast_reply_original_through_an_import() {
        let own: &[u8] = b"fb.id.10.ok.1.0.$FI";
        assert_eq!(original(Some(own), None).as_deref(), Some(own));
        let info = b"NATS/1.0\r\nNats-Request-Info: {\"acc\":\"C\",\"reply\":\"fb.id.10.ok.1.0.$FI\"}\r\n\r\n";
        let mapped: &[u8] = b"_R_.abc.def";
        assert_eq!(original(Some(mapped), Some(info)).as_deref(), Some(own));
        assert_eq!(original(Some(b"_INBOX.x"), Some(info)), None);
        let plain = b"NATS/1.0\r\nNats-Request-Info: {\"acc\":\"C\",\"reply\":\"x\"}\r\n\r\n";
        assert_eq!(original(Some(mapped), Some(plain)), None);
        assert_eq!(original(Some(mapped), None), None);
    }

    impl Pattern<'_> {
        fn ok_flow(&self) -> Option<u16> {
            match self {
                Pattern::Fast(r) => Some(r.flow),
                _ => None,
            }
        }
    }
}
