//! The system account's services: client connect/disconnect events, the periodic `STATSZ`
//! heartbeat, and the `$SYS.REQ.SERVER.…` requests answered with the monitoring documents.
//!
//! One task owns an internal client in the system account (see `natrium_core::internal`) and
//! serves, in turn, requests delivered to it, client events queued by the runtime, and the
//! heartbeat timer. Nothing here runs on the message hot path.
//!
//! - [`payload`]: the JSON documents, with Go's names.
//! - [`requests`]: request subjects, request options and filters, reply framing.
//! - [`service`]: the task.

pub mod payload;
pub mod requests;
mod service;

pub use service::start_system_services;
