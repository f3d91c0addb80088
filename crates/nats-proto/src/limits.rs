//! Limits the parser enforces on peer-controlled sizes, with Go's option names and defaults.

use natrium_gofmt::defaults::{MAX_CONTROL_LINE_BYTES_DEFAULT, MAX_PAYLOAD_BYTES_DEFAULT};

/// Go's default `max_control_line`: the longest argument text a control line may carry.
pub const CONTROL_LINE_BYTES_MAX_DEFAULT: usize = MAX_CONTROL_LINE_BYTES_DEFAULT as usize;

/// Go's default `max_payload` (1 MiB): the largest `PUB`/`HPUB` size a client may announce.
pub const PAYLOAD_BYTES_MAX_DEFAULT: usize = MAX_PAYLOAD_BYTES_DEFAULT as usize;

/// Longest decimal size Go accepts in `PUB`/`HPUB`/`UNSUB`. A tenth digit makes the size invalid
/// (Go closes the connection without `-ERR`), even for `0000000005`. Nine digits also keep every
/// accepted size below 10^9, so size arithmetic cannot overflow even on 32-bit targets.
pub const SIZE_DIGITS_MAX: usize = 9;

// Any payload limit a config can express must be reachable with nine digits, or `PUB` could
// never be rejected with "Maximum Payload Violation" for sizes between the two.
const _: () = assert!(PAYLOAD_BYTES_MAX_DEFAULT < 999_999_999);

/// The sizes the parser checks before anything is buffered beyond them.
///
/// Field names follow the Go config options `max_control_line` and `max_payload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParserLimits {
    /// Longest control-line argument text in bytes (the text after the verb and the blanks that
    /// follow it, without the line ending). Go's default is 4096.
    pub max_control_line: usize,
    /// Largest payload a `PUB` (size) or `HPUB` (total size) may announce. Go's default is 1 MiB.
    pub max_payload: usize,
}

impl Default for ParserLimits {
    fn default() -> Self {
        Self {
            max_control_line: CONTROL_LINE_BYTES_MAX_DEFAULT,
            max_payload: PAYLOAD_BYTES_MAX_DEFAULT,
        }
    }
}
