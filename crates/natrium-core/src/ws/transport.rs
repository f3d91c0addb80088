//! The framing adapters a websocket client's tasks run over.
//!
//! [`WsRead`] reads raw bytes into a buffer it owns, decodes frames with `natrium_ws`, and
//! appends the protocol bytes they carry to the read loop's buffer (uncompressed payloads are
//! unmasked in place and copied once; nothing is held per frame or message). Pings are answered
//! through [`Controls`]; a close frame or a frame error queues the close frame to send back and
//! ends the connection once the bytes before it have been handled, as Go does.
//!
//! [`WsWrite`] frames each outbound batch: one binary frame written with its header in one
//! vectored write (no copy), or, with compression negotiated (or towards a browser, which gets
//! frames of at most 4096 bytes), through `FrameEncoder` into a reused buffer. Queued control
//! frames go out before the batch; the close frame goes after the final flush.
//!
//! Memory per connection: the raw read buffer (at most one read, `RAW_READ_MAX_BYTES`, plus
//! a partial frame header or control frame) and, only with compression or for browsers, the
//! encoder's state and output buffer.

use std::io::{self, IoSlice};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use natrium_ws::{
    ControlFrame, DecoderConfig, EncoderConfig, Event, FrameDecoder, FrameEncoder, FrameError,
    FrameHeader,
};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::client::io::{Inbound, OutSink, Stall};
use crate::client::{ClientHandle, ClosedReason};

/// A read asks for at least this much room (a whole control frame always fits).
const RAW_READ_MIN_BYTES: usize = 512;
/// And at most this much: the read loop's own largest read.
const RAW_READ_MAX_BYTES: usize = crate::limits::READ_BUFFER_MAX_BYTES;
/// Pongs waiting for the writer are capped at this many bytes; past it a ping gets no answer
/// (RFC 6455 lets a server answer only the latest ping), so a client flooding pings at a
/// writer that cannot keep up cannot grow the queue.
const CONTROL_QUEUE_BYTES_MAX: usize = 16 * 1024;

const _: () = assert!(RAW_READ_MIN_BYTES >= natrium_ws::limits::CONTROL_FRAME_BYTES_MAX);

/// Control frames the reader hands to the writer.
#[derive(Default)]
pub struct Controls {
    queue: Mutex<ControlQueue>,
    /// Pongs are queued; lets the writer skip the lock when there are none.
    pending: AtomicBool,
}

#[derive(Default)]
struct ControlQueue {
    /// Framed pongs, in order.
    frames: Vec<u8>,
    /// The close frame to send last; the first one set wins (Go's `closeSent`).
    close: Option<ControlFrame>,
}

impl Controls {
    fn push_pong(&self, payload: &[u8]) {
        let frame = ControlFrame::pong(payload);
        let mut q = self.queue.lock();
        if q.frames.len() + frame.as_bytes().len() <= CONTROL_QUEUE_BYTES_MAX {
            q.frames.extend_from_slice(frame.as_bytes());
            self.pending.store(true, Ordering::Release);
        }
    }

    fn set_close(&self, frame: ControlFrame) {
        let mut q = self.queue.lock();
        if q.close.is_none() {
            q.close = Some(frame);
        }
    }

    fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Moves the queued pongs into `dst` (which must be empty).
    fn take_frames(&self, dst: &mut Vec<u8>) {
        if !self.is_pending() {
            return;
        }
        let mut q = self.queue.lock();
        std::mem::swap(&mut q.frames, dst);
        self.pending.store(false, Ordering::Release);
    }

    fn take_close(&self) -> Option<ControlFrame> {
        self.queue.lock().close.take()
    }
}

/// The read side: socket bytes in, protocol bytes out.
pub struct WsRead<R> {
    socket: R,
    handle: Arc<ClientHandle>,
    controls: Arc<Controls>,
    decoder: FrameDecoder,
    /// `raw[start..]` is read and not yet decoded.
    raw: Vec<u8>,
    start: usize,
    /// Set once the client closed or sent a bad frame: the connection ends with this reason
    /// after the protocol bytes before it.
    ended: Option<ClosedReason>,
}

impl<R> WsRead<R> {
    pub(crate) fn new(
        socket: R,
        handle: Arc<ClientHandle>,
        controls: Arc<Controls>,
        cfg: DecoderConfig,
    ) -> Self {
        Self {
            socket,
            handle,
            controls,
            decoder: FrameDecoder::new(cfg),
            raw: Vec::new(),
            start: 0,
            ended: None,
        }
    }

