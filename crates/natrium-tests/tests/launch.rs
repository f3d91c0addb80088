//! The launch contract (issue 2): every way client-library harnesses and operators' scripts
//! start, find, signal and stop `nats-server` works with ours, and — where the Go reference
//! server is installed (`NATS_GO_SERVER`) — behaves as Go's does: the same log lines (modulo
//! pids, times, ids and ports), the same files with the same contents, the same error text and
//! exit status.
//!
//! Synchronisation is by events: log lines, process exit, end-of-file on a socket. Files are
//! polled (bounded, short waits) only where no event exists: Go writes its ports file in the
//! background after `Server is ready`, and a log file is not a stream we can follow.
//!
//! Layout: [`support`] (helpers), [`listen`], [`ports`], [`files`], [`signals`], [`config`],
//! [`inert`] (options for features Natrium lacks: accepted while they change nothing, or refused).

#[path = "launch/config.rs"]
mod config;
#[path = "launch/files.rs"]
mod files;
#[path = "launch/inert.rs"]
mod inert;
#[path = "launch/listen.rs"]
mod listen;
#[path = "launch/ports.rs"]
mod ports;
#[path = "launch/signals.rs"]
mod signals;
#[path = "launch/support.rs"]
mod support;
