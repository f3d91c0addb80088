//! Decodes the frames a client sends into the NATS protocol bytes they carry plus the control
//! events the server must act on, from a caller-owned read buffer.
//!
//! The caller keeps unconsumed bytes and calls [`FrameDecoder::decode`] again after reading
//! more. Each call consumes from the front of the input and returns at most one [`Event`]:
//! - Uncompressed data is unmasked in place and returned as it arrives, one piece per frame
//!   per read, so the caller feeds it straight to the NATS parser; nothing is buffered and no
//!   frame or message size applies (Go streams these too; the NATS parser bounds each op).
//! - Compressed messages are collected up to `max_payload * 8` compressed bytes (capped at
//!   64 MiB; a frame announcing more is refused at its header), then inflated in 32 KiB chunks, failing once the output passes `max_payload`.
//!   While a message is being inflated, calls return its chunks and consume nothing.
//! - A frame header is consumed only whole (at most 14 bytes), and a control frame only with
//!   its whole payload (at most 131 bytes); until then the call returns no event.
//!
//! Rules follow Go's `wsReadLoop`, in its order, with its error texts: RSV2/RSV3 clear; RSV1
//! only after negotiation; MASK required unless `Nats-No-Masking` was granted; control frames
//! at most 125 bytes, final and uncompressed; no new text/binary message before the previous
//! one's final frame; continuations only inside a message and without RSV1; no reserved
//! opcodes; no 64-bit length with the high bit set. One difference: when masking is not
//! required and a frame still sets MASK, the key is read and applied (RFC 6455), where Go
//! would treat the key as payload.

use crate::close::{is_valid_close_status, status, ClosePayload};
use crate::error::FrameError;
use crate::frame::inflate::{Inflater, Step};
use crate::frame::{apply_mask, OpCode, FIN_BIT, LEN_U16, LEN_U64, MASK_BIT, RSV1_BIT, RSV23_BITS};
use crate::limits::{compressed_message_bytes_max, PAYLOAD_BYTES_MAX_DEFAULT};

/// What the decoder needs to know about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderConfig {
    /// permessage-deflate was negotiated: RSV1 is allowed on a message's first frame.
    pub compression: bool,
    /// Client frames must be masked (always, unless the client asked for `Nats-No-Masking`).
    pub masking_required: bool,
    /// The connection's `max_payload`: bounds compressed messages (0 means Go's 1 MiB).
    pub max_payload: usize,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        Self {
            compression: false,
            masking_required: true,
            max_payload: PAYLOAD_BYTES_MAX_DEFAULT,
        }
    }
}

/// Something the server must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// Application bytes (the NATS protocol stream), in order, unmasked and inflated.
    Data(&'a [u8]),
    /// A ping: answer with a pong carrying the same payload.
    Ping(&'a [u8]),
    /// A pong: nothing to do.
    Pong(&'a [u8]),
    /// The client closed: send [`Close::reply`] in a close frame, then close the connection
    /// as `Client Closed`. The decoder ignores any further input.
    Close(Close<'a>),
}

/// A close frame received from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Close<'a> {
    /// Status code, `None` when the frame had no payload (RFC "1005, no status received").
    pub status: Option<u16>,
    /// Reason text, as sent (may be invalid UTF-8).
    pub reason: &'a [u8],
}

impl Close<'_> {
    /// The payload of the close frame Go sends back: empty when no status was received, the
    /// status with `invalid utf8 body in close frame` under 1007 when the reason is not UTF-8,
    /// otherwise the client's status and reason echoed.
    pub fn reply(&self) -> ClosePayload {
        match self.status {
            None => ClosePayload::empty(),
            Some(_) if std::str::from_utf8(self.reason).is_err() => ClosePayload::new(
                status::INVALID_PAYLOAD_DATA,
                b"invalid utf8 body in close frame",
            ),
            Some(code) => ClosePayload::new(code, self.reason),
        }
    }
}

/// The result of one [`FrameDecoder::decode`] call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// Bytes to drop from the front of the input before the next call.
    pub consumed: usize,
    /// The event found, or `None` when more input is needed.
    pub event: Option<Event<'a>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Expecting a frame header.
    Header,
    /// Inside a data frame's payload.
    Payload,
    /// Handing out the inflated chunks of a complete compressed message.
    Inflating,
    /// A close frame was received; everything after it is ignored.
    Closed,
}

/// A parsed frame header.
struct Header {
    opcode: OpCode,
    fin: bool,
    rsv1: bool,
    len: u64,
    mask: Option<[u8; 4]>,
    size: usize,
}

/// Per-connection decoder state. Allocates nothing until the first compressed message.
pub struct FrameDecoder {
    cfg: DecoderConfig,
    state: State,
    /// A data message is open (its final frame not yet seen).
    in_message: bool,
    /// The open message is compressed.
    message_compressed: bool,
    /// The current data frame is its message's last.
    frame_fin: bool,
    /// Payload bytes left in the current data frame.
    remaining: u64,
    mask: Option<[u8; 4]>,
    mask_pos: usize,
    inflater: Option<Box<Inflater>>,
}

