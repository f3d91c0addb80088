//! The transport a client connection runs over, as two small traits: [`Inbound`] gives the
//! read loop NATS protocol bytes, [`OutSink`] takes the writer's batches. Plain TCP and TLS
//! use [`PlainRead`] (plain TCP: [`TcpRead`], which can also wait for input without holding a
//! buffer) and [`PlainWrite`], which do exactly what the loops did before the traits existed
//! (one `read_buf`, one `write_all` and `flush`); WebSocket connections use the framing
//! adapters in `crate::ws`. The loops are generic over these traits, so every transport gets its
//! own compiled copy and the plain one pays nothing for the others.

use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::time::{Instant, Sleep};

use super::ClosedReason;

/// Where the read loop gets protocol bytes from.
pub trait Inbound: Send {
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
pub trait OutSink: Send {
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
        stall: &mut Stall<'_>,
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
pub struct PlainRead<R>(pub R);

impl<R: AsyncRead + Unpin + Send> Inbound for PlainRead<R> {
    async fn read_into(&mut self, buf: &mut Vec<u8>) -> Result<usize, ClosedReason> {
        read_socket(&mut self.0, buf).await
    }
}

/// A plain TCP connection's read half. Unlike [`PlainRead`] it can wait for input without a
/// buffer, so a quiet connection holds none.
pub struct TcpRead(pub OwnedReadHalf);

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
pub struct PlainWrite<W>(pub W);

impl<W: AsyncWrite + Unpin + Send> OutSink for PlainWrite<W> {
    async fn write_batch(&mut self, batch: &[u8], stall: &mut Stall<'_>) -> io::Result<()> {
        stall.write_one(&mut self.0, batch).await
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        self.0.shutdown().await
    }
}

/// A write deadline that measures a lack of progress: one timer for a whole drain, consulted
/// only when the socket makes the writer wait. Progress just records the time; when the timer
/// fires, it is moved to `every` after the last progress unless that has passed. So a write
/// that completes at once never touches the timer wheel, and the writer task (which every
/// connection holds) carries one timer, not one per write call.
pub struct Stall<'a> {
    timer: Pin<&'a mut Sleep>,
    every: Duration,
    last_progress: Instant,
}

impl<'a> Stall<'a> {
    /// `timer` must have been made `every` from now (`tokio::time::sleep(every)`).
    pub(crate) fn new(timer: Pin<&'a mut Sleep>, every: Duration) -> Self {
        Self {
            timer,
            every,
            last_progress: Instant::now(),
        }
    }

    /// The socket took bytes, or a new batch starts: the deadline starts again.
    pub(crate) fn progressed(&mut self) {
        self.last_progress = Instant::now();
    }

    /// The timer's verdict while the socket is not ready: `TimedOut` once it fired.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = self.last_progress + self.every;
            if Instant::now() >= due {
                return Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
            }
            // There was progress since the timer was set: wait until `every` after it.
            self.timer.as_mut().reset(due);
        }
    }

    /// What one poll of a write gave: the bytes the socket took (progress), or the answer the
    /// whole write gives now.
    fn took(
        &mut self,
        polled: Poll<io::Result<usize>>,
        cx: &mut Context<'_>,
    ) -> Result<usize, Poll<io::Result<()>>> {
        match polled {
            Poll::Ready(Ok(0)) => Err(Poll::Ready(Err(io::ErrorKind::WriteZero.into()))),
            Poll::Ready(Ok(n)) => {
                self.progressed();
                Ok(n)
            }
            Poll::Ready(Err(err)) => Err(Poll::Ready(Err(err))),
            Poll::Pending => Err(self.poll_expired(cx)),
        }
    }

    /// The flush that ends a write, within the deadline.
    fn poll_finish<W: AsyncWrite + Unpin>(
        &mut self,
        socket: &mut W,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(socket).poll_flush(cx) {
            Poll::Ready(done) => Poll::Ready(done),
            Poll::Pending => self.poll_expired(cx),
        }
    }

    /// Writes `buf`, however the socket splits the writes, then flushes; as
    /// [`Stall::write_all`] for one buffer.
    pub(crate) fn write_one<'s, W: AsyncWrite + Unpin>(
        &'s mut self,
        socket: &'s mut W,
        buf: &'s [u8],
    ) -> impl Future<Output = io::Result<()>> + use<'s, 'a, W> {
        let mut rest = buf;
        std::future::poll_fn(move |cx| {
            while !rest.is_empty() {
                match self.took(Pin::new(&mut *socket).poll_write(cx, rest), cx) {
                    Ok(n) => rest = rest.get(n..).unwrap_or_default(),
                    Err(answer) => return answer,
                }
            }
            self.poll_finish(socket, cx)
        })
    }

    /// Writes every slice, however the socket splits the writes, then flushes; fails with
    /// `TimedOut` only when the socket takes no bytes for the stall's period. One poll function
    /// over the socket's own poll methods, so the writer task (which every connection holds)
    /// grows by a few machine words, not by nested futures.
    pub(crate) async fn write_all<W: AsyncWrite + Unpin>(
        &mut self,
        socket: &mut W,
        mut bufs: &mut [IoSlice<'_>],
    ) -> io::Result<()> {
        IoSlice::advance_slices(&mut bufs, 0);
        std::future::poll_fn(|cx| {
            while !bufs.is_empty() {
                match self.took(Pin::new(&mut *socket).poll_write_vectored(cx, bufs), cx) {
                    Ok(n) => IoSlice::advance_slices(&mut bufs, n),
                    Err(answer) => return answer,
                }
            }
            self.poll_finish(socket, cx)
        })
        .await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use tokio::io::AsyncReadExt;

    use super::*;

    /// Paused clock: a reader taking 64 bytes every half second drains a 1 KiB batch in 8 s
    /// without the 1 s deadline firing; with nobody reading, the next batch times out at 1 s.
    #[tokio::test(start_paused = true)]
    async fn stall_deadline_measures_lack_of_progress() {
        let (mut socket, mut peer) = tokio::io::duplex(64);
        let every = Duration::from_secs(1);
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 64];
            let mut total = 0;
            while total < 1024 {
                tokio::time::sleep(Duration::from_millis(500)).await;
                total += peer.read(&mut buf).await.unwrap();
            }
            peer
        });
        let started = Instant::now();
        let timer = std::pin::pin!(tokio::time::sleep(every));
        let mut stall = Stall::new(timer, every);
        stall.write_one(&mut socket, &[7u8; 1024]).await.unwrap();
        assert!(started.elapsed() >= Duration::from_secs(7));
        let _peer = reader.await.unwrap();
        let started = Instant::now();
        let timer = std::pin::pin!(tokio::time::sleep(every));
        let mut stall = Stall::new(timer, every);
        let err = stall
            .write_one(&mut socket, &[7u8; 1024])
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), every);
    }
}
