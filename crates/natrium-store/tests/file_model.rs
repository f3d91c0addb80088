//! The file store on the simulated file system against the reference model, with syncs and
//! crashes that keep only what was synced. `NATRIUM_PROPTEST_CASES` raises the number of
//! cases for long runs.

mod model;

use std::path::Path;
use std::sync::Arc;

use natrium_store::io::{CrashMode, SimFs, StorageIo};
use natrium_store::{FileStore, FileStoreOptions, StoreConfig, StreamStore};
use proptest::prelude::*;

use model::crash::{crash_op, run, CrashOp};

fn cases() -> u32 {
    std::env::var("NATRIUM_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// Runs `ops` on a fresh simulated file system, with small blocks so rotation happens.
fn run_on_sim(config: StoreConfig, ops: &[CrashOp]) {
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let open = move |config: StoreConfig| -> Box<dyn StreamStore> {
        let options = FileStoreOptions { block_bytes: 512 };
        Box::new(FileStore::open(Arc::clone(&io), Path::new("/s"), config, options).unwrap())
    };
    let crash = move || fs.crash(CrashMode::DropUnsynced);
    run(&open, &crash, config, ops);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn store_model_filestore_survives_crashes(ops in proptest::collection::vec(crash_op(), 1..80)) {
        run_on_sim(StoreConfig::default(), &ops);
    }

    #[test]
    fn store_model_filestore_with_limits_survives_crashes(
        ops in proptest::collection::vec(crash_op(), 1..80),
        per_subject in 1u64..3,
        max_msgs in 2u64..10,
    ) {
        let config = StoreConfig {
            max_msgs: Some(max_msgs),
            max_msgs_per_subject: Some(per_subject),
            ..StoreConfig::default()
        };
        run_on_sim(config, &ops);
    }
}
