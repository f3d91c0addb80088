//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]; counters in [`counter`], delete markers in [`markers`], message schedules in
//! [`schedule`]), the
//! stream's subject transform ([`transform`]) and republish ([`republish`]), the running
//! stream with its tasks ([`running`]), and what it tells its consumers' engine ([`signal`]).

pub mod capture;
pub mod counter;
mod decimal;
mod header_edit;
pub mod headers;
pub mod ingest;
pub mod markers;
pub mod republish;
pub mod running;
pub mod schedule;
pub mod signal;
pub mod transform;

pub use running::Stream;
