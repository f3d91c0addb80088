//! Encrypted block files (`docs/store-format.md` §11): round trips with both ciphers, wrong
//! keys refused with every file left as it was, `prev_key` rotation, erase, compaction and
//! compression that never put a payload in plain on disk, and stores mixing plain and
//! encrypted blocks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::at_rest::AtRest;
use super::block::file_name;
use super::block_key::ENCRYPTED_DATA_START;
use super::{FileStore, FileStoreOptions};
use crate::io::{CrashMode, Fault, OpKind, OpenMode, SimFs, StorageIo};
use crate::seal::{Cipher, ServerKeys};
use crate::{MsgTtl, NewMsg, StoreConfig, StoreError, StreamStore};

fn keys(key: &str, prev: Option<&str>, cipher: Cipher) -> AtRest {
    let keys = ServerKeys::new(key.as_bytes(), prev.map(str::as_bytes), cipher).unwrap();
    AtRest {
        keys: Arc::new(keys),
        account: "ACC".into(),
        stream: "ORDERS".into(),
    }
}

fn options(block_bytes: u64, compress: bool) -> FileStoreOptions {
    FileStoreOptions {
        block_bytes,
        compress,
        ..FileStoreOptions::default()
    }
}

fn open(
    fs: &SimFs,
    options: FileStoreOptions,
    at_rest: Option<AtRest>,
) -> Result<FileStore, StoreError> {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    FileStore::open_at_rest(
        io,
        Path::new("/s"),
        StoreConfig::default(),
        options,
        at_rest,
    )
}

fn payload(i: u64) -> Bytes {
    Bytes::from(format!("secret-payload-{i:05}"))
}

fn put(store: &mut FileStore, i: u64) {
    let mut msg = NewMsg::new(
        b"orders.secret",
        Bytes::from_static(b"NATS/1.0\r\nX-Hidden: header\r\n\r\n"),
        payload(i),
        7,
    );
    if i.is_multiple_of(3) {
        msg.ttl = MsgTtl::Secs(3_600);
    }
    assert_eq!(store.store_msg(msg).unwrap().seq, i);
}

fn check(store: &FileStore, i: u64) {
    let msg = store.load_msg(i).unwrap();
    assert_eq!(msg.payload, payload(i), "message {i}");
    assert_eq!(msg.subject.as_ref(), b"orders.secret");
    assert_eq!(
        msg.headers.as_ref(),
        b"NATS/1.0\r\nX-Hidden: header\r\n\r\n"
    );
}

/// Files under the store holding `needle` in plain.
fn files_with(fs: &SimFs, needle: &[u8]) -> Vec<PathBuf> {
    fs.files()
        .into_iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle))
        .map(|(path, _)| path)
        .collect()
}

fn assert_no_plaintext(fs: &SimFs) {
    for needle in [&b"secret-payload"[..], b"orders.secret", b"X-Hidden"] {
        let found = files_with(fs, needle);
        assert!(
            found.is_empty(),
            "{:?} in plain in {found:?}",
            String::from_utf8_lossy(needle)
        );
    }
}

#[test]
fn store_file_encrypted_round_trip_and_recovery() {
    for cipher in [Cipher::ChaCha, Cipher::Aes] {
        let fs = SimFs::new();
        let at_rest = keys("server key", None, cipher);
        let mut store = open(&fs, options(1024, false), Some(at_rest.clone())).unwrap();
        for i in 1..=40 {
            put(&mut store, i);
            if i % 5 == 0 {
                store.sync().unwrap();
            }
        }
        assert!(store.remove_msg(7).unwrap());
        store.sync().unwrap();
        assert!(store.blocks.len() > 3, "rotated: {}", store.blocks.len());
        assert!(store.blocks.values().all(|b| b.key.is_some()));
        for i in (1..=40).filter(|i| *i != 7) {
            check(&store, i);
        }
        store.release_caches();
        for i in (1..=40).filter(|i| *i != 7) {
            check(&store, i);
        }
        let before = store.state();
        drop(store);
        assert_no_plaintext(&fs);
        fs.crash(CrashMode::DropUnsynced);
        let mut store = open(&fs, options(1024, false), Some(at_rest.clone())).unwrap();
        assert_eq!(store.state(), before, "{cipher:?}");
        assert_eq!(store.recovery_report().damaged_files, vec![]);
        for i in (1..=40).filter(|i| *i != 7) {
            check(&store, i);
        }
        assert!(matches!(store.load_msg(7), Err(StoreError::NotFound)));
        // The tail an earlier process wrote takes no more records: a new block does.
        let tail = *store.blocks.keys().next_back().unwrap();
        put(&mut store, 41);
        assert_eq!(store.inner.body(41).unwrap().block, tail + 1);
        store.sync().unwrap();
        drop(store);
        let store = open(&fs, options(1024, false), Some(at_rest)).unwrap();
        check(&store, 41);
        assert_no_plaintext(&fs);
    }
}

