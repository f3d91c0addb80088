//! Test support: start a `nats-server` process (ours, or the Go reference for differential
//! tests) on a random loopback port, follow its log, and talk raw protocol to it.
//!
//! Synchronisation is by events, never by sleeping: a server is ready when its log says so,
//! and a raw exchange is complete when the PONG for a PING comes back.
#![allow(clippy::missing_panics_doc, clippy::must_use_candidate)]

pub mod certs;
pub mod certs_v1;
pub mod json;
pub mod jwt;
pub mod process;
pub mod raw;
pub mod reload;
pub mod ws;

pub use certs::{TestCerts, V1Issuer};
pub use process::{go_server_path, natrium_path, ServerProcess};
pub use raw::RawClient;
pub use ws::WsClient;
