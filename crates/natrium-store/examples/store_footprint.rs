//! Memory and recovery footprint of the file store: stores N messages of 128 B on 1,000
//! subjects (syncing every `every`), then reports the resident memory the stream holds, the
//! time to reopen it (recovery), the resident memory after a purge, and the time to load every
//! message. `cargo run --release -p natrium-store --example store_footprint -- 1000000 100`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use natrium_store::io::{StdFs, StorageIo};
use natrium_store::{FileStore, FileStoreOptions, NewMsg, StoreConfig, StreamStore};

/// Resident memory in MiB, from `/proc/self/status` (0 where there is none).
fn rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

fn open(io: &Arc<dyn StorageIo>, dir: &Path) -> FileStore {
    FileStore::open(
        Arc::clone(io),
        dir,
        StoreConfig::default(),
        FileStoreOptions::default(),
    )
    .expect("open the store")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let every: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(100)
        .max(1);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let io: Arc<dyn StorageIo> = Arc::new(StdFs);
    let base = rss_mib();
    let payload = Bytes::from(vec![7u8; 128]);
    let subjects: Vec<String> = (0..1000).map(|i| format!("orders.{i}")).collect();
    let started = Instant::now();
    let mut store = open(&io, tmp.path());
    for i in 0..n {
        let subject = subjects[(i % 1000) as usize].as_bytes();
        let msg = NewMsg::new(subject, Bytes::new(), payload.clone(), i as i64);
        store.store_msg(msg).expect("store");
        if i % every == every - 1 {
            store.sync().expect("sync");
        }
    }
    store.sync().expect("sync");
    println!("stored {n} in {:?} (sync every {every})", started.elapsed());
    println!(
        "held:      {} MiB over the start",
        rss_mib().saturating_sub(base)
    );
    store.stop().expect("stop");
    drop(store);
    let started = Instant::now();
    let mut store = open(&io, tmp.path());
    println!("recovered in {:?}", started.elapsed());
    let started = Instant::now();
    let mut bytes = 0;
    for seq in 1..=n {
        bytes += store.load_msg(seq).expect("load").payload.len();
    }
    println!("loaded {bytes} payload bytes in {:?}", started.elapsed());
    store.purge().expect("purge");
    store.sync().expect("sync");
    println!(
        "after purge: {} MiB over the start",
        rss_mib().saturating_sub(base)
    );
    // What the allocator keeps cached is returned by a trim (the server trims after purges
    // and stream deletes): what is left is what the store still holds.
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
    println!(
        "after trim:  {} MiB over the start",
        rss_mib().saturating_sub(base)
    );
}
