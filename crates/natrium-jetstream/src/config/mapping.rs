//! Whether a subject mapping (a stream's, mirror's or source's `subject_transform`, or a
//! republish) can be built, with Go's error texts: `invalid subject`, or `invalid mapping
//! destination: <why> in <token>`. Only the check lives here; applying a mapping is the
//! engine's, with the mapping functions Go supports (`{{wildcard(n)}}`, `$n`, `{{partition}}`,
//! `{{split…}}`, `{{slice…}}`, `{{left}}`, `{{right}}`, `{{random}}`).

use std::fmt;

use nats_subject::is_valid_subject;

/// Why a mapping is refused, worded as Go words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingError {
    /// Go's `ErrBadSubject`.
    BadSubject,
    /// `invalid mapping destination: <reason>`, with ` in <token>` when a token is named.
    Destination { reason: &'static str, token: String },
}

const INVALID_TRANSFORM: &str = "invalid transform";
const UNKNOWN_FUNCTION: &str = "unknown function";
const INDEX_OUT_OF_RANGE: &str = "wildcard index out of range";
const NOT_ENOUGH_ARGS: &str = "not enough arguments passed to the function";
const INVALID_ARG: &str = "function argument is invalid or in the wrong format";
const TOO_MANY_ARGS: &str = "too many arguments passed to the function";

impl fmt::Display for MappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MappingError::BadSubject => f.write_str("invalid subject"),
            MappingError::Destination { reason, token } if token.is_empty() => {
                write!(f, "invalid mapping destination: {reason}")
            }
            MappingError::Destination { reason, token } => {
                write!(f, "invalid mapping destination: {reason} in {token}")
            }
        }
    }
}

fn dest_err(reason: &'static str, token: &str) -> MappingError {
    MappingError::Destination {
        reason,
        token: token.to_owned(),
    }
}

/// What a destination token asks for.
enum Placeholder {
    Literal,
    /// Functions reading the listed source wildcards (1-based).
    Wildcards(Vec<i64>),
    /// `partition`, with the source wildcards it hashes: usable without any too.
    Partition(Vec<i64>),
    /// `random`: reads no wildcard.
    Unindexed,
}

/// Go's `ValidateMapping`: the destination's tokens, then whether the transform can be built.
///
/// # Errors
/// Go's error for the first problem found.
pub fn validate_mapping(src: &str, dest: &str) -> Result<(), MappingError> {
    if dest.is_empty() {
        return Ok(());
    }
    let mut after_full_wildcard = false;
    for token in dest.split('.') {
        if token.is_empty() || after_full_wildcard {
            return Err(dest_err(INVALID_TRANSFORM, token));
        }
        if let Some((name, _)) = mustache(token) {
            // The validation pass knows fewer functions than the transform itself.
            if function(name).is_some_and(|f| f != "Left" && f != "Right") {
                continue;
            }
            return Err(dest_err(UNKNOWN_FUNCTION, token));
        }
        if token == ">" {
            after_full_wildcard = true;
        } else if token.contains(['\t', '\n', '\x0c', '\r', ' ']) {
            return Err(dest_err(INVALID_TRANSFORM, ""));
        }
    }
    new_subject_transform(src, dest)
}

/// Go's `NewSubjectTransform` (not strict): whether `src` can be mapped to `dest`.
///
/// # Errors
/// Go's error for the first problem found.
pub fn new_subject_transform(src: &str, dest: &str) -> Result<(), MappingError> {
    if dest.is_empty() {
        return Ok(());
    }
    let src = if src.is_empty() { ">" } else { src };
    let count = |s: &str, w: &str| s.split('.').filter(|t| *t == w).count();
    let src_stars = count(src, "*");
    let src_full = count(src, ">") > 0;
    if !is_valid_subject(src.as_bytes())
        || !is_valid_subject(dest.as_bytes())
        || count(dest, "*") > 0
        || src_full != (count(dest, ">") > 0)
    {
        return Err(MappingError::BadSubject);
    }
    for token in dest.split('.') {
        match placeholder(token)? {
            Placeholder::Literal | Placeholder::Unindexed => {}
            Placeholder::Partition(_) if src_stars == 0 && !src_full => {}
            Placeholder::Wildcards(_) if src_stars == 0 && !src_full => {
                return Err(dest_err(INDEX_OUT_OF_RANGE, token));
            }
            Placeholder::Wildcards(indexes) | Placeholder::Partition(indexes) => {
                let stars = i64::try_from(src_stars).unwrap_or(i64::MAX);
                if let Some(i) = indexes.iter().find(|i| **i > stars) {
                    return Err(MappingError::Destination {
                        reason: INDEX_OUT_OF_RANGE,
                        token: format!("{token}: [{i}]"),
                    });
                }
            }
        }
    }
    Ok(())
}

