//! Tests of the storage I/O layer: the simulated file system's crash and fault semantics,
//! and the real one's round trip.

use std::io;
use std::path::{Path, PathBuf};

use super::{
    read_exact_at, write_all_at, write_atomic, CrashMode, Fault, OpKind, OpenMode, SimFs, StdFs,
    StorageIo,
};
use crate::StoreError;

fn sim() -> (SimFs, PathBuf) {
    let fs = SimFs::new();
    let dir = PathBuf::from("/s/msgs");
    fs.create_dir_all(&dir).unwrap();
    (fs, dir)
}

fn write_file(fs: &SimFs, path: &Path, bytes: &[u8], sync: bool) {
    let f = fs.open(path, OpenMode::Create).unwrap();
    let at = f.size().unwrap();
    write_all_at(&*f, bytes, at).unwrap();
    if sync {
        f.sync_data().unwrap();
    }
}

#[test]
fn store_io_sim_crash_keeps_only_synced() {
    let (fs, dir) = sim();
    let path = dir.join("1.blk");
    write_file(&fs, &path, b"durable", true);
    fs.sync_dir(&dir).unwrap();
    write_file(&fs, &path, b"-lost", false);
    assert_eq!(fs.contents(&path).unwrap(), b"durable-lost");
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(fs.contents(&path).unwrap(), b"durable");
}

#[test]
fn store_io_sim_crash_torn_prefix() {
    let (fs, dir) = sim();
    let path = dir.join("1.blk");
    write_file(&fs, &path, b"abc", true);
    fs.sync_dir(&dir).unwrap();
    write_file(&fs, &path, b"defg", false);
    write_file(&fs, &path, b"hij", false);
    fs.crash(CrashMode::TornPrefix { keep_bytes: 5 });
    assert_eq!(fs.contents(&path).unwrap(), b"abcdefghi"[..8].to_vec());
}

#[test]
fn store_io_sim_crash_keep_all_is_a_process_kill() {
    let (fs, dir) = sim();
    let path = dir.join("1.blk");
    write_file(&fs, &path, b"written", false);
    fs.crash(CrashMode::KeepAll);
    assert_eq!(fs.contents(&path).unwrap(), b"written");
}

#[test]
fn store_io_sim_names_need_dir_sync() {
    let (fs, dir) = sim();
    let a = dir.join("a");
    write_file(&fs, &a, b"x", true);
    fs.crash(CrashMode::DropUnsynced);
    assert!(
        fs.contents(&a).is_none(),
        "a created name is not durable before the dir sync"
    );

    write_file(&fs, &a, b"x", true);
    fs.sync_dir(&dir).unwrap();
    fs.rename(&a, &dir.join("b")).unwrap();
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(
        fs.contents(&a).unwrap(),
        b"x",
        "an unsynced rename is undone"
    );
    assert!(fs.contents(&dir.join("b")).is_none());

    fs.remove(&a).unwrap();
    fs.sync_dir(&dir).unwrap();
    fs.crash(CrashMode::DropUnsynced);
    assert!(fs.contents(&a).is_none());
    assert!(fs.list_dir(&dir).unwrap().is_empty());
}

#[test]
fn store_io_sim_atomic_write_survives_every_crash_point() {
    // Crash after each step of the atomic write: the file holds the old or the new bytes.
    for fail_at in [OpKind::Write, OpKind::Sync, OpKind::Rename, OpKind::SyncDir] {
        let (fs, dir) = sim();
        let path = dir.join("index.dat");
        write_atomic(&fs, &path, b"old").unwrap();
        fs.fail_nth(fail_at, 1, Fault::Error(io::ErrorKind::Other));
        assert!(write_atomic(&fs, &path, b"new").is_err(), "{fail_at:?}");
        fs.crash(CrashMode::DropUnsynced);
        assert_eq!(fs.contents(&path).unwrap(), b"old", "{fail_at:?}");
    }
    let (fs, dir) = sim();
    let path = dir.join("index.dat");
    write_atomic(&fs, &path, b"old").unwrap();
    write_atomic(&fs, &path, b"new").unwrap();
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(fs.contents(&path).unwrap(), b"new");
    assert_eq!(fs.list_dir(&dir).unwrap(), vec!["index.dat".to_owned()]);
}

#[test]
fn store_io_sim_failed_sync_is_not_durable() {
    let (fs, dir) = sim();
    let path = dir.join("1.blk");
    write_file(&fs, &path, b"a", true);
    fs.sync_dir(&dir).unwrap();
    fs.fail_nth(OpKind::Sync, 1, Fault::Error(io::ErrorKind::Other));
    let f = fs.open(&path, OpenMode::ReadWrite).unwrap();
    write_all_at(&*f, b"b", 1).unwrap();
    assert!(f.sync_data().is_err());
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(fs.contents(&path).unwrap(), b"a");
}

