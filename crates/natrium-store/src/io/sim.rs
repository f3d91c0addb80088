//! `SimFs`: an in-memory [`StorageIo`] for tests that injects faults and simulates crashes.
//!
//! Each file (an inode) keeps its current bytes, the bytes last made durable by `sync_data`,
//! and the writes since then in order. Each name is durable only once its directory is
//! synced: a created, renamed or removed name that was not is undone by a crash, as on a real
//! file system after a power loss. Directories themselves count as durable once created (the
//! store creates them once, before any data). A crash keeps only what was synced, or a torn
//! prefix of the unsynced writes, or everything (a process kill): [`CrashMode`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::traits::{OpenMode, StorageFile, StorageIo};

/// The kinds of call a fault can be aimed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Open,
    Read,
    Write,
    SetLen,
    Sync,
    Rename,
    Remove,
    List,
    SyncDir,
}

/// What an injected fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The call fails with this error kind and changes nothing.
    Error(io::ErrorKind),
    /// The call fails as a full device does (`ENOSPC`).
    NoSpace,
    /// A write stores only this many bytes (at most the buffer) and reports that.
    ShortWrite(usize),
}

/// What survives [`SimFs::crash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// Power loss: only synced data and synced directory entries.
    DropUnsynced,
    /// Power loss mid-write-back: per file, the unsynced writes in order up to this many
    /// bytes, the last one cut where the budget ends.
    TornPrefix { keep_bytes: usize },
    /// The process died, the machine did not: everything written stays.
    KeepAll,
}

#[derive(Debug, Clone)]
enum Pending {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Default)]
struct Inode {
    data: Vec<u8>,
    synced: Vec<u8>,
    unsynced: Vec<Pending>,
}

#[derive(Debug)]
struct Rule {
    kind: OpKind,
    at_call: u64,
    fault: Fault,
}

#[derive(Debug, Default)]
struct Sim {
    next_inode: u64,
    inodes: HashMap<u64, Inode>,
    names: BTreeMap<PathBuf, u64>,
    durable: BTreeMap<PathBuf, u64>,
    dirs: BTreeSet<PathBuf>,
    calls: HashMap<OpKind, u64>,
    rules: Vec<Rule>,
    capacity: Option<u64>,
}

impl Sim {
    /// Counts a call and returns the fault aimed at it, if any.
    fn fault(&mut self, kind: OpKind) -> Option<Fault> {
        let count = self.calls.entry(kind).or_insert(0);
        *count += 1;
        let now = *count;
        let index = self
            .rules
            .iter()
            .position(|r| r.kind == kind && r.at_call == now)?;
        Some(self.rules.swap_remove(index).fault)
    }

    fn used_bytes(&self) -> u64 {
        self.inodes.values().map(|i| i.data.len() as u64).sum()
    }

    fn inode(&mut self, id: u64) -> io::Result<&mut Inode> {
        self.inodes
            .get_mut(&id)
            .ok_or_else(|| io::ErrorKind::NotFound.into())
    }
}

fn fault_error(fault: Fault) -> io::Error {
    match fault {
        Fault::Error(kind) => kind.into(),
        Fault::NoSpace | Fault::ShortWrite(_) => io::ErrorKind::StorageFull.into(),
    }
}

/// The simulated file system. Clones share one state.
#[derive(Debug, Clone, Default)]
pub struct SimFs {
    sim: Arc<Mutex<Sim>>,
}

impl SimFs {
    pub fn new() -> Self {
        SimFs::default()
    }

    /// Writes that would take the files' total size past `bytes` fail with `StorageFull`.
    pub fn set_capacity(&self, bytes: Option<u64>) {
        self.lock().capacity = bytes;
    }

    /// Makes the `nth` call of `kind` from now (1 is the next one) fail with `fault`.
    pub fn fail_nth(&self, kind: OpKind, nth: u64, fault: Fault) {
        let mut sim = self.lock();
        let done = sim.calls.get(&kind).copied().unwrap_or(0);
        sim.rules.push(Rule {
            kind,
            at_call: done + nth.max(1),
            fault,
        });
    }

