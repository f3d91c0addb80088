//! Subject matching without an index: one literal against one pattern, and whether two
//! patterns overlap. The trie in `Sublist` must agree with [`subject_matches`]; the property
//! tests check exactly that.

use crate::validate::{is_valid_subject, split_token};

/// Whether the literal subject `literal` matches `pattern` (which may hold `*` and `>`).
///
/// `*` matches exactly one token, `>` one or more trailing tokens. Tokens of `literal` are
/// compared as bytes even if they look like wildcards. Any empty token on either side, or a
/// `>` that is not last in `pattern`, makes the answer `false`.
///
/// ```
/// use nats_subject::subject_matches;
/// assert!(subject_matches(b"foo.*.baz", b"foo.bar.baz"));
/// assert!(subject_matches(b"foo.>", b"foo.bar.baz"));
/// assert!(!subject_matches(b"foo.>", b"foo"));
/// ```
pub fn subject_matches(pattern: &[u8], literal: &[u8]) -> bool {
    let mut pat = Some(pattern);
    let mut lit = Some(literal);
    loop {
        match (pat, lit) {
            (None, None) => return true,
            (Some(p), Some(l)) => {
                let (ptok, prest) = split_token(p);
                let (ltok, lrest) = split_token(l);
                if ptok.is_empty() || ltok.is_empty() {
                    return false;
                }
                if ptok == b">" {
                    // `>` takes this token and all after it, which must still be well formed.
                    return prest.is_none() && lrest.is_none_or(split_all_non_empty);
                }
                if ptok != b"*" && ptok != ltok {
                    return false;
                }
                pat = prest;
                lit = lrest;
            }
            _ => return false,
        }
    }
}

/// Whether every token of `rest` is non-empty.
fn split_all_non_empty(rest: &[u8]) -> bool {
    rest.split(|&b| b == b'.').all(|t| !t.is_empty())
}

/// Whether some literal subject matches both patterns `a` and `b`.
///
/// Two invalid or non-overlapping patterns give `false`. Walking both token lists in step:
/// a `>` on either side absorbs everything the other side still has (at least one token, since
/// both are at the same position); a `*` accepts any token; literals must be equal; and if one
/// list ends before the other, the longer one needs a token the shorter cannot supply.
///
/// ```
/// use nats_subject::subjects_collide;
/// assert!(subjects_collide(b"foo.*", b"*.bar"));
/// assert!(subjects_collide(b"foo.>", b"foo.bar.baz"));
/// assert!(!subjects_collide(b"foo.*", b"foo.bar.baz"));
/// ```
pub fn subjects_collide(a: &[u8], b: &[u8]) -> bool {
    if !is_valid_subject(a) || !is_valid_subject(b) {
        return false;
    }
    let mut ra = Some(a);
    let mut rb = Some(b);
    loop {
        match (ra, rb) {
            (None, None) => return true,
            (Some(x), Some(y)) => {
                let (xtok, xrest) = split_token(x);
                let (ytok, yrest) = split_token(y);
                if xtok == b">" || ytok == b">" {
                    return true;
                }
                if xtok != b"*" && ytok != b"*" && xtok != ytok {
                    return false;
                }
                ra = xrest;
                rb = yrest;
            }
            _ => return false,
        }
    }
}

