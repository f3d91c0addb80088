//! Atomic batches in the file store (`docs/store-format.md` §2, the `batch` record): a batch
//! is written as one `batch` record followed by its message records, in one append to one
//! block, and recovery applies them only when every one of them is whole. A crash in the
//! middle of the append (a process killed inside the write, a power loss before the sync)
//! leaves a batch record whose records are not all there: recovery cuts the tail back to
//! it, so the batch is wholly stored or not at all.

use super::batch_record::{batch_payload, BATCH_RECORD_BYTES};
use super::block::Loc;
use super::record::{self, Kind, Record};
use super::store::FileStore;
use crate::error::StoreError;
use crate::limits::{MESSAGE_BYTES_MAX, SUBJECT_BYTES_MAX};
use crate::seal::TAG_BYTES;
use crate::stream::StreamStore;
use crate::types::{NewMsg, Stored};

impl FileStore {
    /// `StreamStore::store_batch`: checks the whole batch, writes its records in one append
    /// (rotating first if the tail is full, never in the middle), then applies it to the
    /// memory state and logs the removals its limits cause after it.
    pub(super) fn store_batch_records(
        &mut self,
        msgs: &[NewMsg<'_>],
    ) -> Result<Vec<Stored>, StoreError> {
        self.writable()?;
        let Some(head) = msgs.first() else {
            return Ok(Vec::new());
        };
        for msg in msgs {
            let body = msg.headers.len().saturating_add(msg.payload.len());
            if msg.subject.len() > SUBJECT_BYTES_MAX || body > MESSAGE_BYTES_MAX {
                return Err(StoreError::MsgTooLarge);
            }
        }
        self.inner.check_batch(msgs)?;
        let first_seq = self.inner.fast_state().last_seq + 1;
        let mut plain = Vec::new();
        let mut lens = Vec::with_capacity(msgs.len());
        for (i, msg) in msgs.iter().enumerate() {
            let rec = msg_record(msg, first_seq + i as u64);
            let len = record::encode(&rec, &mut plain).ok_or(StoreError::MsgTooLarge)?;
            lens.push(len);
        }
        let tag = if self.at_rest.is_some() { TAG_BYTES } else { 0 };
        let region = plain.len() + tag * msgs.len();
        let index = self.tail_for(BATCH_RECORD_BYTES + region)?;
        let (buf, locs) = self.batch_bytes(index, (first_seq, head.timestamp_ns), &plain, &lens)?;
        let written = self
            .blocks
            .get_mut(&index)
            .ok_or(StoreError::Corrupt { what: "tail block" })
            .and_then(|tail| tail.append(&buf));
        if written.is_err() {
            self.failed = true;
        }
        let start = written?;
        self.dirty.insert(index);
        self.index.wrote(buf.len() as u64);
        if let Some(block) = self.blocks.get_mut(&index) {
            // The batch record holds no message: compaction drops it.
            block.dead_bytes += BATCH_RECORD_BYTES as u64;
        }
        debug_assert_eq!(
            locs.first().map(Loc::offset),
            Some(start + BATCH_RECORD_BYTES as u64)
        );
        let stored = self.inner.store_checked_batch(msgs)?;
        for (s, loc) in stored.iter().zip(&locs) {
            self.inner.set_body(s.seq, *loc);
            if let Some(block) = self.blocks.get_mut(&loc.block) {
                block.live += 1;
                block.live_bytes += u64::from(loc.len);
            }
            let from = usize::try_from(loc.offset() - start).unwrap_or(usize::MAX);
            if let Some(bytes) = buf.get(from..from + loc.len as usize) {
                self.cache_record(*loc, bytes);
            }
            self.logged_last = s.seq;
        }
        debug_assert_eq!(stored.first().map(|s| s.seq), Some(first_seq));
        self.log_removals()?;
        Ok(stored)
    }

    /// The bytes of a batch for block `index` (the batch record, then each record sealed for
    /// its offset when the block is encrypted) and where each message record goes.
    fn batch_bytes(
        &mut self,
        index: u32,
        (first_seq, timestamp_ns): (u64, i64),
        plain: &[u8],
        lens: &[usize],
    ) -> Result<(Vec<u8>, Vec<Loc>), StoreError> {
        let tail = self
            .blocks
            .get(&index)
            .ok_or(StoreError::Corrupt { what: "tail block" })?;
        let base = tail.len;
        let mut body = Vec::with_capacity(plain.len() + TAG_BYTES * lens.len());
        let mut locs = Vec::with_capacity(lens.len());
        let mut at = 0;
        for &len in lens {
            let rec = plain.get(at..at + len).ok_or(StoreError::Corrupt {
                what: "batch record",
            })?;
            at += len;
            let offset = base + (BATCH_RECORD_BYTES + body.len()) as u64;
            let stored = if let Some(key) = &tail.key {
                record::seal(rec, key, index, offset, &mut body)?
            } else {
                body.extend_from_slice(rec);
                len
            };
            let len = u32::try_from(stored).map_err(|_| StoreError::MsgTooLarge)?;
            locs.push(Loc::new(index, offset, len).ok_or(StoreError::MsgTooLarge)?);
        }
        let payload = batch_payload(lens.len() as u64, body.len() as u64);
        let head = Record::empty(Kind::Batch, first_seq, timestamp_ns, &payload);
        let mut buf = Vec::with_capacity(BATCH_RECORD_BYTES + body.len());
        record::encode(&head, &mut buf).ok_or(StoreError::MsgTooLarge)?;
        debug_assert_eq!(buf.len(), BATCH_RECORD_BYTES);
        buf.extend_from_slice(&body);
        Ok((buf, locs))
    }
}

/// The message record of `msg` at `seq`.
fn msg_record<'a>(msg: &'a NewMsg<'_>, seq: u64) -> Record<'a> {
    Record {
        kind: Kind::Msg,
        erased: false,
        sealed: false,
        seq,
        timestamp_ns: msg.timestamp_ns,
        ttl: msg.ttl,
        subject: msg.subject,
        headers: &msg.headers,
        payload: &msg.payload,
    }
}
