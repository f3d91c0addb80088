//! NATS subjects: validation, wildcard matching and the subscription index.
//!
//! Layout:
//! - [`validate`]: what a subscription subject, a publish subject and a queue name may contain.
//! - [`matching`]: literal-vs-pattern matching and pattern-vs-pattern collision, without an index.
//! - [`Sublist`] (module `sublist`): the concurrent subscription index. It is a token trie
//!   (`trie`) behind one lock plus a bounded, sharded match cache (`cache`) whose hits cost one
//!   hash, one short lock and one `Arc` clone. Its concurrency rules are in the `sublist` module.
//! - [`SubjectTransform`] (module `transform`): rewriting a subject matched by a wildcard
//!   pattern into another pattern's shape (account imports' `prefix` and `to`; stream, source
//!   and republish transforms with Go's mapping functions, written by `transform_functions`).
//!   The destination syntax and Go's error texts ([`TransformError`], [`validate_mapping`])
//!   live in `mapping`. [`WeightedMapping`] (module `weighted`) is an account's subject
//!   mapping: weighted, optionally cluster-scoped destinations drawn per message.
//! - [`MatchResult`] / [`QueueGroup`]: what a match returns, shared immutable snapshots.
//! - [`SublistStats`]: the counters Go reports on `/subsz`.
//! - `hash`: the seeded subject hash (foldhash) the trie levels and the cache share.
//! - `limits`: cache geometry, with the Go default each one mirrors.
//!
//! The crate is a pure leaf: no I/O, no async runtime. Behaviour follows Go `nats-server` v2.15
//! as observed from the outside: `*` and `>` are wildcards only as whole tokens (`foo.*a` is a
//! valid literal subject), `>` must be the last token, and tokens may hold any byte except `.`
//! and the whitespace bytes space, tab, CR and LF.
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

mod cache;
mod error;
mod hash;
pub mod limits;
mod mapping;
pub mod matching;
mod members;
mod result;
mod stats;
mod sublist;
mod transform;
mod transform_functions;
mod trie;
pub mod validate;
mod weighted;

pub use error::SublistError;
pub use mapping::{
    is_wildcard_reference, stars_numbered, validate_mapping, DestinationError, TransformError,
};
pub use matching::{subject_is_subset, subject_matches, subjects_collide};
pub use result::{MatchResult, QueueGroup};
pub use stats::SublistStats;
pub use sublist::{InterestChange, Sublist};
pub use transform::SubjectTransform;
pub use validate::{is_literal, is_valid_publish_subject, is_valid_queue_name, is_valid_subject};
pub use weighted::{MapDest, Mapped, MappingError, WeightedMapping};
