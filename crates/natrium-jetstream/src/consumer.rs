//! JetStream consumers: their configuration with Go's defaults and checks, and the consumer
//! a stream owns.
//!
//! - [`config`]: `ConsumerConfig` with Go's field names and encodings; [`decode`] reads the
//!   create request with Go's errors.
//! - [`defaults`], [`check`], [`update`]: Go's defaults, checks and update rules, with
//!   [`context`] (what they need to know).
//! - [`running`]: the consumer, its state store and its start position; [`persist`]: its
//!   directory and `meta.dat`.
//! - Delivery: [`engine`] (one task per stream: routing, timers, group commit of consumer
//!   state), [`deliver`] and [`pull`] (pull requests and the wait queue), [`acking`] and
//!   [`ack`] (acks and redelivery), [`push`] (flow control, heartbeats, interest; pure) and
//!   [`pushing`] (push delivery, inactivity), [`state`] (the bookkeeping, pure), [`outbox`] (what a
//!   round sends, advisories), [`retention`] (interest and work-queue removal).

pub mod ack;
pub mod acking;
pub mod check;
pub mod config;
pub mod context;
pub mod decode;
pub mod defaults;
pub mod deliver;
pub mod engine;
pub mod lifecycle;
pub mod outbox;
pub mod persist;
pub mod priority;
pub mod pull;
pub mod push;
pub mod pushing;
pub mod reset;
pub mod retention;
pub mod running;
pub mod state;
pub mod update;

pub use config::ConsumerConfig;
pub use running::Consumer;
#[cfg(test)]
mod tests;
