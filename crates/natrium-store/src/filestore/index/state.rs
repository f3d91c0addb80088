//! What the file store knows of `index.dat` on disk: whether one is there, which blocks and
//! lengths it describes, and how much was written to blocks since, which decides when the
//! next one is written (`docs/store-format.md` §6).

/// The index's file name, in the stream's `msgs/` directory.
pub const INDEX_FILE: &str = "index.dat";
/// The index's path inside the stream's directory, which its key is bound to.
pub const INDEX_FILE_ID: &str = "msgs/index.dat";

/// The index on disk, as far as this store knows.
#[derive(Debug, Default)]
pub struct IndexState {
    /// An `index.dat` is (or may be) on disk: it is removed before any change it would not
    /// match.
    pub on_disk: bool,
    /// The blocks and lengths it describes; empty when it describes nothing usable.
    pub basis: Vec<(u32, u64)>,
    /// Bytes written to blocks since it was written (or the store was opened).
    pub written: u64,
    /// The size of the last index written or read.
    pub last_size: u64,
    /// The store was recovered from the index (and the bytes after it).
    pub used: bool,
}

impl IndexState {
    /// Counts `bytes` written to blocks.
    pub fn wrote(&mut self, bytes: u64) {
        self.written = self.written.saturating_add(bytes);
    }

    /// After recovery: whether an index file was found, what it describes if it was used,
    /// and its size.
    pub fn opened(&mut self, found: bool, used: bool, basis: Vec<(u32, u64)>, size: u64) {
        *self = IndexState {
            on_disk: found,
            basis,
            written: 0,
            last_size: size,
            used,
        };
    }
}
