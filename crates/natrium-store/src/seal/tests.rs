//! Sealed block bodies across every codec: round trips, the frame index, damage contained
//! to the frames it touches (proptest; `NATRIUM_PROPTEST_CASES` raises the case count), and
//! a throughput printout kept out of the default run.

use std::sync::OnceLock;

use proptest::prelude::*;

use super::*;
use crate::filestore::record::{self, Decoded, Kind, Record};
use crate::types::MsgTtl;

/// Where the records of a plain block start: after the 32-byte block header.
const BASE: u64 = 32;

/// `count` message records with `payload` bytes each: JSON-like text with varying numbers,
/// so LZ4 has something to find but not everything.
fn records(count: u64, payload: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for seq in 1..=count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let subject = format!("orders.region.{}", x % 100);
        let mut body = format!(
            "{{\"id\":{seq},\"user\":\"u{}\",\"amount\":{}.{:02},\"status\":\"new\"}}",
            x % 5000,
            x % 1000,
            x % 100
        )
        .into_bytes();
        body.resize(payload, b' ');
        let rec = Record {
            kind: Kind::Msg,
            erased: false,
            sealed: false,
            seq,
            timestamp_ns: 1_700_000_000_000_000_000 + seq as i64,
            ttl: MsgTtl::None,
            subject: subject.as_bytes(),
            headers: b"",
            payload: &body,
        };
        record::encode(&rec, &mut out).unwrap();
    }
    out
}

/// The six codecs: plain, compressed, encrypted, both; each encryption with both ciphers.
fn codecs(keys: &[DataKey; 2]) -> Vec<FrameCodec<'_>> {
    let mut out = vec![
        FrameCodec::default(),
        FrameCodec {
            compress: true,
            key: None,
        },
    ];
    for key in keys {
        for compress in [false, true] {
            out.push(FrameCodec {
                compress,
                key: Some(key),
            });
        }
    }
    out
}

fn test_keys() -> [DataKey; 2] {
    [
        DataKey::from_secret(Cipher::ChaCha, &[1; KEY_BYTES]),
        DataKey::from_secret(Cipher::Aes, &[2; KEY_BYTES]),
    ]
}

/// Checks that a decode holds exactly `plain`, frame by frame.
fn assert_whole(decoded: &DecodedFrames, plain: &[u8]) {
    assert_eq!(decoded.damaged, vec![]);
    let mut expect = BASE;
    let mut joined = Vec::new();
    for seg in &decoded.segments {
        assert_eq!(seg.plain_offset, expect);
        assert!(matches!(record::decode(&seg.bytes), Decoded::Record(..)));
        expect += seg.bytes.len() as u64;
        joined.extend_from_slice(&seg.bytes);
    }
    assert_eq!(joined, plain);
}

#[test]
fn store_seal_frames_round_trip_every_codec() {
    let keys = test_keys();
    // Many small records, then one record larger than a frame, then small ones again.
    let mut plain = records(2000, 128);
    let big_at = plain.len();
    let big_payload = vec![b'z'; FRAME_PLAIN_BYTES_TARGET + 1000];
    let big = Record {
        kind: Kind::Msg,
        erased: false,
        sealed: false,
        seq: 2001,
        timestamp_ns: 0,
        ttl: MsgTtl::Secs(5),
        subject: b"big",
        headers: b"NATS/1.0\r\n\r\n",
        payload: &big_payload,
    };
    record::encode(&big, &mut plain).unwrap();
    plain.extend_from_slice(&records(10, 40));
    for codec in codecs(&keys) {
        let sealed = encode_records(&plain, codec, BASE).unwrap();
        let decoded = decode_frames(&sealed.bytes, codec.key);
        assert_whole(&decoded, &plain);
        assert!(sealed.index.entries().len() >= 6);
        assert_eq!(FrameIndex::scan(&sealed.bytes), sealed.index);
        for entry in sealed.index.entries() {
            let header = FrameHeader::parse(&sealed.bytes[entry.stored_offset as usize..]);
            let alg = header.unwrap().alg;
            assert_eq!(alg & ALG_AEAD != 0, codec.key.is_some());
            assert!(
                entry.raw_len as usize <= FRAME_PLAIN_BYTES_TARGET
                    || entry.plain_offset == BASE + big_at as u64
            );
        }
        if codec.compress {
            assert!(
                sealed.bytes.len() < plain.len() / 2,
                "{}",
                sealed.bytes.len()
            );
        } else {
            assert!(sealed.bytes.len() > plain.len());
        }
        // Loading one record through the index decodes only its frame.
        for offset in [BASE, BASE + 40_000, BASE + big_at as u64] {
            let entry = sealed.index.find(offset).unwrap();
            let at = entry.stored_offset as usize;
            let frame = &sealed.bytes[at..at + entry.frame_bytes as usize];
            let (_, bytes) = decode_frame(frame, codec.key).unwrap();
            let inner = &bytes[(offset - entry.plain_offset) as usize..];
            let rel = (offset - BASE) as usize;
            assert_eq!(&inner[..40], &plain[rel..rel + 40]);
        }
        let end = BASE + plain.len() as u64;
        assert_eq!(sealed.index.find(end), None);
        assert_eq!(sealed.index.find(BASE - 1), None);
    }
}

