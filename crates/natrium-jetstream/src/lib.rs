//! JetStream on a single server.
//!
//! - [`config`]: the JSON documents clients send and receive (stream configuration with Go's
//!   defaults and checks).
//! - [`errors`]: Go's JetStream API error table, one entry per `err_code`; [`event`]: what
//!   every advisory shares.
//! - [`service`]: start-up, the enabled accounts ([`account`]), shutdown.
//! - [`api`]: the `$JS.API` requests and their JSON answers.
//! - `report`: what monitoring reads (`/jsz`, `/varz`, `/healthz`) through the server.
//! - [`stream`]: capture of publishes, checks, storing and acknowledgements.
//! - [`consumer`]: consumers' configuration, checks, state and persistence.
//! - [`direct`]: `DIRECT.GET`, answered by each stream off the API thread.
//! - [`resources`]: bytes stored and reserved per account and server, and the limits' checks.
//! - [`snapshot`]: `STREAM.SNAPSHOT` and `STREAM.RESTORE` transfers, each on its own thread.
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

pub mod account;
pub mod advisory;
pub mod api;
mod clock;
pub mod config;
pub mod consumer;
pub mod direct;
mod dirs;
pub mod errors;
pub mod event;
pub mod offline;
mod reload;
mod report;
pub mod resources;
pub mod service;
mod sink_sub;
pub mod snapshot;
mod stall;
mod startup;
pub mod stream;

pub use service::{JetStream, JetStreamSettings, API_LEVEL};
pub use startup::start;
