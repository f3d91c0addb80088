//! `index.dat` (`docs/store-format.md` §6): a reopen from the index leaves the state a full
//! scan of the same files does, after a clean stop, after a crash with a stale index, and
//! whatever happened to the blocks in between; a damaged, truncated, foreign or outdated
//! index is ignored for the full scan.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;

use super::at_rest::AtRest;
use super::{FileStore, FileStoreOptions};
use crate::io::{CrashMode, OpenMode, SimFs, StorageIo};
use crate::seal::{Cipher, ServerKeys};
use crate::{MsgTtl, NewMsg, StoreConfig, StreamStore};

const INDEX: &str = "/s/msgs/index.dat";

#[derive(Clone, Copy, Debug)]
pub(super) struct Setup {
    pub compress: bool,
    pub encrypted: bool,
    pub index_bytes: u64,
}

pub(super) const PLAIN: Setup = Setup {
    compress: false,
    encrypted: false,
    index_bytes: 1 << 40,
};

fn at_rest(setup: Setup) -> Option<AtRest> {
    setup.encrypted.then(|| AtRest {
        keys: Arc::new(ServerKeys::new(b"index key", None, Cipher::Aes).unwrap()),
        account: "$G".into(),
        stream: "IDX".into(),
    })
}

pub(super) fn open_on(io: Arc<dyn StorageIo>, setup: Setup) -> FileStore {
    let options = FileStoreOptions {
        block_bytes: 600,
        cache_bytes: 1000,
        compress: setup.compress,
        index_bytes: setup.index_bytes,
    };
    let config = StoreConfig::default();
    FileStore::open_at_rest(io, Path::new("/s"), config, options, at_rest(setup)).unwrap()
}

pub(super) fn open(fs: &SimFs, setup: Setup) -> FileStore {
    open_on(Arc::new(fs.clone()), setup)
}

/// Opens copies of `fs` with and without the index; asserts they agree and returns whether
/// the index was used.
fn agrees(fs: &SimFs, setup: Setup) -> bool {
    let from_index = open_on(Arc::new(fs.copy_where(|_| true)), setup);
    let scanned = open_on(
        Arc::new(fs.copy_where(|p| !p.ends_with("index.dat"))),
        setup,
    );
    assert!(!scanned.recovered_from_index());
    assert_eq!(from_index.recovered_state(), scanned.recovered_state());
    from_index.recovered_from_index()
}

pub(super) fn put(store: &mut FileStore, i: u64) {
    let subject = format!("idx.{}", i % 5);
    let mut msg = NewMsg::new(
        subject.as_bytes(),
        Bytes::new(),
        Bytes::from(format!("p{i}")),
        i as i64 * 1000,
    );
    if i.is_multiple_of(7) {
        msg.ttl = MsgTtl::Secs(60);
    }
    store.store_msg(msg).unwrap();
}

#[test]
fn store_index_clean_stop_reopens_from_index() {
    let fs = SimFs::new();
    let mut store = open(&fs, PLAIN);
    for i in 1..=100 {
        put(&mut store, i);
    }
    store.remove_msg(10).unwrap();
    store.stop().unwrap();
    assert!(fs.contents(Path::new(INDEX)).is_some());
    assert!(agrees(&fs, PLAIN));
    let store = open(&fs, PLAIN);
    assert!(store.recovered_from_index());
    assert_eq!(store.state().msgs, 99);
    assert_eq!(store.load_msg(50).unwrap().payload, Bytes::from("p50"));
}

/// A store whose index is written at every sync that wrote anything.
const EAGER: Setup = Setup {
    index_bytes: 1,
    ..PLAIN
};

#[test]
fn store_index_stale_after_appends_and_deletes_then_crash() {
    let fs = SimFs::new();
    let mut store = open(&fs, EAGER);
    for i in 1..=60 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    assert!(
        fs.contents(Path::new(INDEX)).is_none(),
        "not on the ack path"
    );
    store.maintain();
    let written = fs.contents(Path::new(INDEX)).unwrap();
    // More appends, tombstones of messages the index holds, a purge of a subject and a new
    // first sequence: all after the index, synced, and no index written after them.
    let mut store = {
        drop(store);
        let mut setup = EAGER;
        setup.index_bytes = 1 << 40;
        open(&fs, setup)
    };
    for i in 61..=90 {
        put(&mut store, i);
    }
    store.remove_msg(3).unwrap();
    store.remove_msg(75).unwrap();
    store.purge_ex(b"idx.2", 0, 0).unwrap();
    store.compact(20).unwrap();
    store.sync().unwrap();
    assert_eq!(
        fs.contents(Path::new(INDEX)).unwrap(),
        written,
        "still the old index"
    );
    let want = store.state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    assert!(agrees(&fs, PLAIN), "the stale index is used");
    let store = open(&fs, PLAIN);
    assert!(store.recovered_from_index());
    assert_eq!(store.state(), want);
    assert!(store.load_msg(3).is_err());
    assert_eq!(store.load_msg(76).unwrap().payload, Bytes::from("p76"));
}

