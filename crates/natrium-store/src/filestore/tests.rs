use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::block::{file_name, HEADER_BYTES};
use super::record::RECORD_BYTES_MIN;
use super::{FileStore, FileStoreOptions};
use proptest::arbitrary::any;
use proptest::prelude::Strategy;

use crate::io::{CrashMode, Fault, OpKind, OpenMode, SimFs, StorageIo};
use crate::{LostData, MsgSizing, NewMsg, StoreConfig, StoreError, StreamStore};

fn open(fs: &SimFs, block_bytes: u64) -> FileStore {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    FileStore::open(
        io,
        Path::new("/s"),
        StoreConfig::default(),
        FileStoreOptions {
            block_bytes,
            ..FileStoreOptions::default()
        },
    )
    .unwrap()
}

fn put(store: &mut FileStore, i: u64) {
    let payload = Bytes::from(format!("payload-{i}"));
    let msg = NewMsg::new(
        b"orders.x",
        Bytes::from_static(b"NATS/1.0\r\n\r\n"),
        payload,
        7,
    );
    assert_eq!(store.store_msg(msg).unwrap().seq, i);
}

fn check(store: &FileStore, i: u64) {
    let msg = store.load_msg(i).unwrap();
    assert_eq!(msg.payload, Bytes::from(format!("payload-{i}")));
    assert_eq!(msg.subject.as_ref(), b"orders.x");
}

#[test]
fn store_file_survives_reopen_and_rotates() {
    let fs = SimFs::new();
    let mut store = open(&fs, 256);
    for i in 1..=20 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    assert!(store.remove_msg(5).unwrap());
    assert_eq!(store.sync().unwrap(), 20);
    assert!(store.blocks.len() > 3, "rotated: {}", store.blocks.len());
    let before = store.state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = open(&fs, 256);
    assert_eq!(store.state(), before);
    for i in (1..=20).filter(|i| *i != 5) {
        check(&store, i);
    }
    assert!(matches!(store.load_msg(5), Err(StoreError::NotFound)));
}

#[test]
fn store_file_erase_overwrites_on_disk() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    for i in 1..=3 {
        put(&mut store, i);
    }
    assert!(store.erase_msg(2).unwrap());
    assert!(!store.erase_msg(2).unwrap());
    let path = Path::new("/s/msgs").join(file_name(1));
    let bytes = fs.contents(&path).unwrap();
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"payload-1") && has(b"payload-3") && !has(b"payload-2"));
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = open(&fs, 1 << 20);
    let state = store.state();
    assert_eq!((state.msgs, state.deleted, state.lost), (2, vec![2], None));
    check(&store, 3);
}

#[test]
fn store_file_unsynced_tail_is_cut() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    for i in 1..=3 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    put(&mut store, 4);
    drop(store);
    fs.crash(CrashMode::TornPrefix { keep_bytes: 50 });
    let mut store = open(&fs, 1 << 20);
    let state = store.state();
    assert_eq!((state.msgs, state.last_seq, state.lost), (3, 3, None));
    put(&mut store, 4);
    check(&store, 4);
}

#[test]
fn store_file_flipped_byte_loses_only_that_record() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    let mut offsets = Vec::new();
    for i in 1..=9 {
        put(&mut store, i);
        offsets.push(*store.inner.body(i).unwrap());
    }
    store.sync().unwrap();
    drop(store);
    fs.crash(CrashMode::KeepAll);
    let path = Path::new("/s/msgs").join(file_name(1));
    let mut bytes = fs.contents(&path).unwrap();
    for (at, header) in [(5usize, true), (7, false)] {
        // Record 5 loses a header byte (resync), record 7 a payload byte (record CRC).
        let loc = offsets[at - 1];
        let hit = if header { 10 } else { loc.len as usize - 6 };
        bytes[loc.offset() as usize + hit] ^= 0x40;
    }
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let file = io.open(&path, crate::io::OpenMode::ReadWrite).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
    file.sync_data().unwrap();
    drop(file);
    let store = open(&fs, 1 << 20);
    let state = store.state();
    assert_eq!(
        state.lost,
        Some(LostData {
            ranges: vec![(5, 5), (7, 7)],
            // Record 7's header still tells its size; record 5's does not.
            bytes: MsgSizing::File.size(8, 12, b"payload-7".len()),
        })
    );
    assert_eq!((state.msgs, state.last_seq), (7, 9));
    for i in (1..=9).filter(|i| *i != 5 && *i != 7) {
        check(&store, i);
    }
    // Nothing was cut: the damaged bytes stay on disk.
    assert_eq!(fs.contents(&path).unwrap(), bytes);
    assert!(bytes.len() as u64 > HEADER_BYTES + 9 * RECORD_BYTES_MIN as u64);
    // The report names the file and what was lost in it.
    let report = store.recovery_report();
    assert_eq!(
        report.damaged_files,
        vec![super::DamagedFile {
            file: "msgs/0000000001.blk".to_string(),
            lost: vec![(5, 5), (7, 7)],
        }]
    );
}

