//! Subject delete markers (ADR-43, KV's limit markers in ADR-48): on a stream with
//! `subject_delete_marker_ttl`, a message that expires (past `max_age` or its own TTL) while
//! it is the last of its subject is not simply removed: the stream stores a marker on that
//! subject instead, which rolls the subject up (removing the expired message) and expires in
//! turn after the marker TTL. Go v2.15.2 writes one reason, `MaxAge`, for both kinds of
//! expiry; its `Purge` and `Remove` reasons are declared and never written, and its purge API
//! takes no marker TTL.
//!
//! Go's marker: the subject, no payload, and the block
//! `NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: <ttl as a Go duration>\r\nNats-Rollup: sub\r\n\r\n`,
//! stored like a published message (it takes a sequence, reaches consumers, is republished).
//! No marker replaces a message that is itself a marker (or a KV purge).

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use natrium_store::{Filter, MsgTtl, StreamStore};

use super::header_edit;
use super::headers::TTL;
use crate::config::StreamConfig;

pub const MARKER_REASON: &[u8] = b"Nats-Marker-Reason";
const KV_OPERATION: &[u8] = b"KV-Operation";
const NANOS_PER_SEC: i64 = 1_000_000_000;

/// Due messages handled per pass (bounds the list of due sequences in memory).
pub const DUE_BATCH: usize = 1024;

/// The marker TTL in whole seconds (Go truncates), when the stream places markers.
pub fn marker_ttl_secs(config: &StreamConfig) -> Option<i64> {
    let secs = config.subject_delete_marker_ttl / NANOS_PER_SEC;
    (config.subject_delete_marker_ttl > 0 && secs > 0).then_some(secs)
}

/// The message to store in place of the last message of `subject`.
pub fn marker(subject: &Bytes, ttl_secs: i64) -> Delivery {
    let ttl = natrium_gofmt::go_duration_nanos(ttl_secs.saturating_mul(NANOS_PER_SEC));
    let block = format!(
        "NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: {ttl}\r\nNats-Rollup: sub\r\n\r\n"
    );
    Delivery {
        subject: subject.clone(),
        reply: None,
        headers: Some(Bytes::from(block)),
        payload: Bytes::new(),
        sid: 0,
        origin: None,
    }
}

/// A marker already (Go's `isSubjectDeleteMarker`): a `Nats-Marker-Reason`, or a KV purge.
pub fn is_marker(headers: &[u8]) -> bool {
    let Ok(headers) = nats_proto::headers::Headers::parse(headers) else {
        return false;
    };
    headers.get(MARKER_REASON).is_some_and(|v| !v.is_empty())
        || headers.get(KV_OPERATION) == Some(&b"PURGE"[..])
}

/// What to do with one due message.
#[derive(Debug, Clone)]
pub enum Expiry {
    /// Already gone.
    Gone,
    /// Remove it: its subject has newer messages, or it is a marker itself.
    Remove,
    /// Store this marker in its place (the marker's rollup removes it).
    Mark(Delivery),
}

/// Decides for the due message at `seq`.
pub fn decide(store: &dyn StreamStore, seq: u64, ttl_secs: i64) -> Expiry {
    let Ok(msg) = store.load_msg(seq) else {
        return Expiry::Gone;
    };
    if is_marker(&msg.headers) {
        return Expiry::Remove;
    }
    let last =
        Filter::new(&msg.subject).is_ok_and(|filter| store.filtered_state(0, &filter).msgs == 1);
    if last {
        Expiry::Mark(marker(&msg.subject, ttl_secs))
    } else {
        Expiry::Remove
    }
}

/// A published TTL shorter than the marker TTL is raised to it (else a marker already on the
/// subject could expire first and be missed), except where a subject holds one message. The
/// header then says so, in seconds, at the end of the block, as Go rewrites it.
pub fn raise_ttl(
    config: &StreamConfig,
    ttl: MsgTtl,
    headers: Option<&Bytes>,
) -> (MsgTtl, Option<Bytes>) {
    let (MsgTtl::Secs(secs), Some(min), Some(block)) = (ttl, marker_ttl_secs(config), headers)
    else {
        return (ttl, headers.cloned());
    };
    let min = min.unsigned_abs();
    if config.max_msgs_per_subject == 1 || secs >= min {
        return (ttl, Some(block.clone()));
    }
    let edited = header_edit::replace_field_at_end(block, TTL, min.to_string().as_bytes());
    (MsgTtl::Secs(min), Some(Bytes::from(edited)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(marker_ttl_ns: i64, max_per_subject: i64) -> StreamConfig {
        StreamConfig {
            subject_delete_marker_ttl: marker_ttl_ns,
            max_msgs_per_subject: max_per_subject,
            ..StreamConfig::default()
        }
    }

    #[test]
    fn stream_markers_block_is_gos() {
        let m = marker(&Bytes::from_static(b"kv.a"), 90);
        assert_eq!(
            m.headers.unwrap(),
            Bytes::from_static(
                b"NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1m30s\r\nNats-Rollup: sub\r\n\r\n"
            )
        );
        assert!(m.payload.is_empty());
        assert_eq!(marker_ttl_secs(&config(1_500_000_000, 0)), Some(1));
        assert_eq!(marker_ttl_secs(&config(0, 0)), None);
    }

    #[test]
    fn stream_markers_recognised() {
        assert!(is_marker(b"NATS/1.0\r\nNats-Marker-Reason: Purge\r\n\r\n"));
        assert!(is_marker(b"NATS/1.0\r\nKV-Operation: PURGE\r\n\r\n"));
        assert!(!is_marker(b"NATS/1.0\r\nKV-Operation: DEL\r\n\r\n"));
        assert!(!is_marker(b""));
    }

    #[test]
    fn stream_markers_raise_short_ttls() {
        let block = Bytes::from_static(b"NATS/1.0\r\nNats-TTL: 1s\r\nA: b\r\n\r\n");
        let (ttl, hdr) = raise_ttl(&config(5_000_000_000, 0), MsgTtl::Secs(1), Some(&block));
        assert_eq!(ttl, MsgTtl::Secs(5));
        assert_eq!(
            hdr.unwrap(),
            Bytes::from_static(b"NATS/1.0\r\nA: b\r\nNats-TTL: 5\r\n\r\n")
        );
        let (ttl, hdr) = raise_ttl(&config(5_000_000_000, 1), MsgTtl::Secs(1), Some(&block));
        assert_eq!((ttl, hdr.unwrap()), (MsgTtl::Secs(1), block.clone()));
        let (ttl, _) = raise_ttl(&config(5_000_000_000, 0), MsgTtl::Never, Some(&block));
        assert_eq!(ttl, MsgTtl::Never);
    }
}
