//! The connection kit: what a listener needs to serve connections, for the client and
//! websocket listeners here and for listeners in other crates (MQTT, cluster routes).
//!
//! A listener binds with [`crate::listen::bind_tcp`] and runs
//! [`Server::accept_until_stopped`](crate::Server::accept_until_stopped) (back-off on accept
//! errors, stopped by lame duck mode and shutdown). For each socket it takes a
//! [`ClientHandle`] from [`Server::new_connection`](crate::Server::new_connection), registers
//! it (`max_connections`), optionally wraps the stream ([`tls::accept_tls`], then
//! [`ws::upgrade`] and [`ws::transport`]), starts the writer with [`spawn_writer`] and runs its
//! own read loop over a [`ReadBuf`] under
//! [`Server::spawn_connection`](crate::Server::spawn_connection). Writes go through the
//! handle's [`Outbound`] buffer: every queued byte counts toward `max_pending`, and a peer that
//! does not read is closed as a slow consumer with Go's log line; the writer applies the write
//! deadline to lack of progress. `docs/architecture.md` walks through an example.

pub mod accept;
pub mod tls;
pub mod ws;

pub use crate::client::io::{Inbound, OutSink, PlainRead, PlainWrite, Stall, TcpRead};
pub use crate::client::readbuf::ReadBuf;
pub use crate::client::writer::WriterFailure;
pub use crate::client::{spawn_writer, ClientHandle, ClosedReason, Enqueued, Outbound};
pub use crate::ws::transport::{WsRead, WsWrite};
