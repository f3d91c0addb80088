//! Frames what the server sends, as Go frames it (`wsCollapsePtoNB`):
//! - Everything is binary. A batch of pending bytes goes out as one final frame, or, towards a
//!   browser, as a run of complete frames of at most 4096 payload bytes each. The uncompressed
//!   path only computes headers ([`data_frames`]); the caller writes header and payload slices
//!   (vectored), so nothing is copied or allocated per frame.
//! - With compression negotiated, batches over 64 bytes are deflated (fastest level, sync
//!   flush, the `00 00 ff ff` tail stripped, a fresh stream per batch since neither side keeps
//!   context) into one frame with RSV1, or towards browsers other than Safari into fragments of
//!   at most 4096 bytes: the first binary with RSV1, the rest continuations, the last final.
//! - Control frames (close, ping, pong) are built on the stack.

use flate2::{Compress, Compression, FlushCompress};

use crate::close::{CloseCause, ClosePayload};
use crate::frame::{FrameHeader, HeaderBuf, OpCode};
use crate::limits::{BROWSER_FRAME_BYTES_MAX, COMPRESS_THRESHOLD_BYTES, CONTROL_PAYLOAD_BYTES_MAX};

/// Headers of the uncompressed frames carrying `len` bytes: one frame when `frame_max` is
/// `None`, else complete frames of at most `frame_max` bytes. Yields each header with the
/// byte range of the batch it precedes. A zero-length batch yields nothing.
pub fn data_frames(len: usize, frame_max: Option<usize>) -> DataFrames {
    DataFrames {
        len,
        at: 0,
        frame_max: frame_max.filter(|&m| m > 0).unwrap_or(usize::MAX),
    }
}

/// Iterator returned by [`data_frames`].
#[derive(Debug, Clone)]
pub struct DataFrames {
    len: usize,
    at: usize,
    frame_max: usize,
}

impl Iterator for DataFrames {
    type Item = (HeaderBuf, std::ops::Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.len {
            return None;
        }
        let n = (self.len - self.at).min(self.frame_max);
        let range = self.at..self.at + n;
        self.at += n;
        Some((FrameHeader::binary(n as u64).encode(), range))
    }
}

/// A control frame (close, ping or pong) on the stack: header plus at most 125 payload bytes.
#[derive(Clone, Copy)]
pub struct ControlFrame {
    bytes: [u8; 2 + CONTROL_PAYLOAD_BYTES_MAX],
    len: u8,
}

impl ControlFrame {
    /// A server control frame (unmasked). A payload over 125 bytes is cut to 125.
    pub fn new(opcode: OpCode, payload: &[u8]) -> Self {
        debug_assert!(opcode.is_control());
        let payload = payload.get(..CONTROL_PAYLOAD_BYTES_MAX).unwrap_or(payload);
        let header = FrameHeader {
            fin: true,
            rsv1: false,
            opcode,
            len: payload.len() as u64,
            mask: None,
        };
        let mut bytes = [0u8; 2 + CONTROL_PAYLOAD_BYTES_MAX];
        let (head, body) = bytes.split_at_mut(2);
        head.copy_from_slice(header.encode().as_bytes());
        if let Some(dst) = body.get_mut(..payload.len()) {
            dst.copy_from_slice(payload);
        }
        Self {
            bytes,
            len: (2 + payload.len()) as u8,
        }
    }

    /// The close frame Go sends with this payload.
    pub fn close(payload: &ClosePayload) -> Self {
        Self::new(OpCode::Close, payload.as_bytes())
    }

    /// The close frame Go sends when closing a connection for `cause`: the mapped status and
    /// the cause's text. Check [`CloseCause::sends_close_frame`] first: Go sends none for some.
    pub fn close_for(cause: CloseCause) -> Self {
        Self::close(&ClosePayload::new(
            cause.status(),
            cause.as_str().as_bytes(),
        ))
    }

    /// The pong answering a ping with `payload`.
    pub fn pong(payload: &[u8]) -> Self {
        Self::new(OpCode::Pong, payload)
    }

    /// A ping with `payload`.
    pub fn ping(payload: &[u8]) -> Self {
        Self::new(OpCode::Ping, payload)
    }

    /// The frame's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl std::fmt::Debug for ControlFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ControlFrame({:02x?})", self.as_bytes())
    }
}

/// How the server frames data towards one client, from the handshake's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncoderConfig {
    /// permessage-deflate was negotiated.
    pub compression: bool,
    /// The client is a browser (`User-Agent: Mozilla/...`): frames of at most 4096 bytes.
    pub browser: bool,
    /// Safari: compressed messages must not be fragmented.
    pub no_compressed_fragmentation: bool,
}

impl EncoderConfig {
    /// Largest uncompressed frame payload, `None` for unlimited.
    pub const fn frame_max(&self) -> Option<usize> {
        if self.browser {
            Some(BROWSER_FRAME_BYTES_MAX)
        } else {
            None
        }
    }

