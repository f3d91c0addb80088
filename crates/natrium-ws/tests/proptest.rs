//! Property tests: client frames (random fragmentation, masking keys, compression, control
//! frames in between) decode back to the bytes that were framed however the stream is cut
//! into reads; server frames decode back too; arbitrary bytes never panic, never over-consume
//! and give the same outcome at every cut; the handshake gives the same outcome at every cut.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use flate2::{Compress, Compression, FlushCompress};
use natrium_ws::handshake::{HandshakeConfig, Outcome};
use natrium_ws::{
    apply_mask, DecoderConfig, EncoderConfig, Event, FrameDecoder, FrameEncoder, FrameError,
    FrameHeader, Handshake, OpCode, RequestParser,
};
use proptest::prelude::*;

/// What a decoded stream amounts to: data bytes, ping payloads, close frames (their status, 0
/// when none), final error.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Outcome2 {
    data: Vec<u8>,
    pings: Vec<Vec<u8>>,
    closes: Vec<u16>,
    error: Option<FrameError>,
}

/// Feeds `stream` in reads of the given sizes the way a connection does: append each read to a
/// buffer, decode until no event, drop what was consumed.
fn decode_in_reads(cfg: DecoderConfig, stream: &[u8], reads: &[usize]) -> Outcome2 {
    let mut dec = FrameDecoder::new(cfg);
    let mut out = Outcome2::default();
    let mut buf: Vec<u8> = Vec::new();
    let mut rest = stream;
    let mut sizes = reads.iter().copied().filter(|&n| n > 0).cycle();
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        let mut pos = 0;
        loop {
            let len = buf.len();
            let d = match dec.decode(&mut buf[pos..]) {
                Ok(d) => d,
                Err(e) => {
                    out.error = Some(e);
                    return out;
                }
            };
            assert!(d.consumed <= len - pos, "over-consumed");
            pos += d.consumed;
            match d.event {
                None => break,
                Some(Event::Data(b)) => {
                    assert!(!b.is_empty(), "empty data event");
                    out.data.extend_from_slice(b);
                }
                Some(Event::Ping(p)) => out.pings.push(p.to_vec()),
                Some(Event::Pong(_)) => {}
                Some(Event::Close(c)) => out.closes.push(c.status.unwrap_or(0)),
            }
        }
        buf.drain(..pos);
        assert!(
            buf.len() <= 14 + 125 + 4,
            "decoder left {} bytes unconsumed",
            buf.len()
        );
    }
    out
}

fn client_frame(
    out: &mut Vec<u8>,
    opcode: OpCode,
    fin: bool,
    rsv1: bool,
    payload: &[u8],
    key: [u8; 4],
) {
    let h = FrameHeader {
        fin,
        rsv1,
        opcode,
        len: payload.len() as u64,
        mask: Some(key),
    };
    out.extend_from_slice(&h.encode());
    let start = out.len();
    out.extend_from_slice(payload);
    apply_mask(key, 0, &mut out[start..]);
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut c = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(data.len() + 128);
    c.compress_vec(data, &mut out, FlushCompress::Sync).unwrap();
    while out.len() == out.capacity() {
        out.reserve(out.capacity());
        c.compress_vec(&[], &mut out, FlushCompress::Sync).unwrap();
    }
    out.truncate(out.len() - 4);
    out
}

/// One client message: payload, whether compressed, fragment cut points, keys, and whether a
/// ping goes between its fragments.
#[derive(Debug, Clone)]
struct Msg {
    payload: Vec<u8>,
    compressed: bool,
    cuts: Vec<usize>,
    keys: Vec<[u8; 4]>,
    ping: Option<Vec<u8>>,
}

fn msg_strategy() -> impl Strategy<Value = Msg> {
    (
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..300),
            prop::collection::vec(prop::sample::select(b"PUB foo 1\r\n".to_vec()), 0..2000),
        ],
        any::<bool>(),
        prop::collection::vec(any::<usize>(), 0..4),
        prop::collection::vec(any::<[u8; 4]>(), 1..6),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..126)),
    )
        .prop_map(|(payload, compressed, cuts, keys, ping)| Msg {
            payload,
            compressed,
            cuts,
            keys,
            ping,
        })
}

/// Frames the messages as a client would; returns the stream and the pings sent.
fn encode_messages(msgs: &[Msg]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut out = Vec::new();
    let mut pings = Vec::new();
    for m in msgs {
        let body = if m.compressed {
            deflate(&m.payload)
        } else {
            m.payload.clone()
        };
        let mut cuts: Vec<usize> = m.cuts.iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut pieces = Vec::new();
        let mut at = 0;
        for c in cuts {
            pieces.push(&body[at..c]);
            at = c;
        }
        pieces.push(&body[at..]);
        let last = pieces.len() - 1;
        for (i, piece) in pieces.iter().enumerate() {
            let op = if i == 0 {
                OpCode::Binary
            } else {
                OpCode::Continuation
            };
            let key = m.keys[i % m.keys.len()];
            client_frame(&mut out, op, i == last, i == 0 && m.compressed, piece, key);
            if i == 0 {
                if let Some(p) = &m.ping {
                    client_frame(&mut out, OpCode::Ping, true, false, p, key);
                    pings.push(p.clone());
                }
            }
        }
    }
    (out, pings)
}

