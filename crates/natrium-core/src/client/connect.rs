//! What a connection keeps of CONNECT (the document itself is decoded by
//! `nats_proto::connect`).

use nats_proto::connect::ConnectOptions;

/// The CONNECT options a connection consults after CONNECT, without its strings (names and
/// credentials are kept once, elsewhere: `ClientMeta` and the stored authentication).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectFlags {
    pub verbose: bool,
    pub pedantic: bool,
    pub headers: bool,
    pub protocol: i64,
}

impl Default for ConnectFlags {
    /// Go's defaults, as for a client that has not sent CONNECT yet.
    fn default() -> Self {
        ConnectFlags::of(&ConnectOptions::default())
    }
}

impl ConnectFlags {
    /// The options a connection keeps after CONNECT.
    pub(crate) fn of(opts: &ConnectOptions) -> Self {
        Self {
            verbose: opts.verbose,
            pedantic: opts.pedantic,
            headers: opts.headers,
            protocol: opts.protocol,
        }
    }
}
