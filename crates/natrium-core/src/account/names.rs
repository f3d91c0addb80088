//! The names of the accounts every server has.

/// Name of the account clients land in when no account is configured (Go's `$G`).
pub const GLOBAL_ACCOUNT: &str = "$G";

/// Name of the system account when none is configured (Go's `$SYS`).
pub const SYSTEM_ACCOUNT: &str = "$SYS";
