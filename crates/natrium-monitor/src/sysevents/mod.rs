//! The system account's services: client and server events, the periodic `STATSZ` heartbeat,
//! and the `$SYS.REQ.…` requests answered with the monitoring documents.
//!
//! One task owns an internal client in the system account (see `natrium_core::internal`),
//! also subscribed in every other account for the requests Go lets any account make about
//! itself, and serves, in turn, requests delivered to it, events queued by the runtime, and
//! the heartbeat timer. Nothing here runs on the message hot path.
//!
//! - [`payload`]: the JSON documents, with Go's names.
//! - [`requests`]: `$SYS.REQ.SERVER.…` subjects, request options and filters, reply framing.
//! - [`account`]: `$SYS.REQ.ACCOUNT.…` and the per-account requests.
//! - [`user`]: the answer to `$SYS.REQ.USER.INFO`.
//! - `service`: the task and its subscriptions; `events`: what it publishes.

pub mod account;
mod events;
pub mod payload;
pub mod requests;
mod service;
pub mod user;

pub use service::start_system_services;
