//! RePublish (ADR-28): once a message is stored, it is published again on its subject mapped
//! by the `republish` transform, with the stream's headers appended to its own:
//! `Nats-Stream`, `Nats-Subject` (the stored subject), `Nats-Sequence`, `Nats-Time-Stamp`
//! (the stored time, RFC 3339 in UTC) and `Nats-Last-Sequence` (the sequence of the
//! subject's previous message, 0 for none); with `headers_only`, no payload and
//! `Nats-Msg-Size` (the payload's length) instead.
//!
//! As in Go, a message is republished after it is stored and before its publisher's ack is
//! sent, in storing order, by the stream's own client, without a reply subject; a mapped
//! subject that is not a valid publish subject stops the republish with a warning. Here a
//! batch is republished after its sync (when acks wait for one), so a message whose sync
//! failed, and whose publisher is told so, is never republished.

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use natrium_core::account::Account;
use natrium_core::endpoint::Delivery;
use natrium_core::internal::InternalClient;
use natrium_store::{Filter, StreamStore};
use nats_subject::{is_valid_publish_subject, SubjectTransform};

use super::ingest::Outcome;
use crate::config::StreamConfig;

/// The warning about an invalid republish subject is logged at most this often.
const INVALID_SUBJECT_WARN_INTERVAL: Duration = Duration::from_secs(10);

/// A stream's compiled `republish`, with what its current batch has to republish.
#[derive(Debug, Default)]
pub struct Republisher {
    transform: Option<SubjectTransform>,
    headers_only: bool,
    /// The batch's messages that match, in batch order; reused.
    pending: Vec<Pending>,
    /// Reused buffers for the mapped subject and the header block.
    subject: Vec<u8>,
    headers: Vec<u8>,
    warned: Option<Instant>,
}

/// A message an atomic batch's commit stored, for its republish.
#[derive(Debug)]
pub struct Committed {
    pub seq: u64,
    pub subject: Bytes,
    pub headers: Bytes,
    pub payload: Bytes,
    /// The sequence of the subject's message before it (0 for none).
    pub last_seq: u64,
}

/// One message of the batch to republish if it is stored.
#[derive(Debug)]
struct Pending {
    /// Its place in the batch (to find its outcome).
    index: usize,
    /// Its sequence when it is known before the outcome (a committed atomic batch's).
    seq: Option<u64>,
    /// The stored subject (after the stream's `subject_transform`).
    subject: Bytes,
    headers: Option<Bytes>,
    payload: Bytes,
    timestamp_ns: i64,
    /// The sequence of the subject's last message before it.
    last_seq: u64,
}

impl Republisher {
    /// The republish `config` asks for (none when it has none, or it does not compile, which
    /// the configuration checks refuse before a stream runs).
    pub fn new(config: &StreamConfig) -> Self {
        let Some(rp) = &config.republish else {
            return Self::default();
        };
        // An empty destination republishes nothing, as when Go creates the stream.
        Self {
            transform: SubjectTransform::mapping(&rp.src, &rp.dest).ok().flatten(),
            headers_only: rp.headers_only,
            ..Self::default()
        }
    }

    /// Before `msg`, the batch's `index`-th, is stored at `timestamp_ns`: notes it if its
    /// subject is to be republished, with its subject's last sequence so far.
    pub fn note(
        &mut self,
        index: usize,
        store: &dyn StreamStore,
        msg: &Delivery,
        timestamp_ns: i64,
    ) {
        let Some(transform) = &self.transform else {
            return;
        };
        if !transform.apply(&msg.subject, &mut self.subject) {
            return;
        }
        let last_seq = Filter::new(&msg.subject).map_or(0, |filter| {
            let state = store.filtered_state(0, &filter);
            if state.msgs == 0 {
                0
            } else {
                state.last
            }
        });
        self.pending.push(Pending {
            index,
            seq: None,
            subject: msg.subject.clone(),
            headers: msg.headers.clone(),
            payload: msg.payload.clone(),
            timestamp_ns,
            last_seq,
        });
    }

    /// Whether anything is republished (a stream without `republish` notes nothing).
    pub fn enabled(&self) -> bool {
        self.transform.is_some()
    }

    /// An atomic batch committed by the ingest batch's `index`-th message stored `committed`
    /// at `timestamp_ns`: noted in order, republished with the rest of the ingest batch.
    pub fn note_committed(&mut self, index: usize, committed: Vec<Committed>, timestamp_ns: i64) {
        for c in committed {
            self.pending.push(Pending {
                index,
                seq: Some(c.seq),
                subject: c.subject,
                headers: Some(c.headers).filter(|h| !h.is_empty()),
                payload: c.payload,
                timestamp_ns,
                last_seq: c.last_seq,
            });
        }
    }