    /// Whether a batch of `len` bytes goes out compressed.
    pub const fn compresses(&self, len: usize) -> bool {
        self.compression && len > COMPRESS_THRESHOLD_BYTES
    }
}

/// Frames outbound batches for one connection. Owns the deflate state and a scratch buffer,
/// both reused from batch to batch; the uncompressed path uses neither.
pub struct FrameEncoder {
    cfg: EncoderConfig,
    deflate: Option<Box<Compress>>,
    scratch: Vec<u8>,
}

impl FrameEncoder {
    /// An encoder for a connection negotiated with `cfg`.
    pub fn new(cfg: EncoderConfig) -> Self {
        Self {
            cfg,
            deflate: None,
            scratch: Vec::new(),
        }
    }

    /// The configuration.
    pub const fn config(&self) -> &EncoderConfig {
        &self.cfg
    }

    /// Appends the frames carrying `batch` (the pending bytes, possibly in several slices) to
    /// `out`, compressed when negotiated and the batch is over 64 bytes. For the uncompressed
    /// path prefer [`data_frames`] with vectored writes, which copies nothing.
    pub fn encode(&mut self, batch: &[&[u8]], out: &mut Vec<u8>) {
        let len: usize = batch.iter().map(|b| b.len()).sum();
        if len == 0 {
            return;
        }
        if !self.cfg.compresses(len) {
            let mut frames = data_frames(len, self.cfg.frame_max());
            copy_framed(batch, &mut frames, out);
            return;
        }
        self.deflate_batch(batch, len);
        let frame_max = if self.cfg.no_compressed_fragmentation {
            None
        } else {
            self.cfg.frame_max()
        };
        let max = frame_max.unwrap_or(usize::MAX);
        let total = self.scratch.len();
        let mut at = 0;
        while at < total {
            let n = (total - at).min(max);
            let first = at == 0;
            let header = FrameHeader {
                fin: at + n == total,
                rsv1: first,
                opcode: if first {
                    OpCode::Binary
                } else {
                    OpCode::Continuation
                },
                len: n as u64,
                mask: None,
            };
            out.extend_from_slice(header.encode().as_bytes());
            out.extend_from_slice(self.scratch.get(at..at + n).unwrap_or_default());
            at += n;
        }
        self.scratch.clear();
    }

    /// Deflates `batch` into `scratch` as one independent stream ending in a sync flush, with
    /// the flush's `00 00 ff ff` removed.
    fn deflate_batch(&mut self, batch: &[&[u8]], len: usize) {
        let c = self
            .deflate
            .get_or_insert_with(|| Box::new(Compress::new(Compression::fast(), false)));
        c.reset();
        self.scratch.clear();
        self.scratch.reserve(len / 2 + 64);
        for part in batch {
            let mut rest: &[u8] = part;
            while !rest.is_empty() {
                if self.scratch.capacity() - self.scratch.len() < 64 {
                    self.scratch.reserve(self.scratch.capacity().max(1024));
                }
                let before = c.total_in();
                // Errors only report misuse of the stream (none here); stop rather than spin.
                if c.compress_vec(rest, &mut self.scratch, FlushCompress::None)
                    .is_err()
                {
                    break;
                }
                let used = (c.total_in() - before) as usize;
                rest = rest.get(used..).unwrap_or_default();
            }
        }
        loop {
            if self.scratch.capacity() - self.scratch.len() < 64 {
                self.scratch.reserve(self.scratch.capacity().max(1024));
            }
            if c.compress_vec(&[], &mut self.scratch, FlushCompress::Sync)
                .is_err()
            {
                break;
            }
            // The flush is complete once it left room unused.
            if self.scratch.len() < self.scratch.capacity() {
                break;
            }
        }
        if self.scratch.ends_with(&[0x00, 0x00, 0xff, 0xff]) {
            self.scratch.truncate(self.scratch.len() - 4);
        }
    }
}

/// Copies `batch` into `out` with a header before each frame's range.
fn copy_framed(batch: &[&[u8]], frames: &mut DataFrames, out: &mut Vec<u8>) {
    let mut parts = batch.iter().copied().filter(|p| !p.is_empty());
    let mut cur: &[u8] = parts.next().unwrap_or_default();
    for (header, range) in frames {
        out.extend_from_slice(header.as_bytes());
        let mut need = range.len();
        while need > 0 {
            if cur.is_empty() {
                cur = parts.next().unwrap_or_default();
                if cur.is_empty() {
                    debug_assert!(false, "batch shorter than its frames");
                    return;
                }
            }
            let (take, rest) = cur.split_at(need.min(cur.len()));
            out.extend_from_slice(take);
            need -= take.len();
            cur = rest;
        }
    }
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
