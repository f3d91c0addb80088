//! The state file envelope of `docs/store-format.md` §5 (`meta.dat`, `index.dat`, the
//! consumer files): a magic per kind, version, flags and body length in front of the body, a
//! CRC-32C behind it. Decoding checks every field, and the body length against the kind's
//! ceiling and the bytes present, before anything is sized from it; a file that fails is
//! *damaged*, reported as [`StoreError::Corrupt`] and never deleted. Files are written with
//! the atomic rule ([`crate::io::write_atomic`]); a `.tmp` left by an interrupted write was
//! never committed and [`remove_leftover_tmp`] removes it on open.

use std::io;
use std::path::Path;

use crate::error::StoreError;
use crate::io::{read_exact_at, write_atomic, write_replace, write_synced, OpenMode, StorageIo};
use crate::limits::{
    CONSUMER_STATE_BODY_BYTES_MAX, INDEX_BODY_BYTES_MAX, META_BODY_BYTES_MAX,
    SCHEDULES_BODY_BYTES_MAX,
};

/// The only layout written and read so far.
pub const VERSION: u16 = 1;
/// Magic, version, flags, reserved byte, body length.
pub const HEADER_BYTES: usize = 16;
pub const CRC_BYTES: usize = 4;
/// The body is an AEAD envelope (§11, not built yet).
pub const FLAG_ENCRYPTED: u8 = 1;
const FLAGS_KNOWN: u8 = FLAG_ENCRYPTED;
/// What a name ends with while its atomic write is in progress.
pub const TMP_SUFFIX: &str = ".tmp";

/// Which state file an envelope holds; each has its own magic and body ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A stream's `meta.dat`: the caller's configuration bytes.
    StreamMeta,
    /// A stream's `msgs/index.dat`.
    Index,
    /// A consumer's `meta.dat`: the caller's configuration bytes.
    ConsumerMeta,
    /// A consumer's `state.dat`.
    ConsumerState,
    /// A stream's `msgs/sched.dat`: its message schedules (`super::schedule_index`).
    Schedules,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::StreamMeta,
        Kind::Index,
        Kind::ConsumerMeta,
        Kind::ConsumerState,
        Kind::Schedules,
    ];

    pub const fn magic(self) -> [u8; 4] {
        match self {
            Kind::StreamMeta => *b"NMET",
            Kind::Index => *b"NIDX",
            Kind::ConsumerMeta => *b"NCMT",
            Kind::ConsumerState => *b"NCST",
            Kind::Schedules => *b"NSCH",
        }
    }

    /// The largest body a file of this kind may hold; a longer one is damage.
    pub const fn body_bytes_max(self) -> usize {
        match self {
            Kind::StreamMeta | Kind::ConsumerMeta => META_BODY_BYTES_MAX,
            Kind::Index => INDEX_BODY_BYTES_MAX,
            Kind::ConsumerState => CONSUMER_STATE_BODY_BYTES_MAX,
            Kind::Schedules => SCHEDULES_BODY_BYTES_MAX,
        }
    }

    /// The largest file of this kind, envelope included.
    pub const fn file_bytes_max(self) -> usize {
        HEADER_BYTES + self.body_bytes_max() + CRC_BYTES
    }

    /// Names the file in errors.
    pub const fn what(self) -> &'static str {
        match self {
            Kind::StreamMeta => "stream meta file",
            Kind::Index => "stream index file",
            Kind::ConsumerMeta => "consumer meta file",
            Kind::ConsumerState => "consumer state file",
            Kind::Schedules => "message schedule index file",
        }
    }
}

const _: () = assert!(Kind::ConsumerState.file_bytes_max() < u32::MAX as usize);

/// A decoded envelope, borrowing its body from the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope<'a> {
    pub kind: Kind,
    pub flags: u8,
    pub body: &'a [u8],
}

