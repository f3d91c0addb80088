//! The scrub (`docs/store-format.md` §6, §10): a byte flipped in bytes `index.dat` covers,
//! after a clean stop, is found after a reopen from the index, and leaves the state (lost
//! ranges, report, blocks) a full scan of the same files leaves; a load that meets the
//! damage first hands it to the next step; the index is written by `maintain`, not `sync`.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;

use super::index_tests::{apply, open, open_on, put, step, Setup, Step, PLAIN};
use super::{FileStore, RecoveredState};
use crate::io::{OpenMode, SimFs, StorageIo};
use crate::{StoreError, StreamStore};

const INDEX: &str = "/s/msgs/index.dat";

/// Flips byte `at` of block `index`'s file.
fn flip(fs: &SimFs, index: u32, at: u64) {
    let path = format!("/s/msgs/{}", super::block::file_name(index));
    let mut bytes = fs.contents(Path::new(&path)).unwrap();
    bytes[usize::try_from(at).unwrap()] ^= 0x20;
    let file = fs.open(Path::new(&path), OpenMode::Truncate).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
}

/// Flips a byte `k` bytes into the record of live message `seq` (in a sealed block, in the
/// middle of the frame holding it); returns its block.
fn damage(fs: &SimFs, store: &FileStore, seq: u64, k: u64) -> u32 {
    let loc = *store.inner.body(seq).unwrap();
    let block = &store.blocks[&loc.block];
    let at = match &block.frames {
        Some(frames) => {
            let entry = frames.find(loc.offset()).unwrap();
            block.data_start + entry.stored_offset + u64::from(entry.frame_bytes) / 2
        }
        None => loc.offset() + k % u64::from(loc.len),
    };
    flip(fs, loc.block, at);
    loc.block
}

/// Scrubs `store` to the end; returns the files its steps reported.
fn scrub_all(store: &mut FileStore) -> Vec<String> {
    let mut files = Vec::new();
    for _ in 0..10_000 {
        let step = store.scrub(300).unwrap();
        files.extend(step.damaged.into_iter().map(|d| d.file));
        if step.done {
            return files;
        }
    }
    panic!("the scrub does not finish");
}

/// The states of a reopen from the index, scrubbed, and of a full scan of the same files;
/// also what the scrub reported.
fn both(fs: &SimFs, setup: Setup) -> (RecoveredState, RecoveredState, Vec<String>) {
    let mut from_index = open_on(Arc::new(fs.copy_where(|_| true)), setup);
    assert!(
        from_index.recovered_from_index(),
        "the end check still holds"
    );
    assert_eq!(from_index.state().lost, None, "not seen before the scrub");
    let files = scrub_all(&mut from_index);
    // A block left with no live message goes at the next sync, as the scan's open removes
    // it.
    from_index.drop_dead_blocks().unwrap();
    let scanned = open_on(
        Arc::new(fs.copy_where(|p| !p.ends_with("index.dat"))),
        setup,
    );
    (
        from_index.recovered_state(),
        scanned.recovered_state(),
        files,
    )
}

fn stopped(setup: Setup, count: u64, removed: &[u64]) -> (SimFs, FileStore) {
    let fs = SimFs::new();
    let mut store = open(&fs, setup);
    for i in 1..=count {
        put(&mut store, i);
        if i % 10 == 0 {
            // Syncs seal the blocks that are no longer the tail, one at a time.
            store.sync().unwrap();
        }
    }
    for seq in removed {
        store.remove_msg(*seq).unwrap();
    }
    store.stop().unwrap();
    drop(store);
    let store = open(&fs, setup);
    (fs, store)
}

fn forget_frame_details(state: &mut RecoveredState) {
    for lost in [state.lost.as_mut(), state.state.lost.as_mut()]
        .into_iter()
        .flatten()
    {
        lost.bytes = 0;
    }
    for block in state.blocks.iter_mut().filter(|b| b.keep_as_is) {
        block.frames.clear();
    }
}

#[test]
fn store_scrub_finds_a_flipped_record_as_the_full_scan_does() {
    for (compress, encrypted) in [(false, false), (false, true), (true, false), (true, true)] {
        let setup = Setup {
            compress,
            encrypted,
            ..PLAIN
        };
        // No removals around the damage in a sealed block: a frame that fails loses its
        // tombstones too, which the scan turns into more lost sequences than the scrub.
        let removed: &[u64] = if compress { &[] } else { &[5, 41, 42] };
        let (fs, store) = stopped(setup, 90, removed);
        let block = damage(&fs, &store, 40, 40);
        drop(store);
        let (mut scrubbed, mut scanned, files) = both(&fs, setup);
        if compress {
            // A frame that fails hides its records' sizes from the scan, and the scan leaves
            // it out of the block's frames; the scrub still knows both from the index.
            for state in [&mut scrubbed, &mut scanned] {
                forget_frame_details(state);
            }
        }
        assert_eq!(
            scrubbed, scanned,
            "compress {compress} encrypted {encrypted}"
        );
        let lost = scrubbed.lost.unwrap();
        assert!(
            lost.ranges.iter().any(|r| r.0 <= 40 && 40 <= r.1),
            "{lost:?}"
        );
        let file = format!("msgs/{}", super::block::file_name(block));
        assert_eq!(files, vec![file]);
    }
}

