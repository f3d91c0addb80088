//! `FileStore`'s implementation of [`StreamStore`]: each change runs on the memory state and
//! is then logged as records (message, skip, tombstone, truncate); queries are the memory
//! state's, and loads read the record back from its block with its CRC checked.

use bytes::Bytes;

use super::at_rest;
use super::envelope::{self, Kind as FileKind};
use super::record::{Kind, Record};
use super::schedule_index::{self, ScheduleIndex};
use super::store::FileStore;
use crate::error::StoreError;
use crate::filter::Filter;
use crate::limits::{MESSAGE_BYTES_MAX, SUBJECT_BYTES_MAX};
use crate::stream::StreamStore;
use crate::types::{
    NewMsg, ScrubProgress, SimpleState, StorageUpdateFn, StoreConfig, Stored, StoredMsg,
    StreamState,
};

impl FileStore {
    fn with_lost(&self, mut state: StreamState) -> StreamState {
        state.lost.clone_from(&self.lost);
        state
    }
}

impl StreamStore for FileStore {
    fn store_msg(&mut self, msg: NewMsg<'_>) -> Result<Stored, StoreError> {
        self.store_raw_msg(msg, 0, true)
    }

    fn store_raw_msg(
        &mut self,
        msg: NewMsg<'_>,
        seq: u64,
        discard_new_check: bool,
    ) -> Result<Stored, StoreError> {
        self.writable()?;
        // Refused before the memory state takes it: a record must be able to hold it.
        let body = msg.headers.len().saturating_add(msg.payload.len());
        if msg.subject.len() > SUBJECT_BYTES_MAX || body > MESSAGE_BYTES_MAX {
            return Err(StoreError::MsgTooLarge);
        }
        let rec_msg = msg.clone();
        let stored = self.inner.store_raw_msg(msg, seq, discard_new_check)?;
        let rec = Record {
            kind: Kind::Msg,
            erased: false,
            sealed: false,
            seq: stored.seq,
            timestamp_ns: stored.timestamp_ns,
            ttl: rec_msg.ttl,
            subject: rec_msg.subject,
            headers: &rec_msg.headers,
            payload: &rec_msg.payload,
        };
        let loc = self.append_record(&rec)?;
        self.inner.set_body(stored.seq, loc);
        if let Some(block) = self.blocks.get_mut(&loc.block) {
            block.live += 1;
            block.live_bytes += u64::from(loc.len);
        }
        self.logged_last = stored.seq;
        // Limits enforced after the store removed older messages: their tombstones follow.
        self.log_removals()?;
        Ok(stored)
    }

