//! The state file decoders over arbitrary bytes: the envelope of every kind (`meta.dat`,
//! `index.dat`, the consumer files) and the consumer state body. Never a panic, and whatever
//! decodes encodes back to bytes that decode the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_store::filestore::{consumer_state, envelope};

fuzz_target!(|data: &[u8]| {
    for kind in envelope::Kind::ALL {
        if let Ok(env) = envelope::decode(kind, data) {
            assert_eq!(env.kind, kind);
            let mut again = Vec::new();
            envelope::encode(kind, env.flags, env.body, &mut again).expect("body within ceiling");
            assert_eq!(
                envelope::decode(kind, &again).expect("re-encoded envelope"),
                env
            );
            assert_eq!(again, data, "an envelope has one encoding");
        }
    }
    if let Ok(state) = consumer_state::decode(data) {
        let mut again = Vec::new();
        consumer_state::encode(&state, &mut again);
        let back = consumer_state::decode(&again).expect("re-encoded state decodes");
        assert_eq!(back, state);
    }
});
