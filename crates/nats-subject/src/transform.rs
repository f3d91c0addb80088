//! Rewriting a subject matched by one pattern into the shape of another, with the mapping
//! functions of Go's subject transforms.
//!
//! Two constructors share one engine:
//! - [`SubjectTransform::new`] for account imports: a stream import of `s.>` with prefix `p`
//!   rewrites `s.a.b` to `p.s.a.b`; an import `s.*.x` to `t.*.y` rewrites `s.a.x` to `t.a.y`.
//!   The destination names the source's wildcards positionally (`*` is the next single-token
//!   wildcard, `>` the trailing one) or by number (`$1`, `{{wildcard(1)}}`, counting from one,
//!   `>` included); every source wildcard must be used, as Go's strict transforms require.
//! - [`SubjectTransform::mapping`] for everything else (Go's `NewSubjectTransform`: stream and
//!   source transforms, republish, account mappings): a destination token may call any
//!   mapping function (see the `mapping` module for the syntax, `transform_functions` for the
//!   outputs); `$0` and other indexes below one read the subject's first token, as in Go.
//!
//! Applying a transform allocates nothing besides the output's growth: the matched subject's
//! wildcard tokens are kept in a fixed array.

use crate::mapping::{dest_err, placeholder, Cut, DestinationError, Placeholder, TransformError};
use crate::transform_functions::{fnv1a_32, write_cut, write_partition, write_random, write_split};
use crate::validate::{is_valid_subject, split_token};

/// Most single-token wildcards a source pattern may have (Go has no limit).
const CAPTURES_MAX: usize = 32;

/// Which token of the matched subject a function reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The n-th single-token wildcard's (0-based).
    Capture(usize),
    /// The subject's first token (Go's reading of wildcard indexes below one).
    First,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Box<[u8]>),
    Token(Source),
    /// What the source's trailing `>` matched.
    Rest,
    /// FNV-1a of the listed tokens, or of the whole subject when none is listed.
    Partition {
        buckets: i32,
        keys: Box<[Source]>,
    },
    Cut {
        cut: Cut,
        source: Source,
        number: i32,
    },
    Split {
        source: Source,
        delimiter: Box<[u8]>,
    },
    Random(i32),
}

/// A compiled rewrite from one pattern to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectTransform {
    from: Box<[u8]>,
    parts: Vec<Part>,
}

/// The tokens of a subject a match captured.
struct Captures<'s> {
    subject: &'s [u8],
    tokens: [&'s [u8]; CAPTURES_MAX],
    rest: &'s [u8],
}

impl<'s> Captures<'s> {
    fn get(&self, source: Source) -> &'s [u8] {
        match source {
            Source::Capture(i) => self.tokens.get(i).copied().unwrap_or_default(),
            Source::First => split_token(self.subject).0,
        }
    }
}

fn count_tokens(subject: &[u8], wildcard: &[u8]) -> usize {
    subject
        .split(|&b| b == b'.')
        .filter(|t| *t == wildcard)
        .count()
}

/// Go's `subjectInfo`: non-empty tokens, nothing after `>` (whitespace is not checked).
fn is_mapping_subject(subject: &[u8]) -> bool {
    let mut after_full = false;
    !subject.is_empty()
        && subject.split(|&b| b == b'.').all(|t| {
            let ok = !t.is_empty() && !after_full;
            after_full |= t == b">";
            ok
        })
}

/// The token a 1-based wildcard index reads in a mapping destination.
fn mapping_source(index: i64, stars: usize, token: &[u8]) -> Result<Source, TransformError> {
    match usize::try_from(index) {
        Ok(n) if n > stars => Err(TransformError::Destination {
            why: DestinationError::IndexOutOfRange,
            token: format!("{}: [{index}]", String::from_utf8_lossy(token)),
        }),
        Ok(n) if n >= 1 => Ok(Source::Capture(n - 1)),
        _ => Ok(Source::First),
    }
}

