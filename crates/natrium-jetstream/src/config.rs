//! The JSON documents of the stream API.

pub mod stream;

pub use stream::StreamConfig;
