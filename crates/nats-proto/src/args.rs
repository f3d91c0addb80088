//! Splitting a control line's argument text into fields, and reading decimal sizes.
//!
//! Go splits `PUB`/`HPUB` arguments on spaces and tabs only, so a CR inside them stays part of a
//! field (`PUB foo\r 5` publishes to the subject `foo\r`), while `SUB`/`UNSUB` also split on CR
//! and LF (`SUB foo\r1` subscribes `foo` with sid `1`). Both were observed on v2.15.2.

use crate::limits::SIZE_DIGITS_MAX;

/// Separators between `PUB`/`HPUB` fields.
#[inline]
pub(crate) const fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Separators between `SUB`/`UNSUB` fields.
#[inline]
const fn is_sub_separator(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Iterator over the fields of a `SUB`/`UNSUB` argument text, skipping runs of separators.
pub(crate) struct Fields<'a> {
    rest: &'a [u8],
}

/// Fields of a `SUB`/`UNSUB` argument text.
#[inline]
pub(crate) fn subscribe_fields(args: &[u8]) -> Fields<'_> {
    Fields { rest: args }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|&b| !is_sub_separator(b))?;
        let field_and_rest = self.rest.get(start..)?;
        let len = field_and_rest
            .iter()
            .position(|&b| is_sub_separator(b))
            .unwrap_or(field_and_rest.len());
        let (field, rest) = field_and_rest.split_at(len);
        self.rest = rest;
        Some(field)
    }
}

/// Position of the first space or tab, eight bytes at a time: subjects and replies are scanned
/// for blanks on every `PUB`, and a byte loop with two compares per byte dominated its cost.
#[inline]
pub(crate) fn first_blank(s: &[u8]) -> Option<usize> {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    const TABS: u64 = u64::from_ne_bytes([b'\t'; 8]);
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut chunks = s.chunks_exact(8);
    for (k, chunk) in chunks.by_ref().enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // The lowest flagged byte of each test is a true match, so the lowest of both is too.
        let found = zero_bytes(word ^ SPACES) | zero_bytes(word ^ TABS);
        if found != 0 {
            return Some(k * 8 + (found.trailing_zeros() / 8) as usize);
        }
    }
    let done = s.len() / 8 * 8;
    chunks
        .remainder()
        .iter()
        .position(|&b| is_blank(b))
        .map(|i| done + i)
}

/// Drops trailing blanks.
#[inline]
fn trim_end_blanks(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| !is_blank(b)).map_or(0, |p| p + 1);
    s.get(..end).unwrap_or_default()
}

/// Splits `PUB`/`HPUB` arguments from the end: (the text before the last field with its
/// trailing blanks removed, the last field). `None` when there is no field at all. Sizes come
/// last on these lines, so reading from the end takes one pass per field instead of a
/// tokenizer walk over the subject.
#[inline]
pub(crate) fn split_last_field(args: &[u8]) -> Option<(&[u8], &[u8])> {
    let trimmed = trim_end_blanks(args);
    if trimmed.is_empty() {
        return None;
    }
    let start = trimmed
        .iter()
        .rposition(|&b| is_blank(b))
        .map_or(0, |p| p + 1);
    let (head, last) = trimmed.split_at(start);
    Some((trim_end_blanks(head), last))
}

/// Splits the `subject [reply]` head of a `PUB`/`HPUB` line (no trailing blanks). `None` when it
/// is empty or holds more than two fields.
#[inline]
pub(crate) fn subject_and_reply(head: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let Some(blank) = first_blank(head) else {
        return (!head.is_empty()).then_some((head, None));
    };
    let (subject, rest) = head.split_at(blank);
    let reply_start = rest.iter().position(|&b| !is_blank(b))?;
    let reply = rest.get(reply_start..)?;
    if subject.is_empty() || first_blank(reply).is_some() {
        return None;
    }
    Some((subject, Some(reply)))
}

/// Reads a size the way Go does: 1 to [`SIZE_DIGITS_MAX`] ASCII digits and nothing else (no
/// sign, no blanks). Leading zeros are fine (`005` is 5).
#[inline]
pub(crate) fn parse_size(field: &[u8]) -> Option<usize> {
    if field.is_empty() || field.len() > SIZE_DIGITS_MAX {
        return None;
    }
    let mut n: usize = 0;
    for &b in field {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        // At most nine digits, so this stays below 10^9 and cannot overflow.
        n = n * 10 + usize::from(digit);
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_subscribe_fields_skip_runs_of_separators() {
        let f: Vec<&[u8]> = subscribe_fields(b"  foo\t\t q  5 ").collect();
        assert_eq!(f, vec![&b"foo"[..], b"q", b"5"]);
    }

    #[test]
    fn args_subscribe_fields_split_on_cr() {
        let f: Vec<&[u8]> = subscribe_fields(b"foo\r1").collect();
        assert_eq!(f, vec![&b"foo"[..], b"1"]);
    }

    #[test]
    fn args_split_from_the_end() {
        assert_eq!(
            split_last_field(b"foo bar  5 \t"),
            Some((&b"foo bar"[..], &b"5"[..]))
        );
        assert_eq!(split_last_field(b"5"), Some((&b""[..], &b"5"[..])));
        assert_eq!(split_last_field(b" \t"), None);
        assert_eq!(subject_and_reply(b"foo"), Some((&b"foo"[..], None)));
        assert_eq!(
            subject_and_reply(b"foo \t bar"),
            Some((&b"foo"[..], Some(&b"bar"[..])))
        );
        assert_eq!(subject_and_reply(b"foo bar baz"), None);
        assert_eq!(subject_and_reply(b""), None);
        assert_eq!(
            subject_and_reply(b"foo\r bar"),
            Some((&b"foo\r"[..], Some(&b"bar"[..])))
        );
    }

    #[test]
    fn args_first_blank_agrees_with_naive_search() {
        let alphabet = [b' ', b'\t', b'a', b'\x00', b'\x29', b'\xa0', b'\x89', b'!'];
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        for len in 0..70 {
            for _ in 0..50 {
                let v: Vec<u8> = (0..len)
                    .map(|_| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        alphabet[(rng % 8) as usize]
                    })
                    .collect();
                assert_eq!(
                    first_blank(&v),
                    v.iter().position(|&b| is_blank(b)),
                    "{v:?}"
                );
            }
        }
    }

    #[test]
    fn args_empty_has_no_fields() {
        assert_eq!(subscribe_fields(b"").next(), None);
        assert_eq!(subscribe_fields(b" \t\r ").next(), None);
    }

    #[test]
    fn args_parse_size_matches_go() {
        assert_eq!(parse_size(b"0"), Some(0));
        assert_eq!(parse_size(b"005"), Some(5));
        assert_eq!(parse_size(b"999999999"), Some(999_999_999));
        assert_eq!(parse_size(b"000000005"), Some(5));
        assert_eq!(parse_size(b"0000000005"), None);
        assert_eq!(parse_size(b"1000000000"), None);
        assert_eq!(parse_size(b""), None);
        assert_eq!(parse_size(b"-1"), None);
        assert_eq!(parse_size(b"+5"), None);
        assert_eq!(parse_size(b"5a"), None);
        assert_eq!(parse_size(b"abc"), None);
    }
}
