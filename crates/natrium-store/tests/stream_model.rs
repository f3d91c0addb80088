//! The memory store against the reference model: random sequences of operations, every
//! answer and the state compared after each step. `NATRIUM_PROPTEST_CASES` raises the number
//! of cases for long runs (the default keeps the suite fast).

mod model;

use natrium_store::{MemStore, StoreConfig, StreamStore};
use proptest::prelude::*;

fn cases() -> u32 {
    model::cases(256)
}

fn mem(config: StoreConfig) -> Box<dyn StreamStore> {
    Box::new(MemStore::new(config))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn store_model_memstore_matches_reference(ops in proptest::collection::vec(model::harness::op(), 1..80)) {
        model::harness::run(&mem, StoreConfig::default(), &ops);
    }

    #[test]
    fn store_model_memstore_with_limits_matches_reference(
        ops in proptest::collection::vec(model::harness::op(), 1..80),
        per_subject in 1u64..3,
        max_msgs in 2u64..10,
    ) {
        let config = StoreConfig {
            max_msgs: Some(max_msgs),
            max_msgs_per_subject: Some(per_subject),
            ..StoreConfig::default()
        };
        model::harness::run(&mem, config, &ops);
    }
}
