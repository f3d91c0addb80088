//! Unit tests of the frame decoder: every rule of Go's `wsReadLoop`, byte for byte.

use super::*;
use crate::frame::encode::ControlFrame;
use crate::frame::FrameHeader;
use flate2::{Compress, Compression, FlushCompress};

const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// An owned event, for comparing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ev {
    Data(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    Close(Option<u16>, Vec<u8>),
}

/// A client frame: header with the given bits, payload masked with `key` if any.
pub(crate) fn frame(
    op: u8,
    fin: bool,
    rsv1: bool,
    payload: &[u8],
    key: Option<[u8; 4]>,
) -> Vec<u8> {
    let opcode = OpCode::from_bits(op).unwrap_or(OpCode::Binary);
    let h = FrameHeader {
        fin,
        rsv1,
        opcode,
        len: payload.len() as u64,
        mask: key,
    };
    let mut out = h.encode().to_vec();
    out[0] = (out[0] & 0xf0) | op;
    let start = out.len();
    out.extend_from_slice(payload);
    if let Some(k) = key {
        apply_mask(k, 0, &mut out[start..]);
    }
    out
}

fn masked(op: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    frame(op, fin, false, payload, Some(KEY))
}

/// Raw deflate with a sync flush and the 4-byte tail removed, as a client compresses.
pub(crate) fn deflate(data: &[u8]) -> Vec<u8> {
    let mut c = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(data.len() + 64);
    c.compress_vec(data, &mut out, FlushCompress::Sync).unwrap();
    while out.len() == out.capacity() {
        out.reserve(out.capacity());
        c.compress_vec(&[], &mut out, FlushCompress::Sync).unwrap();
    }
    assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
    out.truncate(out.len() - 4);
    out
}

/// Feeds all of `input` (one buffer), collecting events until `None` or an error.
pub(crate) fn drive(dec: &mut FrameDecoder, input: &[u8]) -> (Vec<Ev>, Option<FrameError>, usize) {
    let mut buf = input.to_vec();
    let mut pos = 0;
    let mut evs = Vec::new();
    let len = buf.len();
    loop {
        match dec.decode(&mut buf[pos..]) {
            Err(e) => return (evs, Some(e), len - pos),
            Ok(d) => {
                assert!(d.consumed <= len - pos);
                pos += d.consumed;
                match d.event {
                    None => return (evs, None, len - pos),
                    Some(Event::Data(b)) => evs.push(Ev::Data(b.to_vec())),
                    Some(Event::Ping(b)) => evs.push(Ev::Ping(b.to_vec())),
                    Some(Event::Pong(b)) => evs.push(Ev::Pong(b.to_vec())),
                    Some(Event::Close(c)) => evs.push(Ev::Close(c.status, c.reason.to_vec())),
                }
            }
        }
    }
}

fn client() -> FrameDecoder {
    FrameDecoder::new(DecoderConfig::default())
}

fn compressing(max_payload: usize) -> FrameDecoder {
    FrameDecoder::new(DecoderConfig {
        compression: true,
        masking_required: true,
        max_payload,
    })
}

fn err_of(input: &[u8], dec: &mut FrameDecoder) -> FrameError {
    drive(dec, input).1.expect("an error")
}

#[test]
fn ws_decode_masked_binary_and_text() {
    let mut d = client();
    let mut input = masked(2, true, b"PUB foo 1\r\na\r\n");
    input.extend(masked(1, true, b"PING\r\n"));
    let (evs, err, left) = drive(&mut d, &input);
    assert_eq!(err, None);
    assert_eq!(left, 0);
    assert_eq!(
        evs,
        vec![
            Ev::Data(b"PUB foo 1\r\na\r\n".to_vec()),
            Ev::Data(b"PING\r\n".to_vec())
        ]
    );
}

#[test]
fn ws_decode_exact_wire_bytes() {
    // RFC 6455 §5.7: a masked "Hello".
    let mut d = client();
    let input = [
        0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];
    assert_eq!(drive(&mut d, &input).0, vec![Ev::Data(b"Hello".to_vec())]);
}

#[test]
fn ws_decode_every_length_form() {
    for len in [0usize, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
        let mut d = client();
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let (evs, err, left) = drive(&mut d, &masked(2, true, &payload));
        assert_eq!((err, left), (None, 0), "len {len}");
        let got: Vec<u8> = evs
            .iter()
            .flat_map(|e| match e {
                Ev::Data(b) => b.clone(),
                _ => vec![],
            })
            .collect();
        assert_eq!(got, payload, "len {len}");
        assert_eq!(evs.is_empty(), len == 0, "no event for an empty frame");
    }
}