#[test]
fn store_file_encrypted_wrong_key_changes_no_file() {
    let fs = SimFs::new();
    let right = keys("right key", None, Cipher::ChaCha);
    let mut store = open(&fs, options(512, false), Some(right.clone())).unwrap();
    for i in 1..=20 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    drop(store);
    fs.crash(CrashMode::KeepAll);
    // A rewrite that never reached its rename, and unsynced bytes past the tail's end.
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let leftover = io
        .open(Path::new("/s/msgs/0000000002.blk.tmp"), OpenMode::Truncate)
        .unwrap();
    crate::io::write_all_at(&*leftover, b"half a rewrite", 0).unwrap();
    drop(leftover);
    let before = fs.files();
    for at_rest in [
        None,
        Some(keys("wrong key", None, Cipher::ChaCha)),
        Some(keys("wrong key", Some("another"), Cipher::Aes)),
    ] {
        let opened = open(&fs, options(512, false), at_rest);
        assert!(
            matches!(opened, Err(StoreError::WrongKey)),
            "{:?}",
            opened.err()
        );
        assert_eq!(fs.files(), before, "files changed");
    }
    let store = open(&fs, options(512, false), Some(right)).unwrap();
    for i in 1..=20 {
        check(&store, i);
    }
}

#[test]
fn store_file_encrypted_prev_key_rotation() {
    let fs = SimFs::new();
    let old = keys("old key", None, Cipher::ChaCha);
    let mut store = open(&fs, options(600, true), Some(old.clone())).unwrap();
    for i in 1..=60 {
        put(&mut store, i);
        if i % 6 == 0 {
            store.sync().unwrap();
        }
    }
    store.sync().unwrap();
    assert!(
        store.blocks.values().any(|b| b.frames.is_some()),
        "sealed blocks too"
    );
    drop(store);
    // The configuration turns the old key into prev_key and the cipher to AES.
    let rotated = keys("new key", Some("old key"), Cipher::Aes);
    let mut store = open(&fs, options(600, true), Some(rotated)).unwrap();
    let under_prev = store.blocks_under_prev_key();
    assert!(under_prev > 3, "{under_prev}");
    for i in 1..=60 {
        check(&store, i);
    }
    // One block per sync moves to the new key.
    for left in (0..under_prev).rev() {
        store.sync().unwrap();
        assert_eq!(store.blocks_under_prev_key(), left);
    }
    drop(store);
    let store = open(
        &fs,
        options(600, true),
        Some(keys("new key", None, Cipher::Aes)),
    )
    .unwrap();
    for i in 1..=60 {
        check(&store, i);
    }
    drop(store);
    assert!(matches!(
        open(&fs, options(600, true), Some(old)),
        Err(StoreError::WrongKey)
    ));
}

#[test]
fn store_file_encrypted_failed_rewrap_keeps_prev_key_needed() {
    let fs = SimFs::new();
    let mut store = open(
        &fs,
        options(512, false),
        Some(keys("old", None, Cipher::Aes)),
    )
    .unwrap();
    for i in 1..=20 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    drop(store);
    let rotated = keys("new", Some("old"), Cipher::Aes);
    let mut store = open(&fs, options(512, false), Some(rotated)).unwrap();
    let under_prev = store.blocks_under_prev_key();
    assert!(under_prev > 1);
    fs.fail_nth(OpKind::Rename, 1, Fault::Error(std::io::ErrorKind::Other));
    store.sync().unwrap();
    assert_eq!(
        store.blocks_under_prev_key(),
        under_prev,
        "the failed block still counts"
    );
    store.sync().unwrap();
    assert_eq!(store.blocks_under_prev_key(), under_prev - 1);
    for i in 1..=20 {
        check(&store, i);
    }
}

