//! What a publish in one account must also do in others, compiled from imports once at start.
//!
//! - A stream import of B on A's export makes A's matching publishes go to B's subscribers,
//!   on the import's local subject: A holds a [`StreamForward`] to B. Forwarded messages are
//!   delivered in B only; they do not travel further (Go's stream imports do not chain).
//! - A service import of B on A's export makes B's publishes on the local subject go to A's
//!   subscribers on A's subject: B holds a [`ServiceForward`] to A. A request (a publish with a
//!   reply subject) gets a fresh reply subject of A's (`_R_.…`), mapped back to the original in
//!   A's response table; A's responses to it are routed back into B. Requests may chain
//!   through several accounts; a hop limit stops any loop the configuration let through.
//!
//! The types are generic over the account they point at (`Links<Account>`), so that this
//! module does not depend on the account that holds them.
//!
//! Links point at other accounts weakly: accounts live as long as the server, and a strong
//! cycle (A imports from B, B from A) would never be freed.

use std::sync::Weak;
use std::time::Duration;

use natrium_auth::account::ResponseType;
use nats_subject::{is_literal, subject_matches, SubjectTransform};

/// How a subject is rewritten on its way to another account.
#[derive(Debug)]
pub enum Mapping {
    /// Unchanged (an import of a wildcard subject without `to` or prefix).
    Same,
    /// Always this literal subject (an import of a literal subject).
    Fixed(Box<[u8]>),
    /// Wildcard tokens carried over.
    Transform(SubjectTransform),
}

impl Mapping {
    /// The mapping from pattern `from` to pattern `to`, as Go builds it for imports.
    pub fn new(from: &str, to: &str) -> Self {
        if from == to && !is_literal(from.as_bytes()) {
            return Self::Same;
        }
        if is_literal(from.as_bytes()) {
            return Self::Fixed(to.as_bytes().into());
        }
        match SubjectTransform::new(from.as_bytes(), to.as_bytes()) {
            Ok(t) => Self::Transform(t),
            // The configuration checks refuse this; keep the subject rather than lose it.
            Err(_) => Self::Same,
        }
    }

    /// A service import's mapping from the importer's `local` subject to the `exported` one:
    /// as Go does, a literal exported subject is the target of every request, whatever
    /// wildcards the local subject has.
    pub fn service(local: &str, exported: &str) -> Self {
        if is_literal(exported.as_bytes()) && local != exported {
            return Self::Fixed(exported.as_bytes().into());
        }
        Self::new(local, exported)
    }

    /// Writes the rewrite of `subject` into `out`, or returns false when unchanged.
    pub fn apply(&self, subject: &[u8], out: &mut Vec<u8>) -> bool {
        match self {
            Self::Same => false,
            Self::Fixed(to) => {
                out.clear();
                out.extend_from_slice(to);
                true
            }
            Self::Transform(t) => t.apply(subject, out),
        }
    }
}

/// An importer of one of this account's streams.
#[derive(Debug)]
pub struct StreamForward<A> {
    /// The exported subject (pattern) the import covers, in this account.
    pub from: Box<[u8]>,
    /// The import's subject in the importing account.
    pub local: Box<[u8]>,
    pub mapping: Mapping,
    pub to: Weak<A>,
    /// `allow_trace` on the import: traced messages stay traced in the importer.
    pub allow_trace: bool,
}

impl<A> StreamForward<A> {
    pub fn matches(&self, subject: &[u8]) -> bool {
        subject_matches(&self.from, subject)
    }
}

/// One of this account's service imports.
#[derive(Debug)]
pub struct ServiceForward<A> {
    /// The local subject (pattern) requests are published on, in this account.
    pub local: Box<[u8]>,
    pub mapping: Mapping,
    /// The exporting account.
    pub to: Weak<A>,
    /// Share the requester's details with the exporter (`share`).
    pub share: bool,
    pub response: ResponseType,
    /// How long the exporter may take to respond.
    pub threshold: Duration,
    /// `allow_trace` on the export: traced requests stay traced in the exporter.
    pub allow_trace: bool,
}

impl<A> ServiceForward<A> {
    pub fn matches(&self, subject: &[u8]) -> bool {
        subject_matches(&self.local, subject)
    }
}

/// An account's links; absent (not empty) when it has none.
#[derive(Debug)]
pub struct Links<A> {
    pub streams: Vec<StreamForward<A>>,
    pub services: Vec<ServiceForward<A>>,
    /// Whether other accounts import this account's services: its publishes may then be
    /// responses on `_R_.` subjects to route back.
    pub responds: bool,
}

impl<A> Default for Links<A> {
    fn default() -> Self {
        Self {
            streams: Vec::new(),
            services: Vec::new(),
            responds: false,
        }
    }
}

impl<A> Links<A> {
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty() && self.services.is_empty() && !self.responds
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;

    fn mapped(from: &str, to: &str, subject: &str) -> Option<String> {
        let mut out = Vec::new();
        Mapping::new(from, to)
            .apply(subject.as_bytes(), &mut out)
            .then(|| String::from_utf8(out).unwrap_or_default())
    }

    #[test]
    fn account_links_mappings() {
        assert_eq!(mapped("s.>", "s.>", "s.x"), None);
        assert_eq!(mapped("s.x", "m.x", "s.x").as_deref(), Some("m.x"));
        assert_eq!(mapped("s.>", "p.s.>", "s.a.b").as_deref(), Some("p.s.a.b"));
        assert_eq!(
            mapped("local.*", "svc.*", "local.q").as_deref(),
            Some("svc.q")
        );
    }
}
