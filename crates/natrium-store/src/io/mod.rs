//! Storage I/O: the narrow interface the file store uses ([`StorageIo`], [`StorageFile`]),
//! the real file system ([`StdFs`]) and the fault-injecting, crash-simulating double
//! ([`SimFs`]).

mod fs;
mod sim;
mod traits;

pub use fs::StdFs;
pub use sim::{CrashMode, Fault, OpKind, SimFs};
pub use traits::{
    read_exact_at, write_all_at, write_atomic, write_replace, write_synced, OpenMode, StorageFile,
    StorageIo,
};

#[cfg(test)]
mod tests;