#[test]
fn store_seal_frames_empty_and_junk_bodies() {
    let sealed = encode_records(&[], FrameCodec::default(), BASE).unwrap();
    assert!(sealed.bytes.is_empty() && sealed.index.entries().is_empty());
    assert_eq!(decode_frames(&[], None), DecodedFrames::default());
    // Bytes that are not records are carried over as they are.
    let mut plain = b"junk".to_vec();
    plain.extend_from_slice(&records(3, 10));
    let sealed = encode_records(&plain, FrameCodec::default(), 0).unwrap();
    let decoded = decode_frames(&sealed.bytes, None);
    assert_eq!(decoded.segments.len(), 1);
    assert_eq!(decoded.segments[0].bytes, plain);
    let junk = decode_frames(b"NFNFNF not a frame at all", None);
    assert!(junk.segments.is_empty());
    assert_eq!(junk.damaged.len(), 1);
    assert_eq!(junk.damaged[0].reason, DamageReason::Header);
}

#[test]
fn store_seal_frames_damage_loses_only_its_frame() {
    let keys = test_keys();
    let plain = records(1500, 128);
    for codec in codecs(&keys) {
        let sealed = encode_records(&plain, codec, BASE).unwrap();
        let entries = sealed.index.entries();
        let victim = entries[2];
        let at = victim.stored_offset as usize;
        // A flip in the data: the header is trusted, the loss is exactly the frame.
        let mut bad = sealed.bytes.clone();
        bad[at + FRAME_HEADER_BYTES + 20] ^= 0x10;
        let decoded = decode_frames(&bad, codec.key);
        assert_eq!(decoded.segments.len(), entries.len() - 1);
        assert_eq!(decoded.damaged.len(), 1);
        let damage = &decoded.damaged[0];
        assert_eq!(damage.reason, DamageReason::Crc);
        assert_eq!(damage.plain_start, Some(victim.plain_offset));
        assert_eq!(damage.plain_end, Some(victim.plain_range().end));
        // A flip in the header: resync finds the next frame; the plain range is still exact.
        let mut bad = sealed.bytes.clone();
        bad[at + 5] ^= 0x01;
        let decoded = decode_frames(&bad, codec.key);
        assert_eq!(decoded.segments.len(), entries.len() - 1);
        let damage = &decoded.damaged[0];
        assert_eq!(damage.reason, DamageReason::Header);
        let stored_end = victim.stored_offset + u64::from(victim.frame_bytes);
        assert_eq!(damage.stored, victim.stored_offset..stored_end);
        assert_eq!(damage.plain_start, Some(victim.plain_offset));
        assert_eq!(damage.plain_end, Some(victim.plain_range().end));
        // A cut inside the last frame.
        let last = entries[entries.len() - 1];
        let cut = &sealed.bytes[..last.stored_offset as usize + 30];
        let decoded = decode_frames(cut, codec.key);
        assert_eq!(decoded.segments.len(), entries.len() - 1);
        assert_eq!(decoded.damaged[0].reason, DamageReason::Cut);
        assert_eq!(decoded.damaged[0].plain_start, Some(last.plain_offset));
        assert_eq!(decoded.damaged[0].plain_end, None);
        // A whole frame cut out: the gap is reported in plain offsets.
        let mut spliced = sealed.bytes[..at].to_vec();
        spliced.extend_from_slice(&sealed.bytes[at + victim.frame_bytes as usize..]);
        let decoded = decode_frames(&spliced, codec.key);
        assert_eq!(decoded.segments.len(), entries.len() - 1);
        assert_eq!(decoded.damaged[0].plain_start, Some(victim.plain_offset));
        assert_eq!(decoded.damaged[0].plain_end, Some(victim.plain_range().end));
    }
}

