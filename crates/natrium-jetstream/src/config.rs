//! The JSON documents of the stream API.

pub mod check;
pub mod context;
pub mod metadata;
pub mod stream;

pub use check::decode_request;
pub use stream::StreamConfig;
