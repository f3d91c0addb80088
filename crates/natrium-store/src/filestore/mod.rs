//! The file store, built in steps (`docs/store-format.md`). So far: the record codec.
//! `TODO(#14)`: block files, group-committed appends, rotation, `index.dat`, recovery.

pub mod record;