#[test]
fn ws_decode_fragmented_message_with_control_between() {
    let mut d = client();
    let mut input = masked(2, false, b"PUB foo ");
    input.extend(masked(9, true, b"hi"));
    input.extend(masked(0, false, b"1\r\n"));
    input.extend(masked(10, true, b""));
    input.extend(masked(0, true, b"a\r\n"));
    let (evs, err, _) = drive(&mut d, &input);
    assert_eq!(err, None);
    assert_eq!(
        evs,
        vec![
            Ev::Data(b"PUB foo ".to_vec()),
            Ev::Ping(b"hi".to_vec()),
            Ev::Data(b"1\r\n".to_vec()),
            Ev::Pong(vec![]),
            Ev::Data(b"a\r\n".to_vec()),
        ]
    );
    assert_eq!(ControlFrame::pong(b"hi").as_bytes(), b"\x8a\x02hi");
}

#[test]
fn ws_decode_waits_for_whole_header_and_control_frame() {
    let input = masked(2, true, &[7u8; 300]);
    let mut d = client();
    for cut in 0..8 {
        let mut part = input[..cut].to_vec();
        let r = d.decode(&mut part).unwrap();
        assert_eq!((r.consumed, r.event), (0, None), "cut {cut}");
    }
    let ping = masked(9, true, b"abc");
    let mut d = client();
    let mut part = ping[..ping.len() - 1].to_vec();
    assert_eq!(
        d.decode(&mut part).unwrap(),
        Decoded {
            consumed: 0,
            event: None
        }
    );
}

#[test]
fn ws_decode_streams_partial_payload_and_resumes_mask() {
    let payload: Vec<u8> = (0..=255u8).collect();
    let input = masked(2, true, &payload);
    let mut d = client();
    let mut got = Vec::new();
    let mut rest = input.clone();
    // Hand the frame over 7 bytes at a time, keeping unconsumed bytes like a caller does.
    let mut pending: Vec<u8> = Vec::new();
    while !rest.is_empty() || !pending.is_empty() {
        let take = rest.len().min(7);
        pending.extend(rest.drain(..take));
        let (evs, err, left) = drive(&mut d, &pending);
        assert_eq!(err, None);
        for e in evs {
            if let Ev::Data(b) = e {
                got.extend(b);
            }
        }
        pending.drain(..pending.len() - left);
        if rest.is_empty() && left == pending.len() {
            break;
        }
    }
    assert_eq!(got, payload);
}

#[test]
fn ws_decode_close_replies_like_go() {
    let mut d = client();
    let (evs, err, _) = drive(&mut d, &masked(8, true, b"\x03\xe8bye"));
    assert_eq!(err, None);
    assert_eq!(evs, vec![Ev::Close(Some(1000), b"bye".to_vec())]);
    let close = Close {
        status: Some(1000),
        reason: b"bye",
    };
    assert_eq!(
        ControlFrame::close(&close.reply()).as_bytes(),
        b"\x88\x05\x03\xe8bye"
    );
    // Nothing after a close is decoded.
    let (evs, err, left) = drive(&mut d, &masked(2, true, b"PING\r\n"));
    assert_eq!((evs, err, left), (vec![], None, 0));

    let empty = Close {
        status: None,
        reason: b"",
    };
    assert_eq!(ControlFrame::close(&empty.reply()).as_bytes(), b"\x88\x00");
    let bad_utf8 = Close {
        status: Some(4000),
        reason: b"\xff\xfe",
    };
    let mut want = b"\x88\x22\x03\xefinvalid utf8 body in close frame".to_vec();
    want[1] = (want.len() - 2) as u8;
    assert_eq!(ControlFrame::close(&bad_utf8.reply()).as_bytes(), &want[..]);
}

#[test]
fn ws_decode_close_payload_errors() {
    assert_eq!(
        err_of(&masked(8, true, b"\x03"), &mut client()),
        FrameError::CloseOneByte
    );
    assert_eq!(
        err_of(&masked(8, true, b"\x03\xed"), &mut client()),
        FrameError::InvalidCloseStatus(1005)
    );
    assert_eq!(
        err_of(&masked(8, true, b"\x03\xe7"), &mut client()),
        FrameError::InvalidCloseStatus(999)
    );
    assert_eq!(
        FrameError::InvalidCloseStatus(999).to_string(),
        "invalid close status code 999"
    );
}

