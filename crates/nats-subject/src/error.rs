//! The errors the subscription index returns.

/// Why [`crate::Sublist::insert`] or [`crate::Sublist::remove`] refused.
///
/// These are internal to the server (Go's `sublist:` errors); the client-facing
/// `-ERR 'Invalid Subject'` text belongs to the protocol crate's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SublistError {
    /// The subject is not a valid subscription subject (see [`crate::is_valid_subject`]).
    #[error("sublist: invalid subject")]
    InvalidSubject,
    /// The queue name is empty or holds whitespace (see [`crate::is_valid_queue_name`]).
    #[error("sublist: invalid queue name")]
    InvalidQueue,
    /// No subscription with that subject, queue and value is in the index.
    #[error("sublist: no matches found")]
    NotFound,
}
