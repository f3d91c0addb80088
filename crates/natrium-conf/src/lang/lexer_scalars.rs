//! The lexer's scalar scanners: quoted, unquoted and block strings with their escapes,
//! variables, and the number family (integers, sizes, floats, IP-like strings, dates).

use super::{ends_number, ends_word, is_multiplier, Lexer, State, Step, ESCAPE_HELP};
use crate::lang::token::{show_char, LexError, TokKind};

impl Lexer<'_> {
    /// Reads the character after a backslash (already consumed) into `out`.
    pub(super) fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), LexError> {
        let c = self.next();
        let byte = match c {
            Some('t') => b'\t',
            Some('n') => b'\n',
            Some('r') => b'\r',
            Some('"') => b'"',
            Some('\\') => b'\\',
            Some('x') => {
                let (hi, lo) = (self.next(), self.next());
                if hi == Some('\n') || lo == Some('\n') {
                    return Err(self
                        .fail("Expected two hexadecimal digits after '\\x', but hit end of line"));
                }
                let digits = (
                    hi.and_then(|c| c.to_digit(16)),
                    lo.and_then(|c| c.to_digit(16)),
                );
                let (Some(hi), Some(lo)) = digits else {
                    // Go shows the last two bytes it read, which at the end of input are the
                    // ones before the cursor.
                    let from = self.pos.saturating_sub(2);
                    let shown = self.src.as_bytes().get(from..self.pos).unwrap_or_default();
                    return Err(self.fail(format!(
                        "Expected two hexadecimal digits after '\\x', but got '{}'",
                        String::from_utf8_lossy(shown)
                    )));
                };
                (hi * 16 + lo) as u8
            }
            other => {
                return Err(self.fail(format!(
                    "Invalid escape character '{}'. {ESCAPE_HELP}",
                    show_char(other)
                )));
            }
        };
        out.push(byte);
        Ok(())
    }

    pub(super) fn double_quoted(&mut self) -> Step {
        self.next();
        let at = self.here();
        let mut out = Vec::new();
        loop {
            match self.next() {
                None => return Err(self.fail("Unexpected EOF.")),
                Some('"') => break,
                Some('\\') => self.escape(&mut out)?,
                Some(c) => push_char(&mut out, c),
            }
        }
        self.emit(TokKind::Str(String::from_utf8_lossy(&out).into_owned()), at);
        Ok(State::ValueEnd)
    }

    pub(super) fn single_quoted(&mut self) -> Step {
        self.next();
        let at = self.here();
        let start = self.pos;
        loop {
            match self.next() {
                None => return Err(self.fail("Unexpected EOF.")),
                Some('\'') => break,
                Some(_) => {}
            }
        }
        let text = self.src.get(start..self.pos - 1).unwrap_or("").to_owned();
        self.emit(TokKind::Str(text), at);
        Ok(State::ValueEnd)
    }

    /// An unquoted string; `prefix` holds what a number-looking start already consumed.
    pub(super) fn unquoted(&mut self, at: (usize, usize), mut out: Vec<u8>) -> Step {
        loop {
            match self.peek() {
                None => break,
                Some(c) if ends_word(c) => break,
                // Go ends the word at a single quote and swallows the quote.
                Some('\'') => {
                    self.next();
                    break;
                }
                Some('\\') => {
                    self.next();
                    self.escape(&mut out)?;
                }
                Some(c) => {
                    self.next();
                    push_char(&mut out, c);
                }
            }
        }
        let text = String::from_utf8_lossy(&out).into_owned();
        let kind = match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => TokKind::Bool(true),
            "false" | "no" | "off" => TokKind::Bool(false),
            _ => TokKind::Str(text),
        };
        self.emit(kind, at);
        Ok(State::ValueEnd)
    }

    /// `( … )` block string: runs to a line holding only `)`.
    pub(super) fn block(&mut self, at: (usize, usize)) -> Step {
        self.next();
        let start = self.pos;
        loop {
            let paren = self.pos;
            match self.next() {
                None => return Err(self.fail("Unexpected EOF processing block.")),
                Some(')')
                    if paren > start && self.src.as_bytes().get(paren - 1) == Some(&b'\n') =>
                {
                    match self.peek() {
                        Some('\n') => {
                            let text = self.src.get(start..paren).unwrap_or("").to_owned();
                            self.emit(TokKind::Str(text), at);
                            return Ok(State::ValueEnd);
                        }
                        None => {
                            let text = self.text(start).to_owned();
                            self.emit(TokKind::Str(text), at);
                            return Ok(State::ValueEnd);
                        }
                        Some(_) => {}
                    }
                }
                Some(_) => {}
            }
        }
    }

    pub(super) fn variable(&mut self, at: (usize, usize)) -> Step {
        self.next();
        let mut name = Vec::new();
        // A backslash or a closing single quote (which Go swallows) makes it a plain string.
        let mut literal = false;
        loop {
            match self.peek() {
                Some('\'') => {
                    self.next();
                    literal = true;
                    break;
                }
                Some('\\') => {
                    self.next();
                    self.escape(&mut name)?;
                    literal = true;
                }
                Some(c) if !ends_word(c) => {
                    self.next();
                    push_char(&mut name, c);
                }
                _ => break,
            }
        }
        let name = String::from_utf8_lossy(&name).into_owned();
        // A bcrypt hash (`$2a$11$…`) is a password, not a variable.
        let kind = if literal || name.starts_with("2a$") {
            TokKind::Str(format!("${name}"))
        } else {
            TokKind::Variable(name)
        };
        self.emit(kind, at);
        Ok(State::ValueEnd)
    }

    pub(super) fn skip_digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.next();
        }
    }

    pub(super) fn number(&mut self, at: (usize, usize)) -> Step {
        let start = self.pos;
        self.skip_digits();
        match self.peek() {
            Some('-') => self.datetime(at, start),
            Some('.') => self.float(at, start),
            Some(c) if is_multiplier(c) => self.size(at, start),
            c if ends_number(c) => {
                let text = self.text(start).to_owned();
                self.emit(TokKind::Int(text), at);
                Ok(State::ValueEnd)
            }
            _ => {
                // Anything else turns the whole word into a string, that character included.
                let mut out = self.text(start).as_bytes().to_vec();
                if let Some(c) = self.next() {
                    push_char(&mut out, c);
                }
                self.unquoted(at, out)
            }
        }
    }

    pub(super) fn negative_number(&mut self, at: (usize, usize)) -> Step {
        let start = self.pos;
        self.next();
        if self.peek() == Some('.') {
            self.next();
            return Err(self.fail("Floats must start with a digit, not '.'."));
        }
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            let c = self.next();
            return Err(self.fail(format!("Expected a digit but got '{}'.", show_char(c))));
        }
        self.skip_digits();
        match self.peek() {
            Some('.') => self.float(at, start),
            Some(c) if is_multiplier(c) => self.size(at, start),
            _ => {
                let text = self.text(start).to_owned();
                self.emit(TokKind::Int(text), at);
                Ok(State::ValueEnd)
            }
        }
    }

    /// A size suffix (`k`, `mb`, `GiB`…). The parser decides what the suffix means.
    pub(super) fn size(&mut self, at: (usize, usize), start: usize) -> Step {
        self.next();
        while self
            .peek()
            .is_some_and(|c| matches!(c, 'b' | 'B' | 'i' | 'I'))
        {
            self.next();
        }
        if ends_number(self.peek()) {
            let text = self.text(start).to_owned();
            self.emit(TokKind::Int(text), at);
            return Ok(State::ValueEnd);
        }
        let out = self.text(start).as_bytes().to_vec();
        self.unquoted(at, out)
    }

    pub(super) fn float(&mut self, at: (usize, usize), start: usize) -> Step {
        self.next();
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            let c = self.next();
            return Err(self.fail(format!(
                "Floats must have a digit after the '.', but got '{}' instead.",
                show_char(c)
            )));
        }
        self.skip_digits();
        if self.peek() == Some('.') {
            // Looks like an IP address: a string of digits, dots, colons and dashes.
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || matches!(c, '.' | ':' | '-'))
            {
                self.next();
            }
            let text = self.text(start).to_owned();
            self.emit(TokKind::Str(text), at);
            return Ok(State::ValueEnd);
        }
        let text = self.text(start).to_owned();
        self.emit(TokKind::Float(text), at);
        Ok(State::ValueEnd)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, entered at the first `-`.
    pub(super) fn datetime(&mut self, at: (usize, usize), start: usize) -> Step {
        if self.pos - start != 4 {
            self.next();
            return Err(self.fail("All ISO8601 dates must be in full Zulu form."));
        }
        for expect in "-dd-ddTdd:dd:ddZ".chars() {
            let c = self.next();
            let ok = match (expect, c) {
                ('d', Some(c)) => c.is_ascii_digit(),
                (e, Some(c)) => c == e,
                (_, None) => false,
            };
            if !ok {
                let what = if expect == 'd' {
                    "digit".to_owned()
                } else {
                    format!("'{expect}'")
                };
                return Err(self.fail(format!(
                    "Expected {what} in ISO8601 datetime, but found '{}' instead.",
                    show_char(c)
                )));
            }
        }
        let text = self.text(start).to_owned();
        self.emit(TokKind::Datetime(text), at);
        Ok(State::ValueEnd)
    }
}

pub(super) fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}
