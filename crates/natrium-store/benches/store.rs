//! Stream-store micro-benchmarks over the public `StreamStore` API only, for the memory store
//! and the file store (on a temporary directory through `StdFs`; `file-encrypted` rows with
//! its blocks encrypted under ChaCha20-Poly1305, `file-encrypted-aes` under AES-256-GCM).
//! Row names are
//! `<operation>/<store>/<shape>`; `scripts/bench-store.sh` runs them with the Go anchors and
//! prints a summary, and BENCHMARKS.md says which Go benchmark each row compares with.
//!
//! Messages carry a 128 B payload and no headers. Before the timings, each store's heap
//! allocations per store, load-by-sequence and load-last call are printed to stderr
//! (`allocations per op: …`), counted by a counting global allocator.
//!
//! `NATRIUM_BENCH_BIG=1` adds recovery of 10 M messages (about 1.7 GB of blocks).

use std::alloc::System;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion};
use natrium_store::filestore::at_rest::AtRest;
use natrium_store::io::StdFs;
use natrium_store::seal::{Cipher, ServerKeys};
use natrium_store::{
    FileStore, FileStoreOptions, Filter, MemStore, NewMsg, StoreConfig, StreamStore,
};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use tempfile::TempDir;

/// Counts heap allocations for the allocations-per-op lines.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PAYLOAD_BYTES: usize = 128;
static PAYLOAD: [u8; PAYLOAD_BYTES] = [b'x'; PAYLOAD_BYTES];

/// Messages in the stream of the load-by-sequence and load-last rows.
const LOAD_STREAM_MSGS: u64 = 100_000;
/// Distinct subjects of the load-last rows.
const LAST_SUBJECTS: u64 = 1_000;
/// Messages in the stream of the load-next and num-pending rows, and of recovery.
const BIG_STREAM_MSGS: u64 = 1_000_000;
/// One message in this many has the subject the sparse filters look for.
const SPARSE_EVERY: u64 = 10_000;
/// A store-row iteration count is split into streams of at most this many messages, each on a
/// fresh store (built and dropped outside the timing), so memory stays bounded.
const STORE_CHUNK_MSGS: u64 = 100_000;
/// Group-commit batch of the batched store row.
const SYNC_BATCH: u64 = 100;
/// Calls averaged by the allocations-per-op lines (after a warm-up call).
const ALLOC_SAMPLE_CALLS: u64 = 10_000;
/// Pre-drawn random sequences or subjects, cycled through by the random-access rows.
const RANDOM_DRAWS: usize = 4_096;

/// A store under test and the temporary directory that holds it (file stores).
struct Bench {
    store: Box<dyn StreamStore>,
    _dir: Option<TempDir>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Mem,
    File,
    /// The file store with its blocks encrypted (ChaCha20-Poly1305, the default cipher).
    FileEncrypted,
    /// The same with AES-256-GCM.
    FileEncryptedAes,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Mem => "mem",
            Kind::File => "file",
            Kind::FileEncrypted => "file-encrypted",
            Kind::FileEncryptedAes => "file-encrypted-aes",
        }
    }
}

fn open_file(dir: &Path, cipher: Option<Cipher>) -> FileStore {
    let at_rest = cipher.map(|cipher| AtRest {
        keys: Arc::new(ServerKeys::new(b"bench key", None, cipher).expect("keys")),
        account: "$G".into(),
        stream: "BENCH".into(),
    });
    FileStore::open_at_rest(
        Arc::new(StdFs),
        dir,
        StoreConfig::default(),
        FileStoreOptions::default(),
        at_rest,
    )
    .expect("open file store")
}

fn new_store(kind: Kind) -> Bench {
    match kind {
        Kind::Mem => Bench {
            store: Box::new(MemStore::new(StoreConfig::default())),
            _dir: None,
        },
        Kind::File | Kind::FileEncrypted | Kind::FileEncryptedAes => {
            let dir = tempfile::tempdir().expect("tempdir");
            let cipher = match kind {
                Kind::FileEncrypted => Some(Cipher::ChaCha),
                Kind::FileEncryptedAes => Some(Cipher::Aes),
                _ => None,
            };
            Bench {
                store: Box::new(open_file(dir.path(), cipher)),
                _dir: Some(dir),
            }
        }
    }
}

