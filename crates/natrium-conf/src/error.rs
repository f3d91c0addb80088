//! Configuration errors, worded and positioned exactly as `nats-server -t` reports them.
//!
//! Go has three families of messages and we keep them apart because they print differently:
//! syntax errors from the lexer (`Parse error on line N: '…'`, no file, no column), parser
//! errors that name a file or a line in their own ad-hoc way, and errors found while applying
//! options (`file:line:col: message`), which Go collects into one list (warnings first) and
//! prints followed by an empty line. [`ConfError::go_report`] reproduces that output byte for
//! byte; `Display` gives the same text without the prefix and trailing newlines.

use std::fmt;
use std::sync::Arc;

/// Where a key or value starts: the file as Go names it, the line (1-based) and Go's column.
///
/// Go's column is a byte count with a quirk we keep on purpose: on the first line of a file it
/// is the 0-based byte offset, on every later line it is 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// File path as given (for includes: joined to the including file's directory).
    pub file: Arc<str>,
    /// 1-based line.
    pub line: usize,
    /// Go's column (see the type documentation).
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Everything that can go wrong reading a configuration file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfError {
    /// The file could not be opened or read: `open f.conf: no such file or directory`.
    #[error("{op} {path}: {reason}")]
    Io {
        /// `open` or `read`, as in Go's `*PathError`.
        op: &'static str,
        /// The path as Go would print it.
        path: String,
        /// Go's lower-case system error text.
        reason: String,
    },
    /// A lexer error: `Parse error on line 3: 'Unexpected EOF.'`.
    #[error("Parse error on line {line}: '{message}'")]
    Syntax {
        /// File being lexed (Go does not print it, we keep it for callers).
        file: Arc<str>,
        /// Line the lexer had reached.
        line: usize,
        /// Go's message.
        message: String,
    },
    /// A key without a value at the end of the file: `config is invalid (f.conf:1:4)`.
    #[error("config is invalid ({file}:{line}:{column})")]
    MissingValue {
        /// File name.
        file: Arc<str>,
        /// Line of the end of the file.
        line: usize,
        /// Go column of the end of the file.
        column: usize,
    },
    /// Nothing but comments and blanks: `f.conf: config has no values or is empty`.
    #[error("{file}: config has no values or is empty")]
    Empty {
        /// File name.
        file: Arc<str>,
    },
    /// `$name` matches no earlier key in scope and no environment variable.
    #[error("variable reference for '{name}' on line {line} can not be found")]
    UndefinedVariable {
        /// File holding the reference.
        file: Arc<str>,
        /// Variable name without the `$`.
        name: String,
        /// Line of the reference.
        line: usize,
    },
    /// An environment variable's value is not a valid configuration value.
    #[error("variable reference for '{name}' on line {line} could not be parsed: {source}")]
    BadEnvVariable {
        /// Variable name without the `$`.
        name: String,
        /// Line of the reference.
        line: usize,
        /// Why the value did not parse.
        source: Box<ConfError>,
    },
    /// Environment variables referencing each other too deeply (our limit; Go overflows).
    #[error("variable reference for '{name}' on line {line} expands more than {max} levels deep")]
    EnvTooDeep {
        /// Variable name without the `$`.
        name: String,
        /// Line of the reference.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// An integer literal that does not fit in 64 bits: `integer '99…9' is out of the range`.
    #[error("integer '{text}' is out of the range")]
    IntegerRange {
        /// Literal as written, suffix included.
        text: String,
        /// Where it is.
        pos: Position,
    },
    /// A float literal too large for 64 bits.
    #[error("float '{text}' is out of the range")]
    FloatRange {
        /// Literal as written.
        text: String,
        /// Where it is.
        pos: Position,
    },
    /// A date that has the right shape but does not exist (month 13, February 30).
    #[error("expected Zulu formatted DateTime, but got '{text}'")]
    BadDatetime {
        /// Literal as written.
        text: String,
        /// Where it is.
        pos: Position,
    },
    /// An included file failed to lex or parse: `error parsing include file 'x.conf', …`.
    #[error("error parsing include file '{include}', {source}")]
    Include {
        /// The path as written after `include`.
        include: String,
        /// What went wrong inside it.
        source: Box<ConfError>,
    },
    /// Includes nested deeper than our limit (a cycle, in practice).
    #[error("error parsing include file '{include}', includes nested more than {max} levels deep")]
    IncludeTooDeep {
        /// The path as written after `include`.
        include: String,
        /// The limit.
        max: usize,
    },
    /// Maps and arrays nested deeper than our limit.
    #[error("{pos}: maps and arrays nested more than {max} levels deep")]
    TooDeep {
        /// Where the limit was crossed.
        pos: Position,
        /// The limit.
        max: usize,
    },
    /// A key no version of the Go server knows: `f.conf:1:0: unknown field "foo"`.
    #[error("{pos}: unknown field {}", natrium_gofmt::go_quote(.field))]
    UnknownField {
        /// Position of the key.
        pos: Position,
        /// The key as written.
        field: String,
    },
    /// An option Go knows but Natrium does not implement yet; the server refuses to start.
    #[error("{file}:{line}:{column}: option \"{option}\" is not supported yet")]
    NotSupportedYet {
        /// File name.
        file: Arc<str>,
        /// Line of the key.
        line: usize,
        /// Go column of the key.
        column: usize,
        /// The option, with its block for nested ones (`authorization.users`).
        option: String,
    },
    /// A known option with a bad value, in Go's words: `f.conf:1:0: interface conversion: …`.
    #[error("{pos}: {message}")]
    Invalid {
        /// Position of the key.
        pos: Position,
        /// Go's message.
        message: String,
    },
    /// An option error Go reports without a position: its reader had already let go of the
    /// value's token (old-style permission lists: `subject "a b" is not a valid subject`).
    #[error("{message}")]
    Unpositioned {
        /// Go's message.
        message: String,
    },
    /// A check Go makes when the server starts, not while reading the file:
    /// `max_payload (…) cannot be higher than max_pending (…)`.
    #[error("{message}")]
    Validation {
        /// Go's message.
        message: String,
    },
    /// Several option errors, printed one per line, warnings first, like Go.
    #[error("{}", join_lines(.0))]
    Many(Vec<ConfError>),
}

fn join_lines(errors: &[ConfError]) -> String {
    let mut out = String::new();
    for (i, e) in errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&e.to_string());
    }
    out
}

