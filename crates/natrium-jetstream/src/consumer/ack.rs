//! The ack side of delivery as bytes: the reply subject a delivered message carries
//! (`$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>`, Go's 9-token v1
//! form; Go's v2 form with the domain and account hash after `ACK` is read too), and the
//! body of an ack (`+ACK`, `-NAK` with its delay, `+WPI`, `+NXT`, `+TERM` with its reason).
//! Pure: no state, no I/O.

use std::fmt::Write as _;

use serde::Deserialize;

/// Tokens of the v1 form; the v2 form has at least [`TOKENS_V2`].
const TOKENS_V1: usize = 9;
const TOKENS_V2: usize = 11;

/// What an ack subject says about the message it acknowledges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckSubject<'a> {
    pub stream: &'a str,
    pub consumer: &'a str,
    /// The delivery count when the message was sent.
    pub delivered: u64,
    pub stream_seq: u64,
    pub consumer_seq: u64,
    /// The stored message's time (Unix nanoseconds) and the messages pending after it.
    pub timestamp_ns: i64,
    pub pending: u64,
}

/// Go's `parseAckReplyNum`: decimal digits only.
fn number(token: &str) -> Option<u64> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// Reads an ack subject; `None` when it is not one (wrong shape or a number that is not),
/// which Go's parser turns into sequence 0: ignored, and no reply.
pub fn parse_subject(subject: &str) -> Option<AckSubject<'_>> {
    let mut tokens = [""; TOKENS_V2];
    let mut count = 0;
    for token in subject.split('.') {
        if let Some(slot) = tokens.get_mut(count) {
            *slot = token;
        }
        count += 1;
    }
    if (count != TOKENS_V1 && count < TOKENS_V2) || tokens[0] != "$JS" || tokens[1] != "ACK" {
        return None;
    }
    let offset = if count >= TOKENS_V2 { 4 } else { 2 };
    let at = |i: usize| tokens.get(offset + i).copied().unwrap_or_default();
    Some(AckSubject {
        stream: at(0),
        consumer: at(1),
        delivered: number(at(2))?,
        stream_seq: number(at(3))?,
        consumer_seq: number(at(4))?,
        // Go reads these apart (`ackReplyInfo`): a bad one is 0, the ack still counts.
        timestamp_ns: number(at(5)).map_or(0, |n| i64::try_from(n).unwrap_or(0)),
        pending: number(at(6)).unwrap_or(0),
    })
}

/// The stream and consumer an ack subject names, read as a router needs them (no numbers
/// checked).
pub fn route(subject: &[u8]) -> Option<(&str, &str)> {
    let subject = std::str::from_utf8(subject).ok()?;
    let count = subject.split('.').count();
    let offset = if count >= TOKENS_V2 { 4 } else { 2 };
    let mut it = subject.split('.').skip(offset);
    Some((it.next()?, it.next()?))
}

/// The ack reply subject of a delivery: Go's v1 form, or with `v2` (`<domain>.<account
/// hash>`) its v2 form.
pub fn reply_subject(
    out: &mut String,
    v2: Option<&str>,
    stream: &str,
    consumer: &str,
    seqs: (u64, u64, u64),
    timestamp_ns: i64,
    pending: u64,
) {
    let (delivered, stream_seq, consumer_seq) = seqs;
    out.clear();
    out.push_str("$JS.ACK.");
    if let Some(prefix) = v2 {
        out.push_str(prefix);
        out.push('.');
    }
    let _ = write!(
        out,
        "{stream}.{consumer}.{delivered}.{stream_seq}.{consumer_seq}.{timestamp_ns}.{pending}"
    );
}

