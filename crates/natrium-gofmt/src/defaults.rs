//! Go's option defaults: the value the Go server uses when an option is absent, each with Go's
//! constant name (`server/const.go`, `server/opts.go`) and Go's type for the option (`int32`
//! sizes stay `i32`, durations are `Duration`, `auth_timeout` is float seconds).
//!
//! These are part of the drop-in contract (checked against `nats-server` v2.15.x through
//! `/varz`). The configuration fills its options from them; the runtime, the protocol codec and
//! the WebSocket codec take their own defaults from the same constants, converted to the sizes
//! they work in.

use std::time::Duration;

/// Client port when none is configured (`DEFAULT_PORT`).
pub const PORT_DEFAULT: i64 = 4222;
/// Port value meaning "pick a free port" (`RANDOM_PORT`).
pub const PORT_RANDOM: i64 = -1;
/// Interface the client listener binds when none is configured (`DEFAULT_HOST`).
pub const HOST_DEFAULT: &str = "0.0.0.0";
/// Largest message payload a client may publish (`MAX_PAYLOAD_SIZE`, 1 MiB).
pub const MAX_PAYLOAD_BYTES_DEFAULT: i32 = 1024 * 1024;
/// Longest protocol control line (`MAX_CONTROL_LINE_SIZE`).
pub const MAX_CONTROL_LINE_BYTES_DEFAULT: i32 = 4096;
/// Most client connections (`DEFAULT_MAX_CONNECTIONS`, 64 Ki).
pub const MAX_CONNECTIONS_DEFAULT: i64 = 64 * 1024;
/// Most subscriptions per connection; 0 means unlimited.
pub const MAX_SUBSCRIPTIONS_DEFAULT: i64 = 0;
/// Most bytes buffered for one client before it is a slow consumer (`MAX_PENDING_SIZE`).
pub const MAX_PENDING_BYTES_DEFAULT: i64 = 64 * 1024 * 1024;
/// Interval between server PINGs (`DEFAULT_PING_INTERVAL`).
pub const PING_INTERVAL_DEFAULT: Duration = Duration::from_secs(2 * 60);
/// Unanswered PINGs before the connection is closed as stale (`DEFAULT_PING_MAX_OUT`).
pub const PING_MAX_DEFAULT: i64 = 2;
/// How long a flush to a client may block (`DEFAULT_FLUSH_DEADLINE`).
pub const WRITE_DEADLINE_DEFAULT: Duration = Duration::from_secs(10);
/// How long a client has to send CONNECT, in seconds (`AUTH_TIMEOUT`).
pub const AUTH_TIMEOUT_SECS_DEFAULT: f64 = 2.0;
/// Seconds a client has to complete the TLS handshake (`TLS_TIMEOUT`).
pub const TLS_TIMEOUT_SECS_DEFAULT: f64 = 2.0;
/// `handshake_first: auto` waits this long for a client's TLS handshake before sending INFO
/// in plain text (`DEFAULT_TLS_HANDSHAKE_FIRST_FALLBACK_DELAY`).
pub const TLS_HANDSHAKE_FIRST_FALLBACK_DEFAULT: Duration = Duration::from_millis(50);
/// Lame-duck mode spreads client closes over this long (`DEFAULT_LAME_DUCK_DURATION`).
pub const LAME_DUCK_DURATION_DEFAULT: Duration = Duration::from_secs(2 * 60);
/// Go refuses a lame-duck duration shorter than this.
pub const LAME_DUCK_DURATION_MIN: Duration = Duration::from_secs(30);
/// Wait before lame-duck mode starts closing clients (`DEFAULT_LAME_DUCK_GRACE_PERIOD`).
pub const LAME_DUCK_GRACE_PERIOD_DEFAULT: Duration = Duration::from_secs(10);
/// Report every Nth failed connect attempt (`DEFAULT_CONNECT_ERROR_REPORTS`).
pub const CONNECT_ERROR_REPORTS_DEFAULT: i64 = 3600;
/// Report every Nth failed reconnect attempt (`DEFAULT_RECONNECT_ERROR_REPORTS`).
pub const RECONNECT_ERROR_REPORTS_DEFAULT: i64 = 1;
/// Closed connections remembered for `/connz?state=closed` (`DEFAULT_MAX_CLOSED_CLIENTS`).
pub const MAX_CLOSED_CLIENTS_DEFAULT: i64 = 10_000;

const _: () = assert!(LAME_DUCK_DURATION_DEFAULT.as_secs() >= LAME_DUCK_DURATION_MIN.as_secs());
const _: () = assert!(MAX_PAYLOAD_BYTES_DEFAULT as i64 <= MAX_PENDING_BYTES_DEFAULT);
const _: () = assert!(MAX_CONTROL_LINE_BYTES_DEFAULT > 0);
const _: () = assert!(MAX_PAYLOAD_BYTES_DEFAULT > 0);
