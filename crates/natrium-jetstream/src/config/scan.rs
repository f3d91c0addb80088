//! A JSON syntax scanner with the error texts of Go's `encoding/json` (`invalid character 'g'
//! looking for beginning of value`, `unexpected EOF`), splitting a request body into the
//! values Go's stream decoder would read one after another.

use natrium_gofmt::go_quote;

/// Why a body is not JSON: Go's message, and for syntax errors the offset Go reports (the
/// bytes read up to and including the bad one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxError {
    Invalid {
        byte: u8,
        context: &'static str,
        offset: usize,
    },
    UnexpectedEof,
}

impl SyntaxError {
    /// The text the API puts after `invalid JSON: `.
    pub fn go_message(&self) -> String {
        match self {
            SyntaxError::Invalid {
                byte,
                context,
                offset,
            } => {
                format!(
                    "invalid character {} {context} at offset {offset}",
                    quote_byte(*byte)
                )
            }
            SyntaxError::UnexpectedEof => "unexpected EOF".to_owned(),
        }
    }
}

/// Go's `quoteChar`.
fn quote_byte(b: u8) -> String {
    match b {
        b'\'' => r"'\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        _ => {
            let quoted = go_quote(&char::from(b).to_string());
            let inner = quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default();
            format!("'{inner}'")
        }
    }
}

const BEGIN_VALUE: &str = "looking for beginning of value";
const BEGIN_KEY: &str = "looking for beginning of object key string";

/// The byte ranges of the top-level values of `body`, in order, or the first syntax error.
/// Values are yielded lazily: Go decodes each value before it scans the next.
pub struct Values<'a> {
    body: &'a [u8],
    pos: usize,
}

impl<'a> Values<'a> {
    pub fn new(body: &'a [u8]) -> Self {
        Self { body, pos: 0 }
    }
}

impl<'a> Iterator for Values<'a> {
    type Item = Result<&'a [u8], SyntaxError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut s = Scanner {
            body: self.body,
            pos: self.pos,
        };
        s.skip_ws();
        if s.pos >= self.body.len() {
            return None;
        }
        let start = s.pos;
        let result = s
            .value(0)
            .map(|()| self.body.get(start..s.pos).unwrap_or_default());
        self.pos = if result.is_ok() {
            s.pos
        } else {
            self.body.len()
        };
        Some(result)
    }
}

/// Deepest nesting accepted; Go's limit is 10,000 as well.
const DEPTH_MAX: usize = 10_000;

struct Scanner<'a> {
    body: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.body.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    fn err(&self, byte: u8, context: &'static str) -> SyntaxError {
        SyntaxError::Invalid {
            byte,
            context,
            offset: self.pos + 1,
        }
    }

    /// The next byte, which must exist.
    fn need(&self) -> Result<u8, SyntaxError> {
        self.peek().ok_or(SyntaxError::UnexpectedEof)
    }

    fn value(&mut self, depth: usize) -> Result<(), SyntaxError> {
        self.skip_ws();
        let b = self.need()?;
        if depth > DEPTH_MAX {
            return Err(self.err(b, "exceeded max depth"));
        }
        match b {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true", "in literal true (expecting "),
            b'f' => self.literal(b"false", "in literal false (expecting "),
            b'n' => self.literal(b"null", "in literal null (expecting "),
            _ => Err(self.err(b, BEGIN_VALUE)),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), SyntaxError> {
        self.pos += 1;
        self.skip_ws();
        if self.need()? == b'}' {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            let b = self.need()?;
            if b != b'"' {
                return Err(self.err(b, BEGIN_KEY));
            }
            self.string()?;
            self.skip_ws();
            let b = self.need()?;
            if b != b':' {
                return Err(self.err(b, "after object key"));
            }
            self.pos += 1;
            self.value(depth + 1)?;
            self.skip_ws();
            match self.need()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Ok(());
                }
                b => return Err(self.err(b, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), SyntaxError> {
        self.pos += 1;
        self.skip_ws();
        if self.need()? == b']' {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value(depth + 1)?;
            self.skip_ws();
            match self.need()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Ok(());
                }
                b => return Err(self.err(b, "after array element")),
            }
        }
    }

    fn string(&mut self) -> Result<(), SyntaxError> {
        self.pos += 1;
        loop {
            let b = self.need()?;
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.pos += 1;
                    match self.need()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 1,
                        b'u' => {
                            self.pos += 1;
                            for _ in 0..4 {
                                let h = self.need()?;
                                if !h.is_ascii_hexdigit() {
                                    return Err(self.err(h, r"in \u hexadecimal character escape"));
                                }
                                self.pos += 1;
                            }
                        }
                        e => return Err(self.err(e, "in string escape code")),
                    }
                }
                0..=0x1f => return Err(self.err(b, "in string literal")),
                _ => self.pos += 1,
            }
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    /// A number ends at the first byte that can't continue it; at the end of the body that is
    /// fine, as Go's decoder accepts a number as the body's last value.
    fn number(&mut self) -> Result<(), SyntaxError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
            match self.peek() {
                Some(b'0'..=b'9') => {}
                Some(b) => return Err(self.err(b, "in numeric literal")),
                None => return Err(SyntaxError::UnexpectedEof),
            }
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            match self.peek() {
                Some(b'0'..=b'9') => self.digits(),
                Some(b) => return Err(self.err(b, "after decimal point in numeric literal")),
                None => return Err(SyntaxError::UnexpectedEof),
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            match self.peek() {
                Some(b'0'..=b'9') => self.digits(),
                Some(b) => return Err(self.err(b, "in exponent of numeric literal")),
                None => return Err(SyntaxError::UnexpectedEof),
            }
        }
        Ok(())
    }

    fn literal(&mut self, word: &[u8], context: &'static str) -> Result<(), SyntaxError> {
        self.pos += 1;
        for &expected in word.iter().skip(1) {
            let b = self.need()?;
            if b != expected {
                let offset = self.pos + 1;
                return Err(SyntaxError::Invalid {
                    byte: b,
                    context: expecting(context, expected),
                    offset,
                });
            }
            self.pos += 1;
        }
        Ok(())
    }
}

/// `in literal true (expecting 'r')` and the like, from a fixed set so the text is static.
fn expecting(context: &'static str, expected: u8) -> &'static str {
    match (context.as_bytes().get(11), expected) {
        (Some(b't'), b'r') => "in literal true (expecting 'r')",
        (Some(b't'), b'u') => "in literal true (expecting 'u')",
        (Some(b't'), _) => "in literal true (expecting 'e')",
        (Some(b'f'), b'a') => "in literal false (expecting 'a')",
        (Some(b'f'), b'l') => "in literal false (expecting 'l')",
        (Some(b'f'), b's') => "in literal false (expecting 's')",
        (Some(b'f'), _) => "in literal false (expecting 'e')",
        (_, b'u') => "in literal null (expecting 'u')",
        _ => "in literal null (expecting 'l')",
    }
}