#[test]
fn store_file_recovery_reports_progress_per_block() {
    let fs = SimFs::new();
    let mut store = open(&fs, 256);
    for i in 1..=30 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    let blocks = store.blocks.len() as u64;
    drop(store);
    let mut seen = Vec::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let options = FileStoreOptions {
        block_bytes: 256,
        ..FileStoreOptions::default()
    };
    let store = FileStore::open_with_progress(
        io,
        Path::new("/s"),
        StoreConfig::default(),
        options,
        &mut |p| seen.push(p),
    )
    .unwrap();
    assert_eq!(seen.len() as u64, blocks);
    let last = seen.last().unwrap();
    assert_eq!(
        (last.blocks_done, last.blocks_total, last.msgs),
        (blocks, blocks, 30)
    );
    assert!(store.recovery_report().damaged_files.is_empty());
}

#[test]
fn store_file_failed_sync_stops_acks() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    put(&mut store, 1);
    fs.fail_nth(OpKind::Sync, 1, Fault::Error(std::io::ErrorKind::Other));
    assert!(store.sync().is_err());
    let msg = NewMsg::new(b"a", Bytes::new(), Bytes::from_static(b"x"), 1);
    assert!(store.store_msg(msg).is_err());
    assert!(store.sync().is_err(), "no ack after a failed sync");
    check(&store, 1);
}

#[test]
fn store_file_refuses_what_a_record_cannot_hold() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    let subject = vec![b'a'; 70_000];
    let msg = NewMsg::new(&subject, Bytes::new(), Bytes::new(), 1);
    assert!(matches!(store.store_msg(msg), Err(StoreError::MsgTooLarge)));
    assert_eq!(store.state().msgs, 0);
    put(&mut store, 1);
}

#[test]
fn store_file_out_of_space_is_storage_full() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    put(&mut store, 1);
    store.sync().unwrap();
    fs.set_capacity(Some(0));
    let msg = NewMsg::new(b"a", Bytes::new(), Bytes::from_static(b"x"), 1);
    assert!(matches!(store.store_msg(msg), Err(StoreError::StorageFull)));
    check(&store, 1);
}

/// Damage to apply to one block file: byte flips, then an optional cut and garbage.
#[derive(Debug, Clone)]
struct Damage {
    block: usize,
    flips: Vec<(usize, u8)>,
    cut: Option<usize>,
    garbage: Vec<u8>,
}

fn damage() -> impl Strategy<Value = Damage> {
    (
        0usize..8,
        proptest::collection::vec((0usize..600, 1u8..=255), 0..4),
        proptest::option::of(0usize..600),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(block, flips, cut, garbage)| Damage {
            block,
            flips,
            cut,
            garbage,
        })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: std::env::var("NATRIUM_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
        ..Default::default()
    })]

    /// Recovery never panics, and every message it does not serve is reported lost, except
    /// a cut tail of the last block (what a crash can tear).
    #[test]
    fn store_file_recovery_contains_damage(d in damage()) {
        let fs = SimFs::new();
        let mut store = open(&fs, 300);
        for i in 1..=30 {
            put(&mut store, i);
            if i % 4 == 0 {
                store.sync().unwrap();
            }
        }
        store.sync().unwrap();
        proptest::prop_assert!(store.blocks.len() > 3);
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
        file.sync_data().unwrap();
        drop(file);
        let store = open(&fs, 300);
        let state = store.state();
        let lost = state.lost.clone().unwrap_or_default();
        for seq in 1..=30u64 {
            let served = store.load_msg(seq).is_ok();
            let reported = lost.ranges.iter().any(|&(a, b)| a <= seq && seq <= b);
            proptest::prop_assert!(
                served || reported || seq > state.last_seq,
                "seq {} neither served nor reported lost: {:?}", seq, state
            );
        }
    }
}

