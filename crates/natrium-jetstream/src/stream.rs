//! Streams: capture of publishes ([`capture`]), the checks and acks of each message
//! ([`ingest`], [`headers`]), the running stream with its tasks ([`running`]), what it
//! tells its consumers' engine ([`signal`]), and the copying of mirrors and sources
//! ([`sourcing`]).

pub mod capture;
pub mod headers;
pub mod ingest;
pub mod running;
pub mod signal;
pub mod sourcing;

pub use running::Stream;
