//! Mirrors and sources: a stream copying from other streams through consumers it asks their
//! API for, as Go's `stream.go` does it (ADR-59/60).
//!
//! - [`run`]: a stream's origins started and stopped together, and their stream info.
//! - [`origin`]: one origin's task (consumer requests, retries, the copy loop).
//! - [`apply`]: what each delivery does to the copy; [`header`]: the header blocks.
//! - [`request`]: the consumer create request and its answer; [`names`]: Go's names.
//! - [`inbox`]: the sink of an origin's deliveries; [`status`]: what stream info shows.
//! - [`identity`]: an origin's identity, to notice it was created again.
//! - [`resume`]: where sources resume after a restart.

pub mod apply;
pub mod header;
pub mod identity;
pub mod inbox;
pub mod names;
pub mod origin;
pub mod request;
pub mod resume;
pub mod run;
pub mod status;

pub use run::Sourcing;
