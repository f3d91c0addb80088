//! Rewriting a subject matched by one pattern into the shape of another: the wildcard tokens
//! of the source pattern are captured and placed where the destination asks for them.
//!
//! Accounts use this for imports: a stream import of `s.>` with prefix `p` rewrites `s.a.b`
//! to `p.s.a.b`; an import `s.*.x` to `t.*.y` rewrites `s.a.x` to `t.a.y`. A destination names
//! the source's wildcards positionally (`*` is the next single-token wildcard, `>` is the
//! trailing one) or by number (`$1`, `{{wildcard(1)}}`, counting the source's wildcards from
//! one, `>` included). Every source wildcard must be used, as Go's strict transforms require.

use crate::validate::{is_valid_subject, split_token};

/// Most single-token wildcards a source pattern may have. Captures live in a fixed array so
/// that applying a transform allocates nothing besides the output's growth.
const CAPTURES_MAX: usize = 16;

/// Why a transform could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformError {
    #[error("invalid source subject")]
    InvalidSource,
    #[error("invalid destination subject")]
    InvalidDestination,
    #[error("too many wildcards")]
    TooManyWildcards,
    #[error("wildcard index out of range")]
    IndexOutOfRange,
    #[error("not all source wildcards are used in the destination")]
    UnusedWildcard,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Box<[u8]>),
    /// The n-th single-token wildcard of the source (0-based).
    Token(usize),
    /// What the source's trailing `>` matched.
    Rest,
}

/// A compiled rewrite from one pattern to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectTransform {
    from: Box<[u8]>,
    parts: Vec<Part>,
}

impl SubjectTransform {
    /// Builds the transform from `from` to `to`.
    ///
    /// # Errors
    /// When either pattern is not a valid subject, the destination refers to a wildcard the
    /// source does not have, or leaves one of the source's wildcards unused.
    pub fn new(from: &[u8], to: &[u8]) -> Result<Self, TransformError> {
        if !is_valid_subject(from) {
            return Err(TransformError::InvalidSource);
        }
        if to.is_empty() || to.split(|&b| b == b'.').any(<[u8]>::is_empty) {
            return Err(TransformError::InvalidDestination);
        }
        let tokens = from.split(|&b| b == b'.');
        let stars = tokens.clone().filter(|t| *t == b"*").count();
        let has_rest = tokens.clone().any(|t| t == b">");
        if stars > CAPTURES_MAX {
            return Err(TransformError::TooManyWildcards);
        }
        let mut used = [false; CAPTURES_MAX + 1];
        let mut next_star = 0;
        let mut parts = Vec::new();
        for token in to.split(|&b| b == b'.') {
            let part = match token {
                b"*" => {
                    next_star += 1;
                    wildcard(next_star, stars, has_rest)?
                }
                b">" if has_rest => Part::Rest,
                b">" => return Err(TransformError::IndexOutOfRange),
                other => match reference(other) {
                    Some(n) => wildcard(n, stars, has_rest)?,
                    None => Part::Literal(other.into()),
                },
            };
            let slot = match &part {
                Part::Token(i) => used.get_mut(*i),
                Part::Rest => used.get_mut(stars),
                Part::Literal(_) => None,
            };
            if let Some(slot) = slot {
                *slot = true;
            }
            parts.push(part);
        }
        let needed = stars + usize::from(has_rest);
        if used.iter().take(needed).any(|u| !u) {
            return Err(TransformError::UnusedWildcard);
        }
        Ok(Self {
            from: from.into(),
            parts,
        })
    }

    /// The source pattern.
    pub fn source(&self) -> &[u8] {
        &self.from
    }

