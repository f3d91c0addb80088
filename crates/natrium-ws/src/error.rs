//! The frame decoder's error type: one variant per way Go rejects a client's frames, with Go's
//! text, which is also the reason of the close frame sent back.

use crate::close::{status, CloseCause, ClosePayload};

/// Why a client's frames were rejected. Every error is final: the connection closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// RSV2 or RSV3 set.
    #[error("RSV2 and RSV3 must be clear")]
    ReservedBits,
    /// RSV1 set although permessage-deflate was not negotiated.
    #[error("compressed frame received without negotiated permessage-deflate")]
    CompressionNotNegotiated,
    /// An unmasked frame from a client that must mask.
    #[error("mask bit missing")]
    MaskMissing,
    /// A control frame announcing more than 125 bytes.
    #[error("control frame length bigger than maximum allowed of 125 bytes")]
    ControlTooLong,
    /// A control frame without FIN.
    #[error("control frame does not have final bit set")]
    ControlFragmented,
    /// A control frame with RSV1.
    #[error("control frame must not be compressed")]
    ControlCompressed,
    /// A text or binary frame while a fragmented message is still open.
    #[error("new message started before final frame for previous message was received")]
    MessageInterleaved,
    /// A continuation frame with no message open, or with RSV1 set.
    #[error("invalid continuation frame")]
    InvalidContinuation,
    /// A reserved opcode (3-7, 11-15).
    #[error("unknown opcode {0}")]
    UnknownOpcode(u8),
    /// A 64-bit length with its most significant bit set.
    #[error("invalid 64-bit payload length")]
    LengthHighBit,
    /// A close frame with a 1-byte payload (half a status code).
    #[error("close frame payload cannot be 1 byte")]
    CloseOneByte,
    /// A close frame whose status a peer may not send.
    #[error("invalid close status code {0}")]
    InvalidCloseStatus(u16),
    /// A compressed message over its compressed limit, or inflating to more than
    /// `max_payload` (Go's `ErrMaxPayload`).
    #[error("maximum payload exceeded")]
    MaxPayload,
    /// Compressed bytes that are not valid deflate data.
    #[error("flate: corrupt input")]
    CorruptCompressed,
    /// Compressed bytes that end in the middle of a deflate block.
    #[error("unexpected EOF")]
    TruncatedCompressed,
}

impl FrameError {
    /// Whether this is a WebSocket protocol error, which Go answers with a close frame carrying
    /// status 1002 and the error text before closing.
    pub const fn is_protocol_error(&self) -> bool {
        !matches!(
            self,
            Self::MaxPayload | Self::CorruptCompressed | Self::TruncatedCompressed
        )
    }

    /// The close frame payload to send before closing: status 1002 and the error's text for
    /// protocol errors; none for size and inflate errors (Go closes those without one).
    ///
    /// Go v2.15.2 queues this frame and then closes the connection as `Read Error`, which skips
    /// the final flush, so whether the frame reaches the client is a race in Go (against the
    /// binary it mostly does not). Sending it is what Go intends and what RFC 6455 asks.
    pub fn close_payload(&self) -> Option<ClosePayload> {
        self.is_protocol_error()
            .then(|| ClosePayload::new(status::PROTOCOL_ERROR, self.to_string().as_bytes()))
    }

    /// The reason the connection is recorded as closed with (`/connz` state): Go closes every
    /// frame error as a read error.
    pub const fn cause(&self) -> CloseCause {
        CloseCause::ReadError
    }
}