fn msg(subject: &[u8], i: u64) -> NewMsg<'_> {
    NewMsg::new(
        subject,
        Bytes::new(),
        Bytes::from_static(&PAYLOAD),
        1_700_000_000_000_000_000 + i as i64,
    )
}

/// Stores `count` messages, subject `subject_of(i)` for the i-th (from 0).
fn fill(store: &mut dyn StreamStore, count: u64, mut subject_of: impl FnMut(u64) -> Vec<u8>) {
    for i in 0..count {
        let subject = subject_of(i);
        store.store_msg(msg(&subject, i)).expect("store");
    }
    store.sync().expect("sync");
}

/// `RANDOM_DRAWS` values in `lo..hi`, from a fixed seed so runs compare.
fn draws(lo: u64, hi: u64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    (0..RANDOM_DRAWS).map(|_| rng.u64(lo..hi)).collect()
}

/// Subject of the i-th message of the big stream: `data.<i % 1000>.bulk`, except one message
/// in `SPARSE_EVERY` (from message 1 on), which is `data.7.hit`.
fn big_subject(i: u64) -> Vec<u8> {
    if i % SPARSE_EVERY == 1 {
        b"data.7.hit".to_vec()
    } else {
        format!("data.{}.bulk", i % 1000).into_bytes()
    }
}

fn last_subject(i: u64) -> Vec<u8> {
    format!("last.{}", i % LAST_SUBJECTS).into_bytes()
}

/// One `store_msg` per iteration, with `sync()` after every `sync_every` messages if given.
fn bench_store(group: &mut BenchmarkGroup<'_, WallTime>, kind: Kind, sync_every: Option<u64>) {
    let shape = match sync_every {
        None => "128B async".to_owned(),
        Some(1) => "128B sync each".to_owned(),
        Some(n) => format!("128B sync per {n}"),
    };
    group.bench_function(format!("{}/{shape}", kind.name()), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let n = left.min(STORE_CHUNK_MSGS);
                let mut bench = new_store(kind);
                let store = &mut *bench.store;
                let start = Instant::now();
                for i in 0..n {
                    black_box(store.store_msg(msg(b"bench.store", i)).expect("store"));
                    if sync_every.is_some_and(|k| (i + 1) % k == 0) {
                        store.sync().expect("sync");
                    }
                }
                total += start.elapsed();
                left -= n;
            }
            total
        });
    });
}

fn store_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("store");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    bench_store(&mut group, Kind::Mem, None);
    bench_store(&mut group, Kind::File, None);
    bench_store(&mut group, Kind::FileEncrypted, None);
    bench_store(&mut group, Kind::FileEncryptedAes, None);
    bench_store(&mut group, Kind::File, Some(SYNC_BATCH));
    bench_store(&mut group, Kind::File, Some(1));
    group.finish();
}

/// A group of quick rows named `<operation>/…`.
fn group<'c>(c: &'c mut Criterion, operation: &str) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(operation);
    group.measurement_time(Duration::from_secs(2));
    group
}

fn load_benches(c: &mut Criterion) {
    for kind in [Kind::Mem, Kind::File, Kind::FileEncrypted] {
        let mut bench = new_store(kind);
        fill(&mut *bench.store, LOAD_STREAM_MSGS, |_| {
            b"load.seq".to_vec()
        });
        let seqs = draws(1, LOAD_STREAM_MSGS + 1);
        let store = &*bench.store;
        let mut next = seqs.iter().cycle();
        let mut g = group(c, "load_msg");
        g.bench_function(format!("{}/random of 100k", kind.name()), |b| {
            b.iter(|| black_box(store.load_msg(*next.next().unwrap_or(&1)).expect("load")));
        });
        g.finish();

        let mut bench = new_store(kind);
        fill(&mut *bench.store, LOAD_STREAM_MSGS, last_subject);
        let filters: Vec<Filter> = (0..LAST_SUBJECTS)
            .map(|i| Filter::new(&last_subject(i)).expect("filter"))
            .collect();
        let picks = draws(0, LAST_SUBJECTS);
        let store = &*bench.store;
        let mut next = picks.iter().cycle();
        let mut g = group(c, "load_last");
        g.bench_function(format!("{}/1000 subjects", kind.name()), |b| {
            b.iter(|| {
                let pick = *next.next().unwrap_or(&0) as usize;
                black_box(store.load_last_msg(&filters[pick]).expect("load last"))
            });
        });
        g.finish();
    }
}

