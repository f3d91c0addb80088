//! Fuzzes the client parser the way the runtime drives it: the input is cut into reads, each
//! read is appended to a buffer, ops are parsed until `Incomplete` or an error, and consumed
//! bytes are dropped. Checks that nothing panics, that `consumed` stays within the buffer and
//! that `Incomplete` always asks for more than the buffer holds, and that the outcome does not
//! depend on where the reads were cut. Header blocks of `HPUB`s go through the header parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nats_proto::headers::Headers;
use nats_proto::{parse_client_op, ClientOp, Parsed, ParserLimits, ProtoError};

/// Parses `data` in reads of the given sizes; returns a digest of the ops and the final error.
fn drive(data: &[u8], read_sizes: &[u8], limits: &ParserLimits) -> (Vec<String>, Option<ProtoError>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut ops = Vec::new();
    let mut rest = data;
    let mut sizes = read_sizes.iter().cycle();
    while !rest.is_empty() {
        let n = match sizes.next() {
            Some(&s) if s > 0 => usize::from(s).min(rest.len()),
            _ => rest.len(),
        };
        let (read, after) = rest.split_at(n);
        rest = after;
        buf.extend_from_slice(read);
        loop {
            match parse_client_op(&buf, limits) {
                Ok(Parsed::Op { op, consumed }) => {
                    assert!(consumed > 0, "an op must consume bytes");
                    assert!(consumed <= buf.len(), "consumed {consumed} > len {}", buf.len());
                    if let ClientOp::Pub(p) = op {
                        if let Some(h) = p.headers {
                            if let Ok(view) = Headers::parse(h) {
                                for (name, _value) in view.iter() {
                                    assert!(!name.is_empty());
                                }
                            }
                        }
                    }
                    ops.push(format!("{op:?}"));
                    buf.drain(..consumed);
                }
                Ok(Parsed::Incomplete { min_total }) => {
                    assert!(min_total > buf.len(), "Incomplete must ask for more bytes");
                    break;
                }
                Err(e) => {
                    let _ = e.wire_error();
                    return (ops, Some(e));
                }
            }
        }
    }
    (ops, None)
}

fuzz_target!(|input: &[u8]| {
    // First byte picks the limits; the next few pick read sizes; the rest is the stream.
    let Some((&mode, rest)) = input.split_first() else { return };
    let limits = if mode & 1 == 0 {
        ParserLimits::default()
    } else {
        ParserLimits { max_control_line: usize::from(mode >> 1).max(1), max_payload: 64 }
    };
    let cut = rest.len().min(4);
    let (read_sizes, data) = rest.split_at(cut);
    let whole = drive(data, &[], &limits);
    let split = drive(data, read_sizes, &limits);
    assert_eq!(whole, split, "outcome depends on read boundaries");
});
