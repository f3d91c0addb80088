//! The Go server's texts and defaults that more than one layer reproduces, in one place so that
//! copies cannot drift: `time.Duration` strings both ways ([`go_duration`],
//! [`parse_go_duration`]), `%q` quoting ([`go_quote`] and its byte and streaming forms), and
//! the defaults of the options every layer reads ([`defaults`]), and `encoding/json`'s escapes
//! ([`json`]).
//!
//! Why a crate of its own: the users span every layer — the protocol codec (`-ERR` texts quote
//! subjects), the configuration and authorization leaves (error messages, debug lines), the
//! runtime (log lines), monitoring (durations in JSON) and the binary (reload lines) — and no
//! existing leaf is a dependency of all of them. This one depends on no other crate, so every
//! crate may use it without bending the layering rule (leaves depend on no runtime crate and
//! not on tokio).
//!
//! Layout: `duration.rs` (format and parse), `quote.rs` (`strconv.Quote`, `QuoteRune`),
//! `printable_table.rs` (Go's `strconv.IsPrint`, generated from the Go toolchain by
//! `gen-go-data.sh`, which also records the quoting vectors under `tests/data`),
//! `defaults.rs` (Go's option defaults with Go's types).
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

pub mod defaults;
mod duration;
pub mod json;
mod printable_table;
mod quote;
pub mod time;

pub use duration::{
    duration_to_nanos, go_duration, go_duration_nanos, nanos_to_duration, parse_go_duration,
};
pub use quote::{go_quote, go_quote_bytes, go_quote_rune, is_go_printable, write_go_quoted};
