//! The `StreamStore` trait: everything the stream and consumer engines ask of a stream's
//! storage, implemented identically by the memory and file stores.

use bytes::Bytes;

use crate::error::StoreError;
use crate::filestore::schedule_index::ScheduleIndex;
use crate::filter::Filter;
use crate::types::{
    NewMsg, ScrubProgress, SimpleState, StorageUpdateFn, StoreConfig, Stored, StoredMsg,
    StreamState,
};

/// A stream's message storage. Synchronous and single-owner: mutations take `&mut self`, the
/// caller (the stream's task or a blocking pool) serialises access. Object-safe, so the
/// stream engine holds a `Box<dyn StreamStore>` whatever the storage type.
///
/// Sequences start at 1. Times are Unix nanoseconds and always come from the caller: no
/// method reads a clock, so tests are deterministic and replicas agree.
pub trait StreamStore: Send {
    /// Stores a message at the next sequence, applying `discard: new` checks, then the
    /// `discard: old` and per-subject limits (the removals reach the update callback).
    fn store_msg(&mut self, msg: NewMsg<'_>) -> Result<Stored, StoreError>;

    /// Stores a message at `seq`, which must be the next sequence (0 means "the next").
    /// Replicas apply a leader's decisions with `discard_new_check` false: a replica must not
    /// refuse what its leader accepted.
    fn store_raw_msg(
        &mut self,
        msg: NewMsg<'_>,
        seq: u64,
        discard_new_check: bool,
    ) -> Result<Stored, StoreError>;

    /// Stores `msgs` at the next sequences as one atomic batch (JetStream's atomic publish):
    /// all of them or, when a check refuses one (`discard: new` counting the whole batch, a
    /// size), none, with nothing changed. The file store writes them in one append behind a
    /// batch record, and recovery after a crash keeps the batch only if every record of it
    /// is whole (`docs/store-format.md` §2). Limits that remove older messages apply after
    /// the whole batch, as if its messages were stored one by one.
    fn store_batch(&mut self, msgs: &[NewMsg<'_>]) -> Result<Vec<Stored>, StoreError>;

    /// Uses sequence `seq` (0 means the next) without storing a message. `now_ns` becomes the
    /// last time only if none was set, as in Go.
    fn skip_msg(&mut self, seq: u64, now_ns: i64) -> Result<u64, StoreError>;

    /// Uses `num` sequences from `seq` (0 means the next) without storing messages.
    fn skip_msgs(&mut self, seq: u64, num: u64, now_ns: i64) -> Result<(), StoreError>;

    /// Makes everything stored so far durable and returns the last durable sequence. The
    /// group-commit point: acknowledgements up to that sequence may be released.
    fn sync(&mut self) -> Result<u64, StoreError>;

    /// The message at `seq`: `NotFound` inside the range, `Eof` past the last sequence.
    fn load_msg(&self, seq: u64) -> Result<StoredMsg, StoreError>;

    /// The first message at or after `start` whose subject matches; `Eof` when none.
    fn load_next_msg(&self, filter: &Filter, start: u64) -> Result<StoredMsg, StoreError>;

    /// The last message whose subject matches; `NotFound` when none.
    fn load_last_msg(&self, filter: &Filter) -> Result<StoredMsg, StoreError>;

    /// The subject of the message at `seq`.
    fn subject_for_seq(&self, seq: u64) -> Result<Bytes, StoreError>;

    /// Removes one message; `Ok(false)` when there was none at `seq`.
    fn remove_msg(&mut self, seq: u64) -> Result<bool, StoreError>;

    /// Removes one message and overwrites its bytes wherever the store holds them.
    fn erase_msg(&mut self, seq: u64) -> Result<bool, StoreError>;

    /// Removes every message; the next sequence is unchanged. Returns how many went.
    fn purge(&mut self) -> Result<u64, StoreError>;

    /// Go's `PurgeEx`: messages matching `subject` (empty or `>` for all) below `seq` (0 for
    /// no bound; 1 purges nothing), keeping the newest `keep` of them (0 keeps none).
    fn purge_ex(&mut self, subject: &[u8], seq: u64, keep: u64) -> Result<u64, StoreError>;

    /// Removes every message below `seq`. Past the last sequence, the stream restarts at `seq`.
    fn compact(&mut self, seq: u64) -> Result<u64, StoreError>;

    /// Removes every message above `seq`, which becomes the last sequence (0 resets).
    fn truncate(&mut self, seq: u64) -> Result<(), StoreError>;

    /// The first sequence whose message time is at or after `timestamp_ns` (last + 1 if none).
    fn seq_from_time(&self, timestamp_ns: i64) -> u64;

    /// Count and first/last of the messages at or after `start` matching `filter`.
    fn filtered_state(&self, start: u64, filter: &Filter) -> SimpleState;

    /// Per-subject counts and first/last sequences, for subjects matching `filter`, sorted by
    /// subject.
    fn subjects_state(&self, filter: &Filter) -> Vec<(Bytes, SimpleState)>;

    /// Messages at or after `start` matching `filter`; with `last_per_subject`, the number of
    /// matching subjects whose last message is at or after `start`. Returns the count and the
    /// last sequence it is valid through.
    fn num_pending(&self, start: u64, filter: &Filter, last_per_subject: bool) -> (u64, u64);

    /// The full state, the list of deleted sequences included.
    fn state(&self) -> StreamState;

    /// The state without the deleted list (cheap).
    fn fast_state(&self) -> StreamState;

    /// The limits in force.
    fn config(&self) -> &StoreConfig;

    /// Replaces the limits and enforces the new ones at once (`max_age` is enforced by the
    /// next [`StreamStore::expire_due`], which carries the clock).
    fn update_config(&mut self, config: StoreConfig) -> Result<(), StoreError>;

    /// Sets the callback told of every stored and removed message.
    fn register_storage_updates(&mut self, callback: StorageUpdateFn);

    /// Removes the messages past `max_age` or their TTL at `now_ns`; returns how many.
    fn expire_due(&mut self, now_ns: i64) -> Result<u64, StoreError>;

    /// Up to `max` of the sequences [`StreamStore::expire_due`] would remove at `now_ns`,
    /// ascending, without removing them: JetStream's subject delete markers replace the last
    /// message of a subject instead, and the caller removes the others itself.
    fn due_expiries(&self, now_ns: i64, max: usize) -> Vec<u64>;

    /// When [`StreamStore::expire_due`] next has something to do, if ever.
    fn next_expiry(&self) -> Option<i64>;

    /// Flushes and closes; every later call fails with `Closed`.
    fn stop(&mut self) -> Result<(), StoreError>;

    /// Gives back memory kept only to make loads faster (the file store's record cache). The
    /// engine calls it for a stream that has been idle a while.
    fn release_caches(&mut self) {}

    /// Checks up to about `budget_bytes` more of what the store took on trust when it opened
    /// (the file store's records covered by `index.dat`, and any whose load failed its
    /// checks). A record that fails is handled as recovery handles it: its message is lost
    /// (gone from the state, its sequence in `lost`) and the step's report names it. Nothing
    /// on disk changes. The engine runs it when a stream has nothing else to do, until
    /// `done`.
    fn scrub(&mut self, budget_bytes: u64) -> Result<ScrubProgress, StoreError> {
        let _ = budget_bytes;
        Ok(ScrubProgress {
            done: true,
            ..ScrubProgress::default()
        })
    }

    /// Whether [`StreamStore::scrub`] has anything to do.
    fn wants_scrub(&self) -> bool {
        false
    }

    /// Whether [`StreamStore::load_last_msg`] with `filter` would read nothing from disk (its
    /// message is held in memory, or there is none), so a caller that must not block may
    /// make it. The file store answers from its record cache.
    fn last_msg_in_memory(&self, filter: &Filter) -> bool {
        let _ = filter;
        true
    }

    /// Work a sync leaves for later so that acknowledgements do not wait for it (the file
    /// store's `index.dat`, when enough was written since the last). The engine calls it
    /// after a group commit's acks went out.
    fn maintain(&mut self) {}

    /// Keeps the engine's message schedules beside the messages (the file store's
    /// `msgs/sched.dat`, `docs/store-format.md` §6a), by the atomic rule and only when every
    /// block is synced, so every message it accounts for is durable; `Ok(false)` when nothing
    /// was written (a block unsynced, or the memory store, which keeps nothing).
    fn write_schedule_index(&mut self, index: &ScheduleIndex) -> Result<bool, StoreError> {
        let _ = index;
        Ok(false)
    }

    /// What [`StreamStore::write_schedule_index`] last wrote: `Ok(None)` when nothing was,
    /// `Corrupt` (or `WrongKey`) when the file is damaged. The caller checks that it agrees
    /// with the messages.
    fn read_schedule_index(&self) -> Result<Option<ScheduleIndex>, StoreError> {
        Ok(None)
    }
}
