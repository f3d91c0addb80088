//! The narrow storage I/O interface the file store uses for every byte it reads or writes,
//! so tests can swap the real file system for one that injects faults and crashes.

use std::io;
use std::path::Path;

/// How to open a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Read only; the file must exist.
    Read,
    /// Read and write; the file must exist.
    ReadWrite,
    /// Read and write, created if missing, contents kept.
    Create,
    /// Read and write, created if missing, emptied.
    Truncate,
}

/// An open file. Positional reads and writes only: no shared cursor, so one handle serves
/// concurrent readers.
pub trait StorageFile: Send + Sync {
    /// Reads at `offset`; may return fewer bytes than asked (0 at the end).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes at `offset`; may write fewer bytes than given.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// The file's length in bytes.
    fn size(&self) -> io::Result<u64>;
    /// Cuts or extends the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
}

/// A file system: files plus the directory operations the atomic write rule needs.
pub trait StorageIo: Send + Sync {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn StorageFile>>;
    /// Renames `from` to `to`, replacing `to`. Durable only after `sync_dir` of the directory.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file. Durable only after `sync_dir` of the directory.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// The names of the files in `dir`, sorted.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Creates `dir` and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
}

/// Reads exactly `buf.len()` bytes at `offset`; `UnexpectedEof` if the file is shorter.
pub fn read_exact_at(
    file: &dyn StorageFile,
    mut buf: &mut [u8],
    mut offset: u64,
) -> io::Result<()> {
    while !buf.is_empty() {
        match file.read_at(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = buf.get_mut(n..).unwrap_or_default();
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` at `offset`, continuing after short writes.
pub fn write_all_at(file: &dyn StorageFile, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match file.write_at(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = buf.get(n..).unwrap_or_default();
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The atomic replace of `docs/store-format.md` §5: write `<path>.tmp`, sync it, rename it
/// over `path`, sync the directory. After a crash `path` holds the old or the new bytes.
pub fn write_atomic(io: &dyn StorageIo, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let tmp = write_tmp(io, path, bytes, true)?;
    io.rename(&tmp, path)?;
    io.sync_dir(dir)
}

/// The replace of §5 without waiting for the disk: `<path>.tmp` written and renamed over
/// `path`. After the process dies `path` holds the old or the new bytes; after a power loss
/// it may hold neither (its reader must check it).
pub fn write_replace(io: &dyn StorageIo, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = write_tmp(io, path, bytes, false)?;
    io.rename(&tmp, path)
}

/// `<path>.tmp` written and synced, then renamed over `path`; the directory is not synced
/// (the caller does, after what it renames next).
pub fn write_synced(io: &dyn StorageIo, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = write_tmp(io, path, bytes, true)?;
    io.rename(&tmp, path)
}

fn write_tmp(
    io: &dyn StorageIo,
    path: &Path,
    bytes: &[u8],
    sync: bool,
) -> io::Result<std::path::PathBuf> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let file = io.open(&tmp, OpenMode::Truncate)?;
    write_all_at(&*file, bytes, 0)?;
    if sync {
        file.sync_data()?;
    }
    Ok(tmp)
}
