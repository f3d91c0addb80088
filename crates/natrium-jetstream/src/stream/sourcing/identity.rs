//! A stream's identity (API level 5): Go's hash of its creation time, which a sourcing
//! consumer's answer carries in `Nats-Stream-Identity` and a source records in each
//! `Nats-Stream-Source` header, so that a source notices its origin was deleted and created
//! again (and starts it over) instead of waiting for sequences the new stream will reach
//! much later.

use super::names::go_hash;
use crate::api::request::Request;
use crate::errors::{table, ApiError};
use crate::stream::Stream;

/// Go's `JSStreamIdentity`.
pub const HEADER: &str = "Nats-Stream-Identity";

/// Go's `stream.identity()`: the hash of the creation time in RFC 3339 with nanoseconds.
pub fn of(stream: &Stream) -> String {
    go_hash(&natrium_gofmt::time::rfc3339_nanos(stream.created_ns))
}

/// A sourcing consumer's create: refused when the request expects another identity (Go's
/// 10223), else the answer will carry the stream's.
///
/// # Errors
/// The mismatch.
pub fn answer_with_identity(req: &Request<'_>, stream: &Stream) -> Result<(), ApiError> {
    let identity = of(stream);
    let expected = req
        .msg
        .and_then(|m| m.headers.as_deref())
        .and_then(parse_identity);
    if let Some(expected) = expected.filter(|e| !e.is_empty()) {
        if expected != identity {
            return Err(table::CONSUMER_STREAM_IDENTITY_MISMATCH_F.with(&[("msg", &identity)]));
        }
    }
    let block = format!("NATS/1.0\r\n{HEADER}: {identity}\r\n\r\n");
    *req.reply_headers.borrow_mut() = Some(block.into_bytes());
    Ok(())
}

/// The `Nats-Stream-Identity` value of a header block.
pub fn parse_identity(block: &[u8]) -> Option<String> {
    let headers = nats_proto::headers::Headers::parse(block).ok()?;
    let value = headers.get(HEADER.as_bytes())?;
    Some(String::from_utf8_lossy(value).into_owned())
}
