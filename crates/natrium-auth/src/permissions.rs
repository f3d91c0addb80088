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
    fn auth_response_permission_defaults_are_gos() {
        let d = ResponsePermission::default();
        assert_eq!(d.max_msgs, Some(1));
        assert_eq!(d.expires, Some(Duration::from_secs(120)));
    }
}
