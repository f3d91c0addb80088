//! Natrium runtime: the part of the server that owns sockets and tasks.
//!
//! Layout:
//! - [`listen`]: opening TCP listeners like Go's `net.Listen`, the port check included.
//! - [`server`]: the server's identity and shared state, the connection registry and lame duck
//!   mode; [`shutdown`]: the ordered shutdown.
//! - [`kit`]: the connection kit every listener is built from (accept loop, connection
//!   admission, TLS and WebSocket wrapping, read buffer, outbound buffer and writer), for the
//!   listeners here and those of other crates.
//! - [`client`]: the NATS client listener and one client connection: the read loop that parses
//!   and dispatches ops, and its outbound buffer drained by a writer task.
//! - [`endpoint`]: where a subscription's messages go: a client's outbound buffer or an
//!   in-process sink.
//! - [`deliver`]: delivering one publish to the matching subscriptions, queue groups,
//!   no-responders, and across accounts through imports.
//! - [`account`]: accounts: each one's subject namespace, its exports and imports, the table of
//!   responses owed to requesters in other accounts, and the registry of all of them.
//! - [`internal`]: the server's own clients (system account services), which receive through
//!   the same outbound machinery as sockets.
//! - [`events`]: the bounded queue of lifecycle events (connect, disconnect, refusal,
//!   shutdown) for whoever reports them; [`closed`]: the ring of closed connections.
//! - [`info`]: the INFO document sent to clients.
//! - [`stats`]: server-wide counters read by monitoring; [`limits`]: the runtime's own bounds.
//! - [`config`]: the runtime's own typed settings, filled in by the binary.
//! - [`report`]: what JetStream reports to monitoring, registered on the server.
//! - [`reload`]: swapping in new settings at run time and re-checking connected clients.
//! - [`tls`]: client TLS: building the rustls configuration from files with Go's errors, peer
//!   certificate decoding, handshake error reports.
//! - [`ws`]: WebSocket clients: the `websocket { }` listener, the HTTP upgrade, and the framing
//!   adapters the client tasks run over (the codec is `natrium-ws`).
//!
//! The wire codec lives in `nats-proto`, the subscription index in `nats-subject`, credential
//! and permission decisions in `natrium-auth`, and Go's log-line formats and option defaults in
//! `natrium-gofmt`; this crate wires them to tokio. It never names JetStream, MQTT, clustering
//! or monitoring: those attach through its internal-client and connection APIs.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

pub mod account;
pub mod client;
pub mod closed;
pub mod config;
pub mod deliver;
pub mod endpoint;
pub mod events;
pub mod info;
pub mod internal;
pub mod kit;
pub mod limits;
pub mod listen;
pub mod reload;
pub mod report;
pub mod server;
pub mod shutdown;
pub mod stats;
pub mod tls;
pub mod ws;

pub use config::CoreConfig;
pub use server::{Server, ServerHandle, StartError};
