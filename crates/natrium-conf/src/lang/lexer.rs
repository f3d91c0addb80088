//! The configuration lexer: source text in, a flat list of tokens (or the first error) out.
//!
//! The grammar is whatever the Go server's lexer accepts, quirks included, because the same
//! file must be accepted or refused by both servers with the same message. The rules below were
//! established by feeding edge cases to `nats-server -t` (see `tests/data/`):
//!
//! * A key ends at blanks, a newline, `:` or `=`; one separator at most, and a newline is allowed
//!   between key and value only when there is no separator.
//! * An unquoted string ends at blanks, a newline, `,`, `;`, `}` or `]`; `#`, `//` and `{`
//!   inside it are ordinary characters, and backslash escapes work as in double quotes.
//! * Values starting with a digit are integers, sizes (`1k`, `2MiB`), floats, dates, or, when
//!   other characters follow, strings (`127.0.0.1`, `12:30`, `1]`).
//! * At the top level a `{` is skipped and each skipped `{` swallows one later `}`, which is how
//!   JSON files (`{"port": 4222}`) parse.
//!
//! The lexer runs as a small state machine over a context stack (top level, map, array), so
//! deep nesting costs heap, not stack.

use super::token::{show_char, LexError, TokKind, Token};
use crate::limits::NESTING_DEPTH_MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Map,
    Array,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Top,
    MapKeyStart,
    KeyStart,
    KeyEnd,
    Value,
    ValueEnd,
    ArrayValue,
    BlockEnd,
    Done,
}

/// The lexer's output: every token produced before the first error, then that error.
#[derive(Debug)]
pub(crate) struct Lexed {
    pub(crate) tokens: Vec<Token>,
    pub(crate) error: Option<LexError>,
}

/// Splits `src` into tokens. Never panics; stops at the first error like Go.
pub(crate) fn lex(src: &str) -> Lexed {
    let mut lx = Lexer {
        src,
        pos: 0,
        line: 1,
        line_nl: 0,
        stack: vec![Ctx::Top],
        tokens: Vec::new(),
        braces: 0,
    };
    let error = lx.run().err();
    Lexed {
        tokens: lx.tokens,
        error,
    }
}

type Step = Result<State, LexError>;

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_nl(c: char) -> bool {
    c == '\n' || c == '\r'
}

/// Characters that end an unquoted string or a variable name.
fn ends_word(c: char) -> bool {
    is_blank(c) || is_nl(c) || matches!(c, ',' | ';' | '}' | ']')
}

/// Characters that end an integer (note: not `]`, Go reads `1]` as a string).
fn ends_number(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => is_blank(c) || is_nl(c) || matches!(c, ',' | ';' | '}'),
    }
}

fn is_multiplier(c: char) -> bool {
    matches!(c.to_ascii_lowercase(), 'k' | 'm' | 'g' | 't' | 'p' | 'e')
}

const ESCAPE_HELP: &str =
    "Only the following escape characters are allowed: \\xXX, \\t, \\n, \\r, \\\", \\\\.";

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    /// Byte offset of the newline that started the current line (0 on the first line), which
    /// yields Go's column: 0-based on line 1, 1-based afterwards.
    line_nl: usize,
    stack: Vec<Ctx>,
    tokens: Vec<Token>,
    braces: usize,
}

