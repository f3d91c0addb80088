//! The transport a client connection runs over, as two small traits: [`Inbound`] gives the
//! read loop NATS protocol bytes, [`OutSink`] takes the writer's batches. Plain TCP and TLS
//! use [`PlainRead`] (plain TCP: [`TcpRead`], which can also wait for input without holding a
//! buffer) and [`PlainWrite`], which do exactly what the loops did before the traits existed
//! (one `read_buf`, one `write_all` and `flush`); WebSocket connections use the framing
//! adapters in `crate::ws`. The loops are generic over these traits, so every transport gets its
//! own compiled copy and the plain one pays nothing for the others.

use std::future::Future;
use std::io::{self, IoSlice};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;

use super::ClosedReason;

/// Where the read loop gets protocol bytes from.
pub(crate) trait Inbound: Send {
    /// Whether [`ready`](Self::ready) really waits for input, so that the read loop can hold
    /// no buffer while the peer is quiet and take one only when there is something to read.
    const WAITS_WITHOUT_BUFFER: bool = false;

    /// Resolves once a read would not wait (input, end of stream or an error), where the
    /// transport can tell; at once otherwise. Must be cancel-safe.
    fn ready(&mut self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }

    /// Appends the next protocol bytes to `buf` (whose spare capacity is the amount the read
    /// loop offers) and returns how many. An error is the reason the connection ends. Must be
    /// cancel-safe: the read loop drops this future when a timer fires.
    fn read_into(
        &mut self,
        buf: &mut Vec<u8>,
    ) -> impl Future<Output = Result<usize, ClosedReason>> + Send;
}

/// Where the writer puts the outbound buffer.
pub(crate) trait OutSink: Send {
    /// Whether there is something to write even with an empty batch (queued control frames).
    fn has_pending(&self) -> bool {
        false
    }

    /// Writes one batch of protocol bytes (possibly empty when [`has_pending`](Self::has_pending)
    /// said so) and flushes it. `stall` is the write deadline: the longest the socket may take
    /// no bytes at all (an error of kind `TimedOut`), not the time for the whole batch, so a
    /// slow but steady reader is not cut (Go's write deadline measures the same).
    fn write_batch(
        &mut self,
        batch: &[u8],
        stall: Duration,
    ) -> impl Future<Output = io::Result<()>> + Send;

    /// Writes the transport's last word before the socket closes (a WebSocket close frame),
    /// after the final flush. `reason` is why the connection ends.
    fn write_close(
        &mut self,
        reason: Option<ClosedReason>,
    ) -> impl Future<Output = io::Result<()>> + Send {
        let _ = reason;
        std::future::ready(Ok(()))
    }

    /// Shuts the write side down.
    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// A socket read half used as is.
pub(crate) struct PlainRead<R>(pub R);

impl<R: AsyncRead + Unpin + Send> Inbound for PlainRead<R> {
    async fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<usize, ClosedReason> {
        read_socket(&mut self.0, buf).await
    }
}

/// A plain TCP connection's read half. Unlike [`PlainRead`] it can wait for input without a
/// buffer, so a quiet connection holds none.
pub(crate) struct TcpRead(pub OwnedReadHalf);

impl Inbound for TcpRead {
    const WAITS_WITHOUT_BUFFER: bool = true;

    async fn ready(&mut self) {
        // The socket's own reader wake-up slot (the one reads use), not a waiter of its own:
        // this future is part of every idle connection. An error here shows again on the read
        // that follows, which reports it.
        let socket: &tokio::net::TcpStream = self.0.as_ref();
        let _ = std::future::poll_fn(|cx| socket.poll_read_ready(cx)).await;
    }

    async fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<usize, ClosedReason> {
        read_socket(&mut self.0, buf).await
    }
}

/// One read into `buf`'s spare capacity; the end of the stream and errors are the reason the
/// connection ends.
async fn read_socket<R: AsyncRead + Unpin>(
    socket: &mut R,
    buf: &mut Vec<u8>,
) -> Result<usize, ClosedReason> {
    match socket.read_buf(buf).await {
        Ok(0) => Err(ClosedReason::ClientClosed),
        Ok(n) => Ok(n),
        // TLS: the peer closed without close_notify, at a record boundary; Go takes that as a
        // normal close.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(ClosedReason::ClientClosed),
        Err(_) => Err(ClosedReason::ReadError),
    }
}

/// A socket write half used as is. The flush after each write is free on a TCP socket; on TLS
/// it pushes out records the session still holds.
pub(crate) struct PlainWrite<W>(pub W);

impl<W: AsyncWrite + Unpin + Send> OutSink for PlainWrite<W> {
    async fn write_batch(&mut self, batch: &[u8], stall: Duration) -> io::Result<()> {
        write_all_progressing(&mut self.0, &mut [IoSlice::new(batch)], stall).await?;
        progressing(stall, self.0.flush()).await
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        self.0.shutdown().await
    }
}

/// Runs one socket operation that must make progress within `stall`; running out of time is an
/// error of kind `TimedOut`.
pub(crate) async fn progressing<T>(
    stall: Duration,
    op: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    tokio::time::timeout(stall, op)
        .await
        .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
}

/// Writes every slice, however the socket splits the writes, failing with `TimedOut` only when
/// one write call takes no bytes within `stall`: the deadline restarts with every byte taken.
pub(crate) async fn write_all_progressing<W: AsyncWrite + Unpin>(
    socket: &mut W,
    mut bufs: &mut [IoSlice<'_>],
    stall: Duration,
) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        let n = progressing(stall, socket.write_vectored(bufs)).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut bufs, n);
    }
    Ok(())
}
