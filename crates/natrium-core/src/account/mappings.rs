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