#[test]
fn store_file_encrypted_erase_overwrites_the_ciphertext() {
    let fs = SimFs::new();
    let at_rest = keys("k", None, Cipher::Aes);
    // A plain block from before encryption was turned on, then encrypted ones.
    let mut store = open(&fs, options(1 << 20, false), None).unwrap();
    for i in 1..=3 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    drop(store);
    let mut store = open(&fs, options(1 << 20, false), Some(at_rest.clone())).unwrap();
    for i in 4..=6 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    let loc = *store.inner.body(5).unwrap();
    let path = Path::new("/s/msgs").join(file_name(loc.block));
    let record = |fs: &SimFs| {
        let bytes = fs.contents(&path).unwrap();
        let at = usize::try_from(loc.offset()).unwrap();
        bytes[at..at + loc.len as usize].to_vec()
    };
    let sealed = record(&fs);
    assert!(store.erase_msg(5).unwrap());
    assert!(store.erase_msg(2).unwrap());
    let erased = record(&fs);
    assert_eq!(erased.len(), sealed.len());
    assert_eq!(erased[..3], sealed[..3], "magic and kind stay");
    assert_eq!(erased[3], sealed[3] | 2, "ERASED is set");
    assert_eq!(
        erased[4..32],
        sealed[4..32],
        "length, sequence and time stay"
    );
    // Headers, subject and payload ciphertext and the tag are all replaced.
    let body = 36..sealed.len() - 4;
    let same = sealed[body.clone()]
        .iter()
        .zip(&erased[body.clone()])
        .filter(|(a, b)| a == b)
        .count();
    assert!(
        same < body.len() / 8,
        "{same} of {} bytes unchanged",
        body.len()
    );
    assert!(
        files_with(&fs, b"secret-payload-00002").is_empty(),
        "plain erase"
    );
    let state = store.state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = open(&fs, options(1 << 20, false), Some(at_rest)).unwrap();
    assert_eq!(store.state(), state);
    assert_eq!(store.state().lost, None);
    for i in [1, 3, 4, 6] {
        check(&store, i);
    }
    for i in [2, 5] {
        assert!(matches!(store.load_msg(i), Err(StoreError::NotFound)));
    }
}

#[test]
fn store_file_encrypted_compaction_and_compression_stay_encrypted() {
    for compress in [false, true] {
        let fs = SimFs::new();
        let at_rest = keys("k", None, Cipher::ChaCha);
        let mut store = open(&fs, options(2048, compress), Some(at_rest.clone())).unwrap();
        for i in 1..=200 {
            put(&mut store, i);
            if i % 20 == 0 {
                store.sync().unwrap();
            }
        }
        for _ in 0..10 {
            store.sync().unwrap();
        }
        let sealed = store.blocks.values().filter(|b| b.frames.is_some()).count();
        assert_eq!(sealed > 0, compress, "sealed blocks: {sealed}");
        for i in (1..=120).filter(|i| i % 4 != 1) {
            store.remove_msg(i).unwrap();
        }
        let bytes_before: u64 = store.blocks.values().map(|b| b.len).sum();
        for _ in 0..10 {
            store.sync().unwrap();
        }
        let bytes_after: u64 = store.blocks.values().map(|b| b.len).sum();
        assert!(
            bytes_after < bytes_before,
            "compacted: {bytes_before} -> {bytes_after}"
        );
        assert!(store.blocks.values().all(|b| b.key.is_some()));
        assert!(store
            .blocks
            .values()
            .all(|b| b.data_start == ENCRYPTED_DATA_START));
        let kept = |i: &u64| *i > 120 || i % 4 == 1;
        for i in (1..=200).filter(kept) {
            check(&store, i);
        }
        let state = store.state();
        drop(store);
        assert_no_plaintext(&fs);
        fs.crash(CrashMode::DropUnsynced);
        let store = open(&fs, options(2048, compress), Some(at_rest)).unwrap();
        assert_eq!(store.state(), state, "compress: {compress}");
        for i in (1..=200).filter(kept) {
            check(&store, i);
        }
    }
}

#[test]
fn store_file_encrypted_and_plain_blocks_side_by_side() {
    let fs = SimFs::new();
    let mut store = open(&fs, options(512, true), None).unwrap();
    for i in 1..=30 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    drop(store);
    let plain_blocks = fs.files().len();
    let at_rest = keys("k", None, Cipher::ChaCha);
    let mut store = open(&fs, options(512, true), Some(at_rest.clone())).unwrap();
    let plain = store.blocks.values().filter(|b| b.key.is_none()).count();
    assert!(plain > 0);
    for i in 31..=60 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    for i in 1..=60 {
        check(&store, i);
    }
    assert!(
        store.blocks.values().any(|b| b.key.is_some()),
        "new blocks encrypted"
    );
    drop(store);
    assert!(fs.files().len() > plain_blocks);
    assert!(files_with(&fs, b"secret-payload-00045").is_empty());
    let store = open(&fs, options(512, true), Some(at_rest)).unwrap();
    for i in 1..=60 {
        check(&store, i);
    }
    drop(store);
    assert!(matches!(
        open(&fs, options(512, true), None),
        Err(StoreError::WrongKey)
    ));
}