    /// Publishes every noted message of the batch whose outcome is `Stored`, in order, and
    /// forgets the batch.
    pub fn send(
        &mut self,
        client: &mut InternalClient,
        account: &Arc<Account>,
        stream: &str,
        outcomes: &[Outcome],
    ) {
        let mut pending = std::mem::take(&mut self.pending);
        for p in pending.drain(..) {
            // A counter's stored payload is its new value, not what was published.
            let (seq, counted) = match (outcomes.get(p.index), &p.seq) {
                (Some(Outcome::Batch { .. }), Some(seq)) => (seq, None),
                (Some(Outcome::Stored(seq) | Outcome::Fast { seq: Some(seq), .. }), None) => {
                    (seq, None)
                }
                (Some(Outcome::Counted(seq, val)), None) => {
                    (seq, Some(format!(r#"{{"val":"{val}"}}"#)))
                }
                _ => continue,
            };
            let Some(transform) = &self.transform else {
                break;
            };
            if !transform.apply(&p.subject, &mut self.subject) {
                continue;
            }
            let subject = match std::str::from_utf8(&self.subject) {
                Ok(s) if is_valid_publish_subject(s.as_bytes()) => s,
                _ => {
                    self.warn_invalid(&account.name, stream);
                    continue;
                }
            };
            write_headers(&mut self.headers, stream, &p, *seq, self.headers_only);
            let payload: &[u8] = match &counted {
                _ if self.headers_only => b"",
                Some(value) => value.as_bytes(),
                None => &p.payload,
            };
            client.publish_with_headers(account, subject, &self.headers, payload);
        }
        self.pending = pending;
    }

    fn warn_invalid(&mut self, account: &str, stream: &str) {
        let now = Instant::now();
        if self
            .warned
            .is_some_and(|at| now.duration_since(at) < INVALID_SUBJECT_WARN_INTERVAL)
        {
            return;
        }
        self.warned = Some(now);
        tracing::warn!(
            "Stream '{account} > {stream}' suppressing republish with invalid subject {}",
            natrium_gofmt::go_quote_bytes(&self.subject)
        );
    }
}

/// The republished header block: the message's own (its closing blank line removed) or a
/// `NATS/1.0` line, then the stream's headers, in Go's order.
fn write_headers(out: &mut Vec<u8>, stream: &str, p: &Pending, seq: u64, headers_only: bool) {
    out.clear();
    match p.headers.as_deref() {
        Some(own) if own.len() > 2 => {
            out.extend_from_slice(own.get(..own.len() - 2).unwrap_or(own));
        }
        _ => out.extend_from_slice(b"NATS/1.0\r\n"),
    }
    // Writes into a Vec cannot fail.
    let _ = write!(
        out,
        "Nats-Stream: {stream}\r\nNats-Subject: {}\r\nNats-Sequence: {seq}\r\n\
         Nats-Time-Stamp: {}\r\nNats-Last-Sequence: {}\r\n",
        String::from_utf8_lossy(&p.subject),
        natrium_gofmt::time::rfc3339_nanos(p.timestamp_ns),
        p.last_seq
    );
    if headers_only {
        let _ = write!(out, "Nats-Msg-Size: {}\r\n", p.payload.len());
    }
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(headers: Option<&'static [u8]>) -> Pending {
        Pending {
            index: 0,
            seq: None,
            subject: Bytes::from_static(b"a.b"),
            headers: headers.map(Bytes::from_static),
            payload: Bytes::from_static(b"hello"),
            timestamp_ns: 1_500_000_000,
            last_seq: 3,
        }
    }

    #[test]
    fn stream_republish_header_block_as_go() {
        let mut out = Vec::new();
        write_headers(&mut out, "S", &pending(None), 7, false);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "NATS/1.0\r\nNats-Stream: S\r\nNats-Subject: a.b\r\nNats-Sequence: 7\r\n\
             Nats-Time-Stamp: 1970-01-01T00:00:01.5Z\r\nNats-Last-Sequence: 3\r\n\r\n"
        );
        write_headers(
            &mut out,
            "S",
            &pending(Some(b"NATS/1.0\r\nFoo: bar\r\n\r\n")),
            7,
            true,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NATS/1.0\r\nFoo: bar\r\nNats-Stream: S\r\nNats-Subject: a.b\r\nNats-Sequence: 7\r\n\
             Nats-Time-Stamp: 1970-01-01T00:00:01.5Z\r\nNats-Last-Sequence: 3\r\n\
             Nats-Msg-Size: 5\r\n\r\n"
        );
    }
}
