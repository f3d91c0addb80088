//! Unit tests of the server-side framing.

use super::*;
use crate::frame::decode::tests::{drive, Ev};
use crate::frame::decode::{DecoderConfig, FrameDecoder};

fn unmasked_decoder(compression: bool) -> FrameDecoder {
    FrameDecoder::new(DecoderConfig {
        compression,
        masking_required: false,
        max_payload: 1 << 20,
    })
}

fn data_of(evs: &[Ev]) -> Vec<u8> {
    evs.iter()
        .flat_map(|e| match e {
            Ev::Data(b) => b.clone(),
            _ => vec![],
        })
        .collect()
}

#[test]
fn ws_encode_one_binary_frame_per_batch() {
    let frames: Vec<_> = data_frames(6, None).collect();
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].0.as_bytes(), &[0x82, 6]);
    assert_eq!(frames[0].1, 0..6);
    assert_eq!(data_frames(0, None).count(), 0);
    let big: Vec<_> = data_frames(70_000, None).collect();
    assert_eq!(
        big[0].0.as_bytes(),
        &[0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]
    );
}

#[test]
fn ws_encode_browser_frames_capped_at_4096() {
    let frames: Vec<_> = data_frames(10_000, Some(4096)).collect();
    let ranges: Vec<_> = frames.iter().map(|f| f.1.clone()).collect();
    assert_eq!(ranges, vec![0..4096, 4096..8192, 8192..10_000]);
    assert!(
        frames.iter().all(|f| f.0.as_bytes()[0] == 0x82),
        "each frame is complete"
    );
    assert_eq!(frames[2].0.as_bytes(), &[0x82, 126, 0x07, 0x10]);
}

#[test]
fn ws_encode_uncompressed_batches_copy_exactly() {
    let mut enc = FrameEncoder::new(EncoderConfig::default());
    let mut out = Vec::new();
    enc.encode(&[b"INFO {}\r\n", b"", b"PONG\r\n"], &mut out);
    assert_eq!(out, b"\x82\x0fINFO {}\r\nPONG\r\n");
    let mut browser = FrameEncoder::new(EncoderConfig {
        browser: true,
        ..EncoderConfig::default()
    });
    let data = vec![b'z'; 5000];
    let mut out = Vec::new();
    browser.encode(&[&data[..3000], &data[3000..]], &mut out);
    assert_eq!(out.len(), 4 + 4096 + 4 + 904);
    let (evs, err, _) = drive(&mut unmasked_decoder(false), &out);
    assert_eq!(err, None);
    assert_eq!(data_of(&evs), data);
}

#[test]
fn ws_encode_compression_threshold_is_64_bytes() {
    let cfg = EncoderConfig {
        compression: true,
        ..EncoderConfig::default()
    };
    let mut enc = FrameEncoder::new(cfg);
    let mut out = Vec::new();
    enc.encode(&[&[b'a'; 64]], &mut out);
    assert_eq!(out[0], 0x82, "64 bytes go out uncompressed");
    out.clear();
    enc.encode(&[&[b'a'; 65]], &mut out);
    assert_eq!(out[0], 0xc2, "65 bytes are compressed: FIN, RSV1, binary");
    let (evs, err, _) = drive(&mut unmasked_decoder(true), &out);
    assert_eq!(err, None);
    assert_eq!(data_of(&evs), vec![b'a'; 65]);
}

#[test]
fn ws_encode_compressed_fragments_for_browsers_but_not_safari() {
    // Incompressible data, so the compressed payload is over 4096 bytes.
    let mut x: u32 = 1;
    let data: Vec<u8> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let browser = EncoderConfig {
        compression: true,
        browser: true,
        no_compressed_fragmentation: false,
    };
    let mut out = Vec::new();
    FrameEncoder::new(browser).encode(&[&data], &mut out);
    assert_eq!(out[0], 0x42, "first fragment: RSV1 + binary, not final");
    let (evs, err, _) = drive(&mut unmasked_decoder(true), &out);
    assert_eq!(err, None);
    assert_eq!(data_of(&evs), data);
    // Count frames: every continuation has opcode 0 and no RSV1; the last has FIN.
    let mut pos = 0;
    let mut heads = Vec::new();
    while pos < out.len() {
        let len = match out[pos + 1] {
            126 => {
                let l = u16::from_be_bytes([out[pos + 2], out[pos + 3]]) as usize;
                heads.push(out[pos]);
                pos += 4;
                l
            }
            l => {
                heads.push(out[pos]);
                pos += 2;
                l as usize
            }
        };
        assert!(len <= 4096);
        pos += len;
    }
    assert!(heads.len() > 1);
    assert!(heads[1..heads.len() - 1].iter().all(|&h| h == 0x00));
    assert_eq!(*heads.last().unwrap(), 0x80);

    let safari = EncoderConfig {
        no_compressed_fragmentation: true,
        ..browser
    };
    let mut out = Vec::new();
    FrameEncoder::new(safari).encode(&[&data], &mut out);
    assert_eq!(out[0], 0xc2, "Safari gets one compressed frame");
    assert_eq!(data_of(&drive(&mut unmasked_decoder(true), &out).0), data);
}

#[test]
fn ws_encode_compressor_resets_between_batches() {
    let mut enc = FrameEncoder::new(EncoderConfig {
        compression: true,
        ..EncoderConfig::default()
    });
    let batch = vec![b'q'; 1000];
    let mut a = Vec::new();
    enc.encode(&[&batch], &mut a);
    let mut b = Vec::new();
    enc.encode(&[&batch], &mut b);
    assert_eq!(a, b, "no context carried over (server_no_context_takeover)");
    // A fresh decoder per message must inflate each one alone.
    assert_eq!(data_of(&drive(&mut unmasked_decoder(true), &b).0), batch);
}

#[test]
fn ws_encode_control_frames() {
    assert_eq!(ControlFrame::ping(b"").as_bytes(), b"\x89\x00");
    assert_eq!(ControlFrame::pong(b"xyz").as_bytes(), b"\x8a\x03xyz");
    // Seen from the Go binary after a PUB over max_payload: `-ERR`, then this close frame.
    let f = ControlFrame::close_for(CloseCause::MaxPayloadExceeded);
    assert_eq!(
        f.as_bytes(),
        b"\x88\x22\x03\xf1Maximum Message Payload Exceeded"
    );
    let f = ControlFrame::close_for(CloseCause::ClientClosed);
    assert_eq!(f.as_bytes(), b"\x88\x0f\x03\xe8Client Closed");
    let f = ControlFrame::close_for(CloseCause::StaleConnection);
    assert_eq!(f.as_bytes(), b"\x88\x12\x03\xe9Stale Connection");
    let f = ControlFrame::close_for(CloseCause::AuthenticationViolation);
    assert_eq!(&f.as_bytes()[..4], b"\x88\x18\x03\xf0");
    let long = ControlFrame::pong(&[1u8; 200]);
    assert_eq!(long.as_bytes().len(), 127);
}
