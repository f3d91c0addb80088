//! Go's option defaults and this crate's own parsing bounds, as named constants with units last.
//!
//! The defaults are part of the drop-in contract and live in [`natrium_gofmt::defaults`], shared
//! with the runtime and the codecs; they are re-exported here under the names the options use.
//! The parsing bounds have no Go counterpart (Go recurses without limit and crashes on include
//! cycles); they exist so that a hostile or broken file produces an error instead of a stack
//! overflow.

pub use natrium_gofmt::defaults::{
    AUTH_TIMEOUT_SECS_DEFAULT, CONNECT_ERROR_REPORTS_DEFAULT, HOST_DEFAULT,
    LAME_DUCK_DURATION_DEFAULT, LAME_DUCK_DURATION_MIN, LAME_DUCK_GRACE_PERIOD_DEFAULT,
    MAX_CLOSED_CLIENTS_DEFAULT, MAX_CONNECTIONS_DEFAULT, MAX_CONTROL_LINE_BYTES_DEFAULT,
    MAX_PAYLOAD_BYTES_DEFAULT, MAX_PENDING_BYTES_DEFAULT, MAX_SUBSCRIPTIONS_DEFAULT,
    PING_INTERVAL_DEFAULT, PING_MAX_DEFAULT, PORT_DEFAULT, PORT_RANDOM,
    RECONNECT_ERROR_REPORTS_DEFAULT, TLS_HANDSHAKE_FIRST_FALLBACK_DEFAULT,
    TLS_TIMEOUT_SECS_DEFAULT, WRITE_DEADLINE_DEFAULT,
};

/// Deepest include chain. Go has no limit and dies of stack exhaustion on a cycle; we stop here.
pub const INCLUDE_DEPTH_MAX: usize = 32;
/// Deepest nesting of maps and arrays, so that the recursive JSON encoder and destructor stay
/// well inside the stack. Real configurations nest fewer than ten levels.
pub const NESTING_DEPTH_MAX: usize = 256;
/// Deepest chain of environment variables whose values reference further variables. Go recurses
/// without limit; a variable that names itself would otherwise never end.
pub const ENV_EXPANSION_DEPTH_MAX: usize = 16;
/// Largest configuration file (including each included file) we read.
pub const CONFIG_FILE_BYTES_MAX: u64 = 64 * 1024 * 1024;
