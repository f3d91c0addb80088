//! Reading messages by sequence or subject: `$JS.API.DIRECT.GET.<stream>` (ADR-31), answered
//! by each stream off the API thread, and the request both it and `STREAM.MSG.GET` take.
//!
//! - [`request`]: `JSApiMsgGetRequest`, decoded as each endpoint decodes it, and its checks.
//! - [`reply`]: the answers as header blocks and payloads, read from a stream's store.
//! - [`service`]: the per-stream subscriptions, queue and task.

pub mod reply;
pub mod request;
pub mod service;

pub use service::DirectGet;
