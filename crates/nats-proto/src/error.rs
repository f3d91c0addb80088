//! The parser's error type: one variant per way Go rejects a client's bytes.
//!
//! Every `ProtoError` closes the connection in Go. Which ones first send an `-ERR` is decided in
//! one place, [`ProtoError::wire_error`](crate::ProtoError::wire_error) in `wire_error`.

use std::fmt;

/// The verbs whose arguments are split into fields, named in [`ProtoError`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `PUB subject [reply] size`
    Pub,
    /// `HPUB subject [reply] header_size total_size`
    Hpub,
    /// `SUB subject [queue] sid`
    Sub,
    /// `UNSUB sid [max_msgs]`
    Unsub,
}

impl Verb {
    /// The verb as it appears on the wire, upper case.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verb::Pub => "PUB",
            Verb::Hpub => "HPUB",
            Verb::Sub => "SUB",
            Verb::Unsub => "UNSUB",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a client's bytes could not be parsed. Go closes the connection for every one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// The bytes do not start a known verb (also: an empty line, leading blanks, a verb glued to
    /// its first argument such as `PUBfoo`, a verb that needs arguments followed by CR/LF, or
    /// `MSG` from a client).
    #[error("unknown protocol operation")]
    UnknownOp,
    /// The argument text of a control line is longer than `max_control_line`, whether or not
    /// its line end has arrived.
    #[error("maximum control line exceeded")]
    ControlLineTooLong,
    /// `PUB` size or `HPUB` total size above `max_payload`.
    #[error("maximum payload exceeded: {size} vs {max}")]
    PayloadTooLarge {
        /// The size the client announced.
        size: usize,
        /// The configured `max_payload`.
        max: usize,
    },
    /// Wrong number of arguments (missing or too many).
    #[error("{0} parse error: wrong number of arguments")]
    BadArgs(Verb),
    /// A size field that is not 1 to 9 ASCII digits (negative, signed, empty, too long).
    #[error("{0} parse error: bad or missing size")]
    BadSize(Verb),
    /// `HPUB` whose header size is larger than its total size.
    #[error("HPUB header size {hdr} larger than total size {total}")]
    HeaderSizeExceedsTotal {
        /// Announced header size.
        hdr: usize,
        /// Announced total size.
        total: usize,
    },
    /// The bytes right after a `PUB`/`HPUB` payload are not CR LF.
    #[error("message payload not followed by CRLF")]
    PayloadNotTerminated,
}

impl ProtoError {
    /// Whether Go closes the connection for this error. Always true; kept as a method so the
    /// runtime states the decision through the codec rather than assuming it.
    pub const fn closes_connection(&self) -> bool {
        true
    }
}
