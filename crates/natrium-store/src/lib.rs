//! JetStream storage as a pure, synchronous library: the [`StreamStore`] and
//! [`ConsumerStore`] traits and their implementations. It knows nothing of the JetStream API
//! above it: stream configuration is opaque bytes to it, it parses no NATS headers, and it
//! reads no clock (callers pass the time in). The on-disk format and the recovery rules are in
//! `docs/store-format.md`.
//!
//! Layout:
//! - [`stream`] / [`consumer`]: the two traits, and the consumer state types.
//! - [`archive`]: a stream's portable snapshot archive (state, messages, end, Snappy-framed),
//!   the codec behind `STREAM.SNAPSHOT` and `STREAM.RESTORE`.
//! - [`types`]: messages in and out, stream and subject state, limits ([`StoreConfig`]), Go's
//!   byte accounting ([`MsgSizing`]), storage-update events.
//! - [`filter`]: [`Filter`], one or many subjects, literal or wildcard.
//! - [`error`]: [`StoreError`], Go's store errors plus I/O and corruption.
//! - [`dedup`]: [`DedupWindow`], message id → sequence within the duplicate window.
//! - [`filestore`]: [`FileStore`], message blocks of records (the record codec is public for
//!   the `store_records` fuzz target) appended through [`io`], group-committed syncs, block
//!   rotation, and recovery on open (torn tails cut, damaged records skipped by resync and
//!   reported lost, file by file, with progress). Removals below the first message are one
//!   `first` record; dead blocks are removed after a sync, half-dead ones compacted, and with
//!   compression blocks that are no longer the tail are sealed into LZ4 frames. A bounded
//!   cache keeps recent records and windows read on a miss. Its in-memory state is a
//!   `MemStore<Loc>` with file-store sizing: the same index, each body a record location.
//!   [`FileConsumerStore`] keeps a consumer's state as [`MemConsumerStore`] does and writes
//!   it to `state.dat` on `sync` and `stop`; the state file envelope, its atomic write and
//!   the `meta.dat` helpers are public for the `store_state_files` fuzz target and the
//!   stream engine.
//! - [`io`]: the narrow storage I/O trait the file store uses, the real file system
//!   ([`io::StdFs`]) and a double that injects faults and simulates crashes ([`io::SimFs`]).
//! - [`limits`]: every size the store checks, with the Go value it mirrors.
//! - [`seal`]: compression and encryption at rest as pure codecs: LZ4 and/or AEAD frames of
//!   whole records for sealed blocks (damage contained per frame, a plain-offset frame
//!   index), server keys with per-file HKDF key-encryption keys and key records (wrong key
//!   told apart from damage, `prev_key` rotation), per-record encryption for the tail
//!   block, and encrypted state file bodies. Public for the `store_sealed_blocks` fuzz
//!   target. The file store seals blocks with the LZ4 frames, and with server keys
//!   (`filestore::at_rest::AtRest`) encrypts state files and block files (each block its own
//!   data key; message records sealed one by one, AEAD frames in sealed blocks).
//! - `memstore`: [`MemStore`] (56-byte message entries in a sequence map of 64-message
//!   chunks, subjects interned under 4-byte ids with a per-subject index whose entries chain
//!   the messages of one subject, and a TTL index) and [`MemConsumerStore`].
//!
//! The file store writes `index.dat` on stop and, through `StreamStore::maintain` (which the
//! engine calls when a stream is quiet), after enough appended data: a reopen loads the state from it in
//! bulk and scans only what was written after it (`filestore::index`,
//! `docs/store-format.md` §6); without a usable index it scans every block. What the index
//! covered is then checked by `StreamStore::scrub`, a bounded step at a time, and a record
//! that fails is lost as recovery loses it (`filestore::scrub`, §10).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stdout
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod archive;
pub mod consumer;
pub mod dedup;
pub mod error;
pub mod filestore;
pub mod filter;
pub mod io;
pub mod limits;
pub(crate) mod memstore;
pub mod seal;
pub mod stream;
pub mod types;

pub use consumer::{
    AckPolicy, ConsumerState, ConsumerStore, ConsumerStoreConfig, Pending, SequencePair,
};
pub use dedup::DedupWindow;
pub use error::StoreError;
pub use filestore::schedule_index::{ScheduleEntry, ScheduleIndex};
pub use filestore::{
    DamagedFile, FileConsumerStore, FileStore, FileStoreOptions, RecoveryProgress, RecoveryReport,
};
pub use filter::Filter;
pub use memstore::{MemBody, MemConsumerStore, MemStore, MsgBody};
pub use stream::StreamStore;
pub use types::{
    DiscardPolicy, LostData, MsgSizing, MsgTtl, NewMsg, ScrubProgress, SimpleState, StorageUpdate,
    StorageUpdateFn, StoreConfig, Stored, StoredMsg, StreamState, UpdateReason,
};