#[test]
fn store_index_survives_removed_oldest_blocks_and_new_ones() {
    let fs = SimFs::new();
    let mut store = open(&fs, PLAIN);
    for i in 1..=80 {
        put(&mut store, i);
        if i % 10 == 0 {
            store.sync().unwrap();
        }
    }
    store.stop().unwrap();
    let mut store = open(&fs, PLAIN);
    // The oldest blocks die and go (a `first` record after the index says so); new blocks
    // follow the index.
    store.compact(50).unwrap();
    for i in 81..=150 {
        put(&mut store, i);
        if i % 10 == 0 {
            store.sync().unwrap();
        }
    }
    let want = store.state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    assert!(fs.contents(Path::new("/s/msgs/0000000001.blk")).is_none());
    assert!(agrees(&fs, PLAIN), "used without its oldest blocks");
    let store = open(&fs, PLAIN);
    assert_eq!(store.state(), want);
}

/// Rewrites `INDEX` with `change` applied to its bytes.
fn tamper(fs: &SimFs, change: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = fs.contents(Path::new(INDEX)).unwrap();
    change(&mut bytes);
    let file = fs.open(Path::new(INDEX), OpenMode::Truncate).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
}

fn stopped_store(setup: Setup) -> SimFs {
    let fs = SimFs::new();
    let mut store = open(&fs, setup);
    for i in 1..=70 {
        put(&mut store, i);
    }
    store.remove_msg(7).unwrap();
    store.stop().unwrap();
    fs
}

#[test]
fn store_index_damaged_falls_back_to_the_full_scan() {
    type Damage = (&'static str, fn(&mut Vec<u8>));
    let damages: [Damage; 5] = [
        ("flipped body byte", |b| b[40] ^= 0x10),
        ("flipped crc", |b| {
            let last = b.len() - 1;
            b[last] ^= 1;
        }),
        ("truncated", |b| b.truncate(b.len() / 2)),
        ("wrong version", |b| b[4] = 9),
        ("empty", Vec::clear),
    ];
    for (what, damage) in damages {
        let fs = stopped_store(PLAIN);
        tamper(&fs, damage);
        assert!(!agrees(&fs, PLAIN), "{what}: not used");
        let store = open(&fs, PLAIN);
        assert_eq!(store.state().msgs, 69, "{what}");
        assert_eq!(store.state().lost, None, "{what}: nothing lost");
        drop(store);
        assert!(fs.contents(Path::new(INDEX)).is_some(), "{what}: kept");
    }
}

#[test]
fn store_index_of_another_stream_or_outdated_blocks_is_not_used() {
    // Another stream's index, over blocks with other contents.
    let fs = stopped_store(PLAIN);
    let other = SimFs::new();
    let mut store = open(&other, PLAIN);
    for i in 1..=70 {
        put(&mut store, i + 1000);
    }
    store.stop().unwrap();
    let foreign = other.contents(Path::new(INDEX)).unwrap();
    tamper(&fs, |b| *b = foreign);
    assert!(!agrees(&fs, PLAIN));
    // A block changed in place under the index (as an erase without the index's removal
    // would): the end check no longer matches.
    let fs = stopped_store(PLAIN);
    let block = Path::new("/s/msgs/0000000001.blk");
    let mut bytes = fs.contents(block).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let file = fs.open(block, OpenMode::Truncate).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
    assert!(!agrees(&fs, PLAIN));
}

#[test]
fn store_index_is_removed_before_erase_and_rewrites() {
    let fs = SimFs::new();
    let setup = Setup {
        compress: true,
        ..EAGER
    };
    let mut store = open(&fs, setup);
    for i in 1..=40 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    store.maintain();
    assert!(fs.contents(Path::new(INDEX)).is_some());
    store.erase_msg(5).unwrap();
    assert!(
        fs.contents(Path::new(INDEX)).is_none(),
        "removed before the erase"
    );
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    assert!(!agrees(&fs, setup));
    let mut store = open(&fs, setup);
    for i in 41..=60 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    store.maintain();
    assert!(fs.contents(Path::new(INDEX)).is_some(), "written again");
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    assert!(agrees(&fs, setup));
}

#[test]
fn store_index_encrypted_like_the_state_files() {
    let setup = Setup {
        encrypted: true,
        ..PLAIN
    };
    let fs = stopped_store(setup);
    let bytes = fs.contents(Path::new(INDEX)).unwrap();
    assert_eq!(bytes[6] & super::envelope::FLAG_ENCRYPTED, 1);
    assert!(!bytes.windows(4).any(|w| w == b"idx."), "subjects sealed");
    assert!(agrees(&fs, setup));
    // Without keys nothing opens, and nothing is changed.
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let plain = FileStore::open(
        io,
        Path::new("/s"),
        StoreConfig::default(),
        FileStoreOptions::default(),
    );
    assert!(plain.is_err());
    assert_eq!(fs.contents(Path::new(INDEX)).unwrap(), bytes);
}

#[derive(Debug, Clone)]
pub(super) enum Step {
    Put(u64),
    Remove(u64),
    Erase(u64),
    PurgeSubject(u64),
    Compact(u64),
    Truncate(u64),
    Skip,
    Sync,
    Purge,
}

pub(super) fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => (0u64..5).prop_map(Step::Put),
        3 => (1u64..80).prop_map(Step::Remove),
        1 => (1u64..80).prop_map(Step::Erase),
        1 => (0u64..5).prop_map(Step::PurgeSubject),
        1 => (1u64..80).prop_map(Step::Compact),
        1 => (1u64..80).prop_map(Step::Truncate),
        1 => Just(Step::Skip),
        3 => Just(Step::Sync),
        1 => Just(Step::Purge),
    ]
}

