//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]), the running stream with its tasks ([`running`]), and what it
//! tells its consumers' engine ([`signal`]).

pub mod capture;
pub mod headers;
pub mod ingest;
pub mod running;
pub mod signal;

pub use running::Stream;
