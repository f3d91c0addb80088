//! Atomic batch publish (ADR-50, `allow_atomic`): the headers of a batch message
//! ([`parse`]), the batches a stream is staging until their commit ([`stage`]), and the
//! commit that checks the whole batch and stores it all or nothing ([`commit`]).
//!
//! Fast batch publish (`allow_batched`, the `.$FI` reply pattern) is not implemented yet:
//! such a stream's configuration is accepted, its messages are stored one by one as normal
//! publishes. TODO(#17): fast batch ingest (flow-control acks, gaps, pings, `BatchFlowErr`).

pub mod commit;
pub mod parse;
pub mod stage;

pub use parse::atomic_id;
pub use stage::{ingest, AtomicBatches};
