//! Subject filters: which stored subjects a load, count or purge applies to. One or many
//! subjects, each literal or with wildcards; built once by the caller and reused per call.

use bytes::Bytes;

use crate::error::StoreError;

/// One subject of a filter, classified once so matching does not re-scan it for wildcards.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    subject: Bytes,
    literal: bool,
}

/// A subject filter. `>` (or an empty filter) matches everything, which stores answer from
/// their totals without looking at subjects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// Empty means all subjects.
    parts: Vec<Part>,
}

impl Filter {
    /// Matches every subject.
    pub fn all() -> Self {
        Filter { parts: Vec::new() }
    }

    /// One subject, literal or wildcard. Empty and `>` mean all, as in Go's store calls.
    pub fn new(subject: &[u8]) -> Result<Self, StoreError> {
        Self::many([subject])
    }

    /// Any of several subjects (a consumer's `filter_subjects`). If one of them is `>` the
    /// filter matches everything.
    pub fn many<'s>(subjects: impl IntoIterator<Item = &'s [u8]>) -> Result<Self, StoreError> {
        let mut parts = Vec::new();
        for subject in subjects {
            if subject.is_empty() || subject == b">" {
                return Ok(Filter::all());
            }
            if !nats_subject::is_valid_subject(subject) {
                return Err(StoreError::InvalidSubject);
            }
            let literal = nats_subject::is_literal(subject);
            parts.push(Part {
                subject: Bytes::copy_from_slice(subject),
                literal,
            });
        }
        Ok(Filter { parts })
    }

    /// Whether the filter matches every subject.
    pub fn is_all(&self) -> bool {
        self.parts.is_empty()
    }

    /// The single literal subject this filter is, if it is exactly one literal.
    pub fn as_literal(&self) -> Option<&[u8]> {
        match self.parts.as_slice() {
            [part] if part.literal => Some(&part.subject),
            _ => None,
        }
    }

    /// Whether a stored (literal) subject matches.
    pub fn matches(&self, subject: &[u8]) -> bool {
        self.is_all()
            || self.parts.iter().any(|part| {
                if part.literal {
                    part.subject.as_ref() == subject
                } else {
                    nats_subject::subject_matches(&part.subject, subject)
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_filter_all_forms() {
        assert!(Filter::new(b"").unwrap().is_all());
        assert!(Filter::new(b">").unwrap().is_all());
        assert!(Filter::many([&b"a"[..], b">"]).unwrap().is_all());
        assert!(Filter::all().matches(b"x.y"));
    }

    #[test]
    fn store_filter_literal_and_wildcards() {
        let f = Filter::new(b"foo.bar").unwrap();
        assert_eq!(f.as_literal(), Some(&b"foo.bar"[..]));
        assert!(f.matches(b"foo.bar"));
        assert!(!f.matches(b"foo.baz"));
        let w = Filter::new(b"foo.*").unwrap();
        assert_eq!(w.as_literal(), None);
        assert!(w.matches(b"foo.baz"));
        assert!(!w.matches(b"foo.baz.x"));
        let m = Filter::many([&b"a.>"[..], b"b"]).unwrap();
        assert!(m.matches(b"a.x.y") && m.matches(b"b") && !m.matches(b"c"));
    }

    #[test]
    fn store_filter_rejects_invalid() {
        assert!(Filter::new(b"foo..bar").is_err());
        assert!(Filter::new(b"foo.>.bar").is_err());
    }
}