/// Appends the envelope of `body` to `out`. A body over the kind's ceiling is refused
/// (`StateTooLarge`), since a reader would take it for damage.
pub fn encode(kind: Kind, flags: u8, body: &[u8], out: &mut Vec<u8>) -> Result<(), StoreError> {
    debug_assert_eq!(flags & !FLAGS_KNOWN, 0, "unknown envelope flags");
    if body.len() > kind.body_bytes_max() {
        return Err(StoreError::StateTooLarge { what: kind.what() });
    }
    let start = out.len();
    out.reserve(HEADER_BYTES + body.len() + CRC_BYTES);
    out.extend_from_slice(&kind.magic());
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.push(flags & FLAGS_KNOWN);
    out.push(0);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let crc = crc32c::crc32c(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Decodes a whole file that must be of `kind`. Every check failing is `Corrupt`: wrong
/// magic (another kind's file included), version, flags, reserved byte, a body length over
/// the ceiling or other than the bytes present, or a CRC mismatch.
pub fn decode(kind: Kind, bytes: &[u8]) -> Result<Envelope<'_>, StoreError> {
    check(kind, bytes).ok_or_else(|| corrupt(kind))
}

fn check(kind: Kind, bytes: &[u8]) -> Option<Envelope<'_>> {
    let header = bytes.get(..HEADER_BYTES)?;
    let version = u16::from_le_bytes(header.get(4..6)?.try_into().ok()?);
    let flags = *header.get(6)?;
    let reserved = *header.get(7)?;
    let body_len = u64::from_le_bytes(header.get(8..16)?.try_into().ok()?);
    let sane = header.get(..4)? == kind.magic()
        && version == VERSION
        && flags & !FLAGS_KNOWN == 0
        && reserved == 0;
    if !sane {
        return None;
    }
    // The length meets the ceiling first, so the sums below cannot overflow.
    let body_len = usize::try_from(body_len)
        .ok()
        .filter(|len| *len <= kind.body_bytes_max())?;
    let crc_at = HEADER_BYTES + body_len;
    if bytes.len() != crc_at + CRC_BYTES {
        return None;
    }
    let covered = bytes.get(..crc_at)?;
    let stored = u32::from_le_bytes(bytes.get(crc_at..)?.try_into().ok()?);
    if crc32c::crc32c(covered) != stored {
        return None;
    }
    let body = covered.get(HEADER_BYTES..)?;
    Some(Envelope { kind, flags, body })
}

fn corrupt(kind: Kind) -> StoreError {
    StoreError::Corrupt { what: kind.what() }
}

/// A state file read back: its flags and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    pub flags: u8,
    pub body: Vec<u8>,
}

/// Writes `<dir>/<name>` as an envelope of `kind` around `body`, by the atomic rule: after a
/// crash the file holds the old or the new content, whole.
pub fn write_state_file(
    io: &dyn StorageIo,
    dir: &Path,
    name: &str,
    kind: Kind,
    body: &[u8],
) -> Result<(), StoreError> {
    write_state_file_with(io, dir, name, kind, 0, body)
}

/// As [`write_state_file`], with the envelope's `flags` (`FLAG_ENCRYPTED` for a sealed body).
pub fn write_state_file_with(
    io: &dyn StorageIo,
    dir: &Path,
    name: &str,
    kind: Kind,
    flags: u8,
    body: &[u8],
) -> Result<(), StoreError> {
    let path = dir.join(name);
    put_state_file(io, &path, kind, (flags, body), Durability::Atomic)
}

/// How [`put_state_file`] writes (`crate::io`'s three replaces of a file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The atomic rule: synced, renamed, directory synced ([`write_atomic`]).
    Atomic,
    /// Synced and renamed; the caller syncs the directory ([`write_synced`]).
    Synced,
    /// Renamed without waiting for the disk ([`write_replace`]): what a power loss leaves
    /// of the file fails its checks on read.
    Unsynced,
}

/// Writes `path` as an envelope of `kind` holding `(flags, body)`, as `durability` says.
pub fn put_state_file(
    io: &dyn StorageIo,
    path: &Path,
    kind: Kind,
    (flags, body): (u8, &[u8]),
    durability: Durability,
) -> Result<(), StoreError> {
    let mut bytes = Vec::new();
    encode(kind, flags, body, &mut bytes)?;
    let written = match durability {
        Durability::Atomic => write_atomic(io, path, &bytes),
        Durability::Synced => write_synced(io, path, &bytes),
        Durability::Unsynced => write_replace(io, path, &bytes),
    };
    written.map_err(|e| StoreError::io("write state file", e))
}