/// The part for import wildcard number `n` (1-based; `stars + 1` is the trailing `>`).
fn import_wildcard(
    n: i64,
    stars: usize,
    has_rest: bool,
    token: &[u8],
) -> Result<Part, TransformError> {
    match usize::try_from(n) {
        Ok(n) if n >= 1 && n <= stars => Ok(Part::Token(Source::Capture(n - 1))),
        Ok(n) if n == stars + 1 && has_rest => Ok(Part::Rest),
        _ => Err(TransformError::Destination {
            why: DestinationError::IndexOutOfRange,
            token: format!("{}: [{n}]", String::from_utf8_lossy(token)),
        }),
    }
}

impl SubjectTransform {
    /// Builds an import's transform from `from` to `to`.
    ///
    /// # Errors
    /// When either pattern is not a valid subject, the destination calls a function other than
    /// `wildcard`, refers to a wildcard the source does not have, or leaves one unused.
    pub fn new(from: &[u8], to: &[u8]) -> Result<Self, TransformError> {
        if !is_valid_subject(from)
            || to.is_empty()
            || to.split(|&b| b == b'.').any(<[u8]>::is_empty)
        {
            return Err(TransformError::BadSubject);
        }
        let stars = count_tokens(from, b"*");
        let has_rest = count_tokens(from, b">") > 0;
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
                    import_wildcard(next_star, stars, has_rest, token)?
                }
                b">" if has_rest => Part::Rest,
                b">" => return Err(dest_err(DestinationError::IndexOutOfRange, token)),
                other => match placeholder(other)? {
                    Placeholder::Literal => Part::Literal(other.into()),
                    Placeholder::Wildcard(n) => import_wildcard(n, stars, has_rest, token)?,
                    _ => return Err(dest_err(DestinationError::NotSupportedForImport, token)),
                },
            };
            let slot = match &part {
                Part::Token(Source::Capture(i)) => used.get_mut(*i),
                Part::Rest => used.get_mut(stars),
                _ => None,
            };
            if let Some(slot) = slot {
                *slot = true;
            }
            parts.push(part);
        }
        let needed = stars + usize::from(has_rest);
        if used.iter().take(needed).any(|u| !u) {
            return Err(dest_err(DestinationError::NotUsingAllWildcards, to));
        }
        Ok(Self {
            from: from.into(),
            parts,
        })
    }

    /// Go's `NewSubjectTransform`: the mapping from `src` (all subjects when empty) to `dest`,
    /// or `None` when `dest` is empty (no mapping).
    ///
    /// # Errors
    /// Go's error for the first problem found.
    pub fn mapping(src: &str, dest: &str) -> Result<Option<Self>, TransformError> {
        Self::build(src, dest, false)
    }

    /// Go's `NewSubjectTransformStrict` (a reversible import mapping): as
    /// [`Self::mapping`], but with source wildcards the destination may only place them
    /// (`$N`, `{{wildcard(N)}}`), and must place as many as the source has.
    ///
    /// # Errors
    /// Go's error for the first problem found.
    pub fn strict(src: &str, dest: &str) -> Result<Option<Self>, TransformError> {
        Self::build(src, dest, true)
    }

    fn build(src: &str, dest: &str, strict: bool) -> Result<Option<Self>, TransformError> {
        if dest.is_empty() {
            return Ok(None);
        }
        let src = if src.is_empty() { ">" } else { src }.as_bytes();
        let dest = dest.as_bytes();
        let stars = count_tokens(src, b"*");
        let has_rest = count_tokens(src, b">") > 0;
        if !is_mapping_subject(src)
            || !is_mapping_subject(dest)
            || count_tokens(dest, b"*") > 0
            || has_rest != (count_tokens(dest, b">") > 0)
        {
            return Err(TransformError::BadSubject);
        }
        if stars > CAPTURES_MAX {
            return Err(TransformError::TooManyWildcards);
        }
        let with_wildcards = stars > 0 || has_rest;
        let mut placed = 0;
        let mut parts = Vec::new();
        for token in dest.split(|&b| b == b'.') {
            let part = mapping_part(token, stars, has_rest)?;
            match part {
                Part::Token(_) => placed += 1,
                Part::Literal(_) | Part::Rest => {}
                _ if strict && with_wildcards => {
                    return Err(dest_err(DestinationError::NotSupportedForImport, token));
                }
                _ => {}
            }
            parts.push(part);
        }
        if strict && with_wildcards && placed < stars {
            return Err(dest_err(DestinationError::NotUsingAllWildcards, dest));
        }
        Ok(Some(Self {
            from: src.into(),
            parts,
        }))
    }

    /// The source pattern.
    pub fn source(&self) -> &[u8] {
        &self.from
    }

    /// Whether `subject` matches the source pattern (the condition for [`Self::apply`]).
    pub fn matches(&self, subject: &[u8]) -> bool {
        self.capture(subject).is_some()
    }

    /// Writes the rewrite of `subject` into `out` (cleared first). Returns false, leaving `out`
    /// empty, when `subject` does not match the source pattern. A wildcard token of `subject`
    /// matches only the same wildcard in the pattern (the caller checks a published subject
    /// is literal).
    pub fn apply(&self, subject: &[u8], out: &mut Vec<u8>) -> bool {
        out.clear();
        let Some(captures) = self.capture(subject) else {
            return false;
        };
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push(b'.');
            }
            match part {
                Part::Literal(text) => out.extend_from_slice(text),
                Part::Token(source) => out.extend_from_slice(captures.get(*source)),
                Part::Rest => out.extend_from_slice(captures.rest),
                Part::Partition { buckets, keys } => {
                    let hash = if keys.is_empty() {
                        fnv1a_32([subject])
                    } else {
                        fnv1a_32(keys.iter().map(|k| captures.get(*k)))
                    };
                    write_partition(out, hash, *buckets);
                }
                Part::Cut {
                    cut,
                    source,
                    number,
                } => write_cut(out, *cut, captures.get(*source), *number),
                Part::Split { source, delimiter } => {
                    write_split(out, captures.get(*source), delimiter);
                }
                Part::Random(max) => write_random(out, *max),
            }
        }
        true
    }

    /// Matches `subject` against the source pattern, keeping its wildcard tokens.
    fn capture<'s>(&self, subject: &'s [u8]) -> Option<Captures<'s>> {
        let mut captures = Captures {
            subject,
            tokens: [&[]; CAPTURES_MAX],
            rest: &[],
        };
        let mut count = 0;
        let mut pat = Some(&*self.from);
        let mut lit = Some(subject);
        loop {
            match (pat, lit) {
                (None, None) => return Some(captures),
                (Some(p), Some(l)) => {
                    let (ptok, prest) = split_token(p);
                    if ptok == b">" {
                        captures.rest = l;
                        return Some(captures);
                    }
                    let (ltok, lrest) = split_token(l);
                    if ltok.is_empty() {
                        return None;
                    }
                    if ptok == b"*" {
                        *captures.tokens.get_mut(count)? = ltok;
                        count += 1;
                    } else if ptok != ltok {
                        return None;
                    }
                    pat = prest;
                    lit = lrest;
                }
                _ => return None,
            }
        }
    }
}

