//! The `$JS.API`: requests arrive on an internal client subscribed in every JetStream account
//! and are answered one at a time on the API thread, off every client's read path.
//!
//! Overflow rule: the API's inbox ([`inbox`]) holds `INTERNAL_INBOX_MSGS_MAX` requests; past
//! that new ones are dropped and counted (the requester times out and retries), as Go drops
//! past `request_queue_limit`. TODO(#15): Go's 429 answer and its own limit.

mod account_info;
mod dispatch;
mod inbox;
pub mod msg_get;
pub mod request;
pub mod responses;
pub mod router;
pub mod stream_info;
pub mod streams;

pub use dispatch::start;
pub use request::Request;
