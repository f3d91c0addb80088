//! The message schedule index decoder (`msgs/sched.dat`'s body) over arbitrary bytes: never a
//! panic, and whatever decodes encodes back to bytes that decode the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_store::filestore::schedule_index;

fuzz_target!(|data: &[u8]| {
    if let Ok(index) = schedule_index::decode(data) {
        let mut again = Vec::new();
        schedule_index::encode(&index, &mut again);
        assert_eq!(
            schedule_index::decode(&again).expect("re-encoded index decodes"),
            index
        );
    }
});
