//! The recovered state in a comparable form: what a reopen from the index must agree on
//! with a full scan of the same files (`docs/store-format.md` §6) — messages and where their
//! records are, bounds, lost ranges, the damage report, tombstones still tracked, and every
//! block's lengths and live and dead bytes. Public (hidden) for the model tests and the
//! `store_recovery` fuzz target.

use bytes::Bytes;

use crate::filestore::store::{FileStore, RecoveryReport};
use crate::filter::Filter;
use crate::seal::FrameEntry;
use crate::stream::StreamStore;
use crate::types::{LostData, MsgTtl, SimpleState, StreamState};

/// One block as recovery left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockState {
    pub index: u32,
    pub len: u64,
    pub plain_len: u64,
    pub data_start: u64,
    pub live: u64,
    pub live_bytes: u64,
    pub dead_bytes: u64,
    pub keep_as_is: bool,
    pub frames: Vec<FrameEntry>,
    pub encrypted: bool,
    pub rewrap: bool,
}

/// A message as recovery leaves it: sequence, subject, time, accounted size, TTL, and
/// (block, offset, length) of its record.
pub type MsgState = (u64, Bytes, i64, u64, MsgTtl, (u32, u64, u32));

/// A file store's state as recovery leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredState {
    pub state: StreamState,
    pub msgs: Vec<MsgState>,
    pub subjects: Vec<(Bytes, SimpleState)>,
    pub next_expiry: Option<i64>,
    pub logged_last: u64,
    pub logged_first: u64,
    pub lost: Option<LostData>,
    pub report: RecoveryReport,
    pub tombstones: Vec<(u64, (u32, u32))>,
    pub blocks: Vec<BlockState>,
}

impl FileStore {
    /// Whether the store was recovered from `index.dat` rather than by the full scan.
    #[doc(hidden)]
    pub fn recovered_from_index(&self) -> bool {
        self.index.used
    }

    /// The recovered state, for comparing a reopen from the index with a full scan.
    #[doc(hidden)]
    pub fn recovered_state(&self) -> RecoveredState {
        let (table, msgs) = self.inner.snapshot();
        let msgs = msgs
            .into_iter()
            .map(|m| {
                let subject = table.get(m.subject as usize).cloned().unwrap_or_default();
                let loc = (m.body.block, m.body.offset(), m.body.len);
                (m.seq, subject, m.timestamp_ns, m.size, m.ttl, loc)
            })
            .collect();
        let mut subjects = self.inner.subjects_state(&Filter::all());
        subjects.sort_by(|a, b| a.0.cmp(&b.0));
        let blocks = self
            .blocks
            .values()
            .map(|b| BlockState {
                index: b.index,
                len: b.len,
                plain_len: b.plain_len,
                data_start: b.data_start,
                live: b.live,
                live_bytes: b.live_bytes,
                dead_bytes: b.dead_bytes,
                keep_as_is: b.keep_as_is,
                frames: b
                    .frames
                    .as_ref()
                    .map(|f| f.entries().to_vec())
                    .unwrap_or_default(),
                encrypted: b.key.is_some(),
                rewrap: b.rewrap,
            })
            .collect();
        RecoveredState {
            state: self.state(),
            msgs,
            subjects,
            next_expiry: self.inner.next_expiry(),
            logged_last: self.logged_last,
            logged_first: self.logged_first,
            lost: self.lost.clone(),
            report: self.report.clone(),
            tombstones: self.tombstones.iter().map(|(s, t)| (*s, *t)).collect(),
            blocks,
        }
    }
}
