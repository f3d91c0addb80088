//! Raises the open-file soft limit to the hard limit at start-up.
//!
//! Every client connection is a file descriptor, and distributions start processes with a soft
//! limit of 1,024. The Go runtime raises the soft limit to the hard limit in every Go program,
//! so the Go server accepts as many connections as the hard limit allows without operators
//! touching `ulimit`; a drop-in replacement has to do the same.

/// Sets RLIMIT_NOFILE's soft limit to its hard limit. Failure leaves the limit as it was: the
/// server still runs, with fewer connections possible.
#[allow(unsafe_code)]
pub fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass and touches no other memory.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur >= limit.rlim_max {
        return;
    }
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: setrlimit reads the struct we pass and touches no other memory.
    let _ = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) };
}
