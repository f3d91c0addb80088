//! Per-user permissions as configured: which subjects a client may publish to and subscribe
//! to (Go's `publish`/`subscribe` blocks with `allow` and `deny` lists), and whether it may
//! answer the requests it receives (`allow_responses`). [`crate::ClientPermissions`] is the
//! compiled form a connection checks against.

use std::time::Duration;

/// One direction's lists. No `allow` list means everything not denied is allowed; an empty
/// one (which only `allow_responses` produces, as in Go) allows nothing.
///
/// Subscribe entries may name a queue group after the subject, separated by blanks
/// (`"foo q1"`): such an entry matches only subscriptions in a queue group of that name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectPermission {
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
}

/// `allow_responses`: the client may publish to the reply subject of each message delivered
/// to it, up to `max_msgs` times within `expires` of the delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponsePermission {
    /// Responses allowed per request; `None` means unlimited (Go: a negative `max`).
    pub max_msgs: Option<u64>,
    /// How long after delivery a response is allowed; `None` means forever (Go: negative).
    pub expires: Option<Duration>,
}

impl ResponsePermission {
    /// Go's `DEFAULT_ALLOW_RESPONSE_MAX_MSGS`.
    pub const DEFAULT_MAX_MSGS: u64 = 1;
    /// Go's `DEFAULT_ALLOW_RESPONSE_EXPIRATION`: two minutes.
    pub const DEFAULT_EXPIRES: Duration = Duration::from_secs(120);
}

impl Default for ResponsePermission {
    /// `allow_responses: true`: one response within two minutes.
    fn default() -> Self {
        Self {
            max_msgs: Some(Self::DEFAULT_MAX_MSGS),
            expires: Some(Self::DEFAULT_EXPIRES),
        }
    }
}

/// A user's permissions; a missing direction is unrestricted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    pub publish: Option<SubjectPermission>,
    pub subscribe: Option<SubjectPermission>,
    pub response: Option<ResponsePermission>,
}

/// Splits a subscribe entry into its subject and optional queue group, as Go does
/// (whitespace-separated fields). `None` for an entry with no field or more than two.
pub fn split_subject_queue(entry: &str) -> Option<(&str, Option<&str>)> {
    let mut fields = entry.split_ascii_whitespace();
    let subject = fields.next()?;
    let queue = fields.next();
    fields.next().is_none().then_some((subject, queue))
}

/// What is wrong with a permission entry, naming the offending part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryProblem<'a> {
    Subject(&'a str),
    Queue(&'a str),
}

/// Checks a permission entry as Go's configuration reader does: a valid subject, or (for
/// subscribe entries, `allow_queue`) a valid subject and a valid queue separated by blanks.
pub fn entry_problem(entry: &str, allow_queue: bool) -> Option<EntryProblem<'_>> {
    let valid = |s: &str| nats_subject::is_valid_subject(s.as_bytes());
    if valid(entry) {
        return None;
    }
    let Some((subject, Some(queue))) = split_subject_queue(entry).filter(|_| allow_queue) else {
        return Some(EntryProblem::Subject(entry));
    };
    if !valid(subject) {
        Some(EntryProblem::Subject(subject))
    } else if !valid(queue) {
        Some(EntryProblem::Queue(queue))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_split_subject_queue() {
        assert_eq!(split_subject_queue("foo"), Some(("foo", None)));
        assert_eq!(split_subject_queue(" foo  q1 "), Some(("foo", Some("q1"))));
        assert_eq!(split_subject_queue("foo\tq1"), Some(("foo", Some("q1"))));
        assert_eq!(split_subject_queue("a b c"), None);
        assert_eq!(split_subject_queue("  "), None);
    }

    #[test]
    fn auth_entry_problems_like_go() {
        assert_eq!(entry_problem("foo.>", false), None);
        assert_eq!(entry_problem("foo q", true), None);
        assert_eq!(entry_problem("foo q.*", true), None);
        assert_eq!(
            entry_problem("foo q", false),
            Some(EntryProblem::Subject("foo q"))
        );
        assert_eq!(
            entry_problem("foo q1 x", true),
            Some(EntryProblem::Subject("foo q1 x"))
        );
        assert_eq!(
            entry_problem("foo. bar", true),
            Some(EntryProblem::Subject("foo."))
        );
        assert_eq!(
            entry_problem("foo q..x", true),
            Some(EntryProblem::Queue("q..x"))
        );
        assert_eq!(entry_problem("", true), Some(EntryProblem::Subject("")));
    }

    #[test]
    fn auth_response_permission_defaults_are_gos() {
        let d = ResponsePermission::default();
        assert_eq!(d.max_msgs, Some(1));
        assert_eq!(d.expires, Some(Duration::from_secs(120)));
    }
}
