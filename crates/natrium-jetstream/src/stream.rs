//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]), and the running stream with its tasks ([`running`]).

pub mod capture;
pub mod headers;
pub mod ingest;
pub mod running;

pub use running::Stream;
