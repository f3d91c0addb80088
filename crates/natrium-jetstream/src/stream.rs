//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]; counters in [`counter`], delete markers in [`markers`], message schedules in
//! [`schedule`]), the
//! stream's subject transform ([`transform`]) and republish ([`republish`]), the running
//! stream with its tasks ([`running`]), what it tells its consumers' engine ([`signal`]),
//! and the copying of mirrors and sources ([`sourcing`]).

pub mod batch;
pub mod capture;
pub mod counter;
mod decimal;
mod header_edit;
pub mod headers;
pub mod ingest;
pub mod marker_retry;
pub mod markers;
pub mod republish;
pub mod running;
pub mod schedule;
pub mod signal;
pub mod sourcing;
pub mod transform;

pub use running::Stream;
