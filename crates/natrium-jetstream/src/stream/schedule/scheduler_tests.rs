use bytes::Bytes;
use natrium_store::{MemStore, NewMsg, StoreConfig, StreamStore};

use super::*;

const NS: i64 = 1_000_000_000;
const NOW: i64 = 1_795_000_000 * NS;

fn config() -> StreamConfig {
    StreamConfig {
        subjects: vec!["s.>".into(), "t.>".into()],
        allow_msg_schedules: true,
        allow_rollup_hdrs: true,
        ..StreamConfig::default()
    }
}

fn put(store: &mut MemStore, subject: &str, block: &str, ts: i64) -> u64 {
    let headers = Bytes::copy_from_slice(block.as_bytes());
    let msg = NewMsg::new(subject.as_bytes(), headers, Bytes::from_static(b"p"), ts);
    store.store_msg(msg).unwrap().seq
}

#[test]
fn schedule_rebuild_drops_an_at_that_fired_before_a_crash() {
    let mut store = MemStore::new(StoreConfig::default());
    let at =
        "NATS/1.0\r\nNats-Schedule: @at 2000-01-01T00:00:00Z\r\nNats-Schedule-Target: t.a\r\n\r\n";
    put(&mut store, "s.a", at, NOW - 10 * NS);
    // The fire was stored; the purge of the schedule was not.
    let fired = "NATS/1.0\r\nNats-Scheduler: s.a\r\nNats-Schedule-Next: purge\r\n\r\n";
    put(&mut store, "t.a", fired, NOW - 9 * NS);
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW);
    assert_eq!(scheduler.arm(NOW), None);
    assert!(store.load_msg(1).is_err(), "the purge is completed");
    assert!(store.load_msg(2).is_ok());
}

#[test]
fn schedule_rebuild_keeps_an_at_that_has_not_fired() {
    let mut store = MemStore::new(StoreConfig::default());
    let at =
        "NATS/1.0\r\nNats-Schedule: @at 2000-01-01T00:00:00Z\r\nNats-Schedule-Target: t.a\r\n\r\n";
    put(&mut store, "s.a", at, NOW - 10 * NS);
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW);
    // Past due: fires at the earliest Go allows.
    assert_eq!(
        scheduler.arm(NOW),
        Some(NOW + super::super::timers::FIRE_DELAY_MIN_NS)
    );
    let fires = scheduler.fire(&store, NOW + NS);
    assert_eq!(fires.len(), 1);
    let block = fires[0].delivery.headers.clone().unwrap();
    assert!(block.ends_with(b"Nats-Scheduler: s.a\r\nNats-Schedule-Next: purge\r\n\r\n"));
}

#[test]
fn schedule_rebuild_takes_the_stored_next_fire_while_ahead() {
    let mut store = MemStore::new(StoreConfig::default());
    let every = "NATS/1.0\r\nNats-Schedule: @every 1m\r\nNats-Schedule-Target: t.e\r\n\r\n";
    put(&mut store, "s.e", every, NOW - 150 * NS);
    // Fired at NOW - 30s, next due NOW + 30s: no fire in between after a restart.
    let fired =
        "NATS/1.0\r\nNats-Scheduler: s.e\r\nNats-Schedule-Next: 2026-11-18T11:07:10Z\r\n\r\n";
    put(&mut store, "t.e", fired, NOW - 30 * NS);
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW);
    assert_eq!(scheduler.arm(NOW), Some(1_795_000_030 * NS));
    // A plain message on the schedule's subject ends it (Go's removeSubject).
    let mut scheduler = Scheduler::default();
    put(&mut store, "s.e", "", NOW - NS);
    scheduler.ensure(&config(), &mut store, NOW);
    assert_eq!(scheduler.arm(NOW), None);
}

#[test]
fn schedule_fire_drops_removed_schedules_and_repeats() {
    let mut store = MemStore::new(StoreConfig::default());
    let every = "NATS/1.0\r\nNats-Schedule: @every 1s\r\nNats-Schedule-Target: t.e\r\n\r\n";
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW);
    let seq = put(&mut store, "s.e", every, NOW);
    let placed = (seq, &b"s.e"[..], every.as_bytes());
    scheduler
        .on_stored(&config(), &mut store, placed, NOW)
        .unwrap();
    let fires = scheduler.fire(&store, NOW + 2 * NS);
    assert_eq!(fires.len(), 1);
    // Not stored (say a limit refused it): the schedule moves on to its next fire.
    scheduler.settle(&fires[0], false, &config(), &mut store);
    assert!(scheduler.arm(NOW + 2 * NS).is_some());
    store.remove_msg(seq).unwrap();
    assert!(scheduler.fire(&store, NOW + 10 * NS).is_empty());
    assert_eq!(scheduler.arm(NOW + 10 * NS), None);
}

#[test]
fn schedule_at_taken_without_storing_is_purged_like_go() {
    let mut store = MemStore::new(StoreConfig::default());
    let at =
        "NATS/1.0\r\nNats-Schedule: @at 2000-01-01T00:00:00Z\r\nNats-Schedule-Target: t.a\r\n\r\n";
    let seq = put(&mut store, "s.a", at, NOW);
    let mut scheduler = Scheduler::default();
    scheduler.ensure(&config(), &mut store, NOW);
    let fires = scheduler.fire(&store, NOW + NS);
    assert_eq!(fires.len(), 1);
    // An interest stream with no consumer for it: the sequence is taken, nothing stored.
    scheduler.settle(&fires[0], true, &config(), &mut store);
    assert!(store.load_msg(seq).is_err());
    assert_eq!(scheduler.arm(NOW + NS), None);
}
