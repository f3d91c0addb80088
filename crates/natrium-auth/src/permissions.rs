//! Compiled per-user permissions: which subjects a client may publish to and subscribe to, as
//! Go's `publish`/`subscribe` blocks with `allow` and `deny` lists.

use nats_subject::subject_matches;

/// One direction's lists. No `allow` list means everything not denied is allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectPermission {
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
}

impl SubjectPermission {
    /// Whether `subject` (a literal for publish, possibly wildcard for subscribe) passes.
    #[must_use]
    pub fn allows(&self, subject: &[u8]) -> bool {
        let allowed = self
            .allow
            .as_ref()
            .is_none_or(|list| list.iter().any(|p| subject_matches(p.as_bytes(), subject)));
        allowed
            && !self
                .deny
                .iter()
                .any(|p| subject_matches(p.as_bytes(), subject))
    }
}

/// A user's permissions; a missing direction is unrestricted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    pub publish: Option<SubjectPermission>,
    pub subscribe: Option<SubjectPermission>,
}

impl Permissions {
    #[must_use]
    pub fn can_publish(&self, subject: &[u8]) -> bool {
        self.publish.as_ref().is_none_or(|p| p.allows(subject))
    }

    #[must_use]
    pub fn can_subscribe(&self, subject: &[u8]) -> bool {
        self.subscribe.as_ref().is_none_or(|p| p.allows(subject))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_permissions_allow_deny() {
        let p = Permissions {
            publish: Some(SubjectPermission {
                allow: Some(vec!["foo.>".into(), "bar".into()]),
                deny: vec!["foo.secret".into()],
            }),
            subscribe: Some(SubjectPermission {
                allow: None,
                deny: vec!["admin.>".into()],
            }),
        };
        assert!(p.can_publish(b"foo.x"));
        assert!(p.can_publish(b"bar"));
        assert!(!p.can_publish(b"foo.secret"));
        assert!(!p.can_publish(b"baz"));
        assert!(p.can_subscribe(b"anything"));
        assert!(!p.can_subscribe(b"admin.x"));
        assert!(Permissions::default().can_publish(b"x"));
    }
}
