//! The file store's record decoder over arbitrary block bytes, scanned as recovery scans a
//! block: never a panic, always progress, and every record it accepts encodes back to a
//! record that decodes the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_store::filestore::record::{decode, encode, Decoded};

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while let Some(rest) = data.get(at..) {
        if rest.is_empty() {
            break;
        }
        match decode(rest) {
            Decoded::Record(record, len) => {
                assert!(len > 0 && len <= rest.len());
                let mut again = Vec::new();
                if encode(&record, &mut again).is_some() {
                    match decode(&again) {
                        Decoded::Record(back, n) => {
                            assert_eq!(back, record);
                            assert_eq!(n, again.len());
                        }
                        other => panic!("re-encoded record decodes as {other:?}"),
                    }
                }
                at += len;
            }
            Decoded::Incomplete => break,
            Decoded::BadHeader => at += 1,
            Decoded::BadRecord { len, .. } => {
                assert!(len > 0 && len <= rest.len());
                at += len;
            }
        }
    }
});
