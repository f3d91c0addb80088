//! The writer task: waits for the outbound buffer to be flushed, writes it in one call, and
//! enforces the write deadline (a peer that does not read for that long is a slow consumer).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;

use super::{ClientHandle, ClosedReason};
use crate::limits::{CLOSE_FLUSH_DEADLINE, OUTBOUND_SPARE_KEEP_BYTES};

pub(crate) enum WriteOutcome {
    Ok,
    DeadlineExceeded,
    Failed,
}

/// Writes everything queued until the buffer is empty.
async fn drain(
    client: &ClientHandle,
    socket: &mut OwnedWriteHalf,
    spare: &mut Vec<u8>,
    deadline: Duration,
) -> WriteOutcome {
    loop {
        client.out.take(spare);
        if spare.is_empty() {
            client.out.written();
            return WriteOutcome::Ok;
        }
        let result = tokio::time::timeout(deadline, socket.write_all(spare)).await;
        spare.clear();
        if spare.capacity() > OUTBOUND_SPARE_KEEP_BYTES {
            *spare = Vec::new();
        }
        client.out.written();
        match result {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return WriteOutcome::Failed,
            Err(_) => return WriteOutcome::DeadlineExceeded,
        }
    }
}

/// Runs until the connection closes. Returns the reason if the writer itself closed it.
pub(crate) async fn run_writer(
    client: Arc<ClientHandle>,
    mut socket: OwnedWriteHalf,
    write_deadline: Duration,
) -> Option<ClosedReason> {
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
            WriteOutcome::DeadlineExceeded => {
                failure = Some(ClosedReason::SlowConsumerWriteDeadline);
                break;
            }
            WriteOutcome::Failed => {
                failure = Some(ClosedReason::WriteError);
                break;
            }
        }
    }
    if failure.is_none() {
        // Closing: write what is left (an -ERR, or pending messages on shutdown), briefly.
        let flushes = client
            .closed_reason()
            .is_none_or(ClosedReason::flushes_on_close);
        if flushes {
            let _ = drain(&client, &mut socket, &mut spare, CLOSE_FLUSH_DEADLINE).await;
        }
    }
    let _ = tokio::time::timeout(CLOSE_FLUSH_DEADLINE, socket.shutdown()).await;
    failure
}