/// `{{ name(args) }}` split into the function name and its argument text.
fn mustache(token: &str) -> Option<(&str, &str)> {
    let inner = token.strip_prefix("{{")?.strip_suffix("}}")?;
    if token.len() <= 4 {
        return None;
    }
    let inner = inner.trim_matches(|c: char| c.is_ascii_whitespace());
    let open = inner.find('(')?;
    let args = inner.get(open + 1..)?.trim_end().strip_suffix(')')?;
    let name = inner.get(..open)?.trim_end();
    Some((name, args))
}

/// The function a name denotes: Go accepts either case for the first letter of each word.
fn function(name: &str) -> Option<&'static str> {
    const NAMES: [&str; 10] = [
        "Partition",
        "Wildcard",
        "SplitFromLeft",
        "SplitFromRight",
        "SliceFromLeft",
        "SliceFromRight",
        "Split",
        "Left",
        "Right",
        "Random",
    ];
    NAMES.into_iter().find(|canon| {
        canon.len() == name.len()
            && canon.chars().zip(name.chars()).all(|(c, n)| {
                if c.is_ascii_uppercase() {
                    c.eq_ignore_ascii_case(&n)
                } else {
                    c == n
                }
            })
    })
}

fn int_arg(arg: &str, token: &str) -> Result<i64, MappingError> {
    arg.trim_matches(' ')
        .parse::<i64>()
        .map_err(|_| dest_err(INVALID_ARG, token))
}

/// Go's `indexPlaceHolders`: the token's kind and the source wildcards it reads.
fn placeholder(token: &str) -> Result<Placeholder, MappingError> {
    if token.len() > 1 {
        if let Some(n) = token.strip_prefix('$') {
            // Other `$` tokens are literals.
            return Ok(n
                .parse::<i64>()
                .map_or(Placeholder::Literal, |i| Placeholder::Wildcards(vec![i])));
        }
    }
    let Some((name, args_text)) = mustache(token) else {
        return Ok(Placeholder::Literal);
    };
    let Some(func) = function(name) else {
        return Err(dest_err(UNKNOWN_FUNCTION, token));
    };
    let args: Vec<&str> = split_args(args_text);
    match func {
        "Wildcard" => match args.as_slice() {
            [""] => Err(dest_err(NOT_ENOUGH_ARGS, token)),
            [one] => Ok(Placeholder::Wildcards(vec![int_arg(one, token)?])),
            _ => Err(dest_err(TOO_MANY_ARGS, token)),
        },
        "Partition" => {
            let Some((count, rest)) = args.split_first() else {
                return Err(dest_err(NOT_ENOUGH_ARGS, token));
            };
            if int_arg(count, token)? > i64::from(i32::MAX) {
                return Err(dest_err(INVALID_ARG, token));
            }
            let indexes = rest
                .iter()
                .map(|a| int_arg(a, token))
                .collect::<Result<_, _>>()?;
            Ok(Placeholder::Partition(indexes))
        }
        "Split" => match args.as_slice() {
            [index, delimiter] => {
                let i = int_arg(index, token)?;
                if delimiter.contains([' ', '.']) {
                    return Err(dest_err(INVALID_ARG, token));
                }
                Ok(Placeholder::Wildcards(vec![i]))
            }
            [] | [_] => Err(dest_err(NOT_ENOUGH_ARGS, token)),
            _ => Err(dest_err(TOO_MANY_ARGS, token)),
        },
        "Random" => match args.as_slice() {
            [max] if int_arg(max, token)? <= i64::from(i32::MAX) => Ok(Placeholder::Unindexed),
            [_] => Err(dest_err(INVALID_ARG, token)),
            _ => Err(dest_err(NOT_ENOUGH_ARGS, token)),
        },
        // The split/slice/left/right family: a wildcard index and a number.
        _ => match args.as_slice() {
            [index, number] => {
                let i = int_arg(index, token)?;
                if i32::try_from(int_arg(number, token)?).is_err() {
                    return Err(dest_err(INVALID_ARG, token));
                }
                Ok(Placeholder::Wildcards(vec![i]))
            }
            [] | [_] => Err(dest_err(NOT_ENOUGH_ARGS, token)),
            _ => Err(dest_err(TOO_MANY_ARGS, token)),
        },
    }
}

/// Go's `,\s*` separator: an argument keeps its leading spaces only after the first comma's
/// whitespace is consumed.
fn split_args(text: &str) -> Vec<&str> {
    text.split(',')
        .enumerate()
        .map(|(i, a)| if i == 0 { a } else { a.trim_start() })
        .collect()
}