    /// Decodes what is buffered, appending protocol bytes to `out` until about `room` bytes
    /// were added. Returns how many were.
    fn decode_into(&mut self, out: &mut Vec<u8>, room: usize) -> usize {
        let mut added = 0;
        while self.ended.is_none() && added < room {
            let input = self.raw.get_mut(self.start..).unwrap_or_default();
            let decoded = match self.decoder.decode(input) {
                Ok(decoded) => decoded,
                Err(err) => {
                    self.ended = Some(frame_error(&self.handle, &self.controls, err));
                    break;
                }
            };
            self.start += decoded.consumed;
            match decoded.event {
                None => break,
                Some(Event::Data(bytes)) => {
                    out.extend_from_slice(bytes);
                    added += bytes.len();
                }
                Some(Event::Ping(payload)) => {
                    self.controls.push_pong(payload);
                    self.handle.out.flush();
                }
                Some(Event::Pong(_)) => {}
                Some(Event::Close(close)) => {
                    self.controls.set_close(ControlFrame::close(&close.reply()));
                    self.ended = Some(ClosedReason::ClientClosed);
                }
            }
        }
        if self.start >= self.raw.len() {
            self.raw.clear();
            self.start = 0;
        }
        added
    }

    /// Makes room for a read of about `want` bytes, keeping undecoded bytes at the front and
    /// giving back memory a burst left behind.
    fn prepare(&mut self, want: usize) {
        if self.start > 0 {
            self.raw.drain(..self.start);
            self.start = 0;
        }
        if self.raw.capacity() > 2 * want && self.raw.len() < want {
            self.raw.shrink_to(want + self.raw.len());
        }
        if self.raw.capacity() - self.raw.len() < want {
            self.raw.reserve_exact(want);
        }
    }
}

/// Logs a frame error as Go does and queues its close frame; the connection ends as a read
/// error.
fn frame_error(handle: &ClientHandle, controls: &Controls, err: FrameError) -> ClosedReason {
    tracing::error!("{} - read error: {err}", handle.log_prefix());
    if let Some(payload) = err.close_payload() {
        controls.set_close(ControlFrame::close(&payload));
    }
    ClosedReason::ReadError
}

impl<R: AsyncRead + Unpin + Send> Inbound for WsRead<R> {
    async fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<usize, ClosedReason> {
        let room = (buf.capacity() - buf.len()).clamp(RAW_READ_MIN_BYTES, RAW_READ_MAX_BYTES);
        loop {
            // Everything but the socket read is synchronous, so a cancelled call loses nothing.
            let added = self.decode_into(buf, room);
            if added > 0 {
                return Ok(added);
            }
            if let Some(reason) = self.ended {
                return Err(reason);
            }
            self.prepare(room);
            match self.socket.read_buf(&mut self.raw).await {
                Ok(0) => return Err(ClosedReason::ClientClosed),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(ClosedReason::ClientClosed)
                }
                Err(_) => return Err(ClosedReason::ReadError),
            }
        }
    }
}

/// The write side: outbound batches in, frames out.
pub struct WsWrite<W> {
    socket: W,
    controls: Arc<Controls>,
    cfg: EncoderConfig,
    /// Only for compression or browsers; plain frames need no state.
    encoder: Option<FrameEncoder>,
    /// Control frames taken from the queue for the current write.
    ctl: Vec<u8>,
    /// The encoder's output for the current batch.
    framed: Vec<u8>,
}

impl<W> WsWrite<W> {
    pub(crate) fn new(socket: W, controls: Arc<Controls>, cfg: EncoderConfig) -> Self {
        let encoder = (cfg.compression || cfg.browser).then(|| FrameEncoder::new(cfg));
        Self {
            socket,
            controls,
            cfg,
            encoder,
            ctl: Vec::new(),
            framed: Vec::new(),
        }
    }
}

impl<W: AsyncWrite + Unpin + Send> OutSink for WsWrite<W> {
    fn has_pending(&self) -> bool {
        self.controls.is_pending()
    }

    async fn write_batch(&mut self, batch: &[u8], stall: &mut Stall<'_>) -> io::Result<()> {
        let Self {
            socket,
            controls,
            cfg,
            encoder,
            ctl,
            framed,
        } = self;
        controls.take_frames(ctl);
        match encoder {
            Some(enc) if !batch.is_empty() && (cfg.compresses(batch.len()) || cfg.browser) => {
                framed.clear();
                enc.encode(&[batch], framed);
                let mut parts = [IoSlice::new(ctl), IoSlice::new(framed)];
                stall.write_all(socket, &mut parts).await?;
                if framed.capacity() > crate::limits::OUTBOUND_SPARE_KEEP_BYTES {
                    *framed = Vec::new();
                }
            }
            _ if !batch.is_empty() => {
                let header = FrameHeader::binary(batch.len() as u64).encode();
                let mut parts = [
                    IoSlice::new(ctl),
                    IoSlice::new(&header),
                    IoSlice::new(batch),
                ];
                stall.write_all(socket, &mut parts).await?;
            }
            _ => stall.write_all(socket, &mut [IoSlice::new(ctl)]).await?,
        }
        ctl.clear();
        Ok(())
    }

    async fn write_close(&mut self, reason: Option<ClosedReason>) -> io::Result<()> {
        let frame = self.controls.take_close().or_else(|| {
            reason
                .map(super::session::close_cause)
                .filter(|cause| cause.sends_close_frame())
                .map(ControlFrame::close_for)
        });
        if let Some(frame) = frame {
            self.socket.write_all(frame.as_bytes()).await?;
            self.socket.flush().await?;
        }
        Ok(())
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        self.socket.shutdown().await
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