/// One destination token of a mapping (Go's non-strict transform).
fn mapping_part(token: &[u8], stars: usize, has_rest: bool) -> Result<Part, TransformError> {
    if token == b">" {
        return Ok(Part::Rest);
    }
    let with_wildcards = stars > 0 || has_rest;
    let source = |index: i64| mapping_source(index, stars, token);
    Ok(match placeholder(token)? {
        Placeholder::Literal => Part::Literal(token.into()),
        Placeholder::Random(max) => Part::Random(max),
        // Without source wildcards a partition hashes the whole subject, whatever it lists.
        Placeholder::Partition { buckets, .. } if !with_wildcards => Part::Partition {
            buckets,
            keys: Box::default(),
        },
        _ if !with_wildcards => {
            return Err(dest_err(DestinationError::IndexOutOfRange, token));
        }
        Placeholder::Wildcard(index) => Part::Token(source(index)?),
        Placeholder::Partition { buckets, indexes } => Part::Partition {
            buckets,
            keys: indexes.into_iter().map(source).collect::<Result<_, _>>()?,
        },
        Placeholder::Cut { cut, index, number } => Part::Cut {
            cut,
            source: source(index)?,
            number,
        },
        Placeholder::Split { index, delimiter } => Part::Split {
            source: source(index)?,
            delimiter,
        },
    })
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
        let err = |from: &str, to: &str| {
            SubjectTransform::new(from.as_bytes(), to.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("a.*", "b"),
            "invalid mapping destination: not using all of the token wildcard(s) in b"
        );
        assert_eq!(
            err("a.*", "b.*.*"),
            "invalid mapping destination: wildcard index out of range in *: [2]"
        );
        assert_eq!(
            err("a", "b.>"),
            "invalid mapping destination: wildcard index out of range in >"
        );
        assert_eq!(err("a..b", "b"), "invalid subject");
        assert_eq!(err("a.*", "b..*"), "invalid subject");
        assert_eq!(
            err("a.*", "b.{{partition(2,1)}}"),
            "invalid mapping destination: the only mapping function allowed for import \
             transforms is {{Wildcard()}} in {{partition(2,1)}}"
        );
    }

    fn map(src: &str, dest: &str, subject: &str) -> String {
        let t = SubjectTransform::mapping(src, dest).unwrap().unwrap();
        let mut out = Vec::new();
        assert!(
            t.apply(subject.as_bytes(), &mut out),
            "{src} -> {dest}: {subject}"
        );
        String::from_utf8(out).unwrap()
    }

    /// Go v2.15.2's own expectations (`TestSubjectTransforms`), partition numbers included.
    #[test]
    fn transform_mapping_functions_as_go() {
        let cases = [
            ("", "prefix.>", "foo", "prefix.foo"),
            ("foo", "bar", "foo", "bar"),
            ("foo.*.bar.*.baz", "req.$2.$1", "foo.A.bar.B.baz", "req.B.A"),
            (
                "foo.*.bar.*.baz",
                "req.{{wildcard(2)}}.{{wildcard(1)}}",
                "foo.A.bar.B.baz",
                "req.B.A",
            ),
            ("baz.>", "my.pre.>", "baz.1.2.3", "my.pre.1.2.3"),
            ("*", "foo.bar.$1", "foo", "foo.bar.foo"),
            ("*", "{{splitfromleft(1,3)}}", "12345", "123.45"),
            ("*", "{{SplitFromRight(1,3)}}", "12345", "12.345"),
            ("*", "{{SliceFromLeft(1,3)}}", "1234567890", "123.456.789.0"),
            (
                "*",
                "{{SliceFromRight(1,3)}}",
                "1234567890",
                "1.234.567.890",
            ),
            ("*", "{{split(1,-)}}", "-abc-def--ghi-", "abc.def.ghi"),
            ("*", "{{split(1,-)}}", "abc-def--ghi-", "abc.def.ghi"),
            (
                "*.*",
                "{{split(2,-)}}.{{splitfromleft(1,2)}}",
                "foo.-abc-def--ghij-",
                "abc.def.ghij.fo.o",
            ),
            ("*", "{{right(1,1)}}", "1234", "4"),
            ("*", "{{right(1,3)}}", "1234", "234"),
            ("*", "{{right(1,6)}}", "1234", "1234"),
            ("*", "{{left(1,1)}}", "1234", "1"),
            ("*", "{{left(1,3)}}", "1234", "123"),
            ("*", "{{left(1,6)}}", "1234", "1234"),
            ("*", "bar.{{partition(0)}}", "baz", "bar.0"),
            ("*", "bar.{{partition(10, 0)}}", "foo", "bar.3"),
            ("*.*", "bar.{{partition(10)}}", "foo.bar", "bar.6"),
            ("*", "bar.{{partition(10)}}", "foo", "bar.3"),
            ("*", "bar.{{partition(10)}}", "baz", "bar.0"),
            ("*", "bar.{{partition(10)}}", "qux", "bar.9"),
            ("*", "bar.{{random(0)}}", "qux", "bar.0"),
            ("foo.bar", "baz.{{partition(10)}}", "foo.bar", "baz.6"),
            ("foo.baz", "qux.{{partition(10)}}", "foo.baz", "qux.4"),
            (
                "test.subject",
                "result.{{partition(5)}}",
                "test.subject",
                "result.0",
            ),
        ];
        for (src, dest, subject, expected) in cases {
            assert_eq!(
                map(src, dest, subject),
                expected,
                "{src} -> {dest}: {subject}"
            );
        }
        for _ in 0..100 {
            let n: u32 = map("*", "bar.{{random(6)}}", "qux")[4..].parse().unwrap();
            assert!(n < 6);
        }
        // `$0` reads the subject's first token.
        assert_eq!(map("a.*", "b.$0.$1", "a.x"), "b.a.x");
        assert!(SubjectTransform::mapping("a", "").unwrap().is_none());
    }

    #[test]
    fn transform_strict_as_go() {
        let strict = |src: &str, dest: &str| SubjectTransform::strict(src, dest).map(|_| ());
        assert!(strict("foo.*", "bar.{{Wildcard(1)}}").is_ok());
        assert!(strict("foo.*.>", "bar.$1.>").is_ok());
        assert!(strict("foo", "bar.{{partition(3)}}").is_ok());
        assert_eq!(
            strict("foo.*.*", "bar.$2").unwrap_err().to_string(),
            "invalid mapping destination: not using all of the token wildcard(s) in bar.$2"
        );
        assert!(strict("foo.*", "foo.$foo").is_err());
        assert_eq!(
            strict("foo.*", "bar.{{Partition(2,1)}}")
                .unwrap_err()
                .to_string(),
            "invalid mapping destination: the only mapping function allowed for import \
             transforms is {{Wildcard()}} in {{Partition(2,1)}}"
        );
        assert!(crate::is_wildcard_reference("$1"));
        assert!(crate::is_wildcard_reference("{{ wildcard(2) }}"));
        assert!(!crate::is_wildcard_reference("$0"));
        assert!(!crate::is_wildcard_reference("{{wildcard()}}"));
    }

    #[test]
    fn transform_mapping_refusals_as_go() {
        let bad = [
            ("foo..", "bar"),
            ("foo.*", "bar.*"),
            ("foo.*", "bar.$2"),
            ("foo.*", "bar.$1.>"),
            ("foo.>", "bar.baz"),
            ("foo.*", "foo.{{wildcard(2)}}"),
            ("foo.*", "foo.{{unimplemented(1)}}"),
            ("foo.*", "foo.{{partition()}}"),
            ("foo.*", "foo.{{random()}}"),
            ("foo.*", "foo.{{wildcard(foo)}}"),
            ("foo.*", "foo.{{wildcard()}}"),
            ("foo.*", "foo.{{wildcard(1,2)}}"),
            ("foo.*", "foo.{{ wildcard5) }}"),
            ("foo.*", "foo.{{splitLeft(2,2}}"),
            ("foo", "bla.{{wildcard(1)}}"),
            ("foo.*", "foo.{{partition(2147483648)}}"),
            ("foo.*", "foo.{{random(2147483648)}}"),
        ];
        for (src, dest) in bad {
            assert!(
                SubjectTransform::mapping(src, dest).is_err(),
                "{src} -> {dest}"
            );
        }
        let ok = [
            ("foo.*.*", "bar.$2"),
            ("foo.*.*", "bar.{{partition(1)}}"),
            ("foo.*.*", "bar.{{random(5)}}"),
            ("*", "{{splitfromleft(1,1)}}"),
            ("*.*", "{{partition(10,1,2)}}"),
            ("foo.*", "foo.{{partition(2147483647)}}"),
            ("foo.bar", "foo.{{random(2147483647)}}"),
            ("foo.*", "foo.{{ wildcard(1) }}"),
        ];
        for (src, dest) in ok {
            assert!(
                SubjectTransform::mapping(src, dest).is_ok(),
                "{src} -> {dest}"
            );
        }
    }
}