#[test]
fn store_seal_frames_wrong_or_missing_key() {
    let keys = test_keys();
    let plain = records(800, 128);
    let other = DataKey::from_secret(Cipher::ChaCha, &[9; KEY_BYTES]);
    for codec in codecs(&keys).into_iter().filter(|c| c.key.is_some()) {
        let sealed = encode_records(&plain, codec, BASE).unwrap();
        let frames = sealed.index.entries().len();
        for (key, reason) in [
            (None, DamageReason::NoKey),
            (Some(&other), DamageReason::Decrypt),
        ] {
            let decoded = decode_frames(&sealed.bytes, key);
            assert!(decoded.segments.is_empty());
            assert_eq!(decoded.damaged.len(), frames);
            assert!(decoded.damaged.iter().all(|d| d.reason == reason));
        }
    }
}

/// One encoding per codec, shared by the proptest cases.
struct Fixture {
    plain: Vec<u8>,
    sealed: Vec<(Option<Cipher>, SealedBody)>,
    keys: [DataKey; 2],
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let keys = test_keys();
        let plain = records(1200, 128);
        let sealed = codecs(&keys)
            .into_iter()
            .map(|c| {
                let body = encode_records(&plain, c, BASE).unwrap();
                (c.key.map(DataKey::cipher), body)
            })
            .collect();
        Fixture {
            plain,
            sealed,
            keys,
        }
    })
}

#[derive(Debug, Clone)]
enum Harm {
    Flip { at: usize, mask: u8 },
    Cut { at: usize },
    Delete { at: usize, len: usize },
}

fn harm() -> impl Strategy<Value = Harm> {
    prop_oneof![
        4 => (any::<usize>(), 1u8..).prop_map(|(at, mask)| Harm::Flip { at, mask }),
        1 => any::<usize>().prop_map(|at| Harm::Cut { at }),
        1 => (any::<usize>(), 1usize..200).prop_map(|(at, len)| Harm::Delete { at, len }),
    ]
}

