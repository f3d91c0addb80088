//! The publish headers a stream acts on (`Nats-Msg-Id`, `Nats-Expected-*`, `Nats-Rollup`,
//! `Nats-TTL`, `Nats-Incr`), read once per message from the header block.

use nats_proto::headers::Headers;

pub const MSG_ID: &[u8] = b"Nats-Msg-Id";
pub const EXPECTED_STREAM: &[u8] = b"Nats-Expected-Stream";
pub const EXPECTED_LAST_SEQ: &[u8] = b"Nats-Expected-Last-Sequence";
pub const EXPECTED_LAST_SUBJ_SEQ: &[u8] = b"Nats-Expected-Last-Subject-Sequence";
pub const EXPECTED_LAST_SUBJ_SEQ_SUBJ: &[u8] = b"Nats-Expected-Last-Subject-Sequence-Subject";
pub const EXPECTED_LAST_MSG_ID: &[u8] = b"Nats-Expected-Last-Msg-Id";
pub const ROLLUP: &[u8] = b"Nats-Rollup";
pub const TTL: &[u8] = b"Nats-TTL";
pub const INCR: &[u8] = b"Nats-Incr";

/// What the stream reads from one message's headers.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PublishHeaders<'a> {
    pub msg_id: Option<&'a [u8]>,
    pub expected_stream: Option<&'a [u8]>,
    pub expected_last_seq: Option<u64>,
    pub expected_last_subject_seq: Option<u64>,
    pub expected_last_subject_seq_subject: Option<&'a [u8]>,
    pub expected_last_msg_id: Option<&'a [u8]>,
    pub rollup: Option<&'a [u8]>,
    pub ttl: Option<&'a [u8]>,
    /// A counter's increment (`super::counter`).
    pub incr: Option<&'a [u8]>,
    /// A non-empty `Nats-Stream-Source` (only a sourced message may carry one).
    pub stream_source: bool,
}

impl<'a> PublishHeaders<'a> {
    /// Reads `block`; a block that does not parse carries none of them (Go reads such a
    /// message as having no headers it knows).
    pub fn read(block: &'a [u8]) -> Self {
        let Ok(headers) = Headers::parse(block) else {
            return Self::default();
        };
        let text = |name: &[u8]| headers.get(name).filter(|v| !v.is_empty());
        Self {
            msg_id: text(MSG_ID),
            expected_stream: text(EXPECTED_STREAM),
            expected_last_seq: headers.get(EXPECTED_LAST_SEQ).map(go_uint),
            expected_last_subject_seq: headers.get(EXPECTED_LAST_SUBJ_SEQ).map(go_uint),
            expected_last_subject_seq_subject: text(EXPECTED_LAST_SUBJ_SEQ_SUBJ),
            expected_last_msg_id: text(EXPECTED_LAST_MSG_ID),
            rollup: text(ROLLUP),
            ttl: text(TTL),
            incr: text(INCR),
            stream_source: text(super::counter::STREAM_SOURCE).is_some(),
        }
    }
}

/// A sequence header's value: digits, anything else reading as 0 (so a malformed expectation
/// fails against any stream that has messages, as in Go).
fn go_uint(v: &[u8]) -> u64 {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_publish_headers_read() {
        let block = b"NATS/1.0\r\nNats-Msg-Id: a1\r\nNats-Expected-Last-Sequence: 7\r\n\
                      Nats-Expected-Last-Subject-Sequence: abc\r\nNats-Rollup: sub\r\n\r\n";
        let h = PublishHeaders::read(block);
        assert_eq!(h.msg_id, Some(&b"a1"[..]));
        assert_eq!(h.expected_last_seq, Some(7));
        assert_eq!(h.expected_last_subject_seq, Some(0));
        assert_eq!(h.rollup, Some(&b"sub"[..]));
        assert_eq!(h.expected_stream, None);
        assert_eq!(PublishHeaders::read(b"garbage"), PublishHeaders::default());
    }
}
