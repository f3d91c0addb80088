//! HTTP monitoring: a small hyper server answering the Go server's monitoring endpoints with
//! the same JSON field names, types and units, so dashboards and readiness probes work as-is.
//!
//! - [`http`]: the listener and request routing; `https` puts TLS in front for `https_port`;
//!   [`limits`] bounds how many connections it holds and how long they may stay silent.
//! - [`varz`], [`connz`], [`subsz`]: the documents; [`query`] decodes their parameters.
//! - [`accounts`], [`cluster`]: `/accountz`, `/accstatz`; `/routez`, `/gatewayz`, `/leafz`.
//! - [`jsz`]: `/jsz` and `/varz`'s `jetstream`, from what JetStream reports through the server.
//! - [`metrics`]: Prometheus text at `/metrics` (ours; Go has none).
//! - [`sysevents`]: the system account's events and `$SYS.REQ.SERVER.…` requests.
//! - [`healthz`]: the health check, shared by HTTP and the system request.
//! - [`process`]: resident memory and CPU time of this process.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

pub mod accounts;
pub mod cluster;
pub mod connz;
pub mod healthz;
pub mod http;
mod https;
pub mod jsz;
pub mod limits;
pub mod metrics;
pub mod process;
pub mod query;
pub mod subsz;
pub mod sysevents;
pub mod varz;

pub use http::{start_monitor, MonitorError, MonitorSettings};
pub use sysevents::start_system_services;
