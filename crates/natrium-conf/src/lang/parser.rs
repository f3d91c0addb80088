//! The parser: tokens in, a [`Map`] out, with variables resolved and includes merged.
//!
//! Variables resolve at the point of reference, against keys defined earlier in the current
//! block or any enclosing block, then against the environment (whose value is itself parsed as
//! a configuration value). Included files are parsed on their own, without the includer's
//! variables, and their keys are merged into the block holding the `include`.

use std::sync::Arc;

use super::lexer::lex;
use super::source;
use super::token::{TokKind, Token};
use super::value::{Datetime, Map, Node, Value};
use crate::error::{ConfError, Position};
use crate::limits::{ENV_EXPANSION_DEPTH_MAX, INCLUDE_DEPTH_MAX, NESTING_DEPTH_MAX};

/// Looks up an environment variable.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

enum Frame {
    Map { map: Map, pos: Position },
    Array { items: Vec<Node>, pos: Position },
}

/// Like Go's parser, keys wait on one stack shared by all nesting levels and each value takes
/// the most recent key. So a key written without a value inside a block (`a { b }`) is still
/// waiting when the block closes, and takes the block: the result is a top-level `b`.
pub(crate) struct Parser<'a> {
    file: Arc<str>,
    dir: String,
    env: EnvLookup<'a>,
    include_depth: usize,
    env_depth: usize,
    base_depth: usize,
    frames: Vec<Frame>,
    keys: Vec<(String, Position)>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(file: &str, env: EnvLookup<'a>) -> Parser<'a> {
        Parser {
            file: Arc::from(file),
            dir: source::dir(file),
            env,
            include_depth: 0,
            env_depth: 0,
            base_depth: 0,
            frames: Vec::new(),
            keys: Vec::new(),
        }
    }

    fn pos(&self, tok: &Token) -> Position {
        Position {
            file: self.file.clone(),
            line: tok.line,
            column: tok.column,
        }
    }

    /// Parses a whole source text into its top-level map.
    pub(crate) fn parse(mut self, src: &str) -> Result<Map, ConfError> {
        let lexed = lex(src);
        let root_pos = Position {
            file: self.file.clone(),
            line: 1,
            column: 0,
        };
        self.frames.push(Frame::Map {
            map: Map::new(),
            pos: root_pos,
        });
        let mut previous: Option<&TokKind> = None;
        for tok in &lexed.tokens {
            if tok.kind == TokKind::Eof {
                // A key right before the end has no value: Go's "config is invalid", except
                // for a lone `}` (the tail of a JSON-style file).
                if let Some(TokKind::Key(key)) = previous {
                    if key != "}" {
                        return Err(ConfError::MissingValue {
                            file: self.file.clone(),
                            line: tok.line,
                            column: tok.column,
                        });
                    }
                }
                // Blocks left open by a lone quote at the end are dropped, as in Go.
                self.frames.truncate(1);
                return match self.frames.pop() {
                    Some(Frame::Map { map, .. }) => Ok(map),
                    _ => Ok(Map::new()),
                };
            }
            self.token(tok)?;
            previous = Some(&tok.kind);
        }
        let (line, message) = match lexed.error {
            Some(e) => (e.line, e.message),
            None => (0, "Unexpected EOF.".to_owned()),
        };
        Err(ConfError::Syntax {
            file: self.file.clone(),
            line,
            message,
        })
    }

    fn token(&mut self, tok: &Token) -> Result<(), ConfError> {
        let pos = self.pos(tok);
        match &tok.kind {
            TokKind::Key(key) => self.keys.push((key.clone(), pos)),
            TokKind::Str(s) => self.set_value(Node::new(Value::Str(s.clone()), pos)),
            TokKind::Bool(b) => self.set_value(Node::new(Value::Bool(*b), pos)),
            TokKind::Int(text) => {
                // Go silently drops a value with an unknown size suffix (`1kbb`); its key
                // stays on the stack.
                if let Some(n) = parse_int(text, &pos)? {
                    self.set_value(Node::new(Value::Int(n), pos));
                }
            }
            TokKind::Float(text) => {
                let f = parse_float(text, &pos)?;
                self.set_value(Node::new(Value::Float(f), pos));
            }
            TokKind::Datetime(text) => match Datetime::parse(text) {
                Some(dt) => self.set_value(Node::new(Value::Datetime(dt), pos)),
                None => {
                    return Err(ConfError::BadDatetime {
                        text: text.clone(),
                        pos,
                    })
                }
            },
            TokKind::Variable(name) => {
                let node = self.resolve(name, tok.line)?;
                self.set_value(node);
            }
            TokKind::Include(path) => self.include(path)?,
            TokKind::ArrayStart => {
                self.check_depth(&pos)?;
                self.frames.push(Frame::Array {
                    items: Vec::new(),
                    pos,
                });
            }
            TokKind::MapStart => {
                self.check_depth(&pos)?;
                self.frames.push(Frame::Map {
                    map: Map::new(),
                    pos,
                });
            }
            TokKind::ArrayEnd => self.close(None),
            // Go places a map value just after its closing brace.
            TokKind::MapEnd => self.close(Some(Position {
                column: pos.column + 1,
                ..pos
            })),
            TokKind::Eof => {}
        }
        Ok(())
    }

    fn check_depth(&self, pos: &Position) -> Result<(), ConfError> {
        if self.base_depth + self.frames.len() > NESTING_DEPTH_MAX {
            return Err(ConfError::TooDeep {
                pos: pos.clone(),
                max: NESTING_DEPTH_MAX,
            });
        }
        Ok(())
    }

    fn set_value(&mut self, node: Node) {
        match self.frames.last_mut() {
            Some(Frame::Map { map, .. }) => {
                if let Some((key, key_pos)) = self.keys.pop() {
                    map.insert(key, key_pos, node);
                }
            }
            Some(Frame::Array { items, .. }) => items.push(node),
            None => {}
        }
    }

    fn close(&mut self, map_end: Option<Position>) {
        if self.frames.len() < 2 {
            return;
        }
        let node = match self.frames.pop() {
            Some(Frame::Map { mut map, pos }) => {
                map.set_end(map_end);
                Node::new(Value::Map(map), pos)
            }
            Some(Frame::Array { items, pos }) => Node::new(Value::Array(items), pos),
            None => return,
        };
        self.set_value(node);
    }

    fn resolve(&mut self, name: &str, line: usize) -> Result<Node, ConfError> {
        for frame in self.frames.iter_mut().rev() {
            if let Frame::Map { map, .. } = frame {
                if let Some(entry) = map.get_mut(name) {
                    entry.node.used_as_variable = true;
                    let mut node = entry.node.clone();
                    node.used_as_variable = false;
                    return Ok(node);
                }
            }
        }
        let Some(text) = (self.env)(name) else {
            return Err(ConfError::UndefinedVariable {
                file: self.file.clone(),
                name: name.to_owned(),
                line,
            });
        };
        if self.env_depth >= ENV_EXPANSION_DEPTH_MAX {
            return Err(ConfError::EnvTooDeep {
                name: name.to_owned(),
                line,
                max: ENV_EXPANSION_DEPTH_MAX,
            });
        }
        // Go parses `pk=<value>` as a configuration of its own and takes `pk`.
        let mut inner = Parser::new("", self.env);
        inner.env_depth = self.env_depth + 1;
        inner.base_depth = self.base_depth + self.frames.len();
        let map = inner.parse(&format!("pk={text}")).map_err(|e| match e {
            e @ ConfError::EnvTooDeep { .. } => e,
            e => ConfError::BadEnvVariable {
                name: name.to_owned(),
                line,
                source: Box::new(e),
            },
        })?;
        let pos = Position {
            file: self.file.clone(),
            line,
            column: 0,
        };
        Ok(map
            .get("pk")
            .map_or_else(|| Node::new(Value::Null, pos), |e| e.node.clone()))
    }

    fn include(&mut self, path: &str) -> Result<(), ConfError> {
        if self.include_depth >= INCLUDE_DEPTH_MAX {
            return Err(ConfError::IncludeTooDeep {
                include: path.to_owned(),
                max: INCLUDE_DEPTH_MAX,
            });
        }
        let wrap = |e: ConfError| match e {
            e @ ConfError::IncludeTooDeep { .. } => e,
            e => ConfError::Include {
                include: path.to_owned(),
                source: Box::new(e),
            },
        };
        let full = source::join(&self.dir, path);
        let text = source::read(&full).map_err(wrap)?;
        let mut inner = Parser::new(&full, self.env);
        inner.include_depth = self.include_depth + 1;
        inner.env_depth = self.env_depth;
        inner.base_depth = self.base_depth + self.frames.len();
        let map = inner.parse(&text).map_err(wrap)?;
        if let Some(Frame::Map { map: current, .. }) = self.frames.last_mut() {
            for entry in map.into_entries() {
                current.insert(entry.key, entry.key_pos, entry.node);
            }
        }
        Ok(())
    }
}

