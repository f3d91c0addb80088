//! The answers to a direct get, read from a stream's store: each message with the
//! `Nats-Stream`, `Nats-Subject`, `Nats-Sequence`, `Nats-Time-Stamp` headers (and in batch
//! mode `Nats-Num-Pending`, `Nats-Last-Sequence`), then a `204 EOB` status; or one status
//! message (`404 Message Not Found`, `404 No Results`, `413 Too Many Results`).
//!
//! Everything is read in one go under the stream's lock, so a batch is one point in time as
//! in Go; what is collected is bounded by the request's `max_bytes` (the server's
//! `max_pending` when unset) plus the one message that crosses it.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use bytes::Bytes;
use natrium_store::{Filter, StoredMsg, StreamStore};

use super::request::MsgGetRequest;

/// At most this many subjects in one `multi_last` answer (Go's `maxAllowedResponses`).
pub const MULTI_LAST_MAX: usize = 1024;

/// One message to send to the requester.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The header block; `None` sends a plain `MSG` (`no_hdr`).
    pub headers: Option<Vec<u8>>,
    pub payload: Bytes,
}

/// A status-only reply: `NATS/1.0 <status>` and no payload.
pub fn status(text: &str) -> Reply {
    Reply {
        headers: Some(format!("NATS/1.0 {text}\r\n\r\n").into_bytes()),
        payload: Bytes::new(),
    }
}

/// The headers of a message sent back: its own block (or a bare `NATS/1.0` line) followed
/// by the stream's, each appended as Go appends one header at a time.
fn headers_for(stream: &str, msg: &StoredMsg, batch: Option<(u64, u64)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(msg.headers.len() + 160);
    match msg.headers.len() {
        n if n > 2 => out.extend_from_slice(msg.headers.get(..n - 2).unwrap_or_default()),
        _ => out.extend_from_slice(b"NATS/1.0\r\n"),
    }
    let mut text = String::with_capacity(160);
    let _ = write!(
        text,
        "Nats-Stream: {stream}\r\nNats-Subject: {}\r\nNats-Sequence: {}\r\nNats-Time-Stamp: {}\r\n",
        String::from_utf8_lossy(&msg.subject),
        msg.seq,
        natrium_gofmt::time::rfc3339_nanos(msg.timestamp_ns)
    );
    if let Some((pending, last)) = batch {
        let _ = write!(
            text,
            "Nats-Num-Pending: {pending}\r\nNats-Last-Sequence: {last}\r\n"
        );
    }
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\r\n");
    out
}

/// Bytes a message counts toward `max_bytes`, as Go counts them (its stored parts).
fn counted(msg: &StoredMsg) -> i64 {
    (msg.subject.len() + msg.headers.len() + msg.payload.len()) as i64
}

fn filter_or_all(subject: &str) -> Filter {
    if subject.is_empty() {
        return Filter::all();
    }
    Filter::new(subject.as_bytes()).unwrap_or_else(|_| Filter::all())
}

