//! `FileConsumerStore` against crashes, I/O faults and damaged files, on `SimFs`.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::consumer::{FileConsumerStore, LATEST_FILE, STATE_FILE};
use super::envelope::{self, Kind};
use crate::consumer::{AckPolicy, ConsumerState, ConsumerStore, ConsumerStoreConfig};
use crate::io::{CrashMode, Fault, OpKind, SimFs, StdFs, StorageIo};
use crate::StoreError;

const DIR: &str = "/s/obs/c";

fn config() -> ConsumerStoreConfig {
    ConsumerStoreConfig {
        ack_policy: AckPolicy::Explicit,
        max_deliver: Some(3),
    }
}

fn open(fs: &SimFs) -> Result<FileConsumerStore, StoreError> {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    FileConsumerStore::open(io, Path::new(DIR), config())
}

/// Delivers consumer sequences `from..=to` as stream sequences `+ 100`.
fn deliver(c: &mut FileConsumerStore, from: u64, to: u64) {
    for i in from..=to {
        c.update_delivered(i, i + 100, 1, i64::try_from(i).unwrap() * 1000)
            .unwrap();
    }
}

fn state_path() -> std::path::PathBuf {
    Path::new(DIR).join(STATE_FILE)
}

#[test]
fn store_consumer_file_round_trip_and_reopen() {
    let fs = SimFs::new();
    let mut c = open(&fs).unwrap();
    assert!(!c.has_state());
    deliver(&mut c, 1, 5);
    c.update_delivered(6, 102, 2, 9).unwrap();
    c.update_acks(1, 101).unwrap();
    c.update_acks(4, 104).unwrap();
    let before = c.state().unwrap();
    assert!(c.has_unsynced());
    c.sync().unwrap();
    assert!(!c.has_unsynced());
    drop(c);
    fs.crash(CrashMode::DropUnsynced);
    let c = open(&fs).unwrap();
    assert_eq!(c.state().unwrap(), before);
    assert!(c.has_state());
}

#[test]
fn store_consumer_file_sync_writes_only_changes() {
    let fs = SimFs::new();
    let mut c = open(&fs).unwrap();
    c.sync().unwrap();
    assert_eq!(
        fs.calls(OpKind::Rename),
        0,
        "nothing changed, nothing written"
    );
    deliver(&mut c, 1, 2);
    c.sync().unwrap();
    c.sync().unwrap();
    // Each sync renames twice: the synced `state.latest`, then that over `state.dat`.
    assert_eq!(fs.calls(OpKind::Rename), 2);
    c.update_acks(1, 101).unwrap();
    c.stop().unwrap();
    assert_eq!(fs.calls(OpKind::Rename), 4, "stop writes the last change");
    assert!(matches!(c.sync(), Err(StoreError::Closed)));
    assert!(matches!(c.state(), Err(StoreError::Closed)));
    assert!(matches!(c.update_acks(2, 102), Err(StoreError::Closed)));
    c.stop().unwrap();
}

#[test]
fn store_consumer_file_crash_keeps_last_sync() {
    for mode in [
        CrashMode::DropUnsynced,
        CrashMode::TornPrefix { keep_bytes: 7 },
        CrashMode::KeepAll,
    ] {
        let fs = SimFs::new();
        let mut c = open(&fs).unwrap();
        deliver(&mut c, 1, 4);
        c.sync().unwrap();
        let synced = c.state().unwrap();
        deliver(&mut c, 5, 8);
        c.update_acks(1, 101).unwrap();
        drop(c);
        fs.crash(mode);
        assert_eq!(open(&fs).unwrap().state().unwrap(), synced, "{mode:?}");
    }
}

/// The states before and after one more write, and a store holding the first one synced.
fn old_and_new(fs: &SimFs) -> (FileConsumerStore, ConsumerState, ConsumerState) {
    let mut c = open(fs).unwrap();
    deliver(&mut c, 1, 3);
    c.sync().unwrap();
    let old = c.state().unwrap();
    deliver(&mut c, 4, 9);
    c.update_acks(1, 101).unwrap();
    let new = c.state().unwrap();
    (c, old, new)
}

