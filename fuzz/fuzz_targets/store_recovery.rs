//! Recovery of a file store whose files were damaged as the input says (byte flips, a cut,
//! garbage appended), plain or compressed, encrypted or not: never a panic, and every message
//! either loads exactly as it was stored or is reported lost. The first byte is the mode:
//! bit 0 compression, bit 1 encryption (bit 2 AES rather than ChaCha), the rest names the
//! file to damage among the blocks and `index.dat` (written at every sync). A damaged index
//! is ignored: the reopen equals the full scan of the same files. A store reopened from its
//! index trusts the bytes the index covers (as Go's `index.db` does), so there a message
//! whose record was damaged may fail to load without being reported lost, but it never loads
//! as anything else.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use natrium_store::filestore::at_rest::AtRest;
use natrium_store::io::{write_all_at, CrashMode, OpenMode, SimFs, StorageIo};
use natrium_store::seal::{Cipher, ServerKeys};
use natrium_store::{FileStore, FileStoreOptions, NewMsg, StoreConfig, StreamStore};

const MSGS: u64 = 60;

fn payload(i: u64) -> Bytes {
    Bytes::from(format!("payload-{i}-{}", "x".repeat((i % 7) as usize)))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, damage)) = data.split_first() else {
        return;
    };
    let fs = SimFs::new();
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let options = FileStoreOptions {
        block_bytes: 1024,
        compress: mode & 1 == 1,
        index_bytes: 256,
        ..FileStoreOptions::default()
    };
    let cipher = if mode & 4 == 4 {
        Cipher::Aes
    } else {
        Cipher::ChaCha
    };
    let at_rest = (mode & 2 == 2).then(|| AtRest {
        keys: Arc::new(ServerKeys::new(b"fuzz key", None, cipher).expect("a key")),
        account: "$G".into(),
        stream: "FUZZ".into(),
    });
    let open_on = |io: Arc<dyn StorageIo>| {
        let (dir, config) = (Path::new("/s"), StoreConfig::default());
        FileStore::open_at_rest(io, dir, config, options, at_rest.clone())
    };
    let open = || open_on(Arc::clone(&io));
    let Ok(mut store) = open() else {
        return;
    };
    for i in 1..=MSGS {
        let subject = format!("orders.{}", i % 3);
        let msg = NewMsg::new(subject.as_bytes(), Bytes::new(), payload(i), i as i64);
        if store.store_msg(msg).is_err() {
            return;
        }
        if i % 10 == 0 && store.sync().is_err() {
            return;
        }
        if i % 10 == 0 {
            store.maintain();
        }
    }
    drop(store);
    fs.crash(CrashMode::KeepAll);
    // Damage one block: the input names it, then (offset, xor) pairs, then an optional cut.
    let mut names = fs.list_dir(Path::new("/s/msgs")).unwrap_or_default();
    names.sort();
    let Some(name) = names.get(usize::from(mode >> 3) % names.len().max(1)) else {
        return;
    };
    let path = Path::new("/s/msgs").join(name);
    let Some(mut bytes) = fs.contents(&path) else {
        return;
    };
    for pair in damage.chunks(3) {
        if let [hi, lo, xor] = pair {
            let at = usize::from(u16::from_le_bytes([*lo, *hi]));
            if let Some(byte) = bytes.get_mut(at) {
                *byte ^= xor;
            }
        }
    }
    if damage.len() % 3 == 1 {
        bytes.truncate(
            bytes
                .len()
                .saturating_sub(usize::from(damage[damage.len() - 1])),
        );
    }
    if let Ok(file) = io.open(&path, OpenMode::Truncate) {
        let _ = write_all_at(&*file, &bytes, 0);
    }
    if name == "index.dat" {
        // Only the index is damaged: whether it is used or not, the state is the scan's.
        let with = open_on(Arc::new(fs.copy_where(|_| true)));
        let without = open_on(Arc::new(fs.copy_where(|p| !p.ends_with("index.dat"))));
        if let (Ok(with), Ok(without)) = (with, without) {
            assert_eq!(with.recovered_state(), without.recovered_state());
        }
    }
    let Ok(mut store) = open() else {
        return;
    };
    // What the index covered is checked by the scrub: once it is done, every message is
    // served or reported lost, however the store was opened.
    for _ in 0..100_000 {
        match store.scrub(4096) {
            Ok(step) if !step.done => {}
            _ => break,
        }
    }
    let state = store.state();
    let lost = state.lost.map(|l| l.ranges).unwrap_or_default();
    for i in 1..=MSGS {
        match store.load_msg(i) {
            Ok(msg) => {
                assert_eq!(msg.payload, payload(i), "message {i} changed");
                assert_eq!(msg.subject.as_ref(), format!("orders.{}", i % 3).as_bytes());
            }
            Err(_) => assert!(
                lost.iter().any(|(a, b)| *a <= i && i <= *b) || i > state.last_seq,
                "message {i} neither served nor reported lost"
            ),
        }
    }
});
