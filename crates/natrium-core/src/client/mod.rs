//! One client connection.
//!
//! A connection is two tasks: [`conn`] owns the socket's read half, the parse buffer and the
//! connection's private state (subscriptions by sid, CONNECT options, match cache); [`writer`]
//! owns the write half and drains the [`Outbound`] buffer. What other tasks may touch lives in
//! [`ClientHandle`]: the outbound buffer, the close signal and monitoring metadata.
//!
//! Both tasks are generic over the stream: a plain connection runs on the TCP socket's owned
//! halves, a TLS one on the halves of `tokio::io::split` over the TLS stream; each combination
//! is compiled separately, so the plain path pays nothing for TLS. [`tls_accept`] runs the
//! part of a TLS connection's life before that: INFO before or after the handshake, telling
//! TLS from plain clients under `allow_non_tls`, the handshake and its timeout. [`io`] holds the
//! two transport traits the tasks are generic over; WebSocket connections (`crate::ws`) run the
//! same tasks over framing adapters.

mod activity;
mod allow_responses;
mod authn;
mod closed_reason;
mod conn;
mod connect;
mod handle;
pub(crate) mod io;
mod lazy_pub;
mod lifecycle;
mod listener;
mod outbound;
mod perms;
mod protolog;
pub(crate) mod readbuf;
pub(crate) mod reauth;
mod stored_auth;
pub(crate) mod tls_accept;
pub(crate) mod writer;

pub use activity::Activity;
pub use allow_responses::Responses;
pub use closed_reason::ClosedReason;
pub(crate) use conn::serve;
pub use handle::{ClientHandle, ClientMeta, WsPeer};
pub use lifecycle::spawn_writer;
pub(crate) use lifecycle::{finish, greet, refuse_max_connections};
pub use nats_proto::ConnectOptions;
pub use outbound::{Enqueued, Outbound};
pub use stored_auth::StoredAuth;

#[cfg(test)]
mod paused_tests;