/// Reads `<dir>/<name>` as an envelope of `kind`: `None` if there is no such file, `Corrupt`
/// if it is damaged (the file stays where it is). The file's length is checked against the
/// kind's ceiling before the buffer is sized.
pub fn read_state_file(
    io: &dyn StorageIo,
    dir: &Path,
    name: &str,
    kind: Kind,
) -> Result<Option<StateFile>, StoreError> {
    let file = match io.open(&dir.join(name), OpenMode::Read) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io("open state file", e)),
    };
    let size = file
        .size()
        .map_err(|e| StoreError::io("state file size", e))?;
    let size = usize::try_from(size)
        .ok()
        .filter(|size| *size <= kind.file_bytes_max())
        .ok_or_else(|| corrupt(kind))?;
    let mut bytes = vec![0u8; size];
    read_exact_at(&*file, &mut bytes, 0).map_err(|e| StoreError::io("read state file", e))?;
    let envelope = decode(kind, &bytes)?;
    Ok(Some(StateFile {
        flags: envelope.flags,
        body: envelope.body.to_vec(),
    }))
}

/// Removes every `*.tmp` in `dir` (atomic writes that never reached their rename) and syncs
/// the directory if it removed any. Returns how many it removed.
pub fn remove_leftover_tmp(io: &dyn StorageIo, dir: &Path) -> Result<usize, StoreError> {
    let names = io
        .list_dir(dir)
        .map_err(|e| StoreError::io("list state files", e))?;
    let mut removed = 0;
    for name in names.iter().filter(|n| n.ends_with(TMP_SUFFIX)) {
        io.remove(&dir.join(name))
            .map_err(|e| StoreError::io("remove leftover temporary file", e))?;
        removed += 1;
    }
    if removed > 0 {
        io.sync_dir(dir)
            .map_err(|e| StoreError::io("sync directory", e))?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(kind: Kind, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(kind, 0, body, &mut out).unwrap();
        out
    }

    #[test]
    fn store_envelope_round_trips_each_kind() {
        for kind in Kind::ALL {
            for body in [&b""[..], b"x", b"some config bytes"] {
                let bytes = sealed(kind, body);
                assert_eq!(bytes.len(), HEADER_BYTES + body.len() + CRC_BYTES);
                assert_eq!(bytes.get(..4).unwrap(), kind.magic());
                let env = decode(kind, &bytes).unwrap();
                assert_eq!((env.kind, env.flags, env.body), (kind, 0, body));
            }
        }
    }

    #[test]
    fn store_envelope_rejects_another_kinds_file() {
        let bytes = sealed(Kind::ConsumerMeta, b"cfg");
        for kind in [Kind::StreamMeta, Kind::Index, Kind::ConsumerState] {
            assert!(matches!(
                decode(kind, &bytes),
                Err(StoreError::Corrupt { .. })
            ));
        }
    }

    #[test]
    fn store_envelope_every_flip_and_cut_is_corrupt() {
        let bytes = sealed(Kind::ConsumerState, b"a small body");
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[at] ^= 1 << bit;
                assert!(decode(Kind::ConsumerState, &bad).is_err(), "{at}/{bit}");
            }
        }
        for len in 0..bytes.len() {
            assert!(decode(Kind::ConsumerState, &bytes[..len]).is_err(), "{len}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(Kind::ConsumerState, &longer).is_err());
    }

    #[test]
    fn store_envelope_checks_length_before_sizing() {
        // A header claiming a huge body with a matching CRC over what is there: refused by
        // the ceiling, not by an allocation.
        let mut bytes = sealed(Kind::ConsumerMeta, b"");
        bytes[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(Kind::ConsumerMeta, &bytes).is_err());
        let over = vec![0u8; Kind::ConsumerMeta.body_bytes_max() + 1];
        assert!(matches!(
            encode(Kind::ConsumerMeta, 0, &over, &mut Vec::new()),
            Err(StoreError::StateTooLarge { .. })
        ));
    }
}