pub(super) fn apply(store: &mut FileStore, step: &Step, n: &mut u64) {
    match step {
        Step::Put(subject) => {
            *n += 1;
            let subject = format!("idx.{subject}");
            let mut msg = NewMsg::new(
                subject.as_bytes(),
                Bytes::new(),
                Bytes::from(format!("p{n}")),
                *n as i64,
            );
            if n.is_multiple_of(5) {
                msg.ttl = MsgTtl::Secs(*n);
            }
            store.store_msg(msg).unwrap();
        }
        Step::Remove(seq) => drop(store.remove_msg(*seq)),
        Step::Erase(seq) => drop(store.erase_msg(*seq)),
        Step::PurgeSubject(subject) => {
            store
                .purge_ex(format!("idx.{subject}").as_bytes(), 0, 0)
                .unwrap();
        }
        Step::Compact(seq) => drop(store.compact(*seq)),
        Step::Truncate(seq) => drop(store.truncate(*seq)),
        Step::Skip => drop(store.skip_msg(0, *n as i64)),
        Step::Sync => {
            store.sync().unwrap();
            store.maintain();
        }
        Step::Purge => drop(store.purge().unwrap()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random changes, indexes written at syncs, then a clean stop or a crash (a stale index,
    /// or none): reopening from the index leaves exactly the full scan's state, in every
    /// form of block (plain, sealed, encrypted).
    #[test]
    fn store_index_reopen_equals_full_scan(
        steps in proptest::collection::vec(step(), 1..120),
        compress in proptest::bool::ANY,
        encrypted in proptest::bool::ANY,
        index_bytes in prop_oneof![Just(1u64), Just(400), Just(1 << 40)],
        stop in proptest::bool::ANY,
    ) {
        let setup = Setup { compress, encrypted, index_bytes };
        let fs = SimFs::new();
        let mut store = open(&fs, setup);
        let mut n = 0;
        for (at, step) in steps.iter().enumerate() {
            apply(&mut store, step, &mut n);
            if at % 40 == 39 {
                // A reopen in the middle: the next changes go after an index read back.
                if stop { store.stop().unwrap(); }
                drop(store);
                fs.crash(CrashMode::DropUnsynced);
                agrees(&fs, setup);
                store = open(&fs, setup);
            }
        }
        if stop {
            store.stop().unwrap();
        }
        drop(store);
        fs.crash(CrashMode::DropUnsynced);
        let used = agrees(&fs, setup);
        prop_assert_eq!(used, fs.contents(Path::new(INDEX)).is_some());
    }
}
