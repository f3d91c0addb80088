//! Permissions compiled for checking, with Go's semantics:
//!
//! - **Publish**: a subject passes when some allow pattern matches it (or there is no allow
//!   list) and no deny pattern does.
//! - **Subscribe**: the subscription's subject is matched *as a literal* against the patterns
//!   (its `*` and `>` tokens only match pattern wildcards), so `SUB foo.*` passes a
//!   `deny: foo.bar`. Entries with a queue group (`"foo q1"`) decide for subscriptions in a
//!   queue group: if any matching allow entry names a queue, the subscription's queue must
//!   match one of them (a wildcard queue pattern matches a queue it is a superset of); a
//!   matching deny entry with a queue refuses only that queue.
//! - **Delivery**: because a wildcard subscription may cover denied subjects, a subscription
//!   that is a wildcard or in a queue group and overlaps a deny entry gets a delivery filter
//!   ([`ClientPermissions::needs_delivery_filter`]); messages on denied subjects are then
//!   dropped for it ([`ClientPermissions::delivery_denied`]).
//!
//! Lists are short in practice, so they are scanned rather than indexed; no check allocates.

use nats_subject::{subject_matches, subjects_collide};

use crate::permissions::{split_subject_queue, Permissions, ResponsePermission};

/// One compiled pattern list for publishing.
#[derive(Debug, Clone, Default)]
struct PubLists {
    allow: Option<Vec<Box<[u8]>>>,
    deny: Vec<Box<[u8]>>,
}

/// One subscribe entry: a subject pattern and, optionally, a queue group (pattern).
#[derive(Debug, Clone)]
struct SubEntry {
    subject: Box<[u8]>,
    queue: Option<Box<[u8]>>,
}

#[derive(Debug, Clone, Default)]
struct SubLists {
    /// `None` when no entry was given: everything not denied is allowed.
    allow: Option<Vec<SubEntry>>,
    deny: Vec<SubEntry>,
}

/// A user's permissions, ready to check. Built once per connection from [`Permissions`].
#[derive(Debug, Clone, Default)]
pub struct ClientPermissions {
    publish: Option<PubLists>,
    subscribe: Option<SubLists>,
    response: Option<ResponsePermission>,
}

/// The entries of [`ClientPermissions`] as strings (see [`ClientPermissions::lists`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionLists {
    pub publish_allow: Vec<String>,
    pub publish_deny: Vec<String>,
    pub subscribe_allow: Vec<String>,
    pub subscribe_deny: Vec<String>,
}

fn bytes(s: &str) -> Box<[u8]> {
    s.as_bytes().into()
}

/// Compiles subscribe entries; malformed ones (refused by the configuration reader already)
/// are skipped, as Go skips them with an error log.
fn sub_entries(list: &[String]) -> Vec<SubEntry> {
    list.iter()
        .filter_map(|e| split_subject_queue(e))
        .map(|(subject, queue)| SubEntry {
            subject: bytes(subject),
            queue: queue.map(bytes),
        })
        .collect()
}

impl ClientPermissions {
    #[must_use]
    pub fn compile(p: &Permissions) -> Self {
        let publish = p.publish.as_ref().map(|d| PubLists {
            allow: d
                .allow
                .as_ref()
                .map(|list| list.iter().map(|s| bytes(s)).collect()),
            deny: d.deny.iter().map(|s| bytes(s)).collect(),
        });
        let subscribe = p.subscribe.as_ref().map(|d| SubLists {
            // Go builds a subscribe allow list only when it has entries.
            allow: d
                .allow
                .as_ref()
                .filter(|l| !l.is_empty())
                .map(|l| sub_entries(l)),
            deny: sub_entries(&d.deny),
        });
        Self {
            publish,
            subscribe,
            response: p.response,
        }
    }

    /// `allow_responses`, if configured.
    #[must_use]
    pub fn response(&self) -> Option<&ResponsePermission> {
        self.response.as_ref()
    }

