//! Tokens the lexer hands to the parser, and the lexer's error.

/// What a token is. Scalars keep their source text; the parser converts them, because Go
/// reports conversion failures (integer range, impossible dates) from its parser, not its lexer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokKind {
    /// A key, quotes removed.
    Key(String),
    /// A quoted, unquoted or block string, escapes resolved.
    Str(String),
    /// An integer, sign and size suffix included (`-1k`, `64MB`).
    Int(String),
    /// A float such as `1.5`.
    Float(String),
    /// `true`, `yes`, `on`, `false`, `no`, `off` in any case.
    Bool(bool),
    /// `2016-05-04T18:53:41Z`, shape already checked.
    Datetime(String),
    /// `$name`, without the dollar.
    Variable(String),
    /// `include path`, the path as written.
    Include(String),
    /// `[`
    ArrayStart,
    /// `]`
    ArrayEnd,
    /// `{` as a value.
    MapStart,
    /// `}` closing a map value.
    MapEnd,
    /// End of input.
    Eof,
}

/// A token and where it starts (Go's line and column rules, see [`crate::Position`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) kind: TokKind,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// A lexer error: Go stops at the first one and reports the line it had reached.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LexError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

/// Go prints the offending character with `%c`, except that it spells a newline `\n`; the end
/// of input is the NUL character.
pub(crate) fn show_char(c: Option<char>) -> String {
    match c {
        None => "\0".to_owned(),
        Some('\n') => "\\n".to_owned(),
        Some(c) => c.to_string(),
    }
}