impl FrameDecoder {
    /// A decoder for a connection negotiated with `cfg`.
    pub fn new(cfg: DecoderConfig) -> Self {
        Self {
            cfg,
            state: State::Header,
            in_message: false,
            message_compressed: false,
            frame_fin: false,
            remaining: 0,
            mask: None,
            mask_pos: 0,
            inflater: None,
        }
    }

    /// Decodes from the front of `input`, unmasking payload bytes in place. Returns the bytes
    /// consumed and at most one event; call again (with the unconsumed rest plus any new bytes)
    /// until the event is `None`. An error is final: close the connection, first sending
    /// [`FrameError::close_payload`] if there is one.
    pub fn decode<'a>(&'a mut self, input: &'a mut [u8]) -> Result<Decoded<'a>, FrameError> {
        let mut pos = 0usize;
        loop {
            match self.state {
                State::Closed => {
                    return Ok(Decoded {
                        consumed: input.len(),
                        event: None,
                    })
                }
                State::Inflating => match self.inflate_step()? {
                    Some(range) => {
                        let bytes = self.inflater.as_deref().map(|i| i.chunk(range));
                        let event = bytes.map(Event::Data);
                        return Ok(Decoded {
                            consumed: pos,
                            event,
                        });
                    }
                    None => self.state = State::Header,
                },
                State::Payload => {
                    let avail = input.len().saturating_sub(pos);
                    let n = usize::try_from(self.remaining)
                        .unwrap_or(usize::MAX)
                        .min(avail);
                    let start = pos;
                    pos += n;
                    self.remaining -= n as u64;
                    let piece = input.get_mut(start..pos).unwrap_or_default();
                    if let Some(key) = self.mask {
                        self.mask_pos = apply_mask(key, self.mask_pos, piece);
                    }
                    if self.message_compressed {
                        self.push_compressed(piece)?;
                    }
                    if self.remaining == 0 {
                        self.end_data_frame()?;
                    }
                    if !self.message_compressed && n > 0 {
                        let data = input.get(start..pos).unwrap_or_default();
                        return Ok(Decoded {
                            consumed: pos,
                            event: Some(Event::Data(data)),
                        });
                    }
                    if n == 0 && self.state == State::Payload {
                        return Ok(Decoded {
                            consumed: pos,
                            event: None,
                        });
                    }
                }
                State::Header => {
                    let rest = input.get(pos..).unwrap_or_default();
                    let Some(h) = self.parse_header(rest)? else {
                        return Ok(Decoded {
                            consumed: pos,
                            event: None,
                        });
                    };
                    if h.opcode.is_control() {
                        let total = h.size + h.len as usize;
                        let Some(frame) = input.get_mut(pos..pos + total) else {
                            return Ok(Decoded {
                                consumed: pos,
                                event: None,
                            });
                        };
                        let payload = frame.get_mut(h.size..).unwrap_or_default();
                        if let Some(key) = h.mask {
                            apply_mask(key, 0, payload);
                        }
                        pos += total;
                        let payload = input.get(pos - h.len as usize..pos).unwrap_or_default();
                        let event = self.control_event(h.opcode, payload)?;
                        return Ok(Decoded {
                            consumed: pos,
                            event: Some(event),
                        });
                    }
                    pos += h.size;
                    self.start_data_frame(&h)?;
                }
            }
        }
    }

    /// Parses a frame header from the front of `buf`, checking each rule as soon as the bytes
    /// it depends on are present. `Ok(None)`: the header is not complete yet.
    fn parse_header(&self, buf: &[u8]) -> Result<Option<Header>, FrameError> {
        let Some(&b0) = buf.first() else {
            return Ok(None);
        };
        if b0 & RSV23_BITS != 0 {
            return Err(FrameError::ReservedBits);
        }
        let rsv1 = b0 & RSV1_BIT != 0;
        if rsv1 && !self.cfg.compression {
            return Err(FrameError::CompressionNotNegotiated);
        }
        let Some(&b1) = buf.get(1) else {
            return Ok(None);
        };
        let masked = b1 & MASK_BIT != 0;
        if self.cfg.masking_required && !masked {
            return Err(FrameError::MaskMissing);
        }
        let fin = b0 & FIN_BIT != 0;
        let len7 = b1 & 0x7f;
        let opcode = self.check_opcode(b0 & 0x0f, fin, rsv1, len7)?;
        let (len, mut size) = match len7 {
            LEN_U16 => match buf.get(2..4) {
                Some(&[a, b]) => (u64::from(u16::from_be_bytes([a, b])), 4),
                _ => return Ok(None),
            },
            LEN_U64 => match buf.get(2..10).and_then(|s| <[u8; 8]>::try_from(s).ok()) {
                Some(bytes) => {
                    let len = u64::from_be_bytes(bytes);
                    if len >> 63 != 0 {
                        return Err(FrameError::LengthHighBit);
                    }
                    (len, 10)
                }
                None => return Ok(None),
            },
            short => (u64::from(short), 2),
        };
        let mask = if masked {
            match buf
                .get(size..size + 4)
                .and_then(|s| <[u8; 4]>::try_from(s).ok())
            {
                Some(key) => {
                    size += 4;
                    Some(key)
                }
                None => return Ok(None),
            }
        } else {
            None
        };
        Ok(Some(Header {
            opcode,
            fin,
            rsv1,
            len,
            mask,
            size,
        }))
    }

