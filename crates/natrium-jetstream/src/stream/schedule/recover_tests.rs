use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use natrium_store::io::{SimFs, StorageIo};
use natrium_store::{FileStore, FileStoreOptions, NewMsg, StoreConfig, StreamStore};

use super::*;
use crate::config::StreamConfig;
use crate::stream::schedule::Scheduler;

const NS: i64 = 1_000_000_000;
const NOW: i64 = 1_795_000_000 * NS;
const EVERY: &str = "NATS/1.0\r\nNats-Schedule: @every 1m\r\nNats-Schedule-Target: t.e\r\n\r\n";
const AT: &str =
    "NATS/1.0\r\nNats-Schedule: @at 2000-01-01T00:00:00Z\r\nNats-Schedule-Target: t.a\r\n\r\n";

fn config() -> StreamConfig {
    StreamConfig {
        name: "S".into(),
        subjects: vec!["s.>".into(), "t.>".into(), "p.>".into()],
        allow_msg_schedules: true,
        allow_rollup_hdrs: true,
        ..StreamConfig::default()
    }
}

fn open(fs: &SimFs) -> FileStore {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    let options = FileStoreOptions::default();
    FileStore::open(io, Path::new("/s"), StoreConfig::default(), options).unwrap()
}

fn put(store: &mut FileStore, subject: &str, block: &str, ts: i64) -> u64 {
    let headers = Bytes::copy_from_slice(block.as_bytes());
    let msg = NewMsg::new(subject.as_bytes(), headers, Bytes::from_static(b"p"), ts);
    store.store_msg(msg).unwrap().seq
}

/// What a scheduler rebuilt at `now` holds: its schedules (as the index keeps them).
fn rebuilt(store: &mut FileStore, now: i64) -> Vec<natrium_store::ScheduleEntry> {
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), store, now);
    let mut timers = Timers::default();
    let start = from_index(&mut timers, "S", store, now);
    let _ = scan(&mut timers, store, start, now);
    let entries = timers.entries();
    // The scheduler's own rebuild agrees with the two steps.
    assert_eq!(scheduler.arm(now).is_some(), !entries.is_empty());
    entries
}

/// A stream of schedules among plain messages whose index was saved after `saved_after`
/// messages; more stored after it.
fn stream(fs: &SimFs) -> FileStore {
    let mut store = open(fs);
    put(&mut store, "s.e", EVERY, NOW - 150 * NS);
    put(&mut store, "s.a", AT, NOW - 100 * NS);
    for i in 0..50 {
        put(&mut store, &format!("p.{i}"), "", NOW - 90 * NS);
    }
    let fired =
        "NATS/1.0\r\nNats-Scheduler: s.e\r\nNats-Schedule-Next: 2026-11-18T11:07:10Z\r\n\r\n";
    put(&mut store, "t.e", fired, NOW - 30 * NS);
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW - 20 * NS);
    store.sync().unwrap();
    scheduler.save_index("S", &mut store);
    // After the index: a new schedule, and a plain message ending s.a's.
    put(&mut store, "s.b", EVERY, NOW - 10 * NS);
    put(&mut store, "s.a", "", NOW - 5 * NS);
    store.sync().unwrap();
    store
}

#[test]
fn schedule_recover_from_index_and_tail_equals_a_full_scan() {
    let fs = SimFs::new();
    let mut store = stream(&fs);
    let index = store.read_schedule_index().unwrap().expect("saved");
    assert_eq!(index.next_seq, 54, "it covers the 53 messages before it");
    let mut timers = Timers::default();
    assert_eq!(from_index(&mut timers, "S", &store, NOW), 54);
    let from_index = rebuilt(&mut store, NOW);
    let mut full = Timers::default();
    let _ = scan(&mut full, &store, 0, NOW);
    assert_eq!(from_index, full.entries());
    let subjects: Vec<_> = from_index.iter().map(|e| e.subject.clone()).collect();
    assert_eq!(subjects, [Bytes::from("s.e"), Bytes::from("s.b")]);
    // s.e takes the next fire its last fire stored (ahead of now).
    assert_eq!(from_index[0].at_ns, Some(1_795_000_030 * NS));
}

#[test]
fn schedule_recover_ignores_a_damaged_or_ahead_index() {
    let fs = SimFs::new();
    let mut store = stream(&fs);
    let expected = rebuilt(&mut store, NOW);
    let path = Path::new("/s/msgs").join(natrium_store::filestore::schedule_index::SCHEDULES_FILE);
    let file = fs
        .open(&path, natrium_store::io::OpenMode::ReadWrite)
        .unwrap();
    file.write_at(b"?", 20).unwrap();
    let mut timers = Timers::default();
    assert_eq!(
        from_index(&mut timers, "S", &store, NOW),
        1,
        "damaged: full scan"
    );
    assert_eq!(rebuilt(&mut store, NOW), expected);
    // An index past the stream's last sequence (its tail was lost) is not used either.
    let ahead = natrium_store::ScheduleIndex {
        next_seq: 1_000,
        entries: Vec::new(),
    };
    assert!(store.write_schedule_index(&ahead).unwrap());
    let mut timers = Timers::default();
    assert_eq!(from_index(&mut timers, "S", &store, NOW), 1);
    assert_eq!(rebuilt(&mut store, NOW), expected);
}

#[test]
fn schedule_recover_keeps_an_unstored_at_for_the_next_start() {
    let fs = SimFs::new();
    let mut store = open(&fs);
    let seq = put(&mut store, "s.a", AT, NOW - 10 * NS);
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW);
    let fires = scheduler.fire(&store, NOW + NS);
    assert_eq!(fires.len(), 1);
    // Refused: it waits for the next start, which the index tells.
    scheduler.settle(&fires[0], false, &config(), &mut store);
    assert_eq!(scheduler.arm(NOW + NS), None);
    store.sync().unwrap();
    scheduler.save_index("S", &mut store);
    let index = store.read_schedule_index().unwrap().unwrap();
    assert_eq!((index.entries[0].seq, index.entries[0].at_ns), (seq, None));
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW + 2 * NS);
    assert!(
        scheduler.arm(NOW + 2 * NS).is_some(),
        "fires at the next start"
    );
}
