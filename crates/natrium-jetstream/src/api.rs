//! The `$JS.API`: requests arrive on the API's inbox, subscribed in every account (the system
//! account's only purge accounts; its other requests are told it has no JetStream), and are
//! answered one at a time on the API thread, off every client's read
//! path.
//!
//! Overflow rule (Go's): when `request_queue_limit` requests wait, the inbox ([`inbox`]) drops
//! them all, logs it and the API thread sends the `API.LIMIT_REACHED` advisory.

mod account_info;
mod account_purge;
mod account_watch;
pub mod consumer_json;
mod consumer_reset;
mod consumer_sourcing;
pub mod consumer_verbs;
pub mod consumers;
mod delayed;
mod dispatch;
mod inbox;
pub mod msg_get;
mod offline_gate;
pub mod request;
pub mod responses;
pub mod router;
pub mod snapshot;
pub mod stream_info;
pub mod streams;

pub use dispatch::start;
pub use request::Request;
