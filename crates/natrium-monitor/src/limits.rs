//! The monitoring listener's limits, as named constants with units last, each with the Go
//! server's value and why ours is what it is.
//!
//! A monitoring connection costs a file descriptor, and descriptors are shared with the client
//! port: without these bounds a few dozen silent sockets on the monitoring port lock every
//! NATS client out once the process reaches its descriptor limit.

use std::time::Duration;

/// How long a connection may take to deliver a request's line and headers, counted from the
/// moment the server starts waiting for them; then it is closed without an answer. Go's monitor
/// sets `ReadHeaderTimeout` to 5 s (observed: a silent or half-sent request is closed after
/// 5.0 s on plain and TLS ports).
///
/// It is also the keep-alive idle timeout: hyper runs this clock whenever it waits for a
/// request head, which includes the pause after a response. Go sets no idle timeout (a
/// keep-alive connection that goes quiet stays open until the client leaves), but an idle
/// socket holds a descriptor just as a silent one does, and HTTP clients reconnect by
/// themselves when the server closed an idle connection.
pub const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// How long an HTTPS client may take to send its first byte and finish the TLS handshake.
/// Go's `net/http` derives this from `ReadHeaderTimeout` (5 s, observed), not from the
/// server's `tls_timeout`.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = REQUEST_HEAD_TIMEOUT;

/// Most monitoring connections open at once, TLS handshakes included. Go has no cap. Ours
/// leaves room for scrapers, probes and dashboards (each holding one or two connections)
/// while bounding the descriptors the monitoring port can take from the client port.
///
/// Overflow rule: a connection beyond the cap is accepted and closed at once, without an
/// answer, so that it frees its descriptor immediately and the client sees the refusal
/// instead of waiting in the listen backlog.
pub const CONNECTIONS_MAX: usize = 64;

/// First pause after a failed `accept` (out of descriptors, typically) before trying again;
/// it doubles up to [`ACCEPT_RETRY_DELAY_MAX`] while accepting keeps failing. Go's `net/http`
/// backs off the same way (5 ms to 1 s) instead of spinning on the error.
pub const ACCEPT_RETRY_DELAY_MIN: Duration = Duration::from_millis(5);
/// Longest pause between failed `accept` attempts (Go's `net/http`: 1 s).
pub const ACCEPT_RETRY_DELAY_MAX: Duration = Duration::from_secs(1);

const _: () = assert!(ACCEPT_RETRY_DELAY_MIN.as_nanos() < ACCEPT_RETRY_DELAY_MAX.as_nanos());
const _: () = assert!(CONNECTIONS_MAX > 0);
