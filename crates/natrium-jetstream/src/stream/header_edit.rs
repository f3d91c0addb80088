//! Edits of a stored message's header block that the stream makes itself (a counter's
//! `Nats-Counter-Sources`, a raised `Nats-TTL`), byte for byte as Go makes them, so a
//! message reads back the same from either server.

const CRLF: &[u8] = b"\r\n";
const VERSION_LINE: &[u8] = b"NATS/1.0\r\n";

/// The first place `needle` occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where the line of field `name` starts: the first place `name` follows a line break and is
/// followed by `:` (Go's `getHeaderKeyIndex`).
fn field_start(block: &[u8], name: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let at = from + find(block.get(from..)?, name)?;
        let after = at + name.len();
        let follows_break = at >= 2 && block.get(at - 2..at) == Some(CRLF);
        if follows_break && block.get(after) == Some(&b':') {
            return Some(at);
        }
        from = after;
    }
}

/// Sets field `name` to `value`: the first such field keeps its place and gets the new value,
/// else the field is added before the block's end (Go's `setHeader`).
pub fn set_field(block: &[u8], name: &[u8], value: &[u8]) -> Vec<u8> {
    if let Some(start) = field_start(block, name) {
        let mut value_start = start + name.len() + 1;
        if block.get(value_start) == Some(&b' ') {
            value_start += 1;
        }
        let rest = block.get(value_start..).unwrap_or_default();
        if let Some(end) = rest.iter().position(|&b| b == b'\r') {
            let mut out = Vec::with_capacity(block.len() + value.len());
            out.extend_from_slice(block.get(..value_start).unwrap_or_default());
            out.extend_from_slice(value);
            out.extend_from_slice(rest.get(end..).unwrap_or_default());
            return out;
        }
        // A field without its line break: Go leaves such a block alone.
        return block.to_vec();
    }
    append_field(block.strip_suffix(CRLF).unwrap_or(block), name, value)
}

/// Removes every field `name` (Go's `removeHeaderIfPresent`, which a batch's
/// `Nats-Required-Api-Level` goes through before the message is stored).
pub fn remove_field(block: &[u8], name: &[u8]) -> Vec<u8> {
    let mut kept = block.to_vec();
    while let Some(start) = field_start(&kept, name) {
        let Some(len) = find(kept.get(start..).unwrap_or_default(), CRLF) else {
            break;
        };
        kept.drain(start..start + len + CRLF.len());
    }
    kept
}

/// Removes every field `name` and adds one with `value` at the end (Go's
/// `removeHeaderIfPresent` then `genHeader`).
pub fn replace_field_at_end(block: &[u8], name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut kept = block.to_vec();
    while let Some(start) = field_start(&kept, name) {
        let Some(len) = find(kept.get(start..).unwrap_or_default(), CRLF) else {
            break;
        };
        kept.drain(start..start + len + CRLF.len());
    }
    // A block left with no field restarts from a bare version line, as Go's does.
    if kept.len() <= VERSION_LINE.len() + CRLF.len() {
        return append_field(VERSION_LINE, name, value);
    }
    append_field(kept.strip_suffix(CRLF).unwrap_or(&kept), name, value)
}

/// `head` (a block without its closing empty line) + `name: value` + the closing line.
fn append_field(head: &[u8], name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + name.len() + value.len() + 6);
    out.extend_from_slice(head);
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(CRLF);
    out.extend_from_slice(CRLF);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_header_edit_sets_in_place_or_appends() {
        let block = b"NATS/1.0\r\nA: 1\r\nNats-Incr: 5\r\n\r\n";
        assert_eq!(
            set_field(block, b"Nats-Incr", b"-12"),
            b"NATS/1.0\r\nA: 1\r\nNats-Incr: -12\r\n\r\n"
        );
        assert_eq!(
            set_field(block, b"Nats-Counter-Sources", b"{}"),
            b"NATS/1.0\r\nA: 1\r\nNats-Incr: 5\r\nNats-Counter-Sources: {}\r\n\r\n"
        );
        // A name inside a value or a longer name is not the field.
        let tricky = b"NATS/1.0\r\nX: Nats-Incr: 1\r\nNats-Incrx: 2\r\n\r\n";
        assert_eq!(
            set_field(tricky, b"Nats-Incr", b"3"),
            b"NATS/1.0\r\nX: Nats-Incr: 1\r\nNats-Incrx: 2\r\nNats-Incr: 3\r\n\r\n"
        );
    }

    #[test]
    fn stream_header_edit_moves_replaced_field_to_the_end() {
        let block = b"NATS/1.0\r\nNats-TTL: 1\r\nA: b\r\nNats-TTL: 2s\r\n\r\n";
        assert_eq!(
            replace_field_at_end(block, b"Nats-TTL", b"5"),
            b"NATS/1.0\r\nA: b\r\nNats-TTL: 5\r\n\r\n"
        );
        assert_eq!(
            replace_field_at_end(b"NATS/1.0\r\nNats-TTL: 1\r\n\r\n", b"Nats-TTL", b"5"),
            b"NATS/1.0\r\nNats-TTL: 5\r\n\r\n"
        );
    }
}
