//! A stream's identity (API level 5): Go's hash of its creation time, which a sourcing
//! consumer's answer carries in `Nats-Stream-Identity` and a source records in each
//! `Nats-Stream-Source` header, so that a source notices its origin was deleted and created
//! again (and starts it over) instead of waiting for sequences the new stream will reach
//! much later.

use super::names::go_hash;
use crate::stream::Stream;

/// Go's `JSStreamIdentity`.
pub const HEADER: &str = "Nats-Stream-Identity";

/// Go's `stream.identity()`: the hash of the creation time in RFC 3339 with nanoseconds.
pub fn of(stream: &Stream) -> String {
    go_hash(&natrium_gofmt::time::rfc3339_nanos(stream.created_ns))
}

/// The `Nats-Stream-Identity` value of a header block.
pub fn parse_identity(block: &[u8]) -> Option<String> {
    let headers = nats_proto::headers::Headers::parse(block).ok()?;
    let value = headers.get(HEADER.as_bytes())?;
    Some(String::from_utf8_lossy(value).into_owned())
}
