//! JetStream on a single server.
//!
//! - [`config`]: the JSON documents clients send and receive (stream configuration with Go's
//!   defaults and checks).
//! - [`errors`]: Go's JetStream API error table, one entry per `err_code`.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stdout
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod config;
pub mod errors;
