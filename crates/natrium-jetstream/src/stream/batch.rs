//! Atomic batch publish (ADR-50, `allow_atomic`): the headers of a batch message
//! ([`parse`]), the batches a stream is staging until their commit ([`stage`]), and the
//! commit that checks the whole batch and stores it all or nothing ([`commit`]).
//!
//! Fast batch publish (`allow_batched`, a reply ending in `.$FI`): the reply's pattern
//! ([`fast_reply`]) and the open batches with their flow control ([`fast`]).

pub mod commit;
pub mod fast;
pub mod fast_reply;
pub mod limits;
pub mod parse;
pub mod stage;

pub use fast::FastBatches;
pub use parse::atomic_id;
pub use stage::{ingest, AtomicBatches};
