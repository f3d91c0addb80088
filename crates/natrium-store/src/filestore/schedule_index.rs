//! `msgs/sched.dat` (`docs/store-format.md` §6a): a stream's message schedules as the engine
//! last saw them, and the first sequence they do not account for, so that a reopen reads the
//! few schedule messages and the messages after that sequence instead of the whole stream
//! (Go's `sched.db`). The store does not interpret the entries: they are the engine's, kept
//! beside the blocks like `meta.dat`'s configuration. Pure codec here; the file is written
//! and read by [`crate::FileStore`].

use bytes::Bytes;

use super::varint::{put_uvarint, put_varint, Cursor};
use crate::error::StoreError;
use crate::limits::SUBJECT_BYTES_MAX;

/// The file's name in `msgs/`, and the path its key is bound to when encrypted.
pub const SCHEDULES_FILE: &str = "sched.dat";
pub const SCHEDULES_FILE_ID: &str = "msgs/sched.dat";

/// The smallest encoded entry (sequence, subject length, one subject byte, time tag), which
/// bounds a count before anything is sized from it.
const ENTRY_BYTES_MIN: usize = 4;

/// One schedule: the message that holds it and when it fires next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleEntry {
    pub seq: u64,
    pub subject: Bytes,
    /// Unix ns of the next fire; `None` when the next start decides it from the schedule
    /// message (an `@at` whose fire was not stored waits for it).
    pub at_ns: Option<i64>,
}

/// The schedules and the first sequence they do not account for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScheduleIndex {
    /// Every message below this sequence is reflected in `entries`.
    pub next_seq: u64,
    /// Ascending by sequence, one per subject.
    pub entries: Vec<ScheduleEntry>,
}

/// Appends the body of `index` to `out`.
pub fn encode(index: &ScheduleIndex, out: &mut Vec<u8>) {
    debug_assert!(index
        .entries
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.seq < b.seq)));
    put_uvarint(out, index.next_seq);
    put_uvarint(out, index.entries.len() as u64);
    for entry in &index.entries {
        debug_assert!(!entry.subject.is_empty() && entry.seq < index.next_seq);
        put_uvarint(out, entry.seq);
        put_uvarint(out, entry.subject.len() as u64);
        out.extend_from_slice(&entry.subject);
        match entry.at_ns {
            None => out.push(0),
            Some(at) => {
                out.push(1);
                put_varint(out, at);
            }
        }
    }
}

/// Decodes a body: every count is checked against the bytes left, sequences must increase and
/// stay below `next_seq`, subjects be non-empty and within the subject ceiling, and nothing may
/// follow the last entry. Any failure is a damaged file.
pub fn decode(body: &[u8]) -> Result<ScheduleIndex, StoreError> {
    decode_body(body).ok_or(StoreError::Corrupt {
        what: "message schedule index",
    })
}