    /// Writes the rewrite of `subject` into `out` (cleared first). Returns false, leaving `out`
    /// empty, when `subject` does not match the source pattern.
    pub fn apply(&self, subject: &[u8], out: &mut Vec<u8>) -> bool {
        out.clear();
        let mut captures: [&[u8]; CAPTURES_MAX] = [&[]; CAPTURES_MAX];
        let mut rest: &[u8] = &[];
        let mut count = 0;
        let mut pat = Some(&*self.from);
        let mut lit = Some(subject);
        loop {
            match (pat, lit) {
                (None, None) => break,
                (Some(p), Some(l)) => {
                    let (ptok, prest) = split_token(p);
                    if ptok == b">" {
                        rest = l;
                        break;
                    }
                    let (ltok, lrest) = split_token(l);
                    if ltok.is_empty() {
                        return false;
                    }
                    if ptok == b"*" {
                        let Some(slot) = captures.get_mut(count) else {
                            return false;
                        };
                        *slot = ltok;
                        count += 1;
                    } else if ptok != ltok {
                        return false;
                    }
                    pat = prest;
                    lit = lrest;
                }
                _ => return false,
            }
        }
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push(b'.');
            }
            match part {
                Part::Literal(text) => out.extend_from_slice(text),
                Part::Token(n) => out.extend_from_slice(captures.get(*n).copied().unwrap_or(&[])),
                Part::Rest => out.extend_from_slice(rest),
            }
        }
        true
    }
}

/// The part for source wildcard number `n` (1-based; `stars + 1` is the trailing `>`).
fn wildcard(n: usize, stars: usize, has_rest: bool) -> Result<Part, TransformError> {
    match n {
        0 => Err(TransformError::IndexOutOfRange),
        n if n <= stars => Ok(Part::Token(n - 1)),
        n if n == stars + 1 && has_rest => Ok(Part::Rest),
        _ => Err(TransformError::IndexOutOfRange),
    }
}

/// `$N` or `{{wildcard(N)}}` (spaces allowed inside the braces), as a number.
fn reference(token: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(token).ok()?;
    if let Some(n) = text.strip_prefix('$') {
        return n.parse().ok();
    }
    let inner = text.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let args = inner.strip_prefix("wildcard")?.trim_start();
    args.strip_prefix('(')?
        .strip_suffix(')')?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(from: &str, to: &str, subject: &str) -> Option<String> {
        let t = SubjectTransform::new(from.as_bytes(), to.as_bytes()).unwrap();
        let mut out = Vec::new();
        t.apply(subject.as_bytes(), &mut out)
            .then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn transform_prefix_and_positional_wildcards() {
        assert_eq!(rewrite("s.>", "p.s.>", "s.a.b").as_deref(), Some("p.s.a.b"));
        assert_eq!(
            rewrite("s.x", "mapped.x", "s.x").as_deref(),
            Some("mapped.x")
        );
        assert_eq!(rewrite("s.*.x", "t.*.y", "s.a.x").as_deref(), Some("t.a.y"));
        assert_eq!(rewrite("a.*.*", "b.*.*", "a.1.2").as_deref(), Some("b.1.2"));
        assert_eq!(
            rewrite("a.*.>", "b.>.*", "a.1.2.3").as_deref(),
            Some("b.2.3.1")
        );
        assert_eq!(rewrite("s.>", "p.s.>", "t.a"), None);
        assert_eq!(rewrite("s.*", "p.*", "s.a.b"), None);
    }

    #[test]
    fn transform_numbered_references() {
        assert_eq!(
            rewrite("a.*.*", "b.$2.$1", "a.1.2").as_deref(),
            Some("b.2.1")
        );
        assert_eq!(
            rewrite("a.*.>", "{{wildcard(2)}}.{{ wildcard( 1 ) }}", "a.x.y.z").as_deref(),
            Some("y.z.x")
        );
    }

    #[test]
    fn transform_refusals() {
        let err = |from: &str, to: &str| SubjectTransform::new(from.as_bytes(), to.as_bytes());
        assert_eq!(err("a.*", "b"), Err(TransformError::UnusedWildcard));
        assert_eq!(err("a.*", "b.*.*"), Err(TransformError::IndexOutOfRange));
        assert_eq!(err("a", "b.>"), Err(TransformError::IndexOutOfRange));
        assert_eq!(err("a..b", "b"), Err(TransformError::InvalidSource));
        assert_eq!(err("a.*", "b..*"), Err(TransformError::InvalidDestination));
    }
}
