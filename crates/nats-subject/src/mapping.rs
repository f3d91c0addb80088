//! The syntax of a mapping destination token, shared by every subject mapping (account imports,
//! a stream's `subject_transform`, a source's transforms, republish, account `mappings`): what
//! one token asks for, and Go's refusal texts.
//!
//! A token is a literal, `$N` (the N-th `*` of the source), or a mustache call
//! `{{ function(args) }}`. Go finds a call with an unanchored regular expression per function,
//! tried in a fixed order, so `{{x}}{{wildcard(1)}}` is a wildcard reference and `{{wildcard(1)
//! }}x}}` one too: [`find_call`] reproduces that search (leftmost start, greedy argument text
//! that cannot cross a newline, `\s` being tab, newline, form feed, carriage return and space).
//! Function names accept either case for the first letter of each word (`splitFromLeft`).

use std::fmt;

/// Why a mapping cannot be built, worded as Go words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransformError {
    /// Go's `ErrBadSubject`: a source or destination that is not a subject, a `*` in the
    /// destination, or a `>` on one side only.
    BadSubject,
    /// `invalid mapping destination: <why>`, with ` in <token>` when a token is named.
    Destination {
        why: DestinationError,
        token: String,
    },
    /// The source has more `*` tokens than a transform captures (a limit Go does not have).
    TooManyWildcards,
}

/// What is wrong with a mapping destination: Go's `ErrMappingDestination*` reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestinationError {
    InvalidTransform,
    UnknownFunction,
    IndexOutOfRange,
    NotEnoughArgs,
    InvalidArg,
    TooManyArgs,
    NotSupportedForImport,
    NotUsingAllWildcards,
}

impl DestinationError {
    /// Go's text for the reason.
    pub fn text(self) -> &'static str {
        match self {
            Self::InvalidTransform => "invalid transform",
            Self::UnknownFunction => "unknown function",
            Self::IndexOutOfRange => "wildcard index out of range",
            Self::NotEnoughArgs => "not enough arguments passed to the function",
            Self::InvalidArg => "function argument is invalid or in the wrong format",
            Self::TooManyArgs => "too many arguments passed to the function",
            Self::NotSupportedForImport => {
                "the only mapping function allowed for import transforms is {{Wildcard()}}"
            }
            Self::NotUsingAllWildcards => "not using all of the token wildcard(s)",
        }
    }
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadSubject => f.write_str("invalid subject"),
            Self::Destination { why, token } if token.is_empty() => {
                write!(f, "invalid mapping destination: {}", why.text())
            }
            Self::Destination { why, token } => {
                write!(f, "invalid mapping destination: {} in {token}", why.text())
            }
            Self::TooManyWildcards => f.write_str("too many wildcards"),
        }
    }
}

impl std::error::Error for TransformError {}

pub(crate) fn dest_err(why: DestinationError, token: &[u8]) -> TransformError {
    TransformError::Destination {
        why,
        token: String::from_utf8_lossy(token).into_owned(),
    }
}

/// The functions taking a wildcard index and a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    SplitFromLeft,
    SplitFromRight,
    SliceFromLeft,
    SliceFromRight,
    Left,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Function {
    Wildcard,
    Partition,
    Cut(Cut),
    Split,
    Random,
}

/// The functions in the order Go tries them, with their canonical names.
const FUNCTIONS: [(Function, &str); 10] = [
    (Function::Wildcard, "Wildcard"),
    (Function::Partition, "Partition"),
    (Function::Cut(Cut::SplitFromLeft), "SplitFromLeft"),
    (Function::Cut(Cut::SplitFromRight), "SplitFromRight"),
    (Function::Cut(Cut::SliceFromLeft), "SliceFromLeft"),
    (Function::Cut(Cut::SliceFromRight), "SliceFromRight"),
    (Function::Cut(Cut::Right), "Right"),
    (Function::Cut(Cut::Left), "Left"),
    (Function::Split, "Split"),
    (Function::Random, "Random"),
];

/// What one destination token asks for. Wildcard indexes are 1-based and unchecked here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placeholder {
    Literal,
    Wildcard(i64),
    /// `partition(buckets, indexes…)`; no index hashes the whole subject.
    Partition {
        buckets: i32,
        indexes: Vec<i64>,
    },
    Cut {
        cut: Cut,
        index: i64,
        number: i32,
    },
    Split {
        index: i64,
        delimiter: Box<[u8]>,
    },
    Random(i32),
}