#[test]
fn store_file_on_real_files_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let io: Arc<dyn StorageIo> = Arc::new(crate::io::StdFs);
    let options = FileStoreOptions {
        block_bytes: 200,
        ..FileStoreOptions::default()
    };
    let reopen =
        || FileStore::open(Arc::clone(&io), dir.path(), StoreConfig::default(), options).unwrap();
    let mut store = reopen();
    for i in 1..=10 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    assert!(store.remove_msg(3).unwrap());
    assert_eq!(store.sync().unwrap(), 10);
    let before = store.state();
    store.stop().unwrap();
    drop(store);
    let store = reopen();
    assert_eq!(store.state(), before);
    assert!(store.blocks.len() > 1);
    for i in (1..=10).filter(|i| *i != 3) {
        check(&store, i);
    }
}

fn block_files(fs: &SimFs) -> Vec<String> {
    let mut names = fs.list_dir(Path::new("/s/msgs")).unwrap();
    names.retain(|n| super::block::parse_name(n).is_some());
    names.sort();
    names
}

#[test]
fn store_file_purge_returns_its_blocks() {
    let fs = SimFs::new();
    let mut store = open(&fs, 256);
    for i in 1..=40 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    assert!(block_files(&fs).len() > 5);
    assert_eq!(store.purge().unwrap(), 40);
    store.sync().unwrap();
    let files = block_files(&fs);
    assert_eq!(files.len(), 1, "one fresh tail: {files:?}");
    let tail = fs.contents(&Path::new("/s/msgs").join(&files[0])).unwrap();
    assert!(
        tail.len() < 100,
        "the tail holds a header and a record: {}",
        tail.len()
    );
    let before = store.state();
    assert_eq!(
        (before.first_seq, before.last_seq, before.last_ts),
        (41, 40, 7)
    );
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let mut store = open(&fs, 256);
    assert_eq!(store.state(), before);
    put(&mut store, 41);
    check(&store, 41);
}

#[test]
fn store_file_limits_drop_the_oldest_blocks() {
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let config = StoreConfig {
        max_msgs: Some(5),
        ..StoreConfig::default()
    };
    let options = FileStoreOptions {
        block_bytes: 256,
        ..FileStoreOptions::default()
    };
    let mut store =
        FileStore::open(Arc::clone(&io), Path::new("/s"), config.clone(), options).unwrap();
    for i in 1..=200 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    let files = block_files(&fs);
    assert!(files.len() <= 4, "old blocks removed: {files:?}");
    let before = store.state();
    assert_eq!(
        (before.msgs, before.first_seq, &before.lost),
        (5, 196, &None)
    );
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = FileStore::open(io, Path::new("/s"), config, options).unwrap();
    assert_eq!(store.state(), before);
    for i in 196..=200 {
        check(&store, i);
    }
}

#[test]
fn store_file_failed_block_removal_keeps_the_sync() {
    let fs = SimFs::new();
    let mut store = open(&fs, 256);
    for i in 1..=20 {
        put(&mut store, i);
        store.sync().unwrap();
    }
    fs.fail_nth(OpKind::Remove, 1, Fault::Error(std::io::ErrorKind::Other));
    store.compact(15).unwrap();
    assert_eq!(
        store.sync().unwrap(),
        20,
        "the data is durable: the sync succeeds"
    );
    put(&mut store, 21);
    store.sync().unwrap();
    let before = store.state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = open(&fs, 256);
    assert_eq!(store.state(), before);
    assert_eq!(before.first_seq, 15);
}

#[test]
fn store_file_compaction_keeps_a_kv_bucket_small() {
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let config = StoreConfig {
        max_msgs_per_subject: Some(1),
        ..StoreConfig::default()
    };
    let options = FileStoreOptions {
        block_bytes: 1024,
        ..FileStoreOptions::default()
    };
    let reopen = || FileStore::open(Arc::clone(&io), Path::new("/s"), config.clone(), options);
    let mut store = reopen().unwrap();
    // Key 0 is written once and never again: it pins the oldest block, so only compaction
    // (not block removal) can give the space of the dead revisions back.
    let keys = [b"kv.k0", b"kv.k1", b"kv.k2", b"kv.k3"];
    for i in 0..400u64 {
        let key = if i == 0 {
            keys[0]
        } else {
            keys[1 + (i % 3) as usize]
        };
        let msg = NewMsg::new(key, Bytes::new(), Bytes::from(format!("rev-{i}")), 7);
        store.store_msg(msg).unwrap();
        if i % 5 == 4 {
            store.sync().unwrap();
        }
    }
    store.sync().unwrap();
    let on_disk: usize = block_files(&fs)
        .iter()
        .map(|n| fs.contents(&Path::new("/s/msgs").join(n)).unwrap().len())
        .sum();
    assert!(
        on_disk < 8 * 1024,
        "dead revisions compacted away: {on_disk} bytes"
    );
    let before = store.state();
    assert_eq!((before.msgs, before.first_seq, &before.lost), (4, 1, &None));
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = reopen().unwrap();
    assert_eq!(store.state(), before);
    for seq in [1, 398, 399, 400] {
        assert_eq!(store.load_msg(seq).unwrap().seq, seq);
    }
}