    /// The opcode rules of Go's `wsReadLoop`, checked once byte 1 is known.
    fn check_opcode(
        &self,
        bits: u8,
        fin: bool,
        rsv1: bool,
        len7: u8,
    ) -> Result<OpCode, FrameError> {
        let opcode = OpCode::from_bits(bits).ok_or(FrameError::UnknownOpcode(bits))?;
        match opcode {
            OpCode::Close | OpCode::Ping | OpCode::Pong => {
                if usize::from(len7) > crate::limits::CONTROL_PAYLOAD_BYTES_MAX {
                    return Err(FrameError::ControlTooLong);
                }
                if !fin {
                    return Err(FrameError::ControlFragmented);
                }
                if rsv1 {
                    return Err(FrameError::ControlCompressed);
                }
            }
            OpCode::Text | OpCode::Binary => {
                if self.in_message {
                    return Err(FrameError::MessageInterleaved);
                }
            }
            OpCode::Continuation => {
                if !self.in_message || rsv1 {
                    return Err(FrameError::InvalidContinuation);
                }
            }
        }
        Ok(opcode)
    }

    fn start_data_frame(&mut self, h: &Header) -> Result<(), FrameError> {
        if h.opcode != OpCode::Continuation {
            self.message_compressed = h.rsv1;
        }
        self.in_message = !h.fin;
        self.frame_fin = h.fin;
        self.remaining = h.len;
        self.mask = h.mask;
        self.mask_pos = 0;
        self.state = State::Payload;
        if self.message_compressed {
            // Reject a frame that cannot fit as soon as its header announces it. Go finds out
            // once the bytes arrive; the outcome is the same, without waiting for them.
            self.inflater_mut().reserve_checked_u64(h.len)?;
        }
        if self.remaining == 0 {
            self.end_data_frame()?;
        }
        Ok(())
    }

    /// The current data frame's payload is complete.
    fn end_data_frame(&mut self) -> Result<(), FrameError> {
        self.state = State::Header;
        if self.message_compressed && self.frame_fin {
            self.inflater_mut().finish_input()?;
            self.state = State::Inflating;
        }
        Ok(())
    }

    fn push_compressed(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        self.inflater_mut().push(bytes)
    }

    fn inflater_mut(&mut self) -> &mut Inflater {
        let max_payload = self.cfg.max_payload;
        self.inflater.get_or_insert_with(|| {
            let mpay = if max_payload == 0 {
                PAYLOAD_BYTES_MAX_DEFAULT
            } else {
                max_payload
            };
            Box::new(Inflater::new(
                compressed_message_bytes_max(mpay),
                mpay as u64,
            ))
        })
    }

    /// The next inflated chunk's range, or `None` when the message is done.
    fn inflate_step(&mut self) -> Result<Option<std::ops::Range<usize>>, FrameError> {
        match self.inflater_mut().step()? {
            Step::Chunk(range) => Ok(Some(range)),
            Step::Done => {
                self.message_compressed = false;
                Ok(None)
            }
        }
    }

    fn control_event<'p>(
        &mut self,
        op: OpCode,
        payload: &'p [u8],
    ) -> Result<Event<'p>, FrameError> {
        match op {
            OpCode::Ping => Ok(Event::Ping(payload)),
            OpCode::Pong => Ok(Event::Pong(payload)),
            _ => {
                let close = parse_close(payload)?;
                self.state = State::Closed;
                if let Some(i) = self.inflater.as_deref_mut() {
                    i.clear();
                }
                Ok(Event::Close(close))
            }
        }
    }
}

/// Checks a close frame's payload the way Go does.
fn parse_close(payload: &[u8]) -> Result<Close<'_>, FrameError> {
    match payload {
        [] => Ok(Close {
            status: None,
            reason: &[],
        }),
        [_] => Err(FrameError::CloseOneByte),
        [hi, lo, reason @ ..] => {
            let code = u16::from_be_bytes([*hi, *lo]);
            if !is_valid_close_status(code) {
                return Err(FrameError::InvalidCloseStatus(code));
            }
            Ok(Close {
                status: Some(code),
                reason,
            })
        }
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
pub(crate) mod tests;