#[test]
fn store_consumer_file_crash_mid_write_leaves_old_or_new() {
    let modes = [
        CrashMode::DropUnsynced,
        CrashMode::TornPrefix { keep_bytes: 0 },
        CrashMode::TornPrefix { keep_bytes: 5 },
        CrashMode::TornPrefix { keep_bytes: 30 },
        CrashMode::KeepAll,
    ];
    let steps = [
        (OpKind::Open, 1),
        (OpKind::Write, 1),
        (OpKind::Sync, 1),
        (OpKind::Rename, 1),
        (OpKind::Rename, 2),
        (OpKind::SyncDir, 1),
    ];
    for mode in modes {
        for step in steps.iter().map(Some).chain([None]) {
            let fs = SimFs::new();
            let (mut c, old, new) = old_and_new(&fs);
            if let Some((step, nth)) = step {
                // The write stops at this step: the process dies there.
                fs.fail_nth(*step, *nth, Fault::Error(io::ErrorKind::Other));
            }
            let synced = c.sync();
            assert_eq!(synced.is_err(), step.is_some(), "{step:?}");
            drop(c);
            fs.crash(mode);
            let got = open(&fs).unwrap().state().unwrap();
            assert!(got == old || got == new, "{mode:?} {step:?}: {got:?}");
            if step.is_none() {
                assert_eq!(got, new, "a completed sync is durable");
            }
            let names = fs.list_dir(Path::new(DIR)).unwrap();
            assert!(
                names.iter().all(|n| n == STATE_FILE || n == LATEST_FILE),
                "no .tmp left after open: {names:?}"
            );
        }
    }
}

#[test]
fn store_consumer_file_failed_write_keeps_old_file_and_retries() {
    for (step, fault) in [
        (OpKind::Open, Fault::Error(io::ErrorKind::PermissionDenied)),
        (OpKind::Write, Fault::NoSpace),
        (OpKind::Sync, Fault::Error(io::ErrorKind::Other)),
        (OpKind::Rename, Fault::Error(io::ErrorKind::Other)),
    ] {
        let fs = SimFs::new();
        let (mut c, old, new) = old_and_new(&fs);
        let before = fs.contents(&state_path()).unwrap();
        fs.fail_nth(step, 1, fault);
        let err = c.sync().unwrap_err();
        if fault == Fault::NoSpace {
            assert!(matches!(err, StoreError::StorageFull), "{err:?}");
        }
        assert_eq!(fs.contents(&state_path()).unwrap(), before, "{step:?}");
        assert_eq!(open(&fs).unwrap().state().unwrap(), old, "{step:?}");
        assert!(c.has_unsynced());
        c.sync().unwrap();
        assert_eq!(open(&fs).unwrap().state().unwrap(), new, "{step:?}");
    }
    // A short write is no failure: the rest is written after it.
    let fs = SimFs::new();
    let (mut c, _, new) = old_and_new(&fs);
    fs.fail_nth(OpKind::Write, 1, Fault::ShortWrite(3));
    c.sync().unwrap();
    assert_eq!(open(&fs).unwrap().state().unwrap(), new);
}

#[test]
fn store_consumer_file_failed_stop_reports_and_closes() {
    let fs = SimFs::new();
    let (mut c, old, _) = old_and_new(&fs);
    fs.fail_nth(OpKind::Sync, 1, Fault::Error(io::ErrorKind::Other));
    assert!(c.stop().is_err());
    assert!(matches!(c.state(), Err(StoreError::Closed)));
    assert_eq!(open(&fs).unwrap().state().unwrap(), old);
}

