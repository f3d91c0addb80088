//! JetStream consumers: their configuration with Go's defaults and checks, and the consumer
//! a stream owns.
//!
//! - [`config`]: `ConsumerConfig` with Go's field names and encodings; [`decode`] reads the
//!   create request with Go's errors.
//! - [`defaults`], [`check`], [`update`]: Go's defaults, checks and update rules, with
//!   [`context`] (what they need to know).
//! - [`running`]: the consumer, its state store and its start position; [`persist`]: its
//!   directory and `meta.dat`.

pub mod check;
pub mod config;
pub mod context;
pub mod decode;
pub mod defaults;
pub mod lifecycle;
pub mod persist;
pub mod running;
pub mod update;

pub use config::ConsumerConfig;
pub use running::Consumer;
#[cfg(test)]
mod tests;
