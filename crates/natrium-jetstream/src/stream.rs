//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]), the running stream with its tasks ([`running`]), and what it
//! tells its consumers' engine ([`signal`]).

pub mod capture;
pub mod headers;
pub mod ingest;
pub mod republish;
pub mod running;
pub mod signal;
pub mod transform;

pub use running::Stream;