/// Answers `req` for stream `stream`; `max_pending` bounds a batch without `max_bytes`.
pub fn answer(
    store: &dyn StreamStore,
    stream: &str,
    req: &MsgGetRequest,
    max_pending: i64,
    out: &mut Vec<Reply>,
) {
    if !req.multi_last.is_empty() {
        multi_last(store, stream, req, max_pending, out);
        return;
    }
    let mut seq = match req.start_time {
        Some(t) => store.seq_from_time(t),
        None => req.seq,
    };
    let next_filter = (!req.next_by_subj.is_empty())
        .then(|| Filter::new(req.next_by_subj.as_bytes()).ok())
        .flatten();
    let is_batch = req.batch != 0;
    let pending_filter = next_filter.clone().unwrap_or_else(Filter::all);
    let (mut pending, valid_through) = if is_batch {
        store.num_pending(seq, &pending_filter, false)
    } else {
        (0, 0)
    };
    let batch = if is_batch { req.batch } else { 1 };
    let max_bytes = if req.max_bytes == 0 {
        max_pending
    } else {
        req.max_bytes
    };
    let mut sent_bytes = 0i64;
    let mut last_seq = 0u64;
    let mut i = 0i64;
    while i < batch {
        let found = if !req.next_by_subj.is_empty() {
            match &next_filter {
                Some(f) => store.load_next_msg(f, seq),
                None => Err(natrium_store::StoreError::NotFound),
            }
        } else if seq > 0 {
            if i == 0 && !is_batch {
                store.load_msg(seq)
            } else {
                store.load_next_msg(&Filter::all(), seq)
            }
        } else {
            store.load_last_msg(&filter_or_all(&req.last_by_subj))
        };
        let Ok(msg) = found else {
            if batch > 1 && i > 0 {
                break;
            }
            out.push(status("404 Message Not Found"));
            return;
        };
        seq = msg.seq + 1;
        let headers = (!req.no_hdr).then(|| {
            if is_batch {
                pending = pending.saturating_sub(1);
                headers_for(stream, &msg, Some((pending, last_seq)))
            } else {
                headers_for(stream, &msg, None)
            }
        });
        last_seq = msg.seq;
        sent_bytes += counted(&msg);
        out.push(Reply {
            headers,
            payload: msg.payload,
        });
        if sent_bytes >= max_bytes {
            break;
        }
        i += 1;
    }
    if is_batch {
        // Messages stored meanwhile count again from where the batch stopped.
        if store.fast_state().last_seq > valid_through {
            pending = store.num_pending(seq, &pending_filter, false).0;
        }
        out.push(Reply {
            headers: Some(
                format!("NATS/1.0 204 EOB\r\nNats-Num-Pending: {pending}\r\nNats-Last-Sequence: {last_seq}\r\n\r\n")
                    .into_bytes(),
            ),
            payload: Bytes::new(),
        });
    }
}

/// Why no last sequences could be listed.
enum MultiError {
    TooMany,
}

/// The last sequence at or below `max_seq` of each subject matching any of `filters`,
/// ascending, each once.
fn multi_last_seqs(
    store: &dyn StreamStore,
    filters: &[String],
    max_seq: u64,
) -> Result<BTreeSet<u64>, MultiError> {
    let mut seqs = BTreeSet::new();
    if store.fast_state().msgs == 0 {
        return Ok(seqs);
    }
    for filter in filters {
        let Ok(filter) = Filter::new(filter.as_bytes()) else {
            continue;
        };
        for (subject, state) in store.subjects_state(&filter) {
            if state.last <= max_seq {
                seqs.insert(state.last);
            } else if state.msgs > 1 {
                if let Some(seq) = last_at_or_below(store, &subject, state.first, max_seq) {
                    seqs.insert(seq);
                }
            }
        }
        if seqs.len() > MULTI_LAST_MAX {
            return Err(MultiError::TooMany);
        }
    }
    Ok(seqs)
}

/// The last message of literal `subject` at or below `max_seq`, walking up from `first`.
fn last_at_or_below(
    store: &dyn StreamStore,
    subject: &[u8],
    first: u64,
    max_seq: u64,
) -> Option<u64> {
    let filter = Filter::new(subject).ok()?;
    let mut found = None;
    let mut at = first;
    while at <= max_seq {
        match store.load_next_msg(&filter, at) {
            Ok(msg) if msg.seq <= max_seq => {
                found = Some(msg.seq);
                at = msg.seq + 1;
            }
            _ => break,
        }
    }
    found
}