fn decode_body(body: &[u8]) -> Option<ScheduleIndex> {
    let mut cur = Cursor::new(body);
    let next_seq = cur.uvarint()?;
    let count = usize::try_from(cur.uvarint()?).ok()?;
    if count > cur.remaining() / ENTRY_BYTES_MIN {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    let mut previous = None;
    for _ in 0..count {
        let seq = cur.uvarint()?;
        if seq >= next_seq || previous.is_some_and(|p| seq <= p) {
            return None;
        }
        previous = Some(seq);
        let len = usize::try_from(cur.uvarint()?).ok()?;
        if len == 0 || len > SUBJECT_BYTES_MAX {
            return None;
        }
        let subject = Bytes::copy_from_slice(cur.bytes(len)?);
        let at_ns = match cur.bytes(1)? {
            [0] => None,
            [1] => Some(cur.varint()?),
            _ => return None,
        };
        entries.push(ScheduleEntry {
            seq,
            subject,
            at_ns,
        });
    }
    (cur.remaining() == 0).then_some(ScheduleIndex { next_seq, entries })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filestore::envelope::{self, Kind};
    use proptest::prelude::*;

    fn index() -> impl Strategy<Value = ScheduleIndex> {
        let entry = (
            1u64..1_000,
            proptest::collection::vec(any::<u8>(), 1..20),
            proptest::option::of(any::<i64>()),
        );
        (proptest::collection::vec(entry, 0..20), 0u64..u64::MAX / 2).prop_map(|(raw, extra)| {
            let mut seq = 0;
            let entries: Vec<ScheduleEntry> = raw
                .into_iter()
                .map(|(gap, subject, at_ns)| {
                    seq += gap;
                    ScheduleEntry {
                        seq,
                        subject: Bytes::from(subject),
                        at_ns,
                    }
                })
                .collect();
            ScheduleIndex {
                next_seq: seq + 1 + extra % 1_000,
                entries,
            }
        })
    }

    fn file(index: &ScheduleIndex) -> Vec<u8> {
        let mut body = Vec::new();
        encode(index, &mut body);
        let mut file = Vec::new();
        envelope::encode(Kind::Schedules, 0, &body, &mut file).unwrap();
        file
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn store_schedule_index_round_trips(index in index()) {
            let mut body = Vec::new();
            encode(&index, &mut body);
            prop_assert_eq!(decode(&body).unwrap(), index);
        }

        /// Any flipped bit or cut of the file is refused by its envelope, never a panic.
        #[test]
        fn store_schedule_index_detects_corruption(
            index in index(),
            at in any::<prop::sample::Index>(),
            bit in 0u8..8,
            cut in any::<prop::sample::Index>(),
        ) {
            let bytes = file(&index);
            let mut flipped = bytes.clone();
            flipped[at.index(bytes.len())] ^= 1 << bit;
            prop_assert!(envelope::decode(Kind::Schedules, &flipped).is_err());
            let short = &bytes[..cut.index(bytes.len())];
            prop_assert!(envelope::decode(Kind::Schedules, short).is_err());
        }

        /// Arbitrary bodies decode or are refused; what decodes encodes back the same.
        #[test]
        fn store_schedule_index_decodes_any_bytes(body in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(index) = decode(&body) {
                let mut again = Vec::new();
                encode(&index, &mut again);
                prop_assert_eq!(decode(&again).unwrap(), index);
            }
        }
    }

    #[test]
    fn store_schedule_index_file_written_only_when_synced() {
        use crate::io::{SimFs, StorageIo};
        use crate::{FileStore, FileStoreOptions, NewMsg, StoreConfig, StreamStore};
        use std::path::Path;
        use std::sync::Arc;
        let fs = SimFs::new();
        let open = || {
            let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
            let options = FileStoreOptions::default();
            FileStore::open(io, Path::new("/s"), StoreConfig::default(), options).unwrap()
        };
        let mut store = open();
        assert_eq!(store.read_schedule_index().unwrap(), None);
        let msg = NewMsg::new(b"s.a", Bytes::new(), Bytes::from_static(b"p"), 1);
        store.store_msg(msg).unwrap();
        let index = ScheduleIndex {
            next_seq: 2,
            entries: vec![ScheduleEntry {
                seq: 1,
                subject: Bytes::from_static(b"s.a"),
                at_ns: None,
            }],
        };
        assert!(
            !store.write_schedule_index(&index).unwrap(),
            "a block unsynced"
        );
        store.sync().unwrap();
        assert!(store.write_schedule_index(&index).unwrap());
        store.stop().unwrap();
        let store = open();
        assert_eq!(store.read_schedule_index().unwrap(), Some(index));
        // A damaged file is reported, not taken.
        let path = Path::new("/s/msgs").join(SCHEDULES_FILE);
        let file = fs.open(&path, crate::io::OpenMode::ReadWrite).unwrap();
        file.write_at(b"X", 0).unwrap();
        assert!(store.read_schedule_index().is_err());
    }

    #[test]
    fn store_schedule_index_refuses_bad_bodies() {
        let good = ScheduleIndex {
            next_seq: 10,
            entries: vec![ScheduleEntry {
                seq: 3,
                subject: Bytes::from_static(b"s.a"),
                at_ns: Some(-5),
            }],
        };
        let mut body = Vec::new();
        encode(&good, &mut body);
        assert_eq!(decode(&body).unwrap(), good);
        // A sequence at or past next_seq, a count larger than the bytes, a trailing byte.
        assert!(decode(&[3, 1, 3, 1, b'a', 0]).is_err());
        assert!(decode(&[10, 200, 1]).is_err());
        let mut trailing = body.clone();
        trailing.push(0);
        assert!(decode(&trailing).is_err());
        // An unknown time tag, an empty subject, sequences not increasing.
        assert!(decode(&[10, 1, 3, 1, b'a', 2]).is_err());
        assert!(decode(&[10, 1, 3, 0, 0]).is_err());
        assert!(decode(&[10, 2, 3, 1, b'a', 0, 3, 1, b'b', 0]).is_err());
        assert_eq!(decode(&[0, 0]).unwrap(), ScheduleIndex::default());
    }
}
