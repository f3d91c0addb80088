//! A small Rust tokenizer for the tidy rules: identifiers, `::`, punctuation and string
//! literals with their line numbers, and every comment with its kind and text.
//!
//! It knows just enough of the lexical grammar to never mistake the inside of a string, a raw
//! string or a char literal for code or for a comment (`"//"`, `r#"}"#`, `'{'` and lifetimes
//! such as `'a` are the cases that matter); numbers and operators other than the ones the rules
//! look at come out as single-character punctuation, which is all the callers need.

/// What a token is. Only the shapes the import scanner looks at are distinguished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    /// A string literal's contents (escapes kept as written: only `#[path]` values are read).
    Str(String),
    Punct(char),
    /// A number, char literal, byte literal or lifetime: nothing the rules look into.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentKind {
    /// `// …` (and `////…`, which is not a doc comment)
    Line,
    /// `/// …` or `//! …`
    LineDoc,
    /// `//! …` specifically, the module doc
    InnerDoc,
    /// `/* … */` in any form; one entry per line it spans
    Block,
}

#[derive(Debug, Clone)]
pub struct Comment {
    /// 1-based line number.
    pub line: usize,
    pub kind: CommentKind,
    /// The text after the opening marker (`//`, `///`, `//!`, or the line of a block comment).
    pub text: String,
}

#[derive(Debug, Default)]
pub struct Lexed {
    /// Tokens with their 1-based line numbers.
    pub toks: Vec<(Tok, usize)>,
    pub comments: Vec<Comment>,
}

/// Tokenizes `src`. Never fails: an unterminated literal or comment runs to the end of input.
pub fn lex(src: &str) -> Lexed {
    let chars: Vec<char> = src.chars().collect();
    let mut lx = Lexer {
        c: &chars,
        i: 0,
        line: 1,
        out: Lexed::default(),
    };
    lx.run();
    lx.out
}

struct Lexer<'a> {
    c: &'a [char],
    i: usize,
    line: usize,
    out: Lexed,
}