/// Go's `\s`.
fn is_re_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn skip_space(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| is_re_space(**b)).count();
    s.get(n..).unwrap_or_default()
}

/// Whether `text` spells `canonical`, the first letter of each word in either case.
fn name_matches(text: &[u8], canonical: &str) -> bool {
    text.len() == canonical.len()
        && canonical.bytes().zip(text).all(|(c, t)| {
            if c.is_ascii_uppercase() {
                c.eq_ignore_ascii_case(t)
            } else {
                c == *t
            }
        })
}

/// Whether the token has the `{{…}}` shape Go treats as a function call.
pub(crate) fn is_mustache(token: &[u8]) -> bool {
    token.len() > 4 && token.starts_with(b"{{") && token.ends_with(b"}}")
}

/// The argument text of the first `{{ name(…) }}` in `token`, as Go's regular expression
/// `{{\s*name\s*\((.*)\)\s*}}` finds it.
fn find_call<'a>(token: &'a [u8], name: &str) -> Option<&'a [u8]> {
    (0..token.len()).find_map(|start| call_at(token.get(start..)?, name))
}

fn call_at<'a>(s: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let s = skip_space(s.strip_prefix(b"{{")?);
    let (head, s) = s.split_at_checked(name.len())?;
    if !name_matches(head, name) {
        return None;
    }
    let s = skip_space(s).strip_prefix(b"(")?;
    // `(.*)` is greedy and stops at the first newline: the last `)` before it that is followed
    // by optional spaces and `}}`.
    let line = s.iter().position(|&b| b == b'\n').unwrap_or(s.len());
    (0..line)
        .rev()
        .find(|&p| {
            s.get(p) == Some(&b')')
                && skip_space(s.get(p + 1..).unwrap_or_default()).starts_with(b"}}")
        })
        .and_then(|p| s.get(..p))
}

/// Whether a `{{…}}` token calls a function Go knows (Go's `ValidateMapping` pre-check).
pub(crate) fn calls_known_function(token: &[u8]) -> bool {
    FUNCTIONS
        .iter()
        .any(|(_, name)| find_call(token, name).is_some())
}

/// `subject` as a mapping destination that keeps each `*` token: the `*` tokens become
/// `$1`, `$2`, … in order (`a.*.b.*` → `a.$1.b.$2`), as Go's checks of service imports and
/// its weighted mappings' implied remainder write them.
pub fn stars_numbered(subject: &str) -> String {
    let mut star = 0;
    let tokens: Vec<String> = subject
        .split('.')
        .map(|t| {
            if t == "*" {
                star += 1;
                format!("${star}")
            } else {
                t.to_owned()
            }
        })
        .collect();
    tokens.join(".")
}

/// Whether `token` places one source wildcard (`$1`…`$9…`, or `{{wildcard(N)}}` with one
/// argument): Go's reading of an import's exported subject, where such a token stands for `*`.
pub fn is_wildcard_reference(token: &str) -> bool {
    let bytes = token.as_bytes();
    if let [b'$', b'1'..=b'9', ..] = bytes {
        return true;
    }
    find_call(bytes, "Wildcard").is_some_and(|args| {
        let args = split_args(args);
        matches!(args.as_slice(), [one] if !one.is_empty())
    })
}

/// Go's `,\s*` split of an argument list.
fn split_args(text: &[u8]) -> Vec<&[u8]> {
    text.split(|&b| b == b',')
        .enumerate()
        .map(|(i, a)| if i == 0 { a } else { skip_space(a) })
        .collect()
}

/// Go's `strconv.Atoi` of the argument with spaces trimmed.
fn int_arg(arg: &[u8]) -> Option<i64> {
    let n = arg.iter().take_while(|b| **b == b' ').count();
    let arg = arg.get(n..)?;
    let m = arg.iter().rev().take_while(|b| **b == b' ').count();
    std::str::from_utf8(arg.get(..arg.len() - m)?)
        .ok()?
        .parse()
        .ok()
}

/// Go keeps the low 32 bits of a partition or random bound it checked only against
/// `MaxInt32`.
#[allow(clippy::cast_possible_truncation)]
fn low_32(n: i64) -> i32 {
    n as i32
}