    fn store_batch(&mut self, msgs: &[NewMsg<'_>]) -> Result<Vec<Stored>, StoreError> {
        self.store_batch_records(msgs)
    }

    fn skip_msg(&mut self, seq: u64, now_ns: i64) -> Result<u64, StoreError> {
        self.mutate(now_ns, |inner| inner.skip_msg(seq, now_ns))
    }

    fn skip_msgs(&mut self, seq: u64, num: u64, now_ns: i64) -> Result<(), StoreError> {
        self.mutate(now_ns, |inner| inner.skip_msgs(seq, num, now_ns))
    }

    fn sync(&mut self) -> Result<u64, StoreError> {
        self.sync_and_tidy()?;
        Ok(self.logged_last)
    }

    fn load_msg(&self, seq: u64) -> Result<StoredMsg, StoreError> {
        let loaded = match self.inner.locate(seq) {
            Some((loc, subject)) => self
                .blocks
                .get(&loc.block)
                .ok_or(StoreError::Corrupt { what: "block" })
                .and_then(|b| b.load(*loc, seq, subject, &self.cache, self.options.cache_bytes)),
            // Not held: the memory state tells `NotFound` from `Eof`.
            None => return self.inner.load_msg(seq),
        };
        if matches!(loaded, Err(StoreError::Corrupt { .. })) {
            // Its record is checked at the next scrub step, and lost if it fails.
            self.suspect(seq);
        }
        loaded
    }

    fn load_next_msg(&self, filter: &Filter, start: u64) -> Result<StoredMsg, StoreError> {
        let found = self.inner.load_next_msg(filter, start)?;
        self.load_msg(found.seq)
    }

    fn load_last_msg(&self, filter: &Filter) -> Result<StoredMsg, StoreError> {
        let found = self.inner.load_last_msg(filter)?;
        self.load_msg(found.seq)
    }

    fn subject_for_seq(&self, seq: u64) -> Result<Bytes, StoreError> {
        self.inner.subject_for_seq(seq)
    }

    fn last_msg_in_memory(&self, filter: &Filter) -> bool {
        let Ok(found) = self.inner.load_last_msg(filter) else {
            return true;
        };
        self.inner.locate(found.seq).is_none_or(|(loc, _)| {
            self.cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .find(*loc)
                .is_some()
        })
    }

    fn remove_msg(&mut self, seq: u64) -> Result<bool, StoreError> {
        self.mutate(0, |inner| inner.remove_msg(seq))
    }

    fn erase_msg(&mut self, seq: u64) -> Result<bool, StoreError> {
        let loc = self.inner.body(seq).copied();
        if !self.mutate(0, |inner| inner.erase_msg(seq))? {
            return Ok(false);
        }
        // The tombstone is durable before the bytes go (§8).
        self.sync_blocks()?;
        if let Some(loc) = loc {
            // An index describing the record as it is would no longer match it (§6).
            self.invalidate_index()?;
            // The cached copy still holds the bytes being erased.
            self.uncache(loc.block);
            let block = self
                .blocks
                .get(&loc.block)
                .ok_or(StoreError::Corrupt { what: "block" })?;
            // A sealed block cannot be edited in place: it is rewritten without the record.
            let erased = if block.frames.is_some() {
                self.rewrite_block(loc.block, false)
            } else {
                block.erase(loc, seq)
            };
            if let Err(e) = erased {
                if matches!(e, StoreError::Io { .. } | StoreError::StorageFull) {
                    self.failed = true;
                }
                return Err(e);
            }
            self.erased_sealed(seq, loc);
        }
        Ok(true)
    }

    fn purge(&mut self) -> Result<u64, StoreError> {
        self.mutate(0, StreamStore::purge)
    }

    fn purge_ex(&mut self, subject: &[u8], seq: u64, keep: u64) -> Result<u64, StoreError> {
        self.mutate(0, |inner| inner.purge_ex(subject, seq, keep))
    }

    fn compact(&mut self, seq: u64) -> Result<u64, StoreError> {
        self.mutate(0, |inner| inner.compact(seq))
    }

    fn truncate(&mut self, seq: u64) -> Result<(), StoreError> {
        self.writable()?;
        self.inner.truncate(seq)?;
        // The truncate record removes everything above `seq` on replay: no tombstones needed,
        // and those above it delete nothing more (dead bytes, as a scan counts them).
        self.forget_removals();
        self.tombstones_above_truncate(seq);
        self.logged_first = self.logged_first.min(self.inner.fast_state().first_seq);
        // The record carries the last time after the truncate: the message at `seq` that
        // sets it may have been compacted away by the time the log is replayed.
        let last_ts = self.inner.fast_state().last_ts;
        self.append(Kind::Truncate, seq, last_ts, &[])?;
        self.logged_last = seq;
        Ok(())
    }

    fn seq_from_time(&self, timestamp_ns: i64) -> u64 {
        self.inner.seq_from_time(timestamp_ns)
    }

    fn filtered_state(&self, start: u64, filter: &Filter) -> SimpleState {
        self.inner.filtered_state(start, filter)
    }

    fn subjects_state(&self, filter: &Filter) -> Vec<(Bytes, SimpleState)> {
        self.inner.subjects_state(filter)
    }

    fn num_pending(&self, start: u64, filter: &Filter, last_per_subject: bool) -> (u64, u64) {
        self.inner.num_pending(start, filter, last_per_subject)
    }

    fn state(&self) -> StreamState {
        self.with_lost(self.inner.state())
    }

    fn fast_state(&self) -> StreamState {
        self.with_lost(self.inner.fast_state())
    }

    fn config(&self) -> &StoreConfig {
        self.inner.config()
    }

    fn update_config(&mut self, config: StoreConfig) -> Result<(), StoreError> {
        self.mutate(0, |inner| inner.update_config(config))
    }

    fn register_storage_updates(&mut self, callback: StorageUpdateFn) {
        self.inner.register_storage_updates(callback);
    }

    fn expire_due(&mut self, now_ns: i64) -> Result<u64, StoreError> {
        self.mutate(0, |inner| inner.expire_due(now_ns))
    }

    fn due_expiries(&self, now_ns: i64, max: usize) -> Vec<u64> {
        self.inner.due_expiries(now_ns, max)
    }

    fn next_expiry(&self) -> Option<i64> {
        self.inner.next_expiry()
    }

    fn release_caches(&mut self) {
        FileStore::release_caches(self);
    }

    fn scrub(&mut self, budget_bytes: u64) -> Result<ScrubProgress, StoreError> {
        self.scrub_step(budget_bytes)
    }

    fn wants_scrub(&self) -> bool {
        self.scrub.wanted()
    }

    fn maintain(&mut self) {
        self.index_after_sync(false);
    }

    fn write_schedule_index(&mut self, index: &ScheduleIndex) -> Result<bool, StoreError> {
        if self.failed || !self.dirty.is_empty() {
            return Ok(false);
        }
        let mut plain = Vec::new();
        schedule_index::encode(index, &mut plain);
        let file = schedule_index::SCHEDULES_FILE_ID;
        let (flags, body) =
            at_rest::seal_file(self.at_rest.as_ref(), file, FileKind::Schedules, &plain)?;
        let name = schedule_index::SCHEDULES_FILE;
        envelope::write_state_file_with(
            &*self.io,
            &self.dir,
            name,
            FileKind::Schedules,
            flags,
            &body,
        )?;
        Ok(true)
    }

    fn read_schedule_index(&self) -> Result<Option<ScheduleIndex>, StoreError> {
        let name = schedule_index::SCHEDULES_FILE;
        let Some(file) =
            envelope::read_state_file(&*self.io, &self.dir, name, FileKind::Schedules)?
        else {
            return Ok(None);
        };
        let file_id = schedule_index::SCHEDULES_FILE_ID;
        let opened = at_rest::open_file(
            self.at_rest.as_ref(),
            file_id,
            FileKind::Schedules,
            file.flags,
            file.body,
        );
        schedule_index::decode(&opened?.0).map(Some)
    }

    fn stop(&mut self) -> Result<(), StoreError> {
        let synced = self.sync_and_tidy();
        if synced.is_ok() {
            self.index_after_sync(true);
        }
        self.inner.stop()?;
        synced
    }
}