/// Applies harms; returns the damaged bytes and, for each original frame, whether it is
/// still intact (untouched, possibly shifted by a deletion).
fn apply(bytes: &[u8], entries: &[FrameEntry], harms: &[Harm]) -> (Vec<u8>, Vec<bool>) {
    let mut out = bytes.to_vec();
    // Original stored range of each current byte, so harms can be mapped back.
    let mut origin: Vec<usize> = (0..bytes.len()).collect();
    let mut intact = vec![true; entries.len()];
    let hit = |intact: &mut Vec<bool>, pos: usize| {
        for (i, e) in entries.iter().enumerate() {
            let r = e.stored_offset as usize..(e.stored_offset + u64::from(e.frame_bytes)) as usize;
            if r.contains(&pos) {
                intact[i] = false;
            }
        }
    };
    for harm in harms {
        if out.is_empty() {
            break;
        }
        match *harm {
            Harm::Flip { at, mask } => {
                let at = at % out.len();
                out[at] ^= mask;
                hit(&mut intact, origin[at]);
            }
            Harm::Cut { at } => {
                let at = at % out.len();
                for &pos in &origin[at..] {
                    hit(&mut intact, pos);
                }
                out.truncate(at);
                origin.truncate(at);
            }
            Harm::Delete { at, len } => {
                let at = at % out.len();
                let end = (at + len).min(out.len());
                for &pos in &origin[at..end] {
                    hit(&mut intact, pos);
                }
                out.drain(at..end);
                origin.drain(at..end);
            }
        }
    }
    (out, intact)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("NATRIUM_PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        ..ProptestConfig::default()
    })]

    /// Damage never panics the decoder, every frame it did not touch decodes, and nothing
    /// decodes to bytes other than the original ones at its plain offset.
    #[test]
    fn store_seal_frames_damage_is_contained(
        which in 0usize..6,
        harms in proptest::collection::vec(harm(), 1..5),
    ) {
        let fx = fixture();
        let (cipher, sealed) = &fx.sealed[which];
        let key = cipher.map(|c| if c == Cipher::ChaCha { &fx.keys[0] } else { &fx.keys[1] });
        let entries = sealed.index.entries();
        let (bad, intact) = apply(&sealed.bytes, entries, &harms);
        let decoded = decode_frames(&bad, key);
        for seg in &decoded.segments {
            let rel = (seg.plain_offset - BASE) as usize;
            prop_assert_eq!(&fx.plain[rel..rel + seg.bytes.len()], &seg.bytes[..]);
        }
        for (entry, ok) in entries.iter().zip(&intact) {
            if *ok {
                prop_assert!(
                    decoded.segments.iter().any(|s| s.plain_offset == entry.plain_offset),
                    "intact frame at {} lost", entry.plain_offset
                );
            }
        }
        for d in &decoded.damaged {
            if let (Some(start), Some(end)) = (d.plain_start, d.plain_end) {
                prop_assert!(start <= end);
                for seg in &decoded.segments {
                    let seg_end = seg.plain_offset + seg.bytes.len() as u64;
                    prop_assert!(seg_end <= start || seg.plain_offset >= end);
                }
            }
        }
        let _ = FrameIndex::scan(&bad);
    }

    /// Arbitrary bytes: no panic from any decoder.
    #[test]
    fn store_seal_decoders_take_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let fx = fixture();
        let _ = decode_frames(&bytes, Some(&fx.keys[0]));
        let _ = decode_frame(&bytes, None);
        let _ = FrameIndex::scan(&bytes);
        let _ = parse_key_record(&bytes);
        let keys = ServerKeys::new(b"k", Some(b"p"), Cipher::Aes).unwrap();
        let ctx = KeyContext { account: "a", stream: "s", file: "f" };
        let _ = keys.unwrap(&ctx, &bytes);
        let _ = open_state_body(&keys, &ctx, b"NCST", &bytes);
        let _ = open_body(&fx.keys[1], b"", &bytes);
        let _ = open_record_body(&fx.keys[1], 0, 0, &[], &bytes);
    }
}

/// Throughput of sealing an 8 MiB block of 128-byte messages. Run with
/// `cargo test --release -p natrium-store store_seal_throughput -- --ignored --nocapture`.
#[test]
#[ignore = "timing printout, not a check"]
fn store_seal_throughput() {
    use std::time::Instant;
    let keys = test_keys();
    let mut plain = Vec::new();
    let mut count = 0;
    while plain.len() < 8 * 1024 * 1024 {
        count += 1000;
        plain = records(count, 128);
    }
    let mib = plain.len() as f64 / (1024.0 * 1024.0);
    for codec in codecs(&keys) {
        let rounds = 5;
        let start = Instant::now();
        let mut sealed = None;
        for _ in 0..rounds {
            sealed = Some(encode_records(&plain, codec, BASE).unwrap());
        }
        let enc = start.elapsed().as_secs_f64() / f64::from(rounds);
        let sealed = sealed.unwrap();
        let start = Instant::now();
        for _ in 0..rounds {
            assert!(decode_frames(&sealed.bytes, codec.key).damaged.is_empty());
        }
        let dec = start.elapsed().as_secs_f64() / f64::from(rounds);
        eprintln!(
            "compress={} cipher={:?}: {:.1} MiB -> {:.1} MiB ({:.3}), seal {:.0} MiB/s, open {:.0} MiB/s",
            codec.compress,
            codec.key.map(DataKey::cipher),
            mib,
            sealed.bytes.len() as f64 / (1024.0 * 1024.0),
            sealed.bytes.len() as f64 / plain.len() as f64,
            mib / enc,
            mib / dec,
        );
    }
}