/// What an ack body asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckKind<'a> {
    /// `+ACK`, `+OK` or an empty body.
    Ack,
    /// `+NXT`: ack, then the rest is a next-message request answered on the ack's reply.
    Next(&'a [u8]),
    /// `-NAK`, with what follows it (a delay, maybe).
    Nak(&'a [u8]),
    /// `+WPI`: work in progress, the ack wait starts again.
    Progress,
    /// `+TERM`, with its reason (trimmed).
    Term(String),
    /// Anything else: nothing is done (Go still answers a double ack).
    Other,
}

/// Reads an ack body as Go compares them (prefixes for `+NXT`, `-NAK` and `+TERM`).
pub fn parse_body(body: &[u8]) -> AckKind<'_> {
    if body.is_empty() || body == b"+ACK" || body == b"+OK" {
        AckKind::Ack
    } else if let Some(rest) = body.strip_prefix(b"+NXT") {
        AckKind::Next(rest)
    } else if let Some(rest) = body.strip_prefix(b"-NAK") {
        AckKind::Nak(rest)
    } else if body == b"+WPI" {
        AckKind::Progress
    } else if let Some(rest) = body.strip_prefix(b"+TERM") {
        AckKind::Term(String::from_utf8_lossy(rest.trim_ascii()).into_owned())
    } else {
        AckKind::Other
    }
}

#[derive(Deserialize)]
struct NakOptions {
    #[serde(default)]
    delay: i64,
}

/// The delay a NAK asks for (`{"delay": <ns>}` or Go duration text): `Ok(None)` for a plain
/// NAK, `Err` with the argument for a value Go refuses (it warns and treats it as plain).
pub fn nak_delay(arg: &[u8]) -> Result<Option<i64>, String> {
    let arg = arg.trim_ascii();
    if arg.is_empty() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(arg);
    let parsed = if arg.first() == Some(&b'{') {
        serde_json::from_slice::<NakOptions>(arg)
            .map(|o| o.delay)
            .map_err(|_| ())
    } else {
        natrium_gofmt::parse_go_duration(&text).map_err(|_| ())
    };
    parsed.map(Some).map_err(|()| text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_ack_subject_v1_and_v2() {
        let v1 = parse_subject("$JS.ACK.S.C.2.10.7.1700000000.3").unwrap();
        assert_eq!(
            v1,
            AckSubject {
                stream: "S",
                consumer: "C",
                delivered: 2,
                stream_seq: 10,
                consumer_seq: 7,
                timestamp_ns: 1_700_000_000,
                pending: 3,
            }
        );
        let v2 = parse_subject("$JS.ACK._.HASH.S.C.1.5.4.1700000000.0.rand").unwrap();
        assert_eq!((v2.stream, v2.consumer, v2.stream_seq), ("S", "C", 5));
        assert!(parse_subject("$JS.ACK.S.C.1.5.4.0").is_none());
        assert!(parse_subject("$JS.ACK.S.C.x.5.4.0.0").is_none());
        assert!(parse_subject("$JS.NAK.S.C.1.5.4.0.0").is_none());
        assert!(parse_subject("$JS.ACK.S.C.1.5.4.0.0.0").is_none());
        assert_eq!(route(b"$JS.ACK.S.C.1.5.4.0.0"), Some(("S", "C")));
        assert_eq!(route(b"$JS.ACK._.H.S.C.1.5.4.0.0"), Some(("S", "C")));
    }

    #[test]
    fn consumer_ack_reply_subject_format() {
        let mut out = String::new();
        reply_subject(&mut out, None, "S", "C", (1, 22, 3), 44, 5);
        assert_eq!(out, "$JS.ACK.S.C.1.22.3.44.5");
    }

    #[test]
    fn consumer_ack_bodies() {
        assert_eq!(parse_body(b""), AckKind::Ack);
        assert_eq!(parse_body(b"+OK"), AckKind::Ack);
        assert_eq!(parse_body(b"+NXT 5"), AckKind::Next(b" 5"));
        assert_eq!(
            parse_body(b"-NAK {\"delay\":1}"),
            AckKind::Nak(b" {\"delay\":1}")
        );
        assert_eq!(parse_body(b"+WPI"), AckKind::Progress);
        assert_eq!(parse_body(b"+TERM  bad  "), AckKind::Term("bad".into()));
        assert_eq!(parse_body(b"+ACKX"), AckKind::Other);
    }

    #[test]
    fn consumer_ack_nak_delays() {
        assert_eq!(nak_delay(b""), Ok(None));
        assert_eq!(
            nak_delay(b" {\"delay\": 2000000000}"),
            Ok(Some(2_000_000_000))
        );
        assert_eq!(nak_delay(b" 1.5s"), Ok(Some(1_500_000_000)));
        assert_eq!(nak_delay(b" soon"), Err("soon".into()));
    }
}
