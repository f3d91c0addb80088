//! The header blocks of sourced and mirrored messages: the origin's block with the headers
//! Go strips (`Nats-Expected-*`, `Nats-Batch-*`, an earlier `Nats-Stream-Source`), the
//! `Nats-Stream-Source` header a source adds (`<stream> <seq> <filters> <dests> <subject>
//! [<identity>]`, Go 2.10's form) and its reading back at start-up, and the control messages
//! (idle heartbeats, flow-control requests) of the origin consumer. Pure.

use bytes::Bytes;
use nats_proto::headers::Headers;

/// Go's `JSStreamSource`.
pub const STREAM_SOURCE: &[u8] = b"Nats-Stream-Source";
const LAST_CONSUMER: &[u8] = b"Nats-Last-Consumer";
const CONSUMER_STALLED: &[u8] = b"Nats-Consumer-Stalled";

/// Headers a copy does not keep: the origin validated them.
const STRIPPED_PREFIXES: [&[u8]; 2] = [b"Nats-Expected-", b"Nats-Batch-"];

/// Go's `isControlMsg`: no payload and a `NATS/1.0 100 ` status line.
pub fn is_control(headers: Option<&Bytes>, payload: &[u8]) -> bool {
    payload.is_empty() && headers.is_some_and(|h| h.starts_with(b"NATS/1.0 100 "))
}

/// What an idle heartbeat says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Heartbeat {
    /// `Nats-Last-Consumer`: the last delivery sequence the consumer sent (0 when absent).
    pub last_consumer: u64,
    /// `Nats-Consumer-Stalled`: the flow-control reply the consumer waits for.
    pub stalled: Option<String>,
}

/// Reads an idle heartbeat's block.
pub fn heartbeat(block: &[u8]) -> Heartbeat {
    let Ok(h) = Headers::parse(block) else {
        return Heartbeat::default();
    };
    Heartbeat {
        last_consumer: h
            .get(LAST_CONSUMER)
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        stalled: h
            .get(CONSUMER_STALLED)
            .filter(|v| !v.is_empty())
            .map(|v| String::from_utf8_lossy(v).into_owned()),
    }
}

/// The origin's block without the headers a copy drops; `source` also drops an earlier
/// `Nats-Stream-Source` (a chain of sources keeps only the last hop's) and appends `add`.
/// `None` when nothing is left to keep.
pub fn rewrite(block: Option<&Bytes>, source: bool, add: Option<&str>) -> Option<Bytes> {
    if !source && add.is_none() {
        // A mirror's common case: nothing to drop, the block is shared as it came.
        let clean = block.is_none_or(|b| !STRIPPED_PREFIXES.iter().any(|p| contains(b, p)));
        if clean {
            return block.cloned();
        }
    }
    let block = block.map(Bytes::as_ref).unwrap_or_default();
    let mut lines = block.split(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    let mut out = Vec::with_capacity(block.len() + add.map_or(0, str::len) + 32);
    if first.starts_with(b"NATS/1.0") {
        out.extend_from_slice(first.strip_suffix(b"\r").unwrap_or(first));
    } else {
        out.extend_from_slice(b"NATS/1.0");
    }
    out.extend_from_slice(b"\r\n");
    let mut kept = 0;
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let name = line.split(|b| *b == b':').next().unwrap_or_default();
        let dropped = STRIPPED_PREFIXES.iter().any(|p| name.starts_with(p))
            || (source && name == STREAM_SOURCE);
        if !dropped {
            out.extend_from_slice(line);
            out.extend_from_slice(b"\r\n");
            kept += 1;
        }
    }
    if let Some(value) = add {
        out.extend_from_slice(STREAM_SOURCE);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
        kept += 1;
    }
    if kept == 0 && block.is_empty() {
        return None;
    }
    out.extend_from_slice(b"\r\n");
    Some(Bytes::from(out))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Go's `genSourceHeader`: `<stream> <seq> <filters> <dests> <subject>[ <identity>]`, from the
/// source's index name (whose first field keeps its external hash), the origin sequence and
/// the origin subject.
pub fn source_value(index_name: &str, seq: u64, subject: &str, identity: &str) -> String {
    let mut parts = index_name.splitn(3, ' ');
    let name = parts.next().unwrap_or_default();
    let filters = parts.next().unwrap_or(">");
    let dests = parts.next().unwrap_or(">");
    let mut value = format!("{name} {seq} {filters} {dests} {subject}");
    if !identity.is_empty() {
        value.push(' ');
        value.push_str(identity);
    }
    value
}

/// Go's `streamAndSeq` of the new form: the index name and the origin sequence a stored
/// `Nats-Stream-Source` value names, and the origin's identity when it has one.
pub fn parse_source_value(value: &str) -> Option<(String, u64, &str)> {
    let fields: Vec<&str> = value.split(' ').collect();
    if fields.len() < 4 {
        return None;
    }
    let name = fields.first()?;
    let seq = fields.get(1)?.parse().ok()?;
    let iname = format!("{name} {} {}", fields.get(2)?, fields.get(3)?);
    Some((iname, seq, fields.get(5).copied().unwrap_or_default()))
}

/// The `Nats-Stream-Source` value of a stored block, if it has one.
pub fn stored_source(block: &[u8]) -> Option<String> {
    let h = Headers::parse(block).ok()?;
    let v = h.get(STREAM_SOURCE)?;
    Some(String::from_utf8_lossy(v).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_sourcing_header_rewrite() {
        let block = Bytes::from_static(
            b"NATS/1.0\r\nA: 1\r\nNats-Expected-Stream: X\r\nNats-Stream-Source: old 1 > > a\r\n\r\n",
        );
        let out = rewrite(Some(&block), true, Some("O 5 > > a.b")).unwrap();
        assert_eq!(
            &out[..],
            b"NATS/1.0\r\nA: 1\r\nNats-Stream-Source: O 5 > > a.b\r\n\r\n"
        );
        let kept = rewrite(Some(&block), false, None).unwrap();
        assert_eq!(
            &kept[..],
            b"NATS/1.0\r\nA: 1\r\nNats-Stream-Source: old 1 > > a\r\n\r\n"
        );
        assert_eq!(rewrite(None, false, None), None);
        let added = rewrite(None, true, Some("O 1 > > x")).unwrap();
        assert_eq!(
            &added[..],
            b"NATS/1.0\r\nNats-Stream-Source: O 1 > > x\r\n\r\n"
        );
    }

    #[test]
    fn stream_sourcing_source_value_round_trip() {
        let v = source_value("O a.* b.>", 42, "a.x", "");
        assert_eq!(v, "O 42 a.* b.> a.x");
        let (iname, seq, ident) = parse_source_value(&v).unwrap();
        assert_eq!((iname.as_str(), seq, ident), ("O a.* b.>", 42, ""));
        let v = source_value("O > >", 7, "s", "ID");
        assert_eq!(parse_source_value(&v).unwrap().2, "ID");
        assert!(parse_source_value("O 1").is_none());
    }

    #[test]
    fn stream_sourcing_control_messages() {
        let hb = Bytes::from_static(
            b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 3\r\nNats-Last-Stream: 9\r\n\r\n",
        );
        assert!(is_control(Some(&hb), b""));
        assert!(!is_control(Some(&hb), b"x"));
        assert_eq!(heartbeat(&hb).last_consumer, 3);
        assert_eq!(heartbeat(&hb).stalled, None);
    }
}