/// Load-next and num-pending rows on one stream of `BIG_STREAM_MSGS` messages per store, plus
/// the shapes of Go's `Benchmark_FileStoreLoadNextMsgVerySparseMsgsInBetween*` and
/// `Benchmark_MemStoreNumPendingWithLargeInteriorDeletes*`.
fn scan_benches(c: &mut Criterion) {
    let literal = Filter::new(b"data.7.hit").expect("filter");
    let wildcard = Filter::new(b"data.*.hit").expect("filter");
    let starts = draws(1, BIG_STREAM_MSGS - SPARSE_EVERY);
    for kind in [Kind::Mem, Kind::File] {
        let k = kind.name();
        let mut bench = new_store(kind);
        fill(&mut *bench.store, BIG_STREAM_MSGS, big_subject);
        let store = &*bench.store;
        for (shape, filter) in [("literal", &literal), ("wildcard", &wildcard)] {
            let mut next = starts.iter().cycle();
            let mut g = group(c, "load_next");
            g.bench_function(format!("{k}/1 in 10k {shape}, random start"), |b| {
                b.iter(|| {
                    let start = *next.next().unwrap_or(&1);
                    black_box(store.load_next_msg(filter, start).expect("load next"))
                });
            });
            g.finish();
            let mut next = starts.iter().cycle();
            let mut g = group(c, "num_pending");
            g.bench_function(format!("{k}/1 in 10k {shape}, random start"), |b| {
                b.iter(|| {
                    let start = *next.next().unwrap_or(&1);
                    black_box(store.num_pending(start, filter, false))
                });
            });
            g.finish();
        }
        drop(bench);
        go_shaped_scans(c, kind);
    }
}

/// Go's sparse shapes: 1 M `foo.bar` between two `foo.baz` (load next from 2), the same
/// with a wildcard over 100k subjects, and 1 M skipped sequences between two messages (num
/// pending from 600k: scan; from 400k: exclude).
fn go_shaped_scans(c: &mut Criterion, kind: Kind) {
    let k = kind.name();
    let mut bench = new_store(kind);
    fill(&mut *bench.store, BIG_STREAM_MSGS + 2, |i| {
        if i == 0 || i == BIG_STREAM_MSGS + 1 {
            b"foo.baz".to_vec()
        } else {
            b"foo.bar".to_vec()
        }
    });
    let store = &*bench.store;
    let sparse = Filter::new(b"foo.baz").expect("filter");
    let mut g = group(c, "load_next");
    g.bench_function(format!("{k}/go shape: 1M between, from 2"), |b| {
        b.iter(|| black_box(store.load_next_msg(&sparse, 2).expect("load next")));
    });
    g.finish();
    drop(bench);

    // The wildcard shape: the bulk spread over 100k subjects `foo.<n>.bar`.
    let mut bench = new_store(kind);
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    fill(&mut *bench.store, BIG_STREAM_MSGS + 2, |i| {
        if i == 0 || i == BIG_STREAM_MSGS + 1 {
            b"foo.1.baz".to_vec()
        } else {
            format!("foo.{}.bar", rng.u64(2..100_002)).into_bytes()
        }
    });
    let store = &*bench.store;
    let sparse = Filter::new(b"foo.*.baz").expect("filter");
    let mut g = group(c, "load_next");
    g.bench_function(format!("{k}/go shape: 1M between, wildcard, from 2"), |b| {
        b.iter(|| black_box(store.load_next_msg(&sparse, 2).expect("load next")));
    });
    g.finish();
    drop(bench);

    let mut bench = new_store(kind);
    let store = &mut *bench.store;
    store.store_msg(msg(b"foo.bar.baz", 0)).expect("store");
    store.skip_msgs(0, BIG_STREAM_MSGS, 0).expect("skip");
    store.store_msg(msg(b"foo.bar.baz", 1)).expect("store");
    let filter = Filter::new(b"foo.*.baz").expect("filter");
    let store = &*bench.store;
    let mut g = group(c, "num_pending");
    for (shape, start) in [("scan", 600_000), ("exclude", 400_000)] {
        g.bench_function(format!("{k}/go shape: 1M interior deletes, {shape}"), |b| {
            b.iter(|| black_box(store.num_pending(start, &filter, false)));
        });
    }
    g.finish();
}