fn cfg(compression: bool) -> DecoderConfig {
    DecoderConfig {
        compression,
        masking_required: true,
        max_payload: 1 << 20,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn ws_prop_client_frames_round_trip(
        msgs in prop::collection::vec(msg_strategy(), 0..6),
        reads in prop::collection::vec(0usize..200, 0..8),
        close in prop::option::of(1000u16..1004),
    ) {
        let (mut stream, pings) = encode_messages(&msgs);
        if let Some(code) = close {
            client_frame(&mut stream, OpCode::Close, true, false, &code.to_be_bytes(), [1, 2, 3, 4]);
        }
        let got = decode_in_reads(cfg(true), &stream, &reads);
        let want: Vec<u8> = msgs.iter().flat_map(|m| m.payload.clone()).collect();
        prop_assert_eq!(got.error, None);
        prop_assert_eq!(got.data, want);
        prop_assert_eq!(got.pings, pings);
        prop_assert_eq!(got.closes, close.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn ws_prop_split_at_every_offset(msgs in prop::collection::vec(msg_strategy(), 1..3)) {
        let (stream, _) = encode_messages(&msgs);
        let whole = decode_in_reads(cfg(true), &stream, &[]);
        for cut in 1..stream.len() {
            let split = decode_in_reads(cfg(true), &stream, &[cut, stream.len()]);
            prop_assert_eq!(&split, &whole, "cut at {}", cut);
        }
    }

    #[test]
    fn ws_prop_arbitrary_bytes_same_outcome_at_any_split(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        reads in prop::collection::vec(1usize..40, 1..6),
        compression in any::<bool>(),
        masking_required in any::<bool>(),
        max_payload in 0usize..512,
    ) {
        let cfg = DecoderConfig { compression, masking_required, max_payload };
        let whole = decode_in_reads(cfg, &bytes, &[]);
        let split = decode_in_reads(cfg, &bytes, &reads);
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn ws_prop_server_frames_decode_back(
        batches in prop::collection::vec(prop::collection::vec(prop::collection::vec(any::<u8>(), 0..3000), 0..4), 1..5),
        compression in any::<bool>(),
        browser in any::<bool>(),
        safari in any::<bool>(),
        reads in prop::collection::vec(1usize..5000, 1..4),
    ) {
        let ecfg = EncoderConfig { compression, browser, no_compressed_fragmentation: safari && compression };
        let mut enc = FrameEncoder::new(ecfg);
        let mut stream = Vec::new();
        for batch in &batches {
            let parts: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
            enc.encode(&parts, &mut stream);
        }
        let dcfg = DecoderConfig { compression, masking_required: false, max_payload: 1 << 20 };
        let got = decode_in_reads(dcfg, &stream, &reads);
        let want: Vec<u8> = batches.iter().flatten().flatten().copied().collect();
        prop_assert_eq!(got.error, None);
        prop_assert_eq!(got.data, want);
    }

    #[test]
    fn ws_prop_handshake_same_outcome_at_every_cut(
        extra in prop::collection::vec(
            prop::sample::select(vec![
                "Origin: http://localhost\r\n", "Sec-WebSocket-Extensions: permessage-deflate\r\n",
                "Nats-No-Masking: true\r\n", "Cookie: jwt=x\r\n", "X: a\r\n b\r\n",
                "Sec-WebSocket-Version: 12\r\n", "Host: two\r\n", "Bad Header\r\n",
            ]),
            0..4,
        ),
        method in prop::sample::select(vec!["GET", "POST", "HEAD"]),
    ) {
        let req = format!(
            "{method} / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{}\r\n",
            extra.concat()
        );
        let h = Handshake::new(&HandshakeConfig { same_origin: true, compression: true, ..HandshakeConfig::default() }).unwrap();
        let whole = h.process(&mut RequestParser::new(), req.as_bytes());
        prop_assert!(!matches!(whole, Outcome::Incomplete));
        let mut parser = RequestParser::new();
        let mut result = Outcome::Incomplete;
        for cut in 1..=req.len() {
            result = h.process(&mut parser, &req.as_bytes()[..cut]);
            if !matches!(result, Outcome::Incomplete) {
                break;
            }
        }
        prop_assert_eq!(result, whole);
    }

    #[test]
    fn ws_prop_handshake_arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let h = Handshake::new(&HandshakeConfig { same_origin: true, ..HandshakeConfig::default() }).unwrap();
        let mut parser = RequestParser::new();
        for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len()] {
            if let Outcome::Reject { rejection, consumed } = h.process(&mut parser, &bytes[..cut]) {
                prop_assert!(consumed <= cut);
                let _ = rejection.response(std::time::SystemTime::now());
                break;
            }
        }
    }
}
