//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]; counters in [`counter`], delete markers in [`markers`]), the
//! running stream with its tasks ([`running`]), and what it tells its consumers' engine
//! ([`signal`]).

pub mod batch;
pub mod capture;
pub mod counter;
mod decimal;
mod header_edit;
pub mod headers;
pub mod ingest;
pub mod markers;
pub mod running;
pub mod signal;

pub use running::Stream;