#[test]
fn store_consumer_file_damaged_state_is_corrupt_and_kept() {
    let fs = SimFs::new();
    let (mut c, _, _) = old_and_new(&fs);
    c.update_delivered(7, 107, 2, 1).unwrap();
    c.stop().unwrap();
    let good = fs.contents(&state_path()).unwrap();
    let damage = |bytes: &[u8]| {
        // Overwrite through the atomic rule with raw bytes, as a damaged disk would hold.
        crate::io::write_atomic(&fs, &state_path(), bytes).unwrap();
        let err = open(&fs).err();
        assert!(
            matches!(err, Some(StoreError::Corrupt { .. })),
            "{err:?} for {} bytes",
            bytes.len()
        );
        assert_eq!(fs.contents(&state_path()).unwrap(), bytes, "left in place");
    };
    for at in 0..good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        damage(&bad);
    }
    for len in 0..good.len() {
        damage(&good[..len]);
    }
}

#[test]
fn store_consumer_file_body_damage_under_a_valid_envelope_is_corrupt() {
    let fs = SimFs::new();
    fs.create_dir_all(Path::new(DIR)).unwrap();
    for body in [&b""[..], &[0, 0, 0, 0, 9], &[0, 0, 0, 0, 0, 0, 0]] {
        envelope::write_state_file(&fs, Path::new(DIR), STATE_FILE, Kind::ConsumerState, body)
            .unwrap();
        assert!(matches!(open(&fs), Err(StoreError::Corrupt { .. })));
    }
}

#[test]
fn store_consumer_file_on_real_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("stream/obs/c");
    let io: Arc<dyn StorageIo> = Arc::new(StdFs);
    let mut c = FileConsumerStore::open(io.clone(), &dir, config()).unwrap();
    for i in 1..=3 {
        c.update_delivered(i, i, 1, 0).unwrap();
    }
    c.update_acks(2, 2).unwrap();
    let before = c.state().unwrap();
    c.stop().unwrap();
    std::fs::write(dir.join("state.dat.tmp"), b"half").unwrap();
    let c = FileConsumerStore::open(io.clone(), &dir, config()).unwrap();
    assert_eq!(c.state().unwrap(), before);
    assert_eq!(io.list_dir(&dir).unwrap(), vec![STATE_FILE.to_owned()]);
}

#[test]
fn store_consumer_file_keeps_a_redelivery_count_below_the_floor() {
    // A message past max_deliver leaves pending but keeps its count; once the floor passes
    // it, the count sits below the floor, and the state file must still hold it.
    let fs = SimFs::new();
    let mut c = open(&fs).unwrap();
    deliver(&mut c, 1, 2);
    c.update_delivered(3, 101, 4, 0).unwrap();
    c.update_acks(2, 102).unwrap();
    let s = c.state().unwrap();
    assert!(s.pending.is_empty());
    assert_eq!(
        (s.ack_floor.stream, s.redelivered.get(&101)),
        (102, Some(&3))
    );
    c.stop().unwrap();
    assert_eq!(open(&fs).unwrap().state().unwrap(), s);
}

fn keys(key: &str, prev: Option<&str>) -> super::at_rest::AtRest {
    let keys = crate::seal::ServerKeys::new(
        key.as_bytes(),
        prev.map(str::as_bytes),
        crate::seal::Cipher::Aes,
    )
    .unwrap();
    super::at_rest::AtRest {
        keys: Arc::new(keys),
        account: "ACC".into(),
        stream: "ORDERS".into(),
    }
}

fn open_with(
    fs: &SimFs,
    at_rest: Option<super::at_rest::AtRest>,
) -> Result<FileConsumerStore, StoreError> {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    FileConsumerStore::open_at_rest(io, Path::new(DIR), config(), at_rest)
}

