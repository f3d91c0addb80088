//! Natrium's configuration: the NATS config language, typed server options with Go's names and
//! defaults, and the `nats-server` command line.
//!
//! Layout:
//! * [`lang`] — lexer and parser for the configuration language (includes, variables,
//!   environment, sizes, JSON syntax), producing a tree with the position of every key, plus
//!   Go's `sha256:` digest of that tree.
//! * [`options`] — [`ServerOptions`]: the tree applied to Go's option names, defaults and value
//!   checks, with Go's error wording; options Natrium does not implement yet are refused with
//!   [`ConfError::NotSupportedYet`].
//! * [`cli`] — Go `flag`-package compatible parsing of `nats-server`'s flags into a
//!   [`CliCommand`], and [`merge`] of flags over file options.
//! * [`reload`] — the comparison Go makes on a reload: the `Reloaded: …` lines in Go's
//!   order, and Go's refusal for the first option that cannot change.
//! * [`limits`] — Go's defaults (re-exported from `natrium-gofmt`) and this crate's parsing
//!   bounds.
//!
//! This is a leaf crate: no I/O beyond reading configuration files, no async runtime.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::dbg_macro,
    clippy::print_stdout,
    clippy::print_stderr
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod cli;
mod error;
pub mod lang;
pub mod limits;
pub mod options;
pub mod reload;

pub use cli::{merge, parse_args, CliCommand, CliError, Flags, SignalCommand};
pub use error::{ConfError, Position};
pub use options::{LoadedConfig, ServerOptions, UserOption};
