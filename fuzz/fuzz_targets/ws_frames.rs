//! Fuzzes the WebSocket frame decoder the way a connection drives it: the input is cut into
//! reads, each appended to a buffer, decoded until no event, and the consumed bytes dropped.
//! Checks that nothing panics, that `consumed` stays within the buffer, that the decoder never
//! leaves more than a frame header plus a control frame unconsumed, and that the outcome does not depend on where the reads were cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_ws::{DecoderConfig, Event, FrameDecoder, FrameError};

#[derive(Debug, PartialEq, Eq, Default)]
struct Outcome {
    data: Vec<u8>,
    controls: Vec<(u8, Vec<u8>)>,
    error: Option<FrameError>,
}

fn drive(cfg: DecoderConfig, stream: &[u8], reads: &[u8]) -> Outcome {
    let mut dec = FrameDecoder::new(cfg);
    let mut out = Outcome::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut rest = stream;
    let mut sizes = reads.iter().filter(|&&s| s > 0).cycle();
    while !rest.is_empty() {
        let n = sizes.next().map_or(rest.len(), |&s| usize::from(s)).min(rest.len());
        let (read, after) = rest.split_at(n);
        rest = after;
        buf.extend_from_slice(read);
        let mut pos = 0;
        loop {
            let len = buf.len();
            match dec.decode(&mut buf[pos..]) {
                Err(e) => {
                    if let Some(p) = e.close_payload() {
                        assert!(p.as_bytes().len() <= 125);
                    }
                    out.error = Some(e);
                    return out;
                }
                Ok(d) => {
                    assert!(d.consumed <= len - pos, "consumed past the input");
                    pos += d.consumed;
                    match d.event {
                        None => break,
                        Some(Event::Data(b)) => out.data.extend_from_slice(b),
                        Some(Event::Ping(p)) => out.controls.push((9, p.to_vec())),
                        Some(Event::Pong(p)) => out.controls.push((10, p.to_vec())),
                        Some(Event::Close(c)) => {
                            assert!(c.reply().as_bytes().len() <= 125);
                            out.controls.push((8, c.reason.to_vec()));
                        }
                    }
                }
            }
        }
        buf.drain(..pos);
        assert!(buf.len() <= 14 + 125 + 4, "left {} bytes unconsumed", buf.len());
    }
    out
}

fuzz_target!(|input: &[u8]| {
    // Byte 0 picks the configuration, bytes 1..4 the read sizes, the rest is the stream.
    let Some((&mode, rest)) = input.split_first() else { return };
    let cfg = DecoderConfig {
        compression: mode & 1 != 0,
        masking_required: mode & 2 != 0,
        max_payload: usize::from(mode >> 2) * 64,
    };
    let cut = rest.len().min(3);
    let (reads, stream) = rest.split_at(cut);
    let whole = drive(cfg, stream, &[]);
    let split = drive(cfg, stream, reads);
    assert_eq!(whole, split, "outcome depends on read boundaries");
});
