//! The file store (`docs/store-format.md`): message blocks of records over [`crate::io`],
//! recovered on open, and the state files beside them. `block` holds the block file and its
//! header, `block_key` the data key of an encrypted block (`rekey` its rotation to the
//! current server key), `open` the opening of one block at recovery, `recover` the scan
//! with resync and lost ranges, `reopen` the recovery of every block (the full scan, or
//! `index` — `index.dat`, §6 — and the scan of what follows it), `scrub` the later check of
//! the records the index covered, `store` the data, opening and write path, `cache` the
//! records kept in memory for loads, `compact` the rewrite of half-dead blocks, `api` the
//! [`crate::StreamStore`] implementation, `sealed` the compressed form of blocks that are no
//! longer the tail. `at_rest` holds the server keys and seals the state files; `envelope` is
//! the state file envelope and its atomic write (§5), `meta` the `meta.dat` files,
//! `consumer_state` the codec of a consumer's `state.dat` body (§7) over `varint`, and
//! `consumer` the [`crate::ConsumerStore`] that writes it. The record cache (`cache`) holds
//! windows of plain blocks and decoded frames of sealed ones under one bound.

mod api;
pub mod at_rest;
mod batch;
mod batch_record;
pub mod block;
mod block_key;
mod cache;
mod compact;
mod consumer;
pub mod consumer_state;
pub mod envelope;
mod index;
pub mod meta;
mod open;
pub mod record;
mod recover;
mod rekey;
mod reopen;
pub mod schedule_index;
mod scrub;
mod sealed;
mod store;
mod varint;

pub use consumer::{FileConsumerStore, STATE_FILE};
pub use index::{BlockState, RecoveredState};
pub use meta::{
    load_consumer_meta, load_stream_meta, save_consumer_meta, save_stream_meta, META_FILE,
};
pub use store::{DamagedFile, FileStore, FileStoreOptions, RecoveryProgress, RecoveryReport};

#[cfg(test)]
mod batch_tests;
#[cfg(test)]
mod consumer_tests;
#[cfg(test)]
mod encryption_tests;
#[cfg(test)]
mod index_tests;
#[cfg(test)]
mod scrub_tests;
#[cfg(test)]
mod tests;
