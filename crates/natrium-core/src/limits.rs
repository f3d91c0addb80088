//! Runtime limits that are not configuration options, each with the reason for its value.

use std::time::Duration;

/// A new connection's read buffer starts small so that idle connections stay cheap
/// (the Go server starts at 512 bytes too).
pub const READ_BUFFER_START_BYTES: usize = 512;
/// Reads grow the buffer up to this size while the peer keeps filling it.
pub const READ_BUFFER_MAX_BYTES: usize = 64 * 1024;
/// After this many consecutive short reads the buffer shrinks back toward the start size.
pub const READ_BUFFER_SHRINK_AFTER_SHORT_READS: u32 = 2;

/// After CONNECT the first PING goes out after `ping_interval` or this, whichever is shorter,
/// plus a random delay of up to a fifth of it, then every `ping_interval` (Go's
/// `firstClientPingInterval`). Before CONNECT the timer runs at `ping_interval`.
pub const FIRST_PING_INTERVAL: Duration = Duration::from_secs(2);

/// A PING measures the round trip; once one is this old the next timer tick sends a PING even
/// to a busy client (Go's `DEFAULT_RTT_MEASUREMENT_INTERVAL`). Otherwise a client that sent
/// data within the last `ping_interval` gets no PING.
pub const RTT_MEASUREMENT_INTERVAL: Duration = Duration::from_secs(3600);

/// "maximum subscriptions exceeded" is logged at most once per this period (Go rate-limits it
/// per account the same way), so that a client looping on SUB cannot flood the log.
pub const MAX_SUBS_LOG_INTERVAL: Duration = Duration::from_secs(2);

/// Parser errors log at most this many bytes of the offending input (Go's `PROTO_SNIPPET_SIZE`).
pub const PROTO_SNIPPET_BYTES: usize = 32;

/// A publisher whose subscriber's outbound buffer is over 3/4 of max_pending waits at most this
/// long for the writer to drain, per read batch, before carrying on (Go stalls 2–5 ms).
pub const PUBLISHER_STALL_MAX: Duration = Duration::from_millis(5);

/// Publishers wait once a subscriber has this much queued (or 3/4 of max_pending, if less):
/// the writer is busy anyway, and a smaller backlog keeps memory and latency down.
pub const OUTBOUND_STALL_BYTES_MAX: usize = 1024 * 1024;

/// When a subscriber has more than 8 × `OUTBOUND_STALL_BYTES_MAX` queued, a publisher waits up
/// to this long per batch instead. A subscriber that truly stopped reading still reaches
/// max_pending and is cut off; one that is merely behind catches up without holding memory.
pub const PUBLISHER_STALL_FAR_BEHIND_MAX: Duration = Duration::from_millis(100);

/// The writer keeps its spare buffer between flushes only up to this capacity, so that a burst
/// does not pin memory on an idle connection.
pub const OUTBOUND_SPARE_KEEP_BYTES: usize = 64 * 1024;

/// The writer keeps a buffer for the next batch only after writing at least this much: a busy
/// connection reuses its buffers, while one that writes a line now and then (the INFOs and
/// PONG after connecting, a reply) holds none between writes. A busy subscriber's batches are
/// larger (1–2 KiB with 16-byte messages as its writer keeps up); below this, growing a fresh
/// buffer costs a few small allocations per write syscall.
pub const OUTBOUND_REUSE_MIN_BATCH_BYTES: usize = 512;

/// Serialized INFO heads the server keeps: one per kind of listener (client, websocket), with
/// room for the old and new ones across a reload. A miss only costs one full serialization.
pub const INFO_HEADS_KEPT: usize = 4;

/// How many distinct subjects a connection remembers match results for.
pub const CLIENT_MATCH_CACHE_ENTRIES: usize = 128;

/// After a read batch has queued messages for this many target connections, the publisher
/// flushes (wakes their writers) right away instead of at the end of the batch.
pub const PENDING_FLUSH_TARGETS_MAX: usize = 1024;

/// How long a closing connection may spend writing what it still has queued (the -ERR line).
pub const CLOSE_FLUSH_DEADLINE: Duration = Duration::from_millis(500);

/// A client that answers the TLS handshake with something else (plain text) is closed; at most
/// this much of what it already sent is read first, so that the close is an orderly FIN (as
/// Go's is) rather than a reset that could eat the INFO the client has not read yet.
pub const NOT_TLS_DRAIN_BYTES_MAX: usize = 64 * 1024;

/// Messages an internal client (the system account's request handlers) may have waiting for
/// its handler task. Past it, requests are dropped and logged: a requester times out and
/// retries, which is better than stalling every publisher behind the system account.
pub const INTERNAL_INBOX_MSGS_MAX: usize = 256;

/// Client events (connects, disconnects) waiting for the system events task. Past it events
/// are dropped and counted, so that a burst of connections never blocks their accept path.
pub const CLIENT_EVENTS_QUEUED_MAX: usize = 4096;

/// How long shutdown waits for the system events task to publish the `SHUTDOWN` event before it
/// closes the connections anyway (Go waits for its send loop; a stuck one must not hang exit).
pub const SHUTDOWN_EVENT_WAIT: Duration = Duration::from_secs(2);

/// How long shutdown waits for the closed connections' tasks (each flushes within
/// `CLOSE_FLUSH_DEADLINE`) before services drain anyway.
pub const CONNECTIONS_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How long the services registered with `Server::on_drain` get, together, in shutdown's drain
/// phase (a store flushing and syncing). Past it shutdown goes on and says which are late.
pub const SERVICE_DRAIN_DEADLINE: Duration = Duration::from_secs(30);