/// Go's `indexPlaceHolders`: what `token` asks for.
///
/// # Errors
/// Go's error for a malformed call or an unknown function.
pub(crate) fn placeholder(token: &[u8]) -> Result<Placeholder, TransformError> {
    if let [b'$', number @ ..] = token {
        if !number.is_empty() {
            // Other `$` tokens are literals.
            return Ok(int_arg_exact(number).map_or(Placeholder::Literal, Placeholder::Wildcard));
        }
    }
    if !is_mustache(token) {
        return Ok(Placeholder::Literal);
    }
    for (function, name) in FUNCTIONS {
        if let Some(args) = find_call(token, name) {
            return call(function, &split_args(args), token);
        }
    }
    Err(dest_err(DestinationError::UnknownFunction, token))
}

/// `strconv.Atoi` without trimming.
fn int_arg_exact(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn call(function: Function, args: &[&[u8]], token: &[u8]) -> Result<Placeholder, TransformError> {
    use DestinationError::{InvalidArg, NotEnoughArgs, TooManyArgs};
    let err = |why| dest_err(why, token);
    let int = |arg: &[u8]| int_arg(arg).ok_or_else(|| err(InvalidArg));
    let bound = |arg: &[u8]| match int(arg)? {
        n if n > i64::from(i32::MAX) => Err(err(InvalidArg)),
        n => Ok(low_32(n)),
    };
    match (function, args) {
        (Function::Wildcard, [b""]) => Err(err(NotEnoughArgs)),
        (Function::Wildcard, [index]) => Ok(Placeholder::Wildcard(int(index)?)),
        (Function::Partition, [buckets, indexes @ ..]) => Ok(Placeholder::Partition {
            buckets: bound(buckets)?,
            indexes: indexes.iter().map(|a| int(a)).collect::<Result<_, _>>()?,
        }),
        (Function::Cut(cut), [index, number]) => {
            let index = int(index)?;
            let number = int_arg(number)
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| err(InvalidArg))?;
            Ok(Placeholder::Cut { cut, index, number })
        }
        (Function::Split, [index, delimiter]) => {
            let index = int(index)?;
            if delimiter.iter().any(|b| matches!(b, b' ' | b'.')) {
                return Err(err(InvalidArg));
            }
            Ok(Placeholder::Split {
                index,
                delimiter: (*delimiter).into(),
            })
        }
        (Function::Cut(_) | Function::Split | Function::Partition, [] | [_]) => {
            Err(err(NotEnoughArgs))
        }
        (Function::Wildcard | Function::Cut(_) | Function::Split, _) => Err(err(TooManyArgs)),
        (Function::Random, [max]) => Ok(Placeholder::Random(bound(max)?)),
        (Function::Random, _) => Err(err(NotEnoughArgs)),
    }
}