impl Lexer<'_> {
    fn at(&self, k: usize) -> char {
        self.c.get(self.i + k).copied().unwrap_or('\0')
    }

    /// Advances one char, counting lines.
    fn bump(&mut self) -> char {
        let ch = self.at(0);
        if ch == '\n' {
            self.line += 1;
        }
        self.i += 1;
        ch
    }

    fn push(&mut self, tok: Tok, line: usize) {
        self.out.toks.push((tok, line));
    }

    fn run(&mut self) {
        while self.i < self.c.len() {
            let ch = self.at(0);
            let line = self.line;
            match ch {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '/' if self.at(1) == '/' => self.line_comment(),
                '/' if self.at(1) == '*' => self.block_comment(),
                '"' => {
                    let s = self.quoted();
                    self.push(Tok::Str(s), line);
                }
                'r' if self.at(1) == '"'
                    || (self.at(1) == '#' && raw_start(self.c, self.i + 1)) =>
                {
                    self.bump();
                    let s = self.raw();
                    self.push(Tok::Str(s), line);
                }
                'b' if self.at(1) == '"' => {
                    self.bump();
                    let s = self.quoted();
                    self.push(Tok::Str(s), line);
                }
                'b' if self.at(1) == 'r' && (self.at(2) == '"' || self.at(2) == '#') => {
                    self.bump();
                    self.bump();
                    let s = self.raw();
                    self.push(Tok::Str(s), line);
                }
                'b' if self.at(1) == '\'' => {
                    self.bump();
                    self.quote_or_lifetime();
                    self.push(Tok::Other, line);
                }
                '\'' => {
                    self.quote_or_lifetime();
                    self.push(Tok::Other, line);
                }
                ':' if self.at(1) == ':' => {
                    self.bump();
                    self.bump();
                    self.push(Tok::PathSep, line);
                }
                c if c.is_ascii_digit() => {
                    while self.at(0).is_ascii_alphanumeric() || self.at(0) == '_' {
                        self.bump();
                    }
                    self.push(Tok::Other, line);
                }
                c if is_ident_start(c) => {
                    // `r#ident` is a raw identifier, not a raw string (handled above).
                    if c == 'r' && self.at(1) == '#' {
                        self.bump();
                        self.bump();
                    }
                    let start = self.i;
                    while is_ident_continue(self.at(0)) {
                        self.bump();
                    }
                    let s: String = self.c[start..self.i].iter().collect();
                    self.push(Tok::Ident(s), line);
                }
                c => {
                    self.bump();
                    self.push(Tok::Punct(c), line);
                }
            }
        }
    }

    fn line_comment(&mut self) {
        let line = self.line;
        let start = self.i;
        while self.i < self.c.len() && self.at(0) != '\n' {
            self.i += 1;
        }
        let text: String = self.c[start..self.i].iter().collect();
        let (kind, body) = if let Some(rest) = text.strip_prefix("//!") {
            (CommentKind::InnerDoc, rest)
        } else if text.starts_with("////") {
            (CommentKind::Line, &text[2..])
        } else if let Some(rest) = text.strip_prefix("///") {
            (CommentKind::LineDoc, rest)
        } else {
            (CommentKind::Line, &text[2..])
        };
        let text = body.to_string();
        self.out.comments.push(Comment { line, kind, text });
    }

    /// Block comments nest in Rust.
    fn block_comment(&mut self) {
        self.bump();
        self.bump();
        let mut depth = 1usize;
        let mut line = self.line;
        let mut text = String::new();
        while self.i < self.c.len() && depth > 0 {
            if self.at(0) == '/' && self.at(1) == '*' {
                depth += 1;
                self.bump();
                self.bump();
            } else if self.at(0) == '*' && self.at(1) == '/' {
                depth -= 1;
                self.bump();
                self.bump();
            } else if self.at(0) == '\n' {
                let kind = CommentKind::Block;
                let text = std::mem::take(&mut text);
                self.out.comments.push(Comment { line, kind, text });
                self.bump();
                line = self.line;
            } else {
                text.push(self.bump());
            }
        }
        let kind = CommentKind::Block;
        self.out.comments.push(Comment { line, kind, text });
    }

    /// A `"…"` literal starting at the opening quote; returns its contents.
    fn quoted(&mut self) -> String {
        self.bump();
        let mut s = String::new();
        while self.i < self.c.len() {
            match self.bump() {
                '\\' => {
                    s.push('\\');
                    s.push(self.bump());
                }
                '"' => break,
                ch => s.push(ch),
            }
        }
        s
    }

    /// A raw string starting after the `r`: `#`s, a quote, contents, a quote and as many `#`s.
    fn raw(&mut self) -> String {
        let mut hashes = 0;
        while self.at(0) == '#' {
            hashes += 1;
            self.bump();
        }
        self.bump(); // the opening quote
        let mut s = String::new();
        while self.i < self.c.len() {
            if self.at(0) == '"' && (1..=hashes).all(|k| self.at(k) == '#') {
                for _ in 0..=hashes {
                    self.bump();
                }
                break;
            }
            s.push(self.bump());
        }
        s
    }

    /// At a `'`: a char literal (`'a'`, `'\n'`, `'\u{7f}'`, `'{'`) or a lifetime (`'a`).
    fn quote_or_lifetime(&mut self) {
        self.bump();
        if self.at(0) == '\\' {
            // The escaped char may itself be a quote (`'\''`).
            self.bump();
            self.bump();
            while self.i < self.c.len() {
                if self.bump() == '\'' {
                    return;
                }
            }
        } else if self.at(1) == '\'' {
            self.bump();
            self.bump();
        } else {
            while is_ident_continue(self.at(0)) {
                self.bump();
            }
        }
    }
}

/// After `r` at `i`: `#`s followed by a quote start a raw string (else `r#ident`).
fn raw_start(c: &[char], mut i: usize) -> bool {
    while c.get(i) == Some(&'#') {
        i += 1;
    }
    c.get(i) == Some(&'"')
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::{lex, CommentKind, Tok};

    fn idents(src: &str) -> Vec<String> {
        lex(src)
            .toks
            .into_iter()
            .filter_map(|(t, _)| match t {
                Tok::Ident(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tidy_lexer_strings_hide_code_and_comments() {
        let src =
            r##"let a = "// not a comment { x; }"; let b = r#"}"# ; let c = '{'; let d = '\'';"##;
        let lexed = lex(src);
        assert!(lexed.comments.is_empty());
        let braces = lexed
            .toks
            .iter()
            .filter(|(t, _)| *t == Tok::Punct('{'))
            .count();
        assert_eq!(braces, 0);
        assert_eq!(
            idents(src),
            ["let", "a", "let", "b", "let", "c", "let", "d"]
        );
    }

    #[test]
    fn tidy_lexer_lifetimes_and_comment_kinds() {
        let src = "//! inner\n/// outer\n//// plain\n// x;\nfn f<'a>(s: &'a str) {}\n/* a\n b */";
        let lexed = lex(src);
        let kinds: Vec<_> = lexed.comments.iter().map(|c| (c.line, c.kind)).collect();
        assert_eq!(
            kinds,
            [
                (1, CommentKind::InnerDoc),
                (2, CommentKind::LineDoc),
                (3, CommentKind::Line),
                (4, CommentKind::Line),
                (6, CommentKind::Block),
                (7, CommentKind::Block),
            ]
        );
        assert_eq!(idents(src), ["fn", "f", "s", "str"]);
        let brace_line = lexed.toks.iter().find(|(t, _)| *t == Tok::Punct('{'));
        assert_eq!(brace_line.map(|(_, l)| *l), Some(5));
    }
}