    /// The entries as strings, for display (Go's `$SYS.REQ.USER.INFO` lists them): subscribe
    /// entries with a queue group read `"subject queue"`.
    #[must_use]
    pub fn lists(&self) -> PermissionLists {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let entry = |e: &SubEntry| match &e.queue {
            Some(q) => format!("{} {}", text(&e.subject), text(q)),
            None => text(&e.subject),
        };
        let mut out = PermissionLists::default();
        if let Some(p) = &self.publish {
            out.publish_allow = p.allow.iter().flatten().map(|s| text(s)).collect();
            out.publish_deny = p.deny.iter().map(|s| text(s)).collect();
        }
        if let Some(s) = &self.subscribe {
            out.subscribe_allow = s.allow.iter().flatten().map(entry).collect();
            out.subscribe_deny = s.deny.iter().map(entry).collect();
        }
        out
    }

    /// Whether the static lists let the client publish to `subject` (reply permissions from
    /// `allow_responses` are checked separately, by the connection's reply table).
    #[must_use]
    pub fn can_publish(&self, subject: &[u8]) -> bool {
        let Some(p) = &self.publish else {
            return true;
        };
        let allowed = p
            .allow
            .as_ref()
            .is_none_or(|list| list.iter().any(|pat| subject_matches(pat, subject)));
        allowed && !p.deny.iter().any(|pat| subject_matches(pat, subject))
    }

    /// Whether the client may subscribe to `subject`, in queue group `queue` if given.
    #[must_use]
    pub fn can_subscribe(&self, subject: &[u8], queue: Option<&[u8]>) -> bool {
        let Some(s) = &self.subscribe else {
            return true;
        };
        let queue = queue.filter(|q| !q.is_empty());
        let mut allowed = true;
        if let Some(allow) = &s.allow {
            let (plain, queued) = matches(allow, subject);
            allowed = plain;
            if let Some(q) = queue {
                if queued {
                    allowed = queue_matches(allow, subject, q);
                }
            }
        }
        if allowed {
            let (plain, queued) = matches(&s.deny, subject);
            allowed = !plain;
            if let Some(q) = queue {
                if allowed && queued {
                    allowed = !queue_matches(&s.deny, subject, q);
                }
            }
        }
        allowed
    }

    /// Whether deliveries to this new subscription must be filtered: it is a wildcard or in a
    /// queue group, and some deny entry overlaps its subject.
    #[must_use]
    pub fn needs_delivery_filter(&self, subject: &[u8], queue: Option<&[u8]>) -> bool {
        let Some(s) = &self.subscribe else {
            return false;
        };
        let has_queue = queue.is_some_and(|q| !q.is_empty());
        (has_queue || !nats_subject::is_literal(subject))
            && s.deny.iter().any(|d| subjects_collide(&d.subject, subject))
    }

    /// Whether a message on `subject` must not be delivered to a filtered subscription in
    /// queue group `queue`.
    #[must_use]
    pub fn delivery_denied(&self, subject: &[u8], queue: Option<&[u8]>) -> bool {
        let Some(s) = &self.subscribe else {
            return false;
        };
        let (plain, queued) = matches(&s.deny, subject);
        if plain {
            return true;
        }
        match queue.filter(|q| !q.is_empty()) {
            Some(q) if queued => queue_matches(&s.deny, subject, q),
            _ => false,
        }
    }
}

/// Whether an entry without a queue, and whether one with a queue, matches `subject`.
fn matches(list: &[SubEntry], subject: &[u8]) -> (bool, bool) {
    let mut plain = false;
    let mut queued = false;
    for e in list {
        if subject_matches(&e.subject, subject) {
            if e.queue.is_some() {
                queued = true;
            } else {
                plain = true;
            }
        }
    }
    (plain, queued)
}

