//! An account's subject mappings, compiled from its definition: a publish on a mapped subject
//! is routed to a destination drawn by weight (Go applies them to what clients publish, and to
//! a service import's subject in the exporting account; internal publishers are not mapped).
//!
//! Only this server's cluster name picks cluster-scoped destinations; Natrium has no cluster
//! yet, so those are kept for monitoring and never chosen, as on a Go server without one.

use natrium_auth::account::AccountSpec;
use nats_subject::{Mapped, WeightedMapping};

/// The cluster name cluster-scoped destinations are chosen by (none: a single server).
const CLUSTER_NAME: &str = "";

/// The compiled mappings, in definition order (the first whose source matches applies).
#[derive(Debug, Default)]
pub struct Mappings(Vec<WeightedMapping>);

impl Mappings {
    /// Compiles the account's mappings; one that does not compile (possible only from a JWT,
    /// the configuration is checked when read) is logged and left out, as Go does.
    pub(crate) fn compile(account: &AccountSpec) -> Self {
        let mut out: Vec<WeightedMapping> = Vec::with_capacity(account.mappings.len());
        for spec in &account.mappings {
            match WeightedMapping::new(&spec.source, &spec.dests) {
                Ok(m) => match out.iter_mut().find(|o| o.source() == spec.source) {
                    Some(old) => *old = m,
                    None => out.push(m),
                },
                Err(err) => tracing::error!(
                    "Error adding subject mapping {} for account [{}]: {err}",
                    natrium_gofmt::go_quote(&spec.source),
                    label(account)
                ),
            }
        }
        Self(out)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The mappings, for monitoring.
    pub fn iter(&self) -> impl Iterator<Item = &WeightedMapping> {
        self.0.iter()
    }

    /// Maps `subject` with the first mapping whose source matches, writing the new subject
    /// into `out`.
    pub fn apply(&self, subject: &[u8], out: &mut Vec<u8>) -> Mapped {
        self.0
            .iter()
            .find(|m| m.matches(subject))
            .map_or(Mapped::Unmatched, |m| m.select(subject, CLUSTER_NAME, out))
    }
}

/// How Go's log lines name an account: its name, and its JWT's name after a slash.
fn label(account: &AccountSpec) -> String {
    if account.name_tag.is_empty() {
        account.name.clone()
    } else {
        format!("{}/{}", account.name, account.name_tag)
    }
}

#[cfg(test)]
mod tests {
    use natrium_auth::account::{AccountSpec, SubjectMapping};
    use nats_subject::{MapDest, Mapped};

    use crate::account::Account;

    fn spec(mappings: &[(&str, &str)]) -> AccountSpec {
        AccountSpec {
            name: "A".into(),
            mappings: mappings
                .iter()
                .map(|(source, dest)| SubjectMapping {
                    source: (*source).into(),
                    dests: vec![MapDest {
                        subject: (*dest).into(),
                        weight: 100,
                        cluster: String::new(),
                    }],
                })
                .collect(),
            ..AccountSpec::default()
        }
    }

    fn mapped(account: &Account, subject: &str) -> Option<String> {
        let mut out = Vec::new();
        match account.map_subject(subject.as_bytes(), &mut out) {
            Mapped::To => Some(String::from_utf8_lossy(&out).into_owned()),
            Mapped::Unmatched => None,
            Mapped::Dropped => Some(String::new()),
        }
    }

    #[test]
    fn account_mappings_first_match_applies_and_state_swaps_them() {
        let account = Account::from_spec(spec(&[("a.*", "x.$1"), ("a.b", "never")]), true);
        assert!(account.has_mappings());
        assert_eq!(mapped(&account, "a.b").as_deref(), Some("x.b"));
        assert_eq!(mapped(&account, "q"), None);
        // A later entry for the same source replaces the earlier one, in its place.
        account.set_state(spec(&[("q", "r"), ("q", "s")]), None);
        assert_eq!(mapped(&account, "q").as_deref(), Some("s"));
        assert_eq!(account.state().mappings.iter().count(), 1);
        account.set_state(spec(&[]), None);
        assert!(!account.has_mappings());
        assert_eq!(mapped(&account, "q"), None);
    }

    #[test]
    fn account_mappings_that_do_not_build_are_left_out() {
        let account = Account::from_spec(spec(&[("foo", "bar.$1"), ("ok", "fine")]), true);
        assert_eq!(mapped(&account, "foo"), None);
        assert_eq!(mapped(&account, "ok").as_deref(), Some("fine"));
    }
}