/// Converts an integer literal with an optional size suffix. `Ok(None)` means a suffix Go's
/// lexer accepts but its parser ignores (`1kbb`), which makes Go drop the value.
pub(crate) fn parse_int(text: &str, pos: &Position) -> Result<Option<i64>, ConfError> {
    let split = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(text.len(), |(i, _)| i);
    let (digits, suffix) = text.split_at(split);
    let n: i64 = digits.parse().map_err(|_| ConfError::IntegerRange {
        text: text.to_owned(),
        pos: pos.clone(),
    })?;
    let multiplier: i64 = match suffix.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "kb" | "ki" | "kib" => 1 << 10,
        "m" => 1_000_000,
        "mb" | "mi" | "mib" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" | "gi" | "gib" => 1 << 30,
        "t" => 1_000_000_000_000,
        "tb" | "ti" | "tib" => 1 << 40,
        "p" => 1_000_000_000_000_000,
        "pb" | "pi" | "pib" => 1 << 50,
        "e" => 1_000_000_000_000_000_000,
        "eb" | "ei" | "eib" => 1 << 60,
        _ => return Ok(None),
    };
    // Go multiplies int64s and wraps on overflow; so do we.
    Ok(Some(n.wrapping_mul(multiplier)))
}

fn parse_float(text: &str, pos: &Position) -> Result<f64, ConfError> {
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(f),
        _ => Err(ConfError::FloatRange {
            text: text.to_owned(),
            pos: pos.clone(),
        }),
    }
}
