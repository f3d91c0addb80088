//! Limits of the authorization state a connection keeps, with the reasoning for each value.

/// Most reply subjects a connection with `allow_responses` may hold permission for at once.
/// Go keeps them in an unbounded map pruned every 4096 additions or second; we bound it.
/// When full, the oldest entry is evicted, so a response to the oldest outstanding request is
/// refused as if it had expired. At about 200 bytes an entry this caps the table near 3 MiB
/// per connection, reached only by a responder holding 16Ki unanswered requests.
pub const REPLY_PERMS_ENTRIES_MAX: usize = 16_384;