#[test]
fn store_file_compressed_blocks_seal_reopen_and_contain_damage() {
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let options = FileStoreOptions {
        block_bytes: 4096,
        compress: true,
        ..FileStoreOptions::default()
    };
    let reopen = || {
        FileStore::open(
            Arc::clone(&io),
            Path::new("/s"),
            StoreConfig::default(),
            options,
        )
    };
    let mut store = reopen().unwrap();
    for i in 1..=600 {
        put(&mut store, i);
        if i % 50 == 0 {
            store.sync().unwrap();
        }
    }
    store.sync().unwrap();
    let sealed = store.blocks.values().filter(|b| b.frames.is_some()).count();
    assert!(sealed >= 3, "blocks sealed: {sealed}");
    let sealed_block = store.blocks.values().find(|b| b.frames.is_some()).unwrap();
    assert!(sealed_block.len * 2 < sealed_block.plain_len, "compressed");
    let first_sealed = sealed_block.index;
    // Erase inside a sealed block rewrites it without the record.
    assert!(store.erase_msg(3).unwrap());
    store.release_caches();
    for i in (1..=600).filter(|i| *i != 3) {
        check(&store, i);
    }
    let before = store.state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let store = reopen().unwrap();
    assert_eq!(store.state(), before);
    for i in (1..=600).filter(|i| *i != 3) {
        check(&store, i);
    }
    drop(store);
    // A flipped byte in a sealed block's frames loses that frame's records only.
    let path = Path::new("/s/msgs").join(file_name(first_sealed));
    let mut bytes = fs.contents(&path).unwrap();
    bytes[HEADER_BYTES as usize + 40] ^= 0x10;
    let file = io.open(&path, OpenMode::ReadWrite).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
    file.sync_data().unwrap();
    drop(file);
    let store = reopen().unwrap();
    let state = store.state();
    let lost = state.lost.clone().expect("the damaged frame is reported");
    let lost_count: u64 = lost.ranges.iter().map(|(a, b)| b - a + 1).sum();
    assert!(lost_count > 0 && lost_count < 100, "{lost:?}");
    assert_eq!(state.msgs + lost_count + 1, 600, "the rest is served");
    for i in 1..=600 {
        if i != 3 && !lost.ranges.iter().any(|(a, b)| *a <= i && i <= *b) {
            check(&store, i);
        }
    }
}

/// A store with sealed (compressed) blocks and three in four of its first 120 messages
/// deleted, so the next sync compacts a block.
fn half_dead_compressed(fs: &SimFs) -> FileStore {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let options = FileStoreOptions {
        block_bytes: 2048,
        compress: true,
        ..FileStoreOptions::default()
    };
    let mut store = FileStore::open(io, Path::new("/s"), StoreConfig::default(), options).unwrap();
    for i in 1..=200 {
        put(&mut store, i);
        if i % 20 == 0 {
            store.sync().unwrap();
        }
    }
    for _ in 0..10 {
        store.sync().unwrap();
    }
    assert!(
        store.blocks.values().any(|b| b.frames.is_some()),
        "sealed blocks"
    );
    for i in (1..=120).filter(|i| i % 4 != 1) {
        store.remove_msg(i).unwrap();
    }
    store
}

fn reopen_compressed(fs: &SimFs) -> FileStore {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let options = FileStoreOptions {
        block_bytes: 2048,
        compress: true,
        ..FileStoreOptions::default()
    };
    FileStore::open(io, Path::new("/s"), StoreConfig::default(), options).unwrap()
}

