//! The file store on the simulated file system against the reference model, with syncs and
//! crashes that keep only what was synced. `NATRIUM_PROPTEST_CASES` raises the number of
//! cases for long runs.

mod model;

use std::path::Path;
use std::sync::Arc;

use natrium_store::filestore::at_rest::AtRest;
use natrium_store::io::{CrashMode, SimFs, StorageIo};
use natrium_store::seal::{Cipher, ServerKeys};
use natrium_store::{FileStore, FileStoreOptions, NewMsg, StoreConfig, StreamStore};
use proptest::prelude::*;

use model::crash::{crash_op, run, CrashOp};

fn cases() -> u32 {
    model::cases(64)
}

/// Runs `ops` on a fresh simulated file system, with small blocks so rotation happens.
fn run_on_sim(config: StoreConfig, ops: &[CrashOp]) {
    run_on_sim_with(config, ops, false, None);
}

/// As `run_on_sim`, sealing (compressing) every block that is no longer the tail if
/// `compress`, and encrypting blocks with `cipher` if given.
fn run_on_sim_with(config: StoreConfig, ops: &[CrashOp], compress: bool, cipher: Option<Cipher>) {
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let at_rest = cipher.map(|cipher| AtRest {
        keys: Arc::new(ServerKeys::new(b"model key", None, cipher).unwrap()),
        account: "$G".into(),
        stream: "MODEL".into(),
    });
    let copies = fs.clone();
    let open = move |config: StoreConfig| -> Box<dyn StreamStore> {
        let options = FileStoreOptions {
            block_bytes: 512,
            cache_bytes: 600,
            compress,
            // Small, so that syncs write the index and crashes leave it stale.
            index_bytes: 300,
        };
        let dir = Path::new("/s");
        let open_on = |io: Arc<dyn StorageIo>| {
            FileStore::open_at_rest(io, dir, config.clone(), options, at_rest.clone()).unwrap()
        };
        index_agrees_with_full_scan(&copies, &open_on);
        Box::new(open_on(Arc::clone(&io)))
    };
    let crash = move || fs.crash(CrashMode::DropUnsynced);
    run(&open, &crash, config, ops);
}

/// Opens copies of `fs`'s files with and without `index.dat`: the reopen from the index
/// (and the scan of what follows it) must leave the state the full scan does, and an index
/// on disk is always one that holds (it is removed before any change it would not match).
fn index_agrees_with_full_scan(fs: &SimFs, open: &dyn Fn(Arc<dyn StorageIo>) -> FileStore) {
    let has_index = fs.contents(Path::new("/s/msgs/index.dat")).is_some();
    let from_index = open(Arc::new(fs.copy_where(|_| true)));
    let scanned = open(Arc::new(fs.copy_where(|p| !p.ends_with("index.dat"))));
    assert_eq!(
        from_index.recovered_from_index(),
        has_index,
        "index used if present"
    );
    assert!(!scanned.recovered_from_index());
    assert_eq!(from_index.recovered_state(), scanned.recovered_state());
}

