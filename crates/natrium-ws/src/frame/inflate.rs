//! Bounded inflation of one permessage-deflate message: the compressed bytes are collected up
//! to a limit, then inflated chunk by chunk into a fixed scratch buffer, stopping with an error
//! once the output would pass `max_payload`. Memory is bounded by the compressed limit plus
//! one chunk, whatever the compression ratio (zip-bomb safe).

use std::ops::Range;

use flate2::{Decompress, FlushDecompress, Status};

use crate::error::FrameError;
use crate::limits::{COMPRESSED_BUFFER_RETAIN_BYTES, INFLATE_CHUNK_BYTES, INFLATE_TRAILER};

/// Collects and inflates compressed messages, one at a time. Neither side keeps context between
/// messages: the server negotiates `client_no_context_takeover`.
pub(crate) struct Inflater {
    /// Compressed bytes of the current message (plus the trailer once it is complete).
    compressed: Vec<u8>,
    /// Most compressed bytes one message may have, trailer included.
    compressed_max: u64,
    /// Most inflated bytes one message may produce (`max_payload`).
    inflated_max: u64,
    state: Decompress,
    scratch: Box<[u8]>,
    /// Next compressed byte to feed.
    in_pos: usize,
    /// Inflated bytes produced so far for this message.
    out_total: u64,
    /// Set once the stream ended (or the limit was reached with `over_limit`).
    finished: bool,
    /// The output went past `inflated_max`: the next step reports `MaxPayload`.
    over_limit: bool,
}

/// What one inflation step produced.
pub(crate) enum Step {
    /// Inflated bytes in `scratch[range]`.
    Chunk(Range<usize>),
    /// The message is fully inflated.
    Done,
}

impl Inflater {
    pub(crate) fn new(compressed_max: u64, inflated_max: u64) -> Self {
        Self {
            compressed: Vec::new(),
            compressed_max,
            inflated_max,
            state: Decompress::new(false),
            scratch: vec![0u8; INFLATE_CHUNK_BYTES].into_boxed_slice(),
            in_pos: 0,
            out_total: 0,
            finished: false,
            over_limit: false,
        }
    }

    /// Appends compressed bytes of the current message, checking the limit first.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        self.reserve_checked(bytes.len())?;
        self.compressed.extend_from_slice(bytes);
        Ok(())
    }

    /// Ends the message: appends the trailer (counted against the limit, as Go does) and
    /// resets the inflater for it.
    pub(crate) fn finish_input(&mut self) -> Result<(), FrameError> {
        self.reserve_checked(INFLATE_TRAILER.len())?;
        self.compressed.extend_from_slice(&INFLATE_TRAILER);
        self.state.reset(false);
        self.in_pos = 0;
        self.out_total = 0;
        self.finished = false;
        self.over_limit = false;
        Ok(())
    }

    /// Checks that `more` compressed bytes would still fit, before any of them is buffered
    /// (used with a frame's announced length).
    pub(crate) fn reserve_checked_u64(&mut self, more: u64) -> Result<(), FrameError> {
        let total = (self.compressed.len() as u64).saturating_add(more);
        if total > self.compressed_max {
            self.clear();
            return Err(FrameError::MaxPayload);
        }
        Ok(())
    }

    fn reserve_checked(&mut self, more: usize) -> Result<(), FrameError> {
        let total = (self.compressed.len() as u64).saturating_add(more as u64);
        if total > self.compressed_max {
            self.clear();
            return Err(FrameError::MaxPayload);
        }
        Ok(())
    }

    /// Drops the current message's bytes, giving back memory above the retained capacity.
    pub(crate) fn clear(&mut self) {
        self.compressed.clear();
        self.compressed.shrink_to(COMPRESSED_BUFFER_RETAIN_BYTES);
        self.in_pos = 0;
    }

    /// The inflated bytes of a [`Step::Chunk`].
    pub(crate) fn chunk(&self, range: Range<usize>) -> &[u8] {
        self.scratch.get(range).unwrap_or_default()
    }

    /// Inflates the next chunk. Errors are final for the message (and the connection).
    pub(crate) fn step(&mut self) -> Result<Step, FrameError> {
        if self.over_limit {
            self.clear();
            return Err(FrameError::MaxPayload);
        }
        if self.finished {
            self.clear();
            return Ok(Step::Done);
        }
        // Ask for one byte more than the limit allows, to tell "exactly at the limit" from
        // "over it".
        let room = self
            .inflated_max
            .saturating_sub(self.out_total)
            .saturating_add(1);
        let want = usize::try_from(room)
            .unwrap_or(usize::MAX)
            .min(self.scratch.len());
        let Some(out) = self.scratch.get_mut(..want) else {
            return Err(FrameError::MaxPayload);
        };
        let mut produced = 0usize;
        // Each pass either consumes input or produces output; one without either means the
        // input ended inside a block.
        while produced < out.len() {
            let input = self.compressed.get(self.in_pos..).unwrap_or_default();
            let (in_before, out_before) = (self.state.total_in(), self.state.total_out());
            let dst = out.get_mut(produced..).unwrap_or_default();
            let status = self.state.decompress(input, dst, FlushDecompress::None);
            let used = (self.state.total_in() - in_before) as usize;
            let made = (self.state.total_out() - out_before) as usize;
            self.in_pos += used;
            produced += made;
            match status {
                Err(_) => {
                    self.clear();
                    return Err(FrameError::CorruptCompressed);
                }
                Ok(Status::StreamEnd) => {
                    self.finished = true;
                    break;
                }
                Ok(_) if used == 0 && made == 0 => {
                    self.clear();
                    return Err(FrameError::TruncatedCompressed);
                }
                Ok(_) => {}
            }
        }
        let limit_left = self.inflated_max.saturating_sub(self.out_total);
        let allowed = usize::try_from(limit_left)
            .unwrap_or(usize::MAX)
            .min(produced);
        if allowed < produced {
            // Go hands the bytes up to the limit to the parser, then fails.
            self.over_limit = true;
        }
        self.out_total += allowed as u64;
        if allowed == 0 {
            return self.step();
        }
        Ok(Step::Chunk(0..allowed))
    }
}
