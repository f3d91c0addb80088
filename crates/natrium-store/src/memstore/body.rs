//! What a stored message keeps of its headers and payload: the bytes themselves in the memory
//! store ([`MemBody`]), or where its record is in the file store ([`crate::filestore::block::Loc`]).
//! The rest of a message's in-memory entry (subject id, time, size, TTL, subject chain) is the
//! same for both.

use bytes::Bytes;

/// A message's body as held by a store's in-memory state.
pub trait MsgBody: Send + 'static {
    /// The body for a message just stored with these parts.
    fn from_parts(headers: Bytes, payload: Bytes) -> Self;

    /// The headers and payload, when held in memory (empty otherwise).
    fn parts(&self) -> (Bytes, Bytes);

    /// Overwrites the held bytes with zeros when nothing else shares them (erase).
    fn erase(self);

    /// What a removal log keeps of a removed message's body (see `MemState::removals`).
    type Trace: Copy + Send + std::fmt::Debug;

    fn trace(&self) -> Self::Trace;
}

/// The memory store's body: the message's own bytes.
#[derive(Debug)]
pub struct MemBody {
    headers: Bytes,
    payload: Bytes,
}

impl MsgBody for MemBody {
    type Trace = ();

    fn trace(&self) {}

    fn from_parts(headers: Bytes, payload: Bytes) -> Self {
        MemBody { headers, payload }
    }

    fn parts(&self) -> (Bytes, Bytes) {
        (self.headers.clone(), self.payload.clone())
    }

    fn erase(self) {
        // A loaded copy still in use elsewhere keeps its view (it is the reader's), and is
        // dropped with it.
        for part in [self.headers, self.payload] {
            if let Ok(mut owned) = part.try_into_mut() {
                owned.fill(0);
            }
        }
    }
}