/// `purge_ex` of one subject in ten from a fresh 10k-message stream (built outside the timing).
fn purge_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("purge_ex");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    for kind in [Kind::Mem, Kind::File] {
        let name = format!("{}/1k of 10k, 10 subjects", kind.name());
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let mut bench = new_store(kind);
                    fill(&mut *bench.store, 10_000, |i| {
                        format!("purge.{}", i % 10).into_bytes()
                    });
                    bench
                },
                |mut bench| {
                    let purged = bench.store.purge_ex(b"purge.3", 0, 0).expect("purge");
                    assert_eq!(purged, 1_000);
                    bench
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

/// Reopening a stopped file store of `msgs` messages (every block scanned).
fn bench_recovery(group: &mut BenchmarkGroup<'_, WallTime>, msgs: u64, label: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let mut store = open_file(dir.path(), None);
        fill(&mut store, msgs, |i| {
            format!("rec.{}", i % 1000).into_bytes()
        });
        // One more message after the index the fill's sync wrote: the stop writes it again,
        // and its time is about the index's (the sync before it has one record to flush).
        store.store_msg(msg(b"rec.last", msgs)).expect("store");
        store.sync().expect("sync");
        let started = Instant::now();
        store.stop().expect("stop");
        let index = std::fs::metadata(dir.path().join("msgs/index.dat")).expect("index.dat");
        eprintln!(
            "recovery/{label}: stop writing index.dat ({} bytes) took {:?}",
            index.len(),
            started.elapsed()
        );
    }
    let msgs = msgs + 1;
    // The clean stop wrote index.dat: the reopen loads it (nothing was appended after it).
    group.bench_function(format!("file/{label}"), |b| {
        b.iter(|| {
            let store = open_file(dir.path(), None);
            assert_eq!(store.fast_state().msgs, msgs);
            store
        });
    });
    // Without the index (a reopen that does not stop writes none): the full scan.
    std::fs::remove_file(dir.path().join("msgs/index.dat")).expect("index.dat");
    group.bench_function(format!("file-scan/{label}"), |b| {
        b.iter(|| {
            let store = open_file(dir.path(), None);
            assert_eq!(store.fast_state().msgs, msgs);
            store
        });
    });
}

fn recovery_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("recovery");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(5));
    bench_recovery(&mut group, BIG_STREAM_MSGS, "1M msgs");
    if std::env::var_os("NATRIUM_BENCH_BIG").is_some_and(|v| v == "1") {
        bench_recovery(&mut group, 10 * BIG_STREAM_MSGS, "10M msgs");
    }
    group.finish();
}

/// Heap allocations per call of `op`, over `ALLOC_SAMPLE_CALLS` calls after a warm-up call.
fn allocs_per_op(mut op: impl FnMut(u64)) -> f64 {
    op(0);
    let region = Region::new(GLOBAL);
    for i in 1..=ALLOC_SAMPLE_CALLS {
        op(i);
    }
    region.change().allocations as f64 / ALLOC_SAMPLE_CALLS as f64
}

fn alloc_report(_c: &mut Criterion) {
    for kind in [Kind::Mem, Kind::File, Kind::FileEncrypted] {
        let k = kind.name();
        let mut bench = new_store(kind);
        let store = &mut *bench.store;
        let stored = allocs_per_op(|i| {
            black_box(store.store_msg(msg(b"bench.store", i)).expect("store"));
        });
        eprintln!("allocations per op: store/{k}/128B async: {stored:.2}");

        let mut bench = new_store(kind);
        fill(&mut *bench.store, LOAD_STREAM_MSGS, last_subject);
        let store = &*bench.store;
        let seqs = draws(1, LOAD_STREAM_MSGS + 1);
        let loaded = allocs_per_op(|i| {
            let seq = seqs[i as usize % seqs.len()];
            black_box(store.load_msg(seq).expect("load"));
        });
        eprintln!("allocations per op: load_msg/{k}/random of 100k: {loaded:.2}");
        let filters: Vec<Filter> = (0..LAST_SUBJECTS)
            .map(|i| Filter::new(&last_subject(i)).expect("filter"))
            .collect();
        let last = allocs_per_op(|i| {
            let filter = &filters[i as usize % filters.len()];
            black_box(store.load_last_msg(filter).expect("load last"));
        });
        eprintln!("allocations per op: load_last/{k}/1000 subjects: {last:.2}");
    }
}

criterion_group!(
    benches,
    alloc_report,
    store_benches,
    load_benches,
    scan_benches,
    purge_benches,
    recovery_benches
);
criterion_main!(benches);
