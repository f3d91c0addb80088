//! `STREAM.MSG.GET`: one message by sequence, by subject (last or next), or by time, answered
//! as JSON on the API thread. Batches and `multi_last` are `DIRECT.GET`'s alone.

use base64::Engine;
use natrium_store::Filter;
use serde_json::Value;

use super::request::Request;
use super::responses::{encode, MsgGetResponse, StoredMsgJson};
use crate::config::decode::invalid_json;
use crate::config::decode_checked;
use crate::direct::request::{MsgGetRequest, RawMsgGet, MSG_GET_SCHEMA};
use crate::errors::{table, ApiError};

/// Go's `isEmptyRequest`: nothing, `{}`, or an object without members.
pub fn is_empty_request(body: &[u8]) -> bool {
    if body.is_empty() || body == b"{}" {
        return true;
    }
    matches!(serde_json::from_slice::<Value>(body), Ok(Value::Object(m)) if m.is_empty())
}

/// The request in `body`, checked as Go checks it before it looks for the stream.
pub(crate) fn checked(body: &[u8]) -> Result<MsgGetRequest, ApiError> {
    if is_empty_request(body) {
        return Err(table::BAD_REQUEST.err());
    }
    let raw: RawMsgGet = decode_checked(body, &MSG_GET_SCHEMA, "server.JSApiMsgGetRequest")?;
    let get = raw.finish().map_err(|e| invalid_json(&e))?;
    if get.msg_get_is_bad() {
        return Err(table::BAD_REQUEST.err());
    }
    Ok(get)
}

pub fn msg_get(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    let get = checked(req.body)?;
    let stream = req
        .jsa
        .stream(name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let core = stream.core.lock();
    let store = &core.ingest.store;
    let seq = match get.start_time {
        Some(t) => store.seq_from_time(t),
        None => get.seq,
    };
    let filter = |s: &str| Filter::new(s.as_bytes());
    let found = if !get.next_by_subj.is_empty() {
        filter(&get.next_by_subj).and_then(|f| store.load_next_msg(&f, seq))
    } else if seq > 0 {
        store.load_msg(seq)
    } else if get.last_by_subj.is_empty() {
        // Only a time before any message leaves no sequence: Go then reads the last one.
        store.load_last_msg(&Filter::all())
    } else {
        filter(&get.last_by_subj).and_then(|f| store.load_last_msg(&f))
    };
    if found.is_err() {
        stream.after_reads(&core);
    }
    let msg = found.map_err(|_| table::NO_MESSAGE_FOUND.err())?;
    drop(core);
    let b64 =
        |b: &[u8]| (!b.is_empty()).then(|| base64::engine::general_purpose::STANDARD.encode(b));
    Ok(encode(
        "stream_msg_get_response",
        None,
        MsgGetResponse {
            message: StoredMsgJson {
                subject: String::from_utf8_lossy(&msg.subject).into_owned(),
                seq: msg.seq,
                hdrs: if get.no_hdr { None } else { b64(&msg.headers) },
                data: b64(&msg.payload),
                time: natrium_gofmt::time::rfc3339_nanos(msg.timestamp_ns),
            },
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::is_empty_request;

    #[test]
    fn api_msg_get_empty_requests_like_go() {
        assert!(is_empty_request(b""));
        assert!(is_empty_request(b"{ }"));
        assert!(!is_empty_request(b"null"));
        assert!(!is_empty_request(br#"{"seq":1}"#));
    }
}