impl ConfError {
    /// Whether Go prints this error from its option-processing list, which it follows with an
    /// empty line.
    pub fn is_processing_error(&self) -> bool {
        matches!(
            self,
            Self::UnknownField { .. }
                | Self::NotSupportedYet { .. }
                | Self::Invalid { .. }
                | Self::Unpositioned { .. }
                | Self::Many(_)
                | Self::Empty { .. }
                | Self::TooDeep { .. }
        )
    }

    /// Exactly what `nats-server` writes to standard error for this error before exiting:
    /// `nats-server: <message>\n`, plus the empty line Go adds after option errors.
    pub fn go_report(&self) -> String {
        let mut out = format!("nats-server: {self}\n");
        if self.is_processing_error() {
            out.push('\n');
        }
        out
    }

    /// The individual errors (one for anything but [`ConfError::Many`]).
    pub fn errors(&self) -> Vec<&ConfError> {
        match self {
            Self::Many(list) => list.iter().collect(),
            other => vec![other],
        }
    }

    /// Combines a list of warnings and errors into one error, warnings first, as Go does.
    /// Returns `None` when both lists are empty.
    pub fn combine(mut warnings: Vec<ConfError>, errors: Vec<ConfError>) -> Option<ConfError> {
        warnings.extend(errors);
        match warnings.len() {
            0 => None,
            1 => warnings.pop(),
            _ => Some(Self::Many(warnings)),
        }
    }
}

/// Go's lower-case text for an I/O error, as its `syscall.Errno` strings read.
pub(crate) fn go_io_reason(err: &std::io::Error) -> String {
    let known = match err.raw_os_error() {
        Some(2) => Some("no such file or directory"),
        Some(13) => Some("permission denied"),
        Some(20) => Some("not a directory"),
        Some(21) => Some("is a directory"),
        Some(36) => Some("file name too long"),
        Some(40) => Some("too many levels of symbolic links"),
        _ => None,
    };
    if let Some(text) = known {
        return text.to_owned();
    }
    let text = err.to_string();
    let text = match text.find(" (os error") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_owned(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: usize, column: usize) -> Position {
        Position {
            file: Arc::from("f.conf"),
            line,
            column,
        }
    }

    #[test]
    fn error_unknown_field_report_has_blank_line() {
        let e = ConfError::UnknownField {
            pos: pos(1, 0),
            field: "foo".into(),
        };
        assert_eq!(
            e.go_report(),
            "nats-server: f.conf:1:0: unknown field \"foo\"\n\n"
        );
    }

    #[test]
    fn error_syntax_report_has_no_blank_line() {
        let e = ConfError::Syntax {
            file: Arc::from("f.conf"),
            line: 2,
            message: "Unexpected EOF.".into(),
        };
        assert_eq!(
            e.go_report(),
            "nats-server: Parse error on line 2: 'Unexpected EOF.'\n"
        );
    }

    #[test]
    fn error_many_joins_lines_warnings_first() {
        let w = ConfError::Invalid {
            pos: pos(2, 1),
            message: "warn".into(),
        };
        let e = ConfError::UnknownField {
            pos: pos(1, 0),
            field: "a".into(),
        };
        let all = ConfError::combine(vec![w], vec![e]);
        let text = all.map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(text, "f.conf:2:1: warn\nf.conf:1:0: unknown field \"a\"");
        assert!(ConfError::combine(Vec::new(), Vec::new()).is_none());
    }

    #[test]
    fn error_io_reason_matches_go() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(go_io_reason(&e), "no such file or directory");
        let e = std::io::Error::from_raw_os_error(21);
        assert_eq!(go_io_reason(&e), "is a directory");
    }
}