/// Whether every literal subject `sub` matches is also matched by `of`: `sub` is a subset of
/// `of`. This is how an import is checked against an export: `s.x` and `s.*` are subsets of
/// `s.>`, but `s.>` is not a subset of `s.*`. Invalid patterns are subsets of nothing.
///
/// ```
/// use nats_subject::subject_is_subset;
/// assert!(subject_is_subset(b"s.x", b"s.>"));
/// assert!(subject_is_subset(b"s.*", b"s.>"));
/// assert!(!subject_is_subset(b"s.>", b"s.*"));
/// ```
pub fn subject_is_subset(sub: &[u8], of: &[u8]) -> bool {
    if !is_valid_subject(sub) || !is_valid_subject(of) {
        return false;
    }
    let mut rs = Some(sub);
    let mut ro = Some(of);
    loop {
        match (rs, ro) {
            (None, None) => return true,
            (Some(s), Some(o)) => {
                let (stok, srest) = split_token(s);
                let (otok, orest) = split_token(o);
                if otok == b">" {
                    return true;
                }
                let covered = match otok {
                    b"*" => stok != b">",
                    literal => stok == literal,
                };
                if !covered {
                    return false;
                }
                rs = srest;
                ro = orest;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_literal_and_partial_wildcard() {
        assert!(subject_matches(b"foo", b"foo"));
        assert!(!subject_matches(b"foo", b"bar"));
        assert!(!subject_matches(b"foo", b"foo.bar"));
        assert!(!subject_matches(b"foo.bar", b"foo"));
        assert!(subject_matches(b"*", b"foo"));
        assert!(!subject_matches(b"*", b"foo.bar"));
        assert!(subject_matches(b"foo.*", b"foo.bar"));
        assert!(subject_matches(b"*.*", b"foo.bar"));
        assert!(subject_matches(b"foo.*.baz", b"foo.bar.baz"));
        assert!(!subject_matches(b"foo.*.baz", b"foo.bar.bax"));
        assert!(!subject_matches(b"foo.*", b"foo"));
    }

    #[test]
    fn matching_full_wildcard() {
        assert!(subject_matches(b">", b"foo"));
        assert!(subject_matches(b">", b"foo.bar.baz"));
        assert!(subject_matches(b"foo.>", b"foo.bar"));
        assert!(subject_matches(b"foo.>", b"foo.bar.baz"));
        assert!(!subject_matches(b"foo.>", b"foo"));
        assert!(!subject_matches(b"foo.>", b"bar.baz"));
        assert!(subject_matches(b"*.>", b"foo.bar"));
        assert!(!subject_matches(b"*.>", b"foo"));
    }

    #[test]
    fn matching_wildcard_chars_inside_tokens_are_literal() {
        assert!(subject_matches(b"foo.*a", b"foo.*a"));
        assert!(!subject_matches(b"foo.*a", b"foo.ba"));
        assert!(!subject_matches(b"foo.>bar", b"foo.x.bar"));
        assert!(subject_matches(b"foo.>bar", b"foo.>bar"));
        // A literal token that looks like a wildcard is only matched by wildcards or itself.
        assert!(subject_matches(b"foo.*", b"foo.*"));
        assert!(!subject_matches(b"foo.bar", b"foo.*"));
    }

    #[test]
    fn matching_malformed_inputs_never_match() {
        assert!(!subject_matches(b"", b""));
        assert!(!subject_matches(b"foo", b""));
        assert!(!subject_matches(b"", b"foo"));
        assert!(!subject_matches(b"foo..bar", b"foo..bar"));
        assert!(!subject_matches(b">", b"foo..bar"));
        assert!(!subject_matches(b">", b"foo."));
        assert!(!subject_matches(b"foo.>.bar", b"foo.x.bar"));
        assert!(!subject_matches(b"*", b".foo"));
    }

    #[test]
    fn matching_collide() {
        assert!(subjects_collide(b"foo", b"foo"));
        assert!(!subjects_collide(b"foo", b"bar"));
        assert!(subjects_collide(b"foo.*", b"*.bar"));
        assert!(subjects_collide(b">", b"a.b.c"));
        assert!(subjects_collide(b"a.>", b"*.b.>"));
        assert!(!subjects_collide(b"a.>", b"a"));
        assert!(!subjects_collide(b"a.*", b"a"));
        assert!(!subjects_collide(b"a.*", b"a.b.c"));
        assert!(subjects_collide(b"a.*.c", b"a.>"));
        assert!(!subjects_collide(b"a.*.c", b"a.*.d"));
        assert!(!subjects_collide(b"foo..bar", b"foo..bar"));
        assert!(!subjects_collide(b"", b">"));
    }

    #[test]
    fn matching_subset() {
        assert!(subject_is_subset(b"a", b"a"));
        assert!(subject_is_subset(b"a.b", b"a.*"));
        assert!(subject_is_subset(b"a.*", b"a.*"));
        assert!(subject_is_subset(b"a.*", b"a.>"));
        assert!(subject_is_subset(b"a.b.>", b"a.>"));
        assert!(subject_is_subset(b"a.>", b">"));
        assert!(!subject_is_subset(b"a.>", b"a.*"));
        assert!(!subject_is_subset(b"a.*", b"a.b"));
        assert!(!subject_is_subset(b"a", b"a.>"));
        assert!(!subject_is_subset(b"a.b.c", b"a.*"));
        assert!(!subject_is_subset(b"b.c", b"a.>"));
        assert!(!subject_is_subset(b"a..b", b">"));
    }
}