    /// Calls of `kind` so far.
    pub fn calls(&self, kind: OpKind) -> u64 {
        self.lock().calls.get(&kind).copied().unwrap_or(0)
    }

    /// A file's current bytes (what a reader sees now), by name.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let sim = self.lock();
        let id = sim.names.get(path)?;
        sim.inodes.get(id).map(|i| i.data.clone())
    }

    /// Every file's path and current bytes, in path order (what a reader of the whole
    /// directory tree sees now).
    pub fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let sim = self.lock();
        sim.names
            .iter()
            .filter_map(|(path, id)| Some((path.clone(), sim.inodes.get(id)?.data.clone())))
            .collect()
    }

    /// A separate file system holding the files `keep` accepts, with their current bytes,
    /// all durable (a copy of the directory tree, e.g. to open it two ways).
    #[must_use]
    pub fn copy_where(&self, keep: impl Fn(&Path) -> bool) -> SimFs {
        let sim = self.lock();
        let mut copy = Sim {
            dirs: sim.dirs.clone(),
            ..Sim::default()
        };
        for (path, id) in sim.names.iter().filter(|(p, _)| keep(p)) {
            let Some(inode) = sim.inodes.get(id) else {
                continue;
            };
            copy.next_inode += 1;
            let data = inode.data.clone();
            let inode = Inode {
                synced: data.clone(),
                data,
                unsynced: Vec::new(),
            };
            copy.inodes.insert(copy.next_inode, inode);
            copy.names.insert(path.clone(), copy.next_inode);
        }
        copy.durable = copy.names.clone();
        SimFs {
            sim: Arc::new(Mutex::new(copy)),
        }
    }

    /// Simulates a crash and restart: afterwards the file system holds what `mode` keeps,
    /// every byte is durable again, and pending fault rules are dropped.
    pub fn crash(&self, mode: CrashMode) {
        let mut sim = self.lock();
        if mode != CrashMode::KeepAll {
            sim.names = sim.durable.clone();
        }
        let live: BTreeSet<u64> = sim.names.values().copied().collect();
        sim.inodes.retain(|id, _| live.contains(id));
        for inode in sim.inodes.values_mut() {
            let data = match mode {
                CrashMode::KeepAll => std::mem::take(&mut inode.data),
                CrashMode::DropUnsynced => inode.synced.clone(),
                CrashMode::TornPrefix { keep_bytes } => {
                    torn(&inode.synced, &inode.unsynced, keep_bytes)
                }
            };
            inode.synced.clone_from(&data);
            inode.data = data;
            inode.unsynced.clear();
        }
        sim.durable = sim.names.clone();
        sim.rules.clear();
    }

    fn lock(&self) -> MutexGuard<'_, Sim> {
        // A test that panicked while holding the lock leaves consistent data: every change
        // under it is applied whole.
        self.sim.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `synced` with the unsynced operations replayed in order until `budget` bytes are spent.
fn torn(synced: &[u8], unsynced: &[Pending], mut budget: usize) -> Vec<u8> {
    let mut data = synced.to_vec();
    for op in unsynced {
        match op {
            Pending::SetLen(len) => data.resize(usize::try_from(*len).unwrap_or(usize::MAX), 0),
            Pending::Write { offset, bytes } => {
                let keep = bytes.len().min(budget);
                apply_write(&mut data, *offset, bytes.get(..keep).unwrap_or_default());
                budget -= keep;
                if budget == 0 {
                    break;
                }
            }
        }
    }
    data
}

fn apply_write(data: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let end = start.saturating_add(bytes.len());
    if data.len() < end {
        data.resize(end, 0);
    }
    if let Some(dst) = data.get_mut(start..end) {
        dst.copy_from_slice(bytes);
    }
}

struct SimFile {
    fs: SimFs,
    inode: u64,
    writable: bool,
}

