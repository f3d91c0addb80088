//! The writer task: waits for the outbound buffer to be flushed, writes it in one call, and
//! enforces the write deadline: a peer that takes no bytes for that long is a slow consumer (a
//! slow but steady reader is not, however long a large batch takes it).
//! The transport (plain, TLS or WebSocket framing) is an [`OutSink`].

use std::sync::Arc;
use std::time::Duration;

use super::io::{OutSink, Stall};
use super::{ClientHandle, ClosedReason};
use crate::limits::{
    CLOSE_FLUSH_DEADLINE, OUTBOUND_REUSE_MIN_BATCH_BYTES, OUTBOUND_SPARE_KEEP_BYTES,
};

pub(crate) enum WriteOutcome {
    Ok,
    /// The write did not finish within the deadline; it had this many bytes to write.
    DeadlineExceeded {
        attempted: usize,
    },
    Failed,
}

/// Why the writer itself ended the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriterFailure {
    /// The peer did not take `attempted` bytes within the write deadline: a slow consumer.
    WriteDeadline {
        attempted: usize,
    },
    WriteError,
}

/// Writes everything queued until the buffer is empty.
async fn drain<W: OutSink>(
    client: &ClientHandle,
    socket: &mut W,
    spare: &mut Vec<u8>,
    deadline: Duration,
) -> WriteOutcome {
    let timer = std::pin::pin!(tokio::time::sleep(deadline));
    let mut stall = Stall::new(timer, deadline);
    loop {
        client.out.take(spare);
        if spare.is_empty() && !socket.has_pending() {
            client.out.written();
            return WriteOutcome::Ok;
        }
        let attempted = spare.len();
        stall.progressed();
        let result = socket.write_batch(spare, &mut stall).await;
        spare.clear();
        if spare.capacity() > OUTBOUND_SPARE_KEEP_BYTES
            || attempted < OUTBOUND_REUSE_MIN_BATCH_BYTES
        {
            // A quiet connection (the common idle case) then holds no outbound buffer at all:
            // this one is freed, and the empty one swapped in by the next `take` has none.
            *spare = Vec::new();
        }
        client.out.written();
        match result {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                return WriteOutcome::DeadlineExceeded { attempted };
            }
            Err(_) => return WriteOutcome::Failed,
        }
    }
}

/// Runs until the connection closes. Returns why, if the writer itself ended it. Generic over
/// the transport so that each gets its own compiled loop.
pub(crate) async fn run_writer<W: OutSink>(
    client: Arc<ClientHandle>,
    mut socket: W,
    write_deadline: Duration,
) -> Option<WriterFailure> {
    let mut spare = Vec::new();
    let mut failure = None;
    loop {
        tokio::select! {
            biased;
            () = client.out.wait_for_data() => {}
            () = client.closing.cancelled() => break,
        }
        match drain(&client, &mut socket, &mut spare, write_deadline).await {
            WriteOutcome::Ok => {}
            WriteOutcome::DeadlineExceeded { attempted } => {
                failure = Some(WriterFailure::WriteDeadline { attempted });
                break;
            }
            WriteOutcome::Failed => {
                failure = Some(WriterFailure::WriteError);
                break;
            }
        }
    }
    match failure {
        // Stop the read side too, now: a slow consumer that sends nothing would otherwise keep
        // its connection (and the report of why it ends) until it goes stale.
        Some(WriterFailure::WriteDeadline { .. }) => {
            client.close(ClosedReason::SlowConsumerWriteDeadline);
        }
        Some(WriterFailure::WriteError) => {
            client.close(ClosedReason::WriteError);
        }
        None => {}
    }
    if failure.is_none() {
        // Closing: write what is left (an -ERR, or pending messages on shutdown), briefly, then
        // the transport's last word.
        let reason = client.closed_reason();
        if reason.is_none_or(ClosedReason::flushes_on_close) {
            let _ = drain(&client, &mut socket, &mut spare, CLOSE_FLUSH_DEADLINE).await;
            let _ = tokio::time::timeout(CLOSE_FLUSH_DEADLINE, socket.write_close(reason)).await;
        }
    }
    let _ = tokio::time::timeout(CLOSE_FLUSH_DEADLINE, socket.shutdown()).await;
    failure
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::net::SocketAddr;

    use tokio_util::sync::CancellationToken;

    use super::*;

    /// A sink that takes every batch.
    struct Discard;

    impl OutSink for Discard {
        async fn write_batch(&mut self, _batch: &[u8], _stall: &mut Stall<'_>) -> io::Result<()> {
            Ok(())
        }

        async fn shutdown(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A connection that writes a line now and then (its INFO, a PONG) holds no outbound
    /// buffer between writes; a busy one keeps its buffers for the next batches.
    #[tokio::test]
    async fn writer_frees_buffers_after_small_batches_only() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 4222));
        let handle = ClientHandle::new(1, addr, 1 << 20, CancellationToken::new());
        let mut spare = Vec::new();
        let deadline = Duration::from_secs(5);
        handle.out.enqueue_proto(&[b'i'; 300]);
        let outcome = drain(&handle, &mut Discard, &mut spare, deadline).await;
        assert!(matches!(outcome, WriteOutcome::Ok));
        assert_eq!(handle.out.buffer_capacity() + spare.capacity(), 0);
        handle.out.enqueue_proto(&[b'm'; 4096]);
        let outcome = drain(&handle, &mut Discard, &mut spare, deadline).await;
        assert!(matches!(outcome, WriteOutcome::Ok));
        assert!(handle.out.buffer_capacity() + spare.capacity() >= 4096);
        assert_eq!(handle.out.pending_bytes(), 0);
    }
}
#[cfg(test)]
mod size_tests {
    /// The writer task is memory every connection holds while idle: 368 bytes before the write
    /// deadline measured progress, 552 with a timer per write call, 400 with one timer per
    /// drain and the time of the last progress.
    #[test]
    fn writer_task_stays_small() {
        use std::net::SocketAddr;
        use std::sync::Arc;
        let addr = SocketAddr::from(([127, 0, 0, 1], 4222));
        let closing = tokio_util::sync::CancellationToken::new();
        let handle = Arc::new(super::ClientHandle::new(1, addr, 1 << 20, closing));
        let socket = super::super::io::PlainWrite(tokio::io::sink());
        let writer = super::run_writer(handle, socket, std::time::Duration::from_secs(1));
        assert!(
            std::mem::size_of_val(&writer) <= 400,
            "{}",
            std::mem::size_of_val(&writer)
        );
    }
}
