//! The store's error type: one variant per failure the Go store reports, plus the I/O and
//! corruption cases the file store adds. The JetStream layer maps them to Go's API errors.

use std::io;

/// Everything a [`crate::StreamStore`] or [`crate::ConsumerStore`] call can fail with.
///
/// The texts are Go's (`server/store.go`), so a log line reads the same; the API layer maps
/// variants to JetStream error codes (`StorageFull` to 10047, for instance), not the texts.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store was stopped; no call works after `stop`.
    #[error("store is closed")]
    Closed,
    /// The sequence is inside the stream's range but holds no message (deleted or skipped).
    #[error("no message found")]
    NotFound,
    /// The sequence is past the last one stored, or no message matches from the start point.
    #[error("stream store EOF")]
    Eof,
    /// `discard: new` and the stream holds `max_msgs` messages.
    #[error("maximum messages exceeded")]
    MaxMsgs,
    /// `discard: new` and the message would take the stream past `max_bytes`.
    #[error("maximum bytes exceeded")]
    MaxBytes,
    /// `discard: new` with `discard_new_per_subject`, and the subject is at its limit.
    #[error("maximum messages per subject exceeded")]
    MaxMsgsPerSubject,
    /// Over `max_msg_size`, or over what a record can represent.
    #[error("message too large")]
    MsgTooLarge,
    /// A replicated store call named a sequence other than the next one.
    #[error("expected sequence does not match store")]
    SequenceMismatch {
        /// The sequence the store would assign next.
        expected: u64,
        /// The sequence the caller asked for.
        got: u64,
    },
    /// A subject or filter the store cannot index (empty, or an invalid subject).
    #[error("invalid subject")]
    InvalidSubject,
    /// A consumer state update older than the state held.
    #[error("old update ignored")]
    OldUpdate,
    /// A consumer state that contradicts itself (ack floor above delivered, pending out of range).
    #[error("bad consumer state: {0}")]
    BadConsumerState(&'static str),
    /// An ack or redelivery on a consumer whose ack policy is none.
    #[error("ack policy is none")]
    NoAckPolicy,
    /// The device is full (`ENOSPC`); reads keep working. Go's 10047.
    #[error("insufficient storage resources available")]
    StorageFull,
    /// A read or write failed; after a failed write or sync the store refuses further writes.
    #[error("I/O error during {op}: {source}")]
    Io {
        /// What the store was doing.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A state file's body would be over its kind's ceiling (`limits`), so it is not
    /// written: a reader would refuse it as damaged.
    #[error("{what} too large to write")]
    StateTooLarge {
        /// Which file.
        what: &'static str,
    },
    /// Bytes read from disk failed validation (checksum, magic, length, version).
    #[error("corrupt {what}")]
    Corrupt {
        /// Which file or structure.
        what: &'static str,
    },
    /// An encrypted file's key record is intact (its CRC passes) but neither the server's
    /// `key` nor its `prev_key` opens it: the configuration names another key. Nothing is
    /// damaged; the file stays as it is.
    #[error("wrong encryption key: neither key nor prev_key opens the data key")]
    WrongKey,
    /// Data that passed its CRC failed authenticated decryption under a data key that
    /// opened: tampering, or damage the CRC missed. Told apart from `Corrupt` (the CRC
    /// failed) and `WrongKey`.
    #[error("cannot decrypt {what}: authentication failed")]
    Decrypt {
        /// Which file or structure.
        what: &'static str,
    },
}

impl StoreError {
    /// Wraps an I/O error, telling a full device apart so it maps to Go's 10047.
    pub fn io(op: &'static str, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::StorageFull {
            return StoreError::StorageFull;
        }
        StoreError::Io { op, source }
    }
}
