//! NATS client protocol codec: the parser for what clients send, the encoder for what the server
//! sends back, NATS/1.0 message headers and the table of `-ERR` texts.
//!
//! Layout:
//! - [`parse_client_op`] (module `parser`, helpers in `args`): one op from the front of a read
//!   buffer, borrowed from it, or `Incomplete`, or a [`ProtoError`]. Stateless per call, so the
//!   runtime simply re-runs it once more bytes have arrived.
//! - [`encode`]: `MSG`/`HMSG` header lines, the per-publish [`MsgFrameTemplate`] that leaves only
//!   the sid to insert per delivery, `INFO` framing, the fixed `PING`/`PONG`/`+OK` frames, and the
//!   client-side ops (used by tests, benches and anything that speaks as a client).
//! - [`connect`]: the CONNECT document ([`ConnectOptions`]), decoded as Go decodes it, a
//!   repeated CONNECT merged into the options in force.
//! - [`headers`]: parse a `NATS/1.0` header block into borrowed views; build one.
//! - [`wire_error`]: every `-ERR '…'` text the Go server sends, whether it closes the
//!   connection, and what each [`ProtoError`] turns into on the wire (subjects quoted with Go's
//!   `%q` from `natrium-gofmt`).
//! - [`limits`]: the parser limits, with Go's names and defaults.
//!
//! The crate is a pure leaf: no I/O, no async runtime, no locks, no allocation on the parse or
//! frame-formatting paths. Behaviour follows Go `nats-server` v2.15 as observed from the outside;
//! `docs/client-protocol.md` records those observations.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stdout
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod args;
pub mod connect;
pub mod encode;
mod error;
pub mod headers;
pub mod limits;
mod parser;
pub mod wire_error;

pub use connect::ConnectOptions;
pub use encode::MsgFrameTemplate;
pub use error::{ProtoError, Verb};
pub use limits::ParserLimits;
pub use parser::{parse_client_op, ClientOp, Parsed, Publish};
pub use wire_error::WireError;
