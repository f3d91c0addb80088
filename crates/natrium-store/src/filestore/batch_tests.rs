//! Atomic batches in the file store: after any crash a batch is wholly stored or not at all
//! (`super::batch`, `docs/store-format.md` §2), in plain and encrypted blocks, from a full
//! scan and on top of `index.dat`; a batch damaged after it was written whole is damage, not
//! a torn tail.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::at_rest::AtRest;
use super::{FileStore, FileStoreOptions};
use crate::io::{CrashMode, SimFs, StorageIo};
use crate::seal::{Cipher, ServerKeys};
use crate::{NewMsg, StoreConfig, StreamStore};

const SINGLES: u64 = 2;
const BATCH: u64 = 4;

fn open(fs: &SimFs, encrypted: bool) -> FileStore {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let at_rest = encrypted.then(|| AtRest {
        keys: Arc::new(ServerKeys::new(b"batch-key", None, Cipher::ChaCha).unwrap()),
        account: "ACC".into(),
        stream: "B".into(),
    });
    let options = FileStoreOptions::default();
    FileStore::open_at_rest(
        io,
        Path::new("/s"),
        StoreConfig::default(),
        options,
        at_rest,
    )
    .unwrap()
}

fn msg(i: u64) -> NewMsg<'static> {
    let payload = Bytes::from(format!("payload-{i:03}"));
    NewMsg::new(
        b"orders.b",
        Bytes::from_static(b"NATS/1.0\r\n\r\n"),
        payload,
        7,
    )
}

/// Two messages stored and synced, then a batch of four written and not synced.
fn with_unsynced_batch(fs: &SimFs, encrypted: bool) -> FileStore {
    let mut store = open(fs, encrypted);
    for i in 1..=SINGLES {
        store.store_msg(msg(i)).unwrap();
    }
    store.sync().unwrap();
    let batch: Vec<_> = (SINGLES + 1..=SINGLES + BATCH).map(msg).collect();
    let stored = store.store_batch(&batch).unwrap();
    assert_eq!(stored.last().map(|s| s.seq), Some(SINGLES + BATCH));
    store
}

/// The store holds the singles and either none or all of the batch, every message whole,
/// and takes the next message at the next sequence.
fn assert_all_or_nothing(fs: &SimFs, encrypted: bool) -> bool {
    let mut store = open(fs, encrypted);
    let state = store.state();
    assert!(
        state.msgs == SINGLES || state.msgs == SINGLES + BATCH,
        "partial batch: {state:?}"
    );
    assert!(store.state().lost.is_none(), "{:?}", state.lost);
    for seq in 1..=state.msgs {
        let loaded = store.load_msg(seq).unwrap();
        assert_eq!(loaded.payload, Bytes::from(format!("payload-{seq:03}")));
    }
    let next = store.store_msg(msg(state.msgs + 1)).unwrap();
    assert_eq!(next.seq, state.msgs + 1);
    store.sync().unwrap();
    drop(store);
    assert_eq!(open(fs, encrypted).state().msgs, state.msgs + 1);
    state.msgs == SINGLES + BATCH
}

/// Bytes the batch wrote to the (only) block after the synced singles.
fn batch_bytes(encrypted: bool) -> usize {
    let fs = SimFs::new();
    let mut store = open(&fs, encrypted);
    store.store_msg(msg(1)).unwrap();
    store.store_msg(msg(2)).unwrap();
    let before: usize = fs.files().iter().map(|(_, b)| b.len()).sum();
    let batch: Vec<_> = (3..=6).map(msg).collect();
    store.store_batch(&batch).unwrap();
    let after: usize = fs.files().iter().map(|(_, b)| b.len()).sum();
    after - before
}

#[test]
fn store_batch_file_torn_at_every_byte_is_all_or_nothing() {
    for encrypted in [false, true] {
        let len = batch_bytes(encrypted);
        let mut kept = 0;
        for keep_bytes in 0..=len {
            let fs = SimFs::new();
            drop(with_unsynced_batch(&fs, encrypted));
            fs.crash(CrashMode::TornPrefix { keep_bytes });
            if assert_all_or_nothing(&fs, encrypted) {
                kept += 1;
            }
        }
        // Only the whole write keeps the batch.
        assert_eq!(kept, 1, "encrypted {encrypted}");
    }
}

#[test]
fn store_batch_file_power_loss_and_kill() {
    for encrypted in [false, true] {
        let fs = SimFs::new();
        drop(with_unsynced_batch(&fs, encrypted));
        fs.crash(CrashMode::DropUnsynced);
        assert!(!assert_all_or_nothing(&fs, encrypted));

        let fs = SimFs::new();
        drop(with_unsynced_batch(&fs, encrypted));
        fs.crash(CrashMode::KeepAll);
        assert!(assert_all_or_nothing(&fs, encrypted));

        let fs = SimFs::new();
        with_unsynced_batch(&fs, encrypted).sync().unwrap();
        fs.crash(CrashMode::DropUnsynced);
        assert!(assert_all_or_nothing(&fs, encrypted));
    }
}

#[test]
fn store_batch_file_reopen_matches_live_state() {
    let fs = SimFs::new();
    let mut store = with_unsynced_batch(&fs, false);
    store.sync().unwrap();
    let live = store.recovered_state();
    drop(store);
    fs.crash(CrashMode::DropUnsynced);
    let scanned = open(&fs, false);
    assert_eq!(scanned.recovered_state().msgs, live.msgs);
    assert_eq!(scanned.recovered_state().blocks, live.blocks);
    // Through `index.dat` (written at stop), then a torn batch after what it covers.
    let mut store = scanned;
    store.stop().unwrap();
    drop(store);
    let mut store = open(&fs, false);
    let batch: Vec<_> = (7..=9).map(msg).collect();
    store.store_batch(&batch).unwrap();
    drop(store);
    fs.crash(CrashMode::TornPrefix { keep_bytes: 100 });
    let store = open(&fs, false);
    assert_eq!(store.state().msgs, SINGLES + BATCH);
    assert!(store.state().lost.is_none());
}

#[test]
fn store_batch_file_damage_after_a_whole_write_is_not_a_torn_tail() {
    let fs = SimFs::new();
    let mut store = with_unsynced_batch(&fs, false);
    store.store_msg(msg(SINGLES + BATCH + 1)).unwrap();
    store.sync().unwrap();
    drop(store);
    let (path, mut bytes) = fs
        .files()
        .into_iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "blk"))
        .unwrap();
    // Flip a payload byte of the batch's second message.
    let at = bytes.windows(11).position(|w| w == b"payload-004").unwrap();
    bytes[at + 10] ^= 0x01;
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let file = io.open(&path, crate::io::OpenMode::ReadWrite).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
    file.sync_data().unwrap();
    let store = open(&fs, false);
    let state = store.state();
    assert_eq!(state.last_seq, SINGLES + BATCH + 1);
    assert_eq!(state.lost.map(|l| l.ranges), Some(vec![(4, 4)]));
    assert!(store.load_msg(SINGLES + BATCH + 1).is_ok());
}