fn multi_last(
    store: &dyn StreamStore,
    stream: &str,
    req: &MsgGetRequest,
    max_pending: i64,
    out: &mut Vec<Reply>,
) {
    let max_bytes = if req.max_bytes == 0 {
        max_pending
    } else {
        req.max_bytes
    };
    let mut up_to = req.up_to_seq;
    if let Some(t) = req.up_to_time {
        up_to = store.seq_from_time(t);
        if up_to <= store.fast_state().first_seq {
            out.push(status("404 No Results"));
            return;
        }
        // The first sequence at the time is the first one past the ceiling.
        up_to -= 1;
    }
    if up_to == 0 {
        up_to = store.fast_state().last_seq;
    }
    let Ok(seqs) = multi_last_seqs(store, &req.multi_last, up_to) else {
        out.push(status("413 Too Many Results"));
        return;
    };
    if seqs.is_empty() {
        out.push(status("404 No Results"));
        return;
    }
    let mut pending = seqs.len() as u64;
    let (mut last_seq, mut sent_bytes, mut sent) = (0u64, 0i64, 0i64);
    for seq in seqs {
        pending = pending.saturating_sub(1);
        if seq < req.seq {
            continue;
        }
        let Ok(msg) = store.load_msg(seq) else {
            out.push(status("404 Message Not Found"));
            return;
        };
        let headers = headers_for(stream, &msg, Some((pending, last_seq)));
        last_seq = msg.seq;
        sent_bytes += counted(&msg);
        out.push(Reply {
            headers: Some(headers),
            payload: msg.payload,
        });
        if sent_bytes >= max_bytes {
            break;
        }
        sent += 1;
        if req.batch > 0 && sent >= req.batch {
            break;
        }
    }
    out.push(Reply {
        headers: Some(
            format!(
                "NATS/1.0 204 EOB\r\nNats-Num-Pending: {pending}\r\nNats-Last-Sequence: {last_seq}\r\nNats-UpTo-Sequence: {up_to}\r\n\r\n"
            )
            .into_bytes(),
        ),
        payload: Bytes::new(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use natrium_store::{MemStore, NewMsg, StoreConfig};

    fn store(subjects: &[&str]) -> MemStore {
        let mut store = MemStore::new(StoreConfig::default());
        for (i, s) in subjects.iter().enumerate() {
            let msg = NewMsg::new(s.as_bytes(), Bytes::new(), Bytes::from("x"), i as i64 + 1);
            store.store_msg(msg).unwrap();
        }
        store
    }

    fn multi(subjects: &[&str], up_to_seq: u64) -> MsgGetRequest {
        MsgGetRequest {
            multi_last: subjects.iter().map(|s| (*s).to_owned()).collect(),
            up_to_seq,
            ..MsgGetRequest::default()
        }
    }

    #[test]
    fn direct_multi_last_below_the_ceiling() {
        let store = store(&["a", "b", "a", "b", "a"]);
        let mut out = Vec::new();
        answer(&store, "S", &multi(&["*"], 4), i64::MAX, &mut out);
        let seqs: Vec<_> = out
            .iter()
            .filter_map(|r| {
                let h = String::from_utf8_lossy(r.headers.as_deref()?).into_owned();
                let line = h.lines().find(|l| l.starts_with("Nats-Sequence: "))?;
                Some(line.trim_start_matches("Nats-Sequence: ").to_owned())
            })
            .collect();
        assert_eq!(seqs, ["3", "4"]);
        assert!(out.last().unwrap().headers.as_deref().unwrap().ends_with(
            b"Nats-Num-Pending: 0\r\nNats-Last-Sequence: 4\r\nNats-UpTo-Sequence: 4\r\n\r\n"
        ));
    }

    #[test]
    fn direct_multi_last_too_many_subjects() {
        let names: Vec<String> = (0..=MULTI_LAST_MAX).map(|i| format!("s.{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let store = store(&refs);
        let mut out = Vec::new();
        answer(&store, "S", &multi(&["s.*"], 0), i64::MAX, &mut out);
        assert_eq!(out, [status("413 Too Many Results")]);
    }

    #[test]
    fn direct_single_get_keeps_stored_headers() {
        let mut store = MemStore::new(StoreConfig::default());
        let hdr = Bytes::from_static(b"NATS/1.0\r\nFoo: bar\r\n\r\n");
        store
            .store_msg(NewMsg::new(b"a", hdr, Bytes::from("p"), 1_000_000_000))
            .unwrap();
        let mut out = Vec::new();
        let req = MsgGetRequest {
            seq: 1,
            ..MsgGetRequest::default()
        };
        answer(&store, "S", &req, i64::MAX, &mut out);
        assert_eq!(
            out[0].headers.as_deref().unwrap(),
            b"NATS/1.0\r\nFoo: bar\r\nNats-Stream: S\r\nNats-Subject: a\r\nNats-Sequence: 1\r\n\
              Nats-Time-Stamp: 1970-01-01T00:00:01Z\r\n\r\n"
        );
    }
}