/// Go's `ValidateMapping`: the destination's tokens are checked (a `{{…}}` token must call a
/// known function, no token after `>`, no whitespace in a literal), then the mapping built.
///
/// # Errors
/// Go's error for the first problem found.
pub fn validate_mapping(src: &str, dest: &str) -> Result<(), TransformError> {
    if dest.is_empty() {
        return Ok(());
    }
    let mut after_full_wildcard = false;
    for token in dest.as_bytes().split(|&b| b == b'.') {
        if token.is_empty() || after_full_wildcard {
            return Err(dest_err(DestinationError::InvalidTransform, token));
        }
        if is_mustache(token) {
            if calls_known_function(token) {
                continue;
            }
            return Err(dest_err(DestinationError::UnknownFunction, token));
        }
        if token == b">" {
            after_full_wildcard = true;
        } else if token
            .iter()
            .any(|b| matches!(b, b'\t' | b'\n' | 0x0c | b'\r' | b' '))
        {
            return Err(dest_err(DestinationError::InvalidTransform, b""));
        }
    }
    crate::SubjectTransform::mapping(src, dest).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_placeholder_syntax() {
        assert_eq!(placeholder(b"$2"), Ok(Placeholder::Wildcard(2)));
        assert_eq!(placeholder(b"$x"), Ok(Placeholder::Literal));
        assert_eq!(placeholder(b"$"), Ok(Placeholder::Literal));
        assert_eq!(
            placeholder(b"{{ wildcard( 1 ) }}"),
            Ok(Placeholder::Wildcard(1))
        );
        assert_eq!(
            placeholder(b"{{Wildcard(1)}}"),
            Ok(Placeholder::Wildcard(1))
        );
        assert_eq!(
            placeholder(b"{{splitfromleft(1,2)}}"),
            Ok(Placeholder::Cut {
                cut: Cut::SplitFromLeft,
                index: 1,
                number: 2
            })
        );
        assert_eq!(
            placeholder(b"{{SPLIT(1,-)}}"),
            Err(dest_err(
                DestinationError::UnknownFunction,
                b"{{SPLIT(1,-)}}"
            ))
        );
        assert_eq!(
            placeholder(b"{{sliceFromRight(1, 2)}}"),
            Ok(Placeholder::Cut {
                cut: Cut::SliceFromRight,
                index: 1,
                number: 2
            })
        );
        assert_eq!(
            placeholder(b"{{partition(10,1,2)}}"),
            Ok(Placeholder::Partition {
                buckets: 10,
                indexes: vec![1, 2]
            })
        );
        assert_eq!(placeholder(b"{{random(5)}}"), Ok(Placeholder::Random(5)));
        // Go's search is unanchored and its argument text greedy.
        assert_eq!(
            placeholder(b"{{x}}{{wildcard(1)}}"),
            Ok(Placeholder::Wildcard(1))
        );
        assert_eq!(
            placeholder(b"{{wildcard(1)}}{{wildcard(2)}}"),
            Err(dest_err(
                DestinationError::InvalidArg,
                b"{{wildcard(1)}}{{wildcard(2)}}"
            ))
        );
    }

    #[test]
    fn transform_placeholder_refusals() {
        let why = |token: &str| match placeholder(token.as_bytes()) {
            Err(TransformError::Destination { why, .. }) => Some(why),
            _ => None,
        };
        assert_eq!(why("{{wildcard()}}"), Some(DestinationError::NotEnoughArgs));
        assert_eq!(
            why("{{wildcard(1,2)}}"),
            Some(DestinationError::TooManyArgs)
        );
        assert_eq!(why("{{wildcard(a)}}"), Some(DestinationError::InvalidArg));
        assert_eq!(why("{{partition()}}"), Some(DestinationError::InvalidArg));
        assert_eq!(
            why("{{partition(2147483648)}}"),
            Some(DestinationError::InvalidArg)
        );
        assert_eq!(why("{{left(1)}}"), Some(DestinationError::NotEnoughArgs));
        assert_eq!(why("{{left(1,2,3)}}"), Some(DestinationError::TooManyArgs));
        assert_eq!(
            why("{{left(1,2147483648)}}"),
            Some(DestinationError::InvalidArg)
        );
        assert_eq!(why("{{split(1,a b)}}"), Some(DestinationError::InvalidArg));
        assert_eq!(why("{{random()}}"), Some(DestinationError::InvalidArg));
        assert_eq!(
            why("{{random(1,2)}}"),
            Some(DestinationError::NotEnoughArgs)
        );
        assert_eq!(why("{{foo(1)}}"), Some(DestinationError::UnknownFunction));
    }

    #[test]
    fn transform_validate_mapping_texts() {
        let text = |src: &str, dest: &str| validate_mapping(src, dest).unwrap_err().to_string();
        assert!(validate_mapping("a.*.*", "b.{{wildcard(2)}}.{{Partition(3,1)}}").is_ok());
        assert!(validate_mapping("a.*", "b.{{split(1,-)}}").is_ok());
        assert!(validate_mapping("a", "b.{{partition(3)}}").is_ok());
        assert!(validate_mapping("a.*", "b.{{left(1,2)}}").is_ok());
        assert!(validate_mapping("a.*", "b.{{ wildcard(1) }}").is_ok());
        assert_eq!(
            text("a.*", "b..c"),
            "invalid mapping destination: invalid transform"
        );
        assert_eq!(
            text("a.*", "b.{{foo(1)}}"),
            "invalid mapping destination: unknown function in {{foo(1)}}"
        );
        assert_eq!(
            text("a.*", "b.$2"),
            "invalid mapping destination: wildcard index out of range in $2: [2]"
        );
        assert_eq!(text("a.*", "b.*"), "invalid subject");
        assert_eq!(
            text("a", "b.$1"),
            "invalid mapping destination: wildcard index out of range in $1"
        );
    }
}
