//! What a subscription subject, a publish subject and a queue name may contain.
//!
//! A subject is a non-empty list of non-empty tokens separated by `.`. A token that is exactly
//! `*` matches one token; a token that is exactly `>` matches one or more trailing tokens and
//! must be last. `*` or `>` inside a longer token (`*a`, `foo.>bar`) is an ordinary literal
//! character: Go v2.15 accepts `SUB foo.*a` and `SUB a>` with `+OK`, so we do too. Space, tab,
//! CR and LF are refused anywhere; every other byte, including non-UTF-8, is allowed, as in Go.

/// Token separator.
pub const SEPARATOR: u8 = b'.';
/// The single-token wildcard, as a whole token.
pub const PARTIAL_WILDCARD: u8 = b'*';
/// The tail wildcard, as a whole token, last.
pub const FULL_WILDCARD: u8 = b'>';

/// Whitespace that may never appear in a subject or queue name.
#[inline]
const fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Whether a finished token of `len` bytes starting with `first` is `*` or `>`.
#[inline]
const fn is_wildcard_token(len: usize, first: u8) -> bool {
    len == 1 && (first == PARTIAL_WILDCARD || first == FULL_WILDCARD)
}

/// One pass over `subject`; `allow_wildcards` false also refuses `*` and `>` tokens.
#[inline]
fn check(subject: &[u8], allow_wildcards: bool) -> bool {
    let mut token_len = 0usize;
    let mut first = 0u8;
    for &b in subject {
        if b == SEPARATOR {
            // An empty token, or a `>` that is not last.
            if token_len == 0 || (token_len == 1 && first == FULL_WILDCARD) {
                return false;
            }
            if !allow_wildcards && is_wildcard_token(token_len, first) {
                return false;
            }
            token_len = 0;
        } else if is_space(b) {
            return false;
        } else {
            if token_len == 0 {
                first = b;
            }
            token_len += 1;
        }
    }
    token_len != 0 && (allow_wildcards || !is_wildcard_token(token_len, first))
}

/// Whether `subject` may be subscribed to: non-empty tokens, no whitespace, `>` only last.
///
/// ```
/// use nats_subject::is_valid_subject;
/// assert!(is_valid_subject(b"foo.*.bar.>"));
/// assert!(is_valid_subject(b"foo.*a")); // `*a` is a literal token
/// assert!(!is_valid_subject(b"foo..bar"));
/// assert!(!is_valid_subject(b">.foo"));
/// ```
pub fn is_valid_subject(subject: &[u8]) -> bool {
    check(subject, true)
}

/// Whether `subject` may be published to: valid and without wildcard tokens.
pub fn is_valid_publish_subject(subject: &[u8]) -> bool {
    check(subject, false)
}

/// Whether `subject` has no `*` or `>` token (it may still be invalid otherwise).
pub fn is_literal(subject: &[u8]) -> bool {
    !subject
        .split(|&b| b == SEPARATOR)
        .any(|t| matches!(t, b"*" | b">"))
}

/// Whether `queue` may name a queue group: non-empty, no whitespace. Go accepts dots and
/// wildcard characters in queue names (`SUB foo q.1`, `SUB foo *` both get `+OK`).
pub fn is_valid_queue_name(queue: &[u8]) -> bool {
    !queue.is_empty() && !queue.iter().copied().any(is_space)
}

/// Whether a subject handed to a match has no empty token. Cheaper than full validation: a
/// publish subject reaching the index was already checked by the protocol layer, and an empty
/// token is the one defect that would otherwise make the trie walk disagree with
/// [`crate::subject_matches`].
#[inline]
pub(crate) fn has_no_empty_token(subject: &[u8]) -> bool {
    let (Some(&first), Some(&last)) = (subject.first(), subject.last()) else {
        return false;
    };
    first != SEPARATOR && last != SEPARATOR && !subject.windows(2).any(|w| w == b"..")
}

/// Splits the first token off `subject`: the token and, if a separator followed, the rest.
#[inline]
pub(crate) fn split_token(subject: &[u8]) -> (&[u8], Option<&[u8]>) {
    match subject.iter().position(|&b| b == SEPARATOR) {
        Some(i) => {
            let (token, rest) = subject.split_at(i);
            (token, rest.get(1..))
        }
        None => (subject, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_subject_accepts() {
        for s in [
            "foo",
            "foo.bar",
            "*",
            ">",
            "foo.*",
            "foo.>",
            "*.*.>",
            "foo.*.bar",
            "foo.*a",
            "*a",
            "a>",
            "foo.>bar",
            "foo.**",
            "a*b.c",
            "f\u{e9}.x",
            "\u{1F600}.>",
            "foo\x0cbar",
            "-",
            "_INBOX.abc",
        ] {
            assert!(is_valid_subject(s.as_bytes()), "{s:?} should be valid");
        }
        assert!(is_valid_subject(b"\xff.\x00"));
    }

    #[test]
    fn validate_subject_refuses() {
        for s in [
            "",
            ".",
            "..",
            ".foo",
            "foo.",
            "foo..bar",
            ">.foo",
            "foo.>.bar",
            "> ",
            " foo",
            "foo bar",
            "foo\tbar",
            "foo\rbar",
            "foo\nbar",
            "foo.\t",
            "\t",
            "foo.>.",
            "*.>.*",
        ] {
            assert!(!is_valid_subject(s.as_bytes()), "{s:?} should be invalid");
        }
    }

    #[test]
    fn validate_publish_subject() {
        for s in ["foo", "foo.bar", "foo.*a", "a>", "foo.>bar", "\u{e9}"] {
            assert!(is_valid_publish_subject(s.as_bytes()), "{s:?}");
        }
        for s in [
            "*",
            ">",
            "foo.*",
            "foo.>",
            "*.foo",
            "foo.*.bar",
            "",
            "foo..bar",
            "a b",
        ] {
            assert!(!is_valid_publish_subject(s.as_bytes()), "{s:?}");
        }
    }

    #[test]
    fn validate_literal() {
        assert!(is_literal(b"foo.bar"));
        assert!(is_literal(b"foo.*a.b>"));
        assert!(is_literal(b""));
        assert!(!is_literal(b"*"));
        assert!(!is_literal(b"foo.>"));
        assert!(!is_literal(b"foo.*.bar"));
    }

    #[test]
    fn validate_queue_name() {
        for q in ["q", "q.1", "*", ">", "a*b", "\u{e9}"] {
            assert!(is_valid_queue_name(q.as_bytes()), "{q:?}");
        }
        for q in ["", " ", "a b", "a\tb", "a\r", "\nq"] {
            assert!(!is_valid_queue_name(q.as_bytes()), "{q:?}");
        }
    }

    #[test]
    fn validate_split_and_empty_tokens() {
        assert_eq!(split_token(b"foo.bar"), (&b"foo"[..], Some(&b"bar"[..])));
        assert_eq!(split_token(b"foo"), (&b"foo"[..], None));
        assert_eq!(split_token(b"foo."), (&b"foo"[..], Some(&b""[..])));
        assert!(has_no_empty_token(b"a.b"));
        assert!(!has_no_empty_token(b""));
        assert!(!has_no_empty_token(b"a..b"));
        assert!(!has_no_empty_token(b".a"));
        assert!(!has_no_empty_token(b"a."));
    }
}
