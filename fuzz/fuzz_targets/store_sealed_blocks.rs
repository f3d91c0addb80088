//! The sealed block decoders over arbitrary bytes: the frame decoder, the frame index scan
//! and the key record parser never panic, and what they accept is consistent. The same
//! bytes, taken as a block's plain record bytes, seal under every codec and decode back to
//! themselves; with one byte flipped, every frame the flip did not touch still decodes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_store::seal::{
    decode_frames, encode_records, parse_key_record, Cipher, DataKey, FrameCodec, FrameIndex,
    KeyContext, ServerKeys,
};

fuzz_target!(|data: &[u8]| {
    let key = DataKey::from_secret(Cipher::Aes, &[7; 32]);
    check_decoders(data, &key);
    let compress = data.first().is_some_and(|b| b & 1 != 0);
    let encrypt = data.first().is_some_and(|b| b & 2 != 0);
    let codec = FrameCodec {
        compress,
        key: encrypt.then_some(&key),
    };
    let sealed = encode_records(data, codec, 32).expect("plain bytes seal");
    let decoded = decode_frames(&sealed.bytes, codec.key);
    assert!(decoded.damaged.is_empty());
    let joined: Vec<u8> = decoded.segments.iter().flat_map(|s| s.bytes.clone()).collect();
    assert_eq!(joined, data);
    if let (Some(at), Some(mask)) = (data.get(1), data.get(2)) {
        let mut bad = sealed.bytes.clone();
        if bad.is_empty() || *mask == 0 {
            return;
        }
        let at = usize::from(*at) * 257 % bad.len();
        bad[at] ^= mask;
        let decoded = decode_frames(&bad, codec.key);
        for entry in sealed.index.entries() {
            let range = entry.stored_offset..entry.stored_offset + u64::from(entry.frame_bytes);
            if !range.contains(&(at as u64)) {
                assert!(decoded
                    .segments
                    .iter()
                    .any(|s| s.plain_offset == entry.plain_offset));
            }
        }
    }
});

fn check_decoders(data: &[u8], key: &DataKey) {
    for key in [None, Some(key)] {
        let decoded = decode_frames(data, key);
        let mut end = 0;
        for seg in &decoded.segments {
            assert!(seg.plain_offset >= end, "segments in plain order");
            end = seg.plain_offset + seg.bytes.len() as u64;
        }
    }
    let index = FrameIndex::scan(data);
    for entry in index.entries() {
        assert_eq!(index.find(entry.plain_offset), Some(*entry));
    }
    if let Ok(record) = parse_key_record(data) {
        assert!(record.key_id <= 1);
        let keys = ServerKeys::new(b"fuzz", Some(b"prev"), Cipher::ChaCha).expect("keys");
        let ctx = KeyContext {
            account: "A",
            stream: "S",
            file: "f",
        };
        // A random record passes its CRC but no key opens it.
        assert!(keys.unwrap(&ctx, data).is_err());
    }
}