#[test]
fn store_consumer_file_encrypted_survives_a_crash_and_a_key_rotation() {
    let fs = SimFs::new();
    let mut c = open_with(&fs, Some(keys("k1", None))).unwrap();
    deliver(&mut c, 1, 5);
    c.update_acks(2, 102).unwrap();
    c.sync().unwrap();
    let want = c.state().unwrap();
    drop(c);
    fs.crash(CrashMode::DropUnsynced);
    let file = fs.contents(&state_path()).unwrap();
    let read = envelope::decode(Kind::ConsumerState, &file).unwrap();
    assert_eq!(
        read.flags & envelope::FLAG_ENCRYPTED,
        envelope::FLAG_ENCRYPTED
    );
    // Without the key, or with another, the state is refused, never misread.
    assert!(matches!(open_with(&fs, None), Err(StoreError::WrongKey)));
    assert!(matches!(
        open_with(&fs, Some(keys("k9", None))),
        Err(StoreError::WrongKey)
    ));
    let c = open_with(&fs, Some(keys("k1", None))).unwrap();
    assert_eq!(c.state().unwrap(), want);
    assert!(!c.has_unsynced());
    drop(c);
    // Rotation: opened with prev_key, written again under the new key at the next sync.
    let mut c = open_with(&fs, Some(keys("k2", Some("k1")))).unwrap();
    assert_eq!(c.state().unwrap(), want);
    assert!(c.has_unsynced(), "asks to be written under the new key");
    c.sync().unwrap();
    drop(c);
    fs.crash(CrashMode::DropUnsynced);
    let c = open_with(&fs, Some(keys("k2", None))).unwrap();
    assert_eq!(c.state().unwrap(), want, "prev_key no longer needed");
}

#[test]
fn store_consumer_file_write_survives_a_process_crash_not_a_power_loss() {
    for (mode, expect_written) in [
        (CrashMode::KeepAll, true),
        (CrashMode::DropUnsynced, false),
        (CrashMode::TornPrefix { keep_bytes: 0 }, false),
        (CrashMode::TornPrefix { keep_bytes: 9 }, false),
    ] {
        let fs = SimFs::new();
        let mut c = open(&fs).unwrap();
        deliver(&mut c, 1, 3);
        c.sync().unwrap();
        let synced = c.state().unwrap();
        deliver(&mut c, 4, 6);
        c.update_acks(1, 101).unwrap();
        c.write().unwrap();
        let written = c.state().unwrap();
        assert!(c.has_unsynced(), "written is not synced");
        let syncs = fs.calls(OpKind::Sync) + fs.calls(OpKind::SyncDir);
        c.write().unwrap();
        assert_eq!(
            fs.calls(OpKind::Sync) + fs.calls(OpKind::SyncDir),
            syncs,
            "a write waits for no disk"
        );
        drop(c);
        fs.crash(mode);
        let got = open(&fs).unwrap().state().unwrap();
        let want = if expect_written { &written } else { &synced };
        assert_eq!(&got, want, "{mode:?}");
    }
}

#[test]
fn store_consumer_file_damaged_latest_falls_back_to_the_synced_state() {
    let fs = SimFs::new();
    let mut c = open(&fs).unwrap();
    deliver(&mut c, 1, 3);
    c.sync().unwrap();
    let synced = c.state().unwrap();
    deliver(&mut c, 4, 5);
    c.write().unwrap();
    drop(c);
    let latest = Path::new(DIR).join(LATEST_FILE);
    let mut bytes = fs.contents(&latest).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    let file = fs.open(&latest, crate::io::OpenMode::Truncate).unwrap();
    crate::io::write_all_at(&*file, &bytes, 0).unwrap();
    drop(file);
    let mut c = open(&fs).unwrap();
    assert_eq!(c.state().unwrap(), synced);
    // The next sync replaces the damaged file's place with the current state.
    deliver(&mut c, 4, 4);
    c.sync().unwrap();
    let now = c.state().unwrap();
    drop(c);
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(open(&fs).unwrap().state().unwrap(), now);
    assert_eq!(
        fs.list_dir(Path::new(DIR)).unwrap(),
        vec![STATE_FILE.to_owned()]
    );
}

#[test]
fn store_consumer_file_sync_after_write_makes_it_durable() {
    let fs = SimFs::new();
    let mut c = open(&fs).unwrap();
    deliver(&mut c, 1, 4);
    c.write().unwrap();
    let written = c.state().unwrap();
    c.sync().unwrap();
    assert!(!c.has_unsynced());
    drop(c);
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(open(&fs).unwrap().state().unwrap(), written);
}
