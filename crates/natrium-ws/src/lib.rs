//! WebSocket for the NATS server as a pure byte-stream codec: the opening handshake and the
//! frame codec, with Go `nats-server`'s rules, limits and exact reply bytes. No I/O, no async
//! runtime, no locks; the server's listener wires it to sockets (see `docs/websocket.md`).
//!
//! Layout:
//! - [`handshake`]: parse the HTTP upgrade request from a read buffer ([`RequestParser`],
//!   bounded, `Incomplete` until the blank line), validate it as Go's `wsUpgrade` does
//!   ([`Handshake`]), negotiate permessage-deflate and no-masking, check origins, pick cookies
//!   and `X-Forwarded-For`, and produce the 101 response or Go's error reply.
//! - [`frame::decode`]: [`FrameDecoder`] turns client frames into NATS protocol bytes
//!   (unmasked in place, streamed when uncompressed, inflated with a bounded output when
//!   compressed) and control events (ping, pong, close).
//! - [`frame::encode`]: headers for outbound data frames written into caller buffers
//!   ([`data_frames`]), compressed framing ([`FrameEncoder`]), and control frames on the stack
//!   ([`ControlFrame`]).
//! - [`close`]: close status codes, Go's close reason per cause, close payloads.
//! - [`error`]: [`FrameError`], one variant per rejection, with Go's text.
//! - [`limits`]: every size checked, with Go's names and defaults.
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

pub mod close;
pub mod error;
pub mod frame;
pub mod handshake;
pub mod limits;

pub use close::{CloseCause, ClosePayload};
pub use error::FrameError;
pub use frame::decode::{Close, Decoded, DecoderConfig, Event, FrameDecoder};
pub use frame::encode::{data_frames, ControlFrame, EncoderConfig, FrameEncoder};
pub use frame::{apply_mask, FrameHeader, HeaderBuf, OpCode};
pub use handshake::{
    Handshake, HandshakeConfig, HandshakeError, Kind, Outcome, Rejection, RequestParser, Upgrade,
};
