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

#[derive(Clone, Copy)]
struct Setup {
    compress: bool,
    encrypted: bool,
    index_bytes: u64,
}

const PLAIN: Setup = Setup {
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

fn open_on(io: Arc<dyn StorageIo>, setup: Setup) -> FileStore {
    let options = FileStoreOptions {
        block_bytes: 600,
        cache_bytes: 1000,
        compress: setup.compress,
        index_bytes: setup.index_bytes,
    };
    let config = StoreConfig::default();
    FileStore::open_at_rest(io, Path::new("/s"), config, options, at_rest(setup)).unwrap()
}

fn open(fs: &SimFs, setup: Setup) -> FileStore {
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

fn put(store: &mut FileStore, i: u64) {
    let subject = format!("idx.{}", i % 5);
    let mut msg = NewMsg::new(
        subject.as_bytes(),
        Bytes::new(),
        Bytes::from(format!("p{i}")),
        i as i64 * 1000,
    );
    if i % 7 == 0 {
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