#[test]
fn store_scrub_lost_message_is_gone_and_the_rest_serves() {
    let (fs, store) = stopped(PLAIN, 60, &[]);
    damage(&fs, &store, 25, 40);
    damage(&fs, &store, 26, 3);
    drop(store);
    let mut store = open(&fs, PLAIN);
    assert!(matches!(
        store.load_msg(25),
        Err(StoreError::Corrupt { .. })
    ));
    // The failed load hands its record to the next step, whatever the scrub's progress.
    let step = store.scrub(0).unwrap();
    assert!(!step.done);
    assert_eq!(step.damaged[0].lost, vec![(25, 25)]);
    assert!(matches!(store.load_msg(25), Err(StoreError::NotFound)));
    scrub_all(&mut store);
    let state = store.state();
    assert_eq!(state.lost.unwrap().ranges, vec![(25, 26)]);
    assert_eq!(state.msgs, 58);
    assert_eq!(
        store.recovery_report().damaged_files[0].lost,
        vec![(25, 26)]
    );
    assert_eq!(store.load_msg(27).unwrap().payload, Bytes::from("p27"));
    // Nothing on disk changed because of it, and the index is not written again.
    store.stop().unwrap();
    let store = open(&fs, PLAIN);
    assert!(store.recovered_from_index());
}

#[test]
fn store_scrub_damage_in_a_record_header_loses_only_its_message() {
    let (fs, store) = stopped(PLAIN, 60, &[7]);
    damage(&fs, &store, 30, 10);
    drop(store);
    let (scrubbed, scanned, _) = both(&fs, PLAIN);
    // The scan cannot read the size of a record whose header failed; the scrub knows it.
    assert_eq!(
        scrubbed.lost.as_ref().map(|l| l.ranges.clone()),
        scanned.lost.as_ref().map(|l| l.ranges.clone())
    );
    assert_eq!(scrubbed.msgs, scanned.msgs);
    assert_eq!(scrubbed.report, scanned.report);
    assert!(scrubbed.lost.unwrap().bytes > 0);
}

#[test]
fn store_index_written_by_maintain_not_by_sync() {
    let fs = SimFs::new();
    let setup = Setup {
        index_bytes: 1,
        ..PLAIN
    };
    let mut store = open(&fs, setup);
    for i in 1..=30 {
        put(&mut store, i);
    }
    store.sync().unwrap();
    assert!(fs.contents(Path::new(INDEX)).is_none(), "acks do not wait");
    store.maintain();
    assert!(fs.contents(Path::new(INDEX)).is_some());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random changes, a clean stop, then a byte flipped in the body of a live message's
    /// record (never one of the last, which a scan would cut as a torn tail): the scrubbed
    /// reopen from the index equals the full scan.
    #[test]
    fn store_scrub_equals_full_scan(
        steps in proptest::collection::vec(step(), 1..100),
        encrypted in proptest::bool::ANY,
        pick in 0usize..1000,
        k in 36u64..400,
    ) {
        let setup = Setup { encrypted, ..PLAIN };
        let fs = SimFs::new();
        let mut store = open(&fs, setup);
        let mut n = 0;
        for step in &steps {
            apply(&mut store, step, &mut n);
        }
        let live: Vec<u64> = store.inner.bodies().map(|(seq, _)| seq).collect();
        for _ in 0..3 {
            apply(&mut store, &Step::Put(1), &mut n);
        }
        store.stop().unwrap();
        drop(store);
        if live.is_empty() {
            return Ok(());
        }
        let store = open(&fs, setup);
        prop_assume!(store.recovered_from_index());
        let seq = live[pick % live.len()];
        let loc = *store.inner.body(seq).unwrap();
        // Past the fixed header (the scan cannot size a record whose header failed).
        let k = 36 + k % (u64::from(loc.len) - 36);
        damage(&fs, &store, seq, k);
        // Damage in the last 4 bytes a block's entry covers fails the index's end check.
        let end_of_block = store.index.basis.iter().any(|&(b, covered)| {
            b == loc.block && loc.offset() + u64::from(loc.len) == covered && k + 4 >= u64::from(loc.len)
        });
        drop(store);
        prop_assume!(!end_of_block);
        let (scrubbed, scanned, _) = both(&fs, setup);
        prop_assert_eq!(scrubbed, scanned);
    }
}
