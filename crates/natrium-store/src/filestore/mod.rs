//! The file store (`docs/store-format.md`): message blocks of records over [`crate::io`],
//! recovered on open. `block` holds the block file and its header, `recover` the scan with
//! resync and lost ranges, `store` the data, opening and write path, `api` the
//! [`crate::StreamStore`] implementation.
//! `TODO(#14)`: `index.dat`, compaction, a bounded block cache.

mod api;
pub mod block;
pub mod record;
mod recover;
mod store;

pub use store::{FileStore, FileStoreOptions};

#[cfg(test)]
mod tests;