#[test]
fn store_io_sim_nth_call_faults_and_short_writes() {
    let (fs, dir) = sim();
    let f = fs.open(&dir.join("f"), OpenMode::Create).unwrap();
    fs.fail_nth(OpKind::Write, 2, Fault::Error(io::ErrorKind::Other));
    assert_eq!(f.write_at(b"12", 0).unwrap(), 2);
    assert!(f.write_at(b"34", 2).is_err(), "the second write fails");
    assert_eq!(f.write_at(b"34", 2).unwrap(), 2, "the third succeeds");
    fs.fail_nth(OpKind::Write, 1, Fault::ShortWrite(1));
    assert_eq!(f.write_at(b"56", 4).unwrap(), 1);
    fs.fail_nth(OpKind::Write, 1, Fault::ShortWrite(1));
    write_all_at(&*f, b"xyz", 5).unwrap();
    let mut buf = [0u8; 8];
    read_exact_at(&*f, &mut buf, 0).unwrap();
    assert_eq!(&buf, b"12345xyz");
    let mut past = [0u8; 2];
    assert_eq!(
        read_exact_at(&*f, &mut past, 7).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
}

#[test]
fn store_io_sim_no_space() {
    let (fs, dir) = sim();
    fs.set_capacity(Some(4));
    let f = fs.open(&dir.join("f"), OpenMode::Create).unwrap();
    write_all_at(&*f, b"1234", 0).unwrap();
    let err = f.write_at(b"5", 4).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    assert!(matches!(
        StoreError::io("append", err),
        StoreError::StorageFull
    ));
    assert_eq!(
        f.write_at(b"9", 0).unwrap(),
        1,
        "overwriting in place needs no space"
    );
    fs.fail_nth(OpKind::Sync, 1, Fault::NoSpace);
    assert_eq!(
        f.sync_data().unwrap_err().kind(),
        io::ErrorKind::StorageFull
    );
}

#[test]
fn store_io_sim_set_len_and_open_modes() {
    let (fs, dir) = sim();
    let path = dir.join("f");
    assert_eq!(
        fs.open(&path, OpenMode::Read).err().map(|e| e.kind()),
        Some(io::ErrorKind::NotFound)
    );
    write_file(&fs, &path, b"abcdef", true);
    fs.sync_dir(&dir).unwrap();
    let f = fs.open(&path, OpenMode::ReadWrite).unwrap();
    f.set_len(3).unwrap();
    assert_eq!(fs.contents(&path).unwrap(), b"abc");
    fs.crash(CrashMode::DropUnsynced);
    assert_eq!(
        fs.contents(&path).unwrap(),
        b"abcdef",
        "an unsynced cut is undone"
    );
    let r = fs.open(&path, OpenMode::Read).unwrap();
    assert_eq!(
        r.write_at(b"x", 0).unwrap_err().kind(),
        io::ErrorKind::PermissionDenied
    );
    drop(fs.open(&path, OpenMode::Truncate).unwrap());
    assert_eq!(fs.contents(&path).unwrap(), b"");
    assert!(fs.open(Path::new("/nowhere/f"), OpenMode::Create).is_err());
    assert_eq!(fs.calls(OpKind::Open), 6);
}

#[test]
fn store_io_std_fs_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let fs = StdFs;
    let dir = tmp.path().join("stream/msgs");
    fs.create_dir_all(&dir).unwrap();
    let path = dir.join("1.blk");
    let f = fs.open(&path, OpenMode::Create).unwrap();
    write_all_at(&*f, b"hello world", 0).unwrap();
    f.sync_data().unwrap();
    f.set_len(5).unwrap();
    assert_eq!(f.size().unwrap(), 5);
    let mut buf = [0u8; 5];
    read_exact_at(&*f, &mut buf, 0).unwrap();
    assert_eq!(&buf, b"hello");
    write_atomic(&fs, &dir.join("index.dat"), b"state").unwrap();
    fs.rename(&path, &dir.join("2.blk")).unwrap();
    fs.sync_dir(&dir).unwrap();
    assert_eq!(
        fs.list_dir(&dir).unwrap(),
        vec!["2.blk".to_owned(), "index.dat".to_owned()]
    );
    fs.remove(&dir.join("2.blk")).unwrap();
    assert_eq!(fs.list_dir(&dir).unwrap(), vec!["index.dat".to_owned()]);
}
