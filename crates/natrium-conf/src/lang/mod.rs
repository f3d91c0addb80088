//! The NATS configuration language: lexer, parser, value tree, and Go's digest of it.
//!
//! The tree is what Go's parser builds, quirks included: keys wait on one stack shared by all
//! blocks, so `a { b }` yields a top-level `b` holding `{}`; a value with an unknown size
//! suffix (`1kbb`) vanishes; `[1]` is an error because `1]` lexes as a string. The differential
//! test data under `tests/data/` pins these behaviours to the Go binary's.
//!
//! Entry points: [`parse_file`] for a file on disk (includes resolved relative to it, `$VAR`
//! falling back to the process environment), [`parse_str`] for text, and
//! [`parse_str_with_env`] to supply the environment explicitly (tests, embedding).

mod gojson;
mod lexer;
mod parser;
pub(crate) mod source;
mod token;
mod value;

pub(crate) use gojson::format_float;
pub use gojson::{config_digest, to_go_json};
pub use parser::EnvLookup;
pub use value::{Datetime, Entry, Map, Node, Value};

use crate::error::ConfError;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Parses the file at `path`. Errors name the file as given, as Go does.
pub fn parse_file(path: &str) -> Result<Map, ConfError> {
    let text = source::read(path)?;
    parse_str_with_env(&text, path, &process_env)
}

/// Parses `src` as if it were the contents of the file `file` (which anchors includes and
/// names positions), looking variables up in the process environment.
pub fn parse_str(src: &str, file: &str) -> Result<Map, ConfError> {
    parse_str_with_env(src, file, &process_env)
}

/// Parses `src` with `env` answering `$NAME` references not defined in the file.
pub fn parse_str_with_env(src: &str, file: &str, env: EnvLookup<'_>) -> Result<Map, ConfError> {
    parser::Parser::new(file, env).parse(src)
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