#[test]
fn ws_decode_protocol_errors_in_go_order_with_go_text() {
    let cases: Vec<(Vec<u8>, FrameError, &str)> = vec![
        (
            vec![0xa2, 0x80],
            FrameError::ReservedBits,
            "RSV2 and RSV3 must be clear",
        ),
        (
            vec![0x92],
            FrameError::ReservedBits,
            "RSV2 and RSV3 must be clear",
        ),
        (
            vec![0xc2],
            FrameError::CompressionNotNegotiated,
            "compressed frame received without negotiated permessage-deflate",
        ),
        (
            vec![0x82, 0x01, b'x'],
            FrameError::MaskMissing,
            "mask bit missing",
        ),
        (
            vec![0x89, 0xfe],
            FrameError::ControlTooLong,
            "control frame length bigger than maximum allowed of 125 bytes",
        ),
        (
            vec![0x09, 0x80],
            FrameError::ControlFragmented,
            "control frame does not have final bit set",
        ),
        (
            vec![0x80, 0x80],
            FrameError::InvalidContinuation,
            "invalid continuation frame",
        ),
        (
            vec![0x83, 0x80],
            FrameError::UnknownOpcode(3),
            "unknown opcode 3",
        ),
        (
            vec![0x8b, 0x80],
            FrameError::UnknownOpcode(11),
            "unknown opcode 11",
        ),
        (
            vec![0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0],
            FrameError::LengthHighBit,
            "invalid 64-bit payload length",
        ),
    ];
    for (input, want, text) in cases {
        assert_eq!(err_of(&input, &mut client()), want, "{input:02x?}");
        assert_eq!(want.to_string(), text);
        let mut close = vec![0x03, 0xea];
        close.extend_from_slice(text.as_bytes());
        assert_eq!(want.close_payload().unwrap().as_bytes(), &close[..]);
    }
}

#[test]
fn ws_decode_message_sequencing_errors() {
    let mut input = masked(2, false, b"a");
    input.extend(masked(2, true, b"b"));
    assert_eq!(
        err_of(&input, &mut client()),
        FrameError::MessageInterleaved
    );
    assert_eq!(
        FrameError::MessageInterleaved.to_string(),
        "new message started before final frame for previous message was received"
    );
    // A continuation with RSV1.
    let mut input = frame(2, false, true, &deflate(b"x"), Some(KEY));
    input.extend(frame(0, true, true, b"", Some(KEY)));
    assert_eq!(
        err_of(&input, &mut compressing(0)),
        FrameError::InvalidContinuation
    );
    // A compressed control frame (RSV1 passes the first check once negotiated).
    assert_eq!(
        err_of(&[0xc9, 0x80], &mut compressing(0)),
        FrameError::ControlCompressed
    );
}

#[test]
fn ws_decode_without_masking_when_granted() {
    let cfg = DecoderConfig {
        masking_required: false,
        ..DecoderConfig::default()
    };
    let mut d = FrameDecoder::new(cfg);
    let mut input = frame(2, true, false, b"PING\r\n", None);
    input.extend(masked(2, true, b"PONG\r\n"));
    let (evs, err, _) = drive(&mut d, &input);
    assert_eq!(err, None);
    assert_eq!(
        evs,
        vec![
            Ev::Data(b"PING\r\n".to_vec()),
            Ev::Data(b"PONG\r\n".to_vec())
        ]
    );
}

#[test]
fn ws_decode_compressed_messages() {
    let mut d = compressing(0);
    let msg = b"PUB foo 1\r\na\r\n";
    let mut input = frame(2, true, true, &deflate(msg), Some(KEY));
    input.extend(frame(2, true, true, &deflate(b"PING\r\n"), Some(KEY)));
    input.extend(masked(2, true, b"PONG\r\n"));
    let (evs, err, _) = drive(&mut d, &input);
    assert_eq!(err, None);
    assert_eq!(
        evs,
        vec![
            Ev::Data(msg.to_vec()),
            Ev::Data(b"PING\r\n".to_vec()),
            Ev::Data(b"PONG\r\n".to_vec())
        ]
    );
}

