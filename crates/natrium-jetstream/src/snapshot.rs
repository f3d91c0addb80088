//! Stream snapshots and restores (`$JS.API.STREAM.SNAPSHOT` / `RESTORE`), each on a thread
//! of its own once the API thread has answered the request ([`crate::api::snapshot`]).
//!
//! - [`send`]: a snapshot's archive produced from the store and sent in chunks with Go's
//!   window of unacknowledged chunks.
//! - [`restore`]: a restore's chunks decoded into a new store, staged, and made a stream once
//!   the client sends its final empty message.
//! - [`consumers`]: the stream's consumers as archive records, and recreated from them.
//! - [`sinks`]: the in-process subscribers both use.
//! - [`guard`]: the cap on transfers running at once.
//!
//! The archive format is `natrium_store::archive`.

pub mod consumers;
pub mod guard;
pub mod restore;
pub mod send;
pub mod sinks;

pub use guard::TransferGuard;