impl Lexer<'_> {
    fn run(&mut self) -> Result<(), LexError> {
        let mut state = State::Top;
        loop {
            state = match state {
                State::Top => self.top()?,
                State::MapKeyStart => self.map_key_start()?,
                State::KeyStart => self.key_start()?,
                State::KeyEnd => self.key_end(),
                State::Value => self.value()?,
                State::ValueEnd => match self.ctx() {
                    Ctx::Top if self.braces > 0 => self.block_value_end()?,
                    Ctx::Top => self.top_value_end()?,
                    Ctx::Map => self.map_value_end()?,
                    Ctx::Array => self.array_value_end()?,
                },
                State::ArrayValue => self.array_value()?,
                State::BlockEnd => self.block_end()?,
                State::Done => return Ok(()),
            };
        }
    }

    fn ctx(&self) -> Ctx {
        self.stack.last().copied().unwrap_or(Ctx::Top)
    }

    fn peek(&self) -> Option<char> {
        self.src.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        if c == '\n' {
            self.line += 1;
            self.line_nl = self.pos;
        }
        self.pos += c.len_utf8();
        Some(c)
    }

    fn here(&self) -> (usize, usize) {
        (self.line, self.pos.saturating_sub(self.line_nl))
    }

    fn text(&self, start: usize) -> &str {
        self.src.get(start..self.pos).unwrap_or("")
    }

    fn fail(&self, message: impl Into<String>) -> LexError {
        LexError {
            line: self.line,
            message: message.into(),
        }
    }

    fn emit(&mut self, kind: TokKind, at: (usize, usize)) {
        self.tokens.push(Token {
            kind,
            line: at.0,
            column: at.1,
        });
    }

    fn push(&mut self, ctx: Ctx) -> Result<(), LexError> {
        if self.stack.len() > NESTING_DEPTH_MAX {
            return Err(self.fail(format!(
                "maps and arrays nested more than {NESTING_DEPTH_MAX} levels deep"
            )));
        }
        self.stack.push(ctx);
        Ok(())
    }

    fn pop(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.next();
        }
    }

    fn skip_blanks_and_newlines(&mut self) {
        while self.peek().is_some_and(|c| is_blank(c) || is_nl(c)) {
            self.next();
        }
    }

    /// Consumes a comment up to, not including, the newline.
    fn skip_comment(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.next();
        }
    }

    fn top(&mut self) -> Step {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) || is_nl(c) => {
                    self.next();
                }
                Some('#') => self.skip_comment(),
                Some('/') => {
                    self.next();
                    if self.peek() != Some('/') {
                        return Err(self.fail("Unexpected EOF."));
                    }
                    self.skip_comment();
                }
                Some('{') => {
                    self.next();
                    self.braces += 1;
                }
                Some('}') if self.braces > 0 => {
                    self.next();
                    self.braces -= 1;
                    if self.braces > 0 {
                        return Ok(State::BlockEnd);
                    }
                }
                None => {
                    let at = self.here();
                    self.emit(TokKind::Eof, at);
                    return Ok(State::Done);
                }
                Some(_) => return Ok(State::KeyStart),
            }
        }
    }

    fn map_key_start(&mut self) -> Step {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) || is_nl(c) => {
                    self.next();
                }
                Some('#') => self.skip_comment(),
                Some('/') => {
                    self.next();
                    if self.peek() == Some('/') {
                        self.skip_comment();
                    }
                }
                Some('}') => {
                    let at = self.here();
                    self.next();
                    self.emit(TokKind::MapEnd, at);
                    self.pop();
                    return Ok(State::ValueEnd);
                }
                None => return Err(self.fail("Unexpected EOF processing map.")),
                Some(']') => {
                    self.next();
                    return Err(self.fail("Unexpected array end ']' processing map."));
                }
                Some(_) => return Ok(State::KeyStart),
            }
        }
    }

    fn key_start(&mut self) -> Step {
        let in_map = self.ctx() == Ctx::Map;
        match self.peek() {
            Some(q @ ('"' | '\'')) => {
                self.next();
                let at = self.here();
                if !in_map && self.peek().is_none() {
                    // Go takes a lone opening quote at the very end as the end of the file.
                    self.emit(TokKind::Eof, at);
                    return Ok(State::Done);
                }
                let start = self.pos;
                loop {
                    match self.next() {
                        None => {
                            let message = match (in_map, q) {
                                (false, _) => "Unexpected EOF.",
                                (true, '"') => "Unexpected EOF processing double quoted map key.",
                                (true, _) => "Unexpected EOF processing quoted map key.",
                            };
                            return Err(self.fail(message));
                        }
                        Some(c) if c == q => break,
                        Some(_) => {}
                    }
                }
                let key = self.src.get(start..self.pos - 1).unwrap_or("").to_owned();
                self.emit(TokKind::Key(key), at);
                Ok(State::KeyEnd)
            }
            Some(c @ (':' | '=')) => {
                self.next();
                let dot = if in_map { "." } else { "" };
                Err(self.fail(format!("Unexpected key separator '{c}'{dot}")))
            }
            _ => {
                let at = self.here();
                let start = self.pos;
                while let Some(c) = self.peek() {
                    if is_blank(c) || is_nl(c) || c == ':' || c == '=' {
                        break;
                    }
                    self.next();
                }
                if in_map && self.peek().is_none() {
                    return Err(self.fail("Unexpected EOF processing map key."));
                }
                let key = self.text(start).to_owned();
                if key.eq_ignore_ascii_case("include")
                    && self.peek().is_some_and(|c| is_blank(c) || is_nl(c))
                {
                    return self.include(at);
                }
                self.emit(TokKind::Key(key), at);
                Ok(State::KeyEnd)
            }
        }
    }

    fn key_end(&mut self) -> State {
        self.skip_blanks_and_newlines();
        match self.peek() {
            Some(':' | '=') => {
                self.next();
                // Inside a map a newline may follow the separator; at the top level it may not.
                if self.ctx() == Ctx::Map {
                    self.skip_blanks_and_newlines();
                } else {
                    self.skip_blanks();
                }
                State::Value
            }
            None if self.ctx() == Ctx::Top => {
                let at = self.here();
                self.emit(TokKind::Eof, at);
                State::Done
            }
            _ => State::Value,
        }
    }

    fn include(&mut self, at: (usize, usize)) -> Step {
        self.skip_blanks();
        let path = match self.peek() {
            Some(c) if is_nl(c) => {
                self.next();
                return Err(self.fail("Expected include value but found new line"));
            }
            Some('[') => {
                return Err(self.fail("Expected include value but found start of an array"))
            }
            Some('{') => return Err(self.fail("Expected include value but found start of a map")),
            Some('(') => return Err(self.fail("Expected include value but found start of a block")),
            Some(c) if c == '-' || c.is_ascii_digit() => {
                return Err(self.fail("Expected include value but found start of a number"));
            }
            Some('\\') => {
                return Err(self.fail("Expected include value but found escape sequence"));
            }
            Some(q @ ('"' | '\'')) => {
                self.next();
                let start = self.pos;
                loop {
                    match self.next() {
                        None if q == '"' => {
                            return Err(self.fail("Unexpected EOF in double quoted include"));
                        }
                        None => return Err(self.fail("Unexpected EOF in quoted include")),
                        Some(c) if c == q => break,
                        Some(_) => {}
                    }
                }
                self.src.get(start..self.pos - 1).unwrap_or("").to_owned()
            }
            _ => {
                // Only blanks, newlines, `;` and `}` end an unquoted include path.
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|c| !(is_blank(c) || is_nl(c) || c == ';' || c == '}'))
                {
                    self.next();
                }
                self.text(start).to_owned()
            }
        };
        self.emit(TokKind::Include(path), at);
        Ok(State::ValueEnd)
    }

    fn value(&mut self) -> Step {
        let at = self.here();
        let ctx = self.ctx();
        match self.peek() {
            None => {
                self.emit(TokKind::Str(String::new()), at);
                Ok(State::ValueEnd)
            }
            Some(c) if is_nl(c) => {
                self.next();
                Err(self.fail("Expected value but found new line"))
            }
            Some('[') => {
                self.next();
                self.emit(TokKind::ArrayStart, at);
                self.push(Ctx::Array)?;
                Ok(State::ArrayValue)
            }
            Some('{') => {
                self.next();
                self.emit(TokKind::MapStart, at);
                self.push(Ctx::Map)?;
                Ok(State::MapKeyStart)
            }
            Some('"' | '\'') if self.src.get(self.pos + 1..).is_some_and(str::is_empty) => {
                // Go takes a lone opening quote at the very end as the end of the file.
                self.next();
                let at = self.here();
                self.emit(TokKind::Eof, at);
                Ok(State::Done)
            }
            Some('"') => self.double_quoted(),
            Some('\'') => self.single_quoted(),
            Some('(') => self.block(at),
            Some('$') => self.variable(at),
            Some('-') => self.negative_number(at),
            Some(c) if c.is_ascii_digit() => self.number(at),
            Some('.') => {
                self.next();
                Err(self.fail("Floats must start with a digit"))
            }
            // `key }` in a map: no value; the map end comes next and Go gives the map to `key`.
            Some('}') if ctx == Ctx::Map => Ok(State::ValueEnd),
            Some(',') if ctx == Ctx::Map => {
                self.next();
                Err(self.fail("Unexpected map value terminator \",\"."))
            }
            Some(',') if ctx == Ctx::Array => {
                self.next();
                Err(self.fail("Unexpected array value terminator ','."))
            }
            Some(c) if ends_word(c) => {
                self.emit(TokKind::Str(String::new()), at);
                Ok(State::ValueEnd)
            }
            Some(_) => self.unquoted(at, Vec::new()),
        }
    }

    fn top_value_end(&mut self) -> Step {
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Ok(State::Top),
                Some(c) if is_nl(c) || matches!(c, ',' | ';' | '}') => {
                    self.next();
                    return Ok(State::Top);
                }
                Some('#') => {
                    self.skip_comment();
                    return Ok(State::Top);
                }
                Some('/') => {
                    self.next();
                    if self.peek() == Some('/') {
                        self.skip_comment();
                        return Ok(State::Top);
                    }
                }
                Some(_) => {
                    let c = self.next();
                    return Err(self.fail(format!(
                        "Expected a top-level value to end with a new line, comment or EOF, but \
                         got '{}' instead.",
                        show_char(c)
                    )));
                }
            }
        }
    }

    /// After a top-level value inside top-level braces (a JSON-style file): stricter than
    /// [`Lexer::top_value_end`], the end of input is an error here.
    fn block_value_end(&mut self) -> Step {
        loop {
            self.skip_blanks();
            match self.peek() {
                Some(c) if is_nl(c) || matches!(c, ',' | ';') => {
                    self.next();
                    return Ok(State::Top);
                }
                Some('#') => self.skip_comment(),
                Some('/') => {
                    self.next();
                    if self.peek() == Some('/') {
                        self.skip_comment();
                    }
                }
                Some('}') => {
                    self.next();
                    self.braces -= 1;
                    return Ok(if self.braces > 0 {
                        State::BlockEnd
                    } else {
                        State::Top
                    });
                }
                _ => {
                    let c = self.next();
                    return Err(self.fail(format!(
                        "Expected a block-level value to end with a new line, comment or EOF, \
                         but got '{}' instead.",
                        show_char(c)
                    )));
                }
            }
        }
    }

    /// Closing the remaining top-level braces after a `}` ended a value.
    fn block_end(&mut self) -> Step {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) || is_nl(c) => {
                    self.next();
                }
                Some('}') => {
                    self.next();
                    self.braces -= 1;
                    if self.braces == 0 {
                        return Ok(State::Top);
                    }
                }
                Some(',' | ';') => {
                    self.next();
                    return Ok(State::Top);
                }
                _ => {
                    let c = self.next();
                    return Err(self.fail(format!(
                        "Expected a block-level to end with a '}}', but got '{}' instead.",
                        show_char(c)
                    )));
                }
            }
        }
    }

    fn map_value_end(&mut self) -> Step {
        self.skip_blanks();
        match self.peek() {
            Some(c) if is_nl(c) || matches!(c, ',' | ';') => {
                self.next();
                Ok(State::MapKeyStart)
            }
            Some('#') => {
                self.skip_comment();
                Ok(State::MapKeyStart)
            }
            Some('/') => {
                self.next();
                if self.peek() == Some('/') {
                    self.skip_comment();
                }
                Ok(State::MapKeyStart)
            }
            Some('}') => {
                let at = self.here();
                self.next();
                self.emit(TokKind::MapEnd, at);
                self.pop();
                Ok(State::ValueEnd)
            }
            _ => {
                let c = self.next();
                Err(self.fail(format!(
                    "Expected a map value terminator \",\" or a map terminator \"}}\", but got \
                     '{}' instead.",
                    show_char(c)
                )))
            }
        }
    }

    fn array_value(&mut self) -> Step {
        loop {
            match self.peek() {
                Some(c) if is_blank(c) || is_nl(c) => {
                    self.next();
                }
                Some('#') => self.skip_comment(),
                Some('/') => {
                    self.next();
                    if self.peek() != Some('/') {
                        return Err(self.fail("Unexpected array value terminator ','."));
                    }
                    self.skip_comment();
                }
                Some(']') => {
                    let at = self.here();
                    self.next();
                    self.emit(TokKind::ArrayEnd, at);
                    self.pop();
                    return Ok(State::ValueEnd);
                }
                Some(',') => {
                    self.next();
                    return Err(self.fail("Unexpected array value terminator ','."));
                }
                _ => return Ok(State::Value),
            }
        }
    }

    fn array_value_end(&mut self) -> Step {
        loop {
            self.skip_blanks();
            match self.peek() {
                Some(c) if is_nl(c) || c == ',' => {
                    self.next();
                    return Ok(State::ArrayValue);
                }
                Some('#') => self.skip_comment(),
                Some('/') => {
                    self.next();
                    if self.peek() != Some('/') {
                        return Ok(State::ArrayValue);
                    }
                    self.skip_comment();
                }
                Some(']') => {
                    let at = self.here();
                    self.next();
                    self.emit(TokKind::ArrayEnd, at);
                    self.pop();
                    return Ok(State::ValueEnd);
                }
                _ => {
                    let c = self.next();
                    return Err(self.fail(format!(
                        "Expected an array value terminator \",\" or an array terminator \"]\", \
                         but got '{}' instead.",
                        show_char(c)
                    )));
                }
            }
        }
    }
}

#[path = "lexer_scalars.rs"]
mod scalars;

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