impl StorageFile for SimFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut sim = self.fs.lock();
        if let Some(fault) = sim.fault(OpKind::Read) {
            return Err(fault_error(fault));
        }
        let data = &sim.inode(self.inode)?.data;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let src = data.get(start..).unwrap_or_default();
        let n = src.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), src.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        if !self.writable {
            return Err(io::ErrorKind::PermissionDenied.into());
        }
        let mut sim = self.fs.lock();
        let mut n = buf.len();
        match sim.fault(OpKind::Write) {
            Some(Fault::ShortWrite(short)) => n = n.min(short),
            Some(fault) => return Err(fault_error(fault)),
            None => {}
        }
        let bytes = buf.get(..n).unwrap_or_default();
        let current = sim.inode(self.inode)?.data.len() as u64;
        let grows = (offset + n as u64).saturating_sub(current);
        if sim
            .capacity
            .is_some_and(|cap| sim.used_bytes() + grows > cap)
        {
            return Err(io::ErrorKind::StorageFull.into());
        }
        let inode = sim.inode(self.inode)?;
        apply_write(&mut inode.data, offset, bytes);
        inode.unsynced.push(Pending::Write {
            offset,
            bytes: bytes.to_vec(),
        });
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.fs.lock().inode(self.inode)?.data.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut sim = self.fs.lock();
        if let Some(fault) = sim.fault(OpKind::SetLen) {
            return Err(fault_error(fault));
        }
        let inode = sim.inode(self.inode)?;
        inode
            .data
            .resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
        inode.unsynced.push(Pending::SetLen(len));
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut sim = self.fs.lock();
        if let Some(fault) = sim.fault(OpKind::Sync) {
            // A failed fsync makes nothing durable; the writes stay unsynced and a crash
            // loses them, as Linux may after EIO.
            return Err(fault_error(fault));
        }
        let inode = sim.inode(self.inode)?;
        inode.synced.clone_from(&inode.data);
        inode.unsynced.clear();
        Ok(())
    }
}

impl StorageIo for SimFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn StorageFile>> {
        let mut sim = self.lock();
        if let Some(fault) = sim.fault(OpKind::Open) {
            return Err(fault_error(fault));
        }
        if !path.parent().is_some_and(|dir| sim.dirs.contains(dir)) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let existing = sim.names.get(path).copied();
        let inode = match (existing, mode) {
            (Some(id), OpenMode::Truncate) => {
                let inode = sim.inode(id)?;
                inode.data.clear();
                inode.unsynced.push(Pending::SetLen(0));
                id
            }
            (Some(id), _) => id,
            (None, OpenMode::Read | OpenMode::ReadWrite) => {
                return Err(io::ErrorKind::NotFound.into())
            }
            (None, OpenMode::Create | OpenMode::Truncate) => {
                sim.next_inode += 1;
                let id = sim.next_inode;
                sim.inodes.insert(id, Inode::default());
                sim.names.insert(path.to_path_buf(), id);
                id
            }
        };
        let writable = mode != OpenMode::Read;
        Ok(Box::new(SimFile {
            fs: self.clone(),
            inode,
            writable,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut sim = self.lock();
        if let Some(fault) = sim.fault(OpKind::Rename) {
            return Err(fault_error(fault));
        }
        let id = sim.names.remove(from).ok_or(io::ErrorKind::NotFound)?;
        sim.names.insert(to.to_path_buf(), id);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut sim = self.lock();
        if let Some(fault) = sim.fault(OpKind::Remove) {
            return Err(fault_error(fault));
        }
        sim.names
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| io::ErrorKind::NotFound.into())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut sim = self.lock();
        if let Some(fault) = sim.fault(OpKind::List) {
            return Err(fault_error(fault));
        }
        if !sim.dirs.contains(dir) {
            return Err(io::ErrorKind::NotFound.into());
        }
        let names = sim.names.keys().filter(|p| p.parent() == Some(dir));
        Ok(names
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut sim = self.lock();
        for ancestor in dir.ancestors() {
            sim.dirs.insert(ancestor.to_path_buf());
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut sim = self.lock();
        if let Some(fault) = sim.fault(OpKind::SyncDir) {
            return Err(fault_error(fault));
        }
        sim.durable.retain(|p, _| p.parent() != Some(dir));
        let current: Vec<(PathBuf, u64)> = sim
            .names
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .map(|(p, id)| (p.clone(), *id))
            .collect();
        sim.durable.extend(current);
        Ok(())
    }
}