#[test]
fn store_file_failed_rewrite_keeps_the_old_block() {
    for (kind, fault) in [
        (OpKind::Rename, Fault::Error(std::io::ErrorKind::Other)),
        (OpKind::Write, Fault::NoSpace),
        (OpKind::Sync, Fault::Error(std::io::ErrorKind::Other)),
    ] {
        let fs = SimFs::new();
        let mut store = half_dead_compressed(&fs);
        // Let the tombstones reach the disk, then fail the rewrite the next sync starts.
        store.sync_blocks().unwrap();
        fs.fail_nth(kind, 1, fault);
        // The data is durable: a failed rewrite does not fail the sync.
        assert_eq!(store.sync().unwrap(), 200, "{kind:?}");
        let state = store.state();
        assert!(
            store.blocks.values().any(|b| b.keep_as_is),
            "{kind:?}: the block whose rewrite failed is left alone"
        );
        drop(store);
        fs.crash(CrashMode::DropUnsynced);
        let store = reopen_compressed(&fs);
        assert_eq!(store.state(), state, "{kind:?}");
        for i in (1..=200).filter(|i| *i > 120 || i % 4 == 1) {
            check(&store, i);
        }
    }
}

#[test]
fn store_file_crash_in_a_rewrite_leaves_old_or_new() {
    for mode in [
        CrashMode::DropUnsynced,
        CrashMode::KeepAll,
        CrashMode::TornPrefix { keep_bytes: 100 },
    ] {
        let fs = SimFs::new();
        let mut store = half_dead_compressed(&fs);
        store.sync_blocks().unwrap();
        // The rewrite's directory sync fails: the rename may or may not survive the crash.
        fs.fail_nth(OpKind::SyncDir, 1, Fault::Error(std::io::ErrorKind::Other));
        let _ = store.sync();
        let state = store.state();
        drop(store);
        fs.crash(mode);
        let store = reopen_compressed(&fs);
        assert_eq!(store.state(), state, "{mode:?}");
        for i in (1..=200).filter(|i| *i > 120 || i % 4 == 1) {
            check(&store, i);
        }
    }
}

#[test]
fn store_file_small_streams_keep_small_blocks_and_caches() {
    let kib = 1024;
    let small = FileStoreOptions::for_stream(Some(1024 * kib), true, false);
    assert_eq!(
        (small.block_bytes, small.cache_bytes),
        (256 * kib, 256 * kib)
    );
    assert_eq!(
        FileStoreOptions::for_stream(Some(10 * kib), true, false).block_bytes,
        32 * kib
    );
    assert_eq!(
        FileStoreOptions::for_stream(None, true, false).block_bytes,
        8 * 1024 * kib
    );
    assert_eq!(
        FileStoreOptions::for_stream(None, false, false).block_bytes,
        4 * 1024 * kib
    );
    // A 1 MiB stream written with 4 MiB and read back: disk and cache stay near its limit.
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let config = StoreConfig {
        max_bytes: Some(1024 * kib),
        ..StoreConfig::default()
    };
    let mut store = FileStore::open(io, Path::new("/s"), config, small).unwrap();
    let payload = Bytes::from(vec![7u8; 128]);
    let mut last = 0;
    for i in 0..25_000 {
        let msg = NewMsg::new(b"small.s", Bytes::new(), payload.clone(), i);
        last = store.store_msg(msg).unwrap().seq;
        if i % 100 == 99 {
            store.sync().unwrap();
        }
    }
    store.sync().unwrap();
    let first = store.state().first_seq;
    for seq in first..=last {
        store.load_msg(seq).unwrap();
    }
    let on_disk: usize = block_files(&fs)
        .iter()
        .map(|n| fs.contents(&Path::new("/s/msgs").join(n)).unwrap().len())
        .sum();
    assert!(
        on_disk < 1600 * 1024,
        "{on_disk} bytes on disk for a 1 MiB stream"
    );
    let cached = store.cache.lock().unwrap().bytes();
    assert!(cached <= 1024 * 1024, "{cached} bytes cached");
}

#[test]
fn store_file_last_msg_in_memory_follows_the_cache() {
    let fs = SimFs::new();
    let mut store = open(&fs, 1 << 20);
    put(&mut store, 1);
    store.sync().unwrap();
    let filter = crate::Filter::new(b"orders.x").unwrap();
    assert!(store.last_msg_in_memory(&filter), "just written: cached");
    let none = crate::Filter::new(b"orders.none").unwrap();
    assert!(store.last_msg_in_memory(&none), "nothing to load");
    store.release_caches();
    assert!(!store.last_msg_in_memory(&filter), "released: a load reads");
    check(&store, 1);
    assert!(store.last_msg_in_memory(&filter), "the load cached it");
}