#[test]
fn store_file_encrypted_damaged_key_record_loses_only_its_block() {
    let fs = SimFs::new();
    let at_rest = keys("k", None, Cipher::Aes);
    let mut store = open(&fs, options(512, false), Some(at_rest.clone())).unwrap();
    for i in 1..=40 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    let second = *store.blocks.keys().nth(1).unwrap();
    let in_second: Vec<u64> = (1..=40)
        .filter(|i| store.inner.body(*i).unwrap().block == second)
        .collect();
    drop(store);
    let path = Path::new("/s/msgs").join(file_name(second));
    let mut bytes = fs.contents(&path).unwrap();
    bytes[40] ^= 0x01;
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let file = io.open(&path, OpenMode::ReadWrite).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
    drop(file);
    let store = open(&fs, options(512, false), Some(at_rest)).unwrap();
    let lost = store.state().lost.expect("its messages are reported lost");
    let first = in_second[0];
    let last = *in_second.last().unwrap();
    assert_eq!(lost.ranges, vec![(first, last)]);
    for i in (1..=40).filter(|i| !in_second.contains(i)) {
        check(&store, i);
    }
    assert_eq!(
        fs.contents(&path).unwrap(),
        bytes,
        "the damaged block is kept as it is"
    );
    assert_eq!(store.recovery_report().damaged_files.len(), 1);
}

/// Damage to one encrypted block: byte flips (header, key record and records alike), then
/// an optional cut and garbage appended.
#[derive(Debug, Clone)]
struct Damage {
    block: usize,
    flips: Vec<(usize, u8)>,
    cut: Option<usize>,
    garbage: Vec<u8>,
    compress: bool,
}

fn damage() -> impl proptest::strategy::Strategy<Value = Damage> {
    use proptest::prelude::*;
    (
        0usize..8,
        proptest::collection::vec((0usize..700, 1u8..=255), 0..4),
        proptest::option::of(0usize..700),
        proptest::collection::vec(any::<u8>(), 0..64),
        any::<bool>(),
    )
        .prop_map(|(block, flips, cut, garbage, compress)| Damage {
            block,
            flips,
            cut,
            garbage,
            compress,
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: std::env::var("NATRIUM_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..Default::default()
    })]

    /// Recovery of damaged encrypted blocks never panics and never misreads: every message
    /// is served exactly as stored or reported lost, except a cut tail of the last block.
    #[test]
    fn store_file_encrypted_recovery_contains_damage(d in damage()) {
        let fs = SimFs::new();
        let at_rest = keys("k", None, Cipher::ChaCha);
        let mut store = open(&fs, options(400, d.compress), Some(at_rest.clone())).unwrap();
        for i in 1..=30 {
            put(&mut store, i);
            if i % 4 == 0 {
                store.sync().unwrap();
            }
        }
        store.sync().unwrap();
        let names: Vec<_> = store.blocks.values().map(|b| b.path.clone()).collect();
        drop(store);
        let path = &names[d.block % names.len()];
        let mut bytes = fs.contents(path).unwrap();
        for (at, x) in &d.flips {
            let at = at % bytes.len();
            bytes[at] ^= x;
        }
        if let Some(cut) = d.cut {
            bytes.truncate(cut.min(bytes.len()));
        }
        bytes.extend_from_slice(&d.garbage);
        let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
        let file = io.open(path, OpenMode::Truncate).unwrap();
        crate::io::write_all_at(&*file, &bytes, 0).unwrap();
        drop(file);
        let store = open(&fs, options(400, d.compress), Some(at_rest)).unwrap();
        let state = store.state();
        let lost = state.lost.clone().unwrap_or_default();
        for seq in 1..=30u64 {
            let reported = lost.ranges.iter().any(|&(a, b)| a <= seq && seq <= b);
            match store.load_msg(seq) {
                Ok(msg) => proptest::prop_assert_eq!(msg.payload, payload(seq)),
                Err(_) => proptest::prop_assert!(
                    reported || seq > state.last_seq,
                    "seq {} neither served nor reported lost: {:?}", seq, state
                ),
            }
        }
    }
}