/// Whether `queue` is named by an entry with a queue that matches `subject`: equal, or
/// covered by a wildcard queue pattern (`v1.*` covers `v1.a` and `v1.*`, not `v1.>`).
fn queue_matches(list: &[SubEntry], subject: &[u8], queue: &[u8]) -> bool {
    list.iter()
        .filter(|e| subject_matches(&e.subject, subject))
        .filter_map(|e| e.queue.as_deref())
        .any(|q| q == queue || (!nats_subject::is_literal(q) && is_subset(queue, q)))
}

/// Whether every subject `subject` matches is matched by `pattern` (both may be wildcards).
fn is_subset(subject: &[u8], pattern: &[u8]) -> bool {
    let mut s = subject.split(|&b| b == b'.');
    for p in pattern.split(|&b| b == b'.') {
        let Some(t) = s.next() else {
            return false;
        };
        if p.is_empty() || t.is_empty() {
            return false;
        }
        if p == b">" {
            return true;
        }
        if t == b">" || (t == b"*" && p != b"*") || (p != b"*" && p != t) {
            return false;
        }
    }
    s.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SubjectPermission;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn sub_perms(allow: Option<&[&str]>, deny: &[&str]) -> ClientPermissions {
        ClientPermissions::compile(&Permissions {
            subscribe: Some(SubjectPermission {
                allow: allow.map(list),
                deny: list(deny),
            }),
            ..Permissions::default()
        })
    }

    #[test]
    fn auth_perms_publish_allow_deny() {
        let p = ClientPermissions::compile(&Permissions {
            publish: Some(SubjectPermission {
                allow: Some(list(&["foo.>", "bar"])),
                deny: list(&["foo.secret"]),
            }),
            ..Permissions::default()
        });
        assert!(p.can_publish(b"foo.x"));
        assert!(p.can_publish(b"bar"));
        assert!(!p.can_publish(b"foo.secret"));
        assert!(!p.can_publish(b"baz"));
        assert!(p.can_subscribe(b"anything", None));
        assert!(ClientPermissions::default().can_publish(b"x"));
        // An empty allow list (allow_responses without publish) allows nothing.
        let none = ClientPermissions::compile(&Permissions {
            publish: Some(SubjectPermission {
                allow: Some(Vec::new()),
                deny: Vec::new(),
            }),
            ..Permissions::default()
        });
        assert!(!none.can_publish(b"x"));
    }

    #[test]
    fn auth_perms_lists_read_back_entries() {
        let p = ClientPermissions::compile(&Permissions {
            publish: Some(SubjectPermission {
                allow: Some(list(&["foo.>"])),
                deny: list(&["foo.x"]),
            }),
            subscribe: Some(SubjectPermission {
                allow: Some(list(&["a", "b  q1"])),
                deny: Vec::new(),
            }),
            ..Permissions::default()
        });
        let l = p.lists();
        assert_eq!(l.publish_allow, ["foo.>"]);
        assert_eq!(l.publish_deny, ["foo.x"]);
        assert_eq!(l.subscribe_allow, ["a", "b q1"]);
        assert!(l.subscribe_deny.is_empty());
        assert_eq!(
            ClientPermissions::default().lists(),
            PermissionLists::default()
        );
    }

    /// The cases observed on Go v2.15.2 (`SUB` with and without queues).
    #[test]
    fn auth_perms_subscribe_queue_entries_like_go() {
        let a = sub_perms(Some(&["foo q1", "bar", "bar q2", "baz.*", "wq v1.*"]), &[]);
        let ok = |s: &[u8], q: Option<&[u8]>| a.can_subscribe(s, q);
        assert!(!ok(b"foo", None));
        assert!(ok(b"foo", Some(b"q1")));
        assert!(!ok(b"foo", Some(b"q2")));
        assert!(ok(b"bar", None));
        assert!(ok(b"bar", Some(b"q2")));
        assert!(!ok(b"bar", Some(b"q3")));
        assert!(ok(b"baz.x", None));
        assert!(ok(b"baz.x", Some(b"q")));
        assert!(ok(b"baz.*", None));
        // Go matches the subscription's `>` token as a literal, which a `*` pattern covers.
        assert!(ok(b"baz.>", None));
        assert!(!ok(b"wq", None));
        assert!(ok(b"wq", Some(b"v1.a")));
        assert!(ok(b"wq", Some(b"v1.*")));
        assert!(!ok(b"wq", Some(b"v1.>")));
        assert!(!ok(b"wq", Some(b"v2")));
        assert!(!ok(b"wq", Some(b"v1")));

        let d = sub_perms(None, &["foo q1", "bar", "wq v1.*", "den.x"]);
        let ok = |s: &[u8], q: Option<&[u8]>| d.can_subscribe(s, q);
        assert!(ok(b"foo", None));
        assert!(!ok(b"foo", Some(b"q1")));
        assert!(ok(b"foo", Some(b"q2")));
        assert!(!ok(b"bar", None));
        assert!(!ok(b"bar", Some(b"q")));
        assert!(!ok(b"wq", Some(b"v1.a")));
        assert!(ok(b"wq", Some(b"v1")));
        assert!(!ok(b"wq", Some(b"v1.*")));
        assert!(!ok(b"den.x", None));
        assert!(ok(b"den.*", None));
        assert!(ok(b"den.>", None));
        assert!(ok(b"*.x", None));
        assert!(ok(b">", None));
        assert!(!ok(b"den.x", Some(b"q")));
    }

    #[test]
    fn auth_perms_wildcard_subscription_against_wildcard_deny() {
        let d = sub_perms(None, &["foo.*"]);
        // A deny pattern's wildcard covers the subscription's wildcard token.
        assert!(!d.can_subscribe(b"foo.*", None));
        assert!(!d.can_subscribe(b"foo.>", None));
        assert!(d.can_subscribe(b"foo.a.b", None));
        assert!(d.can_subscribe(b">", None));
        // An empty allow list (`allow: []`) is no allow list for subscriptions.
        assert!(sub_perms(Some(&[]), &[]).can_subscribe(b"x", None));
    }

    #[test]
    fn auth_perms_delivery_filter() {
        let d = sub_perms(None, &["foo q1", "bar", "den.x"]);
        assert!(d.needs_delivery_filter(b"den.*", None));
        assert!(d.needs_delivery_filter(b">", None));
        assert!(d.needs_delivery_filter(b"*", Some(b"q1")));
        assert!(d.needs_delivery_filter(b"foo", Some(b"q2")));
        assert!(!d.needs_delivery_filter(b"zz.*", None));
        assert!(!d.needs_delivery_filter(b"foo", None));
        // As observed on Go: `>` gets den.y, foo and zz but not den.x or bar; `* q1` not foo.
        assert!(d.delivery_denied(b"den.x", None));
        assert!(!d.delivery_denied(b"den.y", None));
        assert!(d.delivery_denied(b"bar", None));
        assert!(!d.delivery_denied(b"foo", None));
        assert!(d.delivery_denied(b"foo", Some(b"q1")));
        assert!(!d.delivery_denied(b"foo", Some(b"q2")));
        assert!(!d.delivery_denied(b"zz", Some(b"q1")));
        assert!(!ClientPermissions::default().needs_delivery_filter(b">", None));
    }

    #[test]
    fn auth_perms_subset() {
        assert!(is_subset(b"v1.a", b"v1.*"));
        assert!(is_subset(b"v1.*", b"v1.*"));
        assert!(is_subset(b"v1.*", b"v1.>"));
        assert!(is_subset(b"v1.>", b"v1.>"));
        assert!(is_subset(b"v1.a.b", b"v1.>"));
        assert!(!is_subset(b"v1.>", b"v1.*"));
        assert!(!is_subset(b"v1", b"v1.*"));
        assert!(!is_subset(b"v1.a.b", b"v1.*"));
        assert!(!is_subset(b"v2.a", b"v1.*"));
        assert!(!is_subset(b"v1.*", b"v1.a"));
    }
}
