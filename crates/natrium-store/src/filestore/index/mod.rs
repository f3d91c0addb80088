//! `index.dat` (`docs/store-format.md` §6): the state a scan of the blocks would rebuild,
//! kept so that a reopen loads it in bulk and scans only what was written after it.
//! `format` is the body's codec, `state` what the store knows of the index on disk, `write`
//! when and how it is written (and removed before a change it would not match), `load` the
//! open from it with the scan of what follows, `check` the comparable recovered state the
//! tests hold against a full scan.

mod check;
mod format;
mod load;
mod state;
mod write;

pub use check::{BlockState, RecoveredState};
pub use load::load;
pub use state::{IndexState, INDEX_FILE};