/// Sequences used again after a truncate, a tombstone of each use in one block, and that
/// block compacted (encrypted, one message per subject): only the later tombstone is
/// tracked, and the reopen from the index agrees with the full scan.
#[test]
fn store_model_filestore_tombstones_across_a_truncate() {
    use model::harness::Op;
    use natrium_store::MsgTtl;
    let put = |subject, headers, payload, ttl| {
        CrashOp::Op(Op::Store {
            subject,
            headers,
            payload,
            ttl,
            rollup: false,
            dt: 0,
        })
    };
    let ops = vec![
        put(0, 0, 0, MsgTtl::None),
        put(0, 0, 0, MsgTtl::None),
        put(0, 0, 0, MsgTtl::None),
        put(1, 0, 0, MsgTtl::Secs(1)),
        CrashOp::Sync,
        put(0, 0, 0, MsgTtl::None),
        put(0, 0, 0, MsgTtl::None),
        CrashOp::Crash,
        put(1, 0, 0, MsgTtl::None),
        CrashOp::Op(Op::Expire { dt: 0 }),
        CrashOp::Op(Op::Truncate(2)),
        put(0, 0, 4, MsgTtl::None),
        put(2, 2, 30, MsgTtl::None),
        put(2, 5, 17, MsgTtl::None),
        CrashOp::Sync,
        put(2, 0, 0, MsgTtl::None),
        CrashOp::Sync,
        CrashOp::Crash,
    ];
    let config = StoreConfig {
        max_msgs_per_subject: Some(1),
        ..StoreConfig::default()
    };
    run_on_sim_with(config, &ops, false, Some(Cipher::ChaCha));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn store_model_filestore_survives_crashes(ops in proptest::collection::vec(crash_op(), 1..80)) {
        run_on_sim(StoreConfig::default(), &ops);
    }

    #[test]
    fn store_model_filestore_compressed_survives_crashes(
        ops in proptest::collection::vec(crash_op(), 1..80),
        per_subject in proptest::option::of(1u64..3),
    ) {
        let config = StoreConfig {
            max_msgs_per_subject: per_subject,
            ..StoreConfig::default()
        };
        run_on_sim_with(config, &ops, true, None);
    }

    #[test]
    fn store_model_filestore_encrypted_survives_crashes(
        ops in proptest::collection::vec(crash_op(), 1..80),
        per_subject in proptest::option::of(1u64..3),
        aes in proptest::bool::ANY,
    ) {
        let config = StoreConfig {
            max_msgs_per_subject: per_subject,
            ..StoreConfig::default()
        };
        let cipher = if aes { Cipher::Aes } else { Cipher::ChaCha };
        run_on_sim_with(config, &ops, false, Some(cipher));
    }

    #[test]
    fn store_model_filestore_compressed_encrypted_survives_crashes(
        ops in proptest::collection::vec(crash_op(), 1..80),
        per_subject in proptest::option::of(1u64..3),
    ) {
        let config = StoreConfig {
            max_msgs_per_subject: per_subject,
            ..StoreConfig::default()
        };
        run_on_sim_with(config, &ops, true, Some(Cipher::ChaCha));
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

#[derive(Debug, Clone)]
enum TornOp {
    Store(usize),
    Remove(u64),
    Sync,
}

fn torn_op() -> impl Strategy<Value = TornOp> {
    prop_oneof![
        6 => (0usize..300).prop_map(TornOp::Store),
        2 => (1u64..40).prop_map(TornOp::Remove),
        1 => Just(TornOp::Sync),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// A crash that keeps a torn prefix of the unsynced writes: every message present at the
    /// last sync and still present at the crash is recovered whole, and a torn tail is not
    /// reported as lost, with plain or encrypted blocks.
    #[test]
    fn store_file_torn_crash_keeps_synced(
        ops in proptest::collection::vec(torn_op(), 1..60),
        keep_bytes in 0usize..2000,
        encrypted in proptest::bool::ANY,
    ) {
        let fs = SimFs::new();
        let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
        let at_rest = encrypted.then(|| AtRest {
            keys: Arc::new(ServerKeys::new(b"torn key", None, Cipher::Aes).unwrap()),
            account: "$G".into(),
            stream: "TORN".into(),
        });
        let options = FileStoreOptions {
            block_bytes: 700,
            cache_bytes: 600,
            compress: false,
            index_bytes: 500,
        };
        let dir = Path::new("/s");
        let config = StoreConfig::default();
        let mut store =
            FileStore::open_at_rest(Arc::clone(&io), dir, config.clone(), options, at_rest.clone())
                .unwrap();
        let mut held = std::collections::BTreeMap::new();
        let mut synced = held.clone();
        for op in &ops {
            match op {
                TornOp::Store(len) => {
                    let payload = bytes::Bytes::from(vec![b'x'; *len]);
                    let msg = NewMsg::new(b"t.a", bytes::Bytes::new(), payload.clone(), 5);
                    let seq = store.store_msg(msg).unwrap().seq;
                    held.insert(seq, payload);
                }
                TornOp::Remove(seq) => {
                    store.remove_msg(*seq).unwrap();
                    held.remove(seq);
                }
                TornOp::Sync => {
                    store.sync().unwrap();
                    synced = held.clone();
                }
            }
        }
        drop(store);
        fs.crash(CrashMode::TornPrefix { keep_bytes });
        let open_on = |io: Arc<dyn StorageIo>| {
            FileStore::open_at_rest(io, dir, config.clone(), options, at_rest.clone()).unwrap()
        };
        index_agrees_with_full_scan(&fs, &open_on);
        let store = open_on(io);
        prop_assert_eq!(store.state().lost, None);
        for (seq, payload) in synced.iter().filter(|(s, _)| held.contains_key(s)) {
            let msg = store.load_msg(*seq).unwrap();
            prop_assert_eq!(&msg.payload, payload);
        }
    }
}