#[test]
fn ws_decode_compressed_fragments_and_empty_final() {
    let c = deflate(b"PUB foo 1\r\na\r\n");
    let (a, b) = c.split_at(c.len() / 2);
    let mut input = frame(2, false, true, a, Some(KEY));
    input.extend(masked(9, true, b"p"));
    input.extend(frame(0, false, false, b, Some(KEY)));
    input.extend(frame(0, true, false, b"", Some(KEY)));
    let (evs, err, _) = drive(&mut compressing(0), &input);
    assert_eq!(err, None);
    assert_eq!(
        evs,
        vec![
            Ev::Ping(b"p".to_vec()),
            Ev::Data(b"PUB foo 1\r\na\r\n".to_vec())
        ]
    );
}

#[test]
fn ws_decode_corrupt_and_truncated_compressed() {
    let mut c = deflate(b"PING\r\n");
    let last = c.len() - 1;
    c[last] ^= 0xff;
    let e = err_of(&frame(2, true, true, &c, Some(KEY)), &mut compressing(0));
    assert!(
        matches!(
            e,
            FrameError::CorruptCompressed | FrameError::TruncatedCompressed
        ),
        "{e:?}"
    );
    assert!(e.close_payload().is_none());
    // A block header promising a stored block that never comes.
    let e = err_of(
        &frame(2, true, true, &[0x00, 0x10, 0x00], Some(KEY)),
        &mut compressing(0),
    );
    assert!(
        matches!(
            e,
            FrameError::CorruptCompressed | FrameError::TruncatedCompressed
        ),
        "{e:?}"
    );
}

#[test]
fn ws_decode_deflate_bomb_is_cut_at_max_payload() {
    // 64 MiB of zeros deflates to ~64 KiB: under the compressed limit, far over max_payload.
    let bomb = deflate(&vec![0u8; 64 << 20]);
    let mpay = 1 << 20;
    assert!((bomb.len() as u64) < compressed_message_bytes_max(mpay));
    let (evs, err, _) = drive(
        &mut compressing(mpay),
        &frame(2, true, true, &bomb, Some(KEY)),
    );
    assert_eq!(err, Some(FrameError::MaxPayload));
    let total: usize = evs
        .iter()
        .map(|e| match e {
            Ev::Data(b) => b.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(
        total, mpay,
        "Go hands exactly max_payload bytes to the parser first"
    );
    assert!(evs
        .iter()
        .all(|e| matches!(e, Ev::Data(b) if b.len() <= crate::limits::INFLATE_CHUNK_BYTES)));
}

#[test]
fn ws_decode_output_exactly_at_max_payload_is_fine() {
    let data = vec![b'x'; 100];
    let (evs, err, _) = drive(
        &mut compressing(100),
        &frame(2, true, true, &deflate(&data), Some(KEY)),
    );
    assert_eq!(err, None);
    assert_eq!(evs, vec![Ev::Data(data)]);
    let (_, err, _) = drive(
        &mut compressing(99),
        &frame(2, true, true, &deflate(&[b'x'; 100]), Some(KEY)),
    );
    assert_eq!(err, Some(FrameError::MaxPayload));
}

#[test]
fn ws_decode_compressed_input_limit_checked_before_buffering() {
    // max_payload 16: at most 128 compressed bytes (trailer included) per message.
    let mut d = compressing(16);
    let junk = [0x55u8; 200];
    let mut input = frame(2, false, true, &junk[..100], Some(KEY));
    input.extend(frame(0, true, false, &junk[100..], Some(KEY)));
    assert_eq!(err_of(&input, &mut d), FrameError::MaxPayload);
    assert_eq!(
        FrameError::MaxPayload.to_string(),
        "maximum payload exceeded"
    );
    // 120 bytes fit; the 9-byte trailer then pushes it over, as in Go.
    let mut d = compressing(16);
    assert_eq!(
        err_of(&frame(2, true, true, &junk[..120], Some(KEY)), &mut d),
        FrameError::MaxPayload
    );
}

#[test]
fn ws_decode_huge_length_does_not_allocate_or_panic() {
    // A 2^62-byte uncompressed frame just streams; a compressed one is refused at its header.
    let mut input = vec![0x82, 0xff, 0x40, 0, 0, 0, 0, 0, 0, 0];
    input.extend_from_slice(&KEY);
    input.extend_from_slice(&[1, 2, 3]);
    let (evs, err, _) = drive(&mut client(), &input);
    assert_eq!((evs.len(), err), (1, None));
    input[0] = 0xc2;
    assert_eq!(
        err_of(&input[..14], &mut compressing(0)),
        FrameError::MaxPayload
    );
}
