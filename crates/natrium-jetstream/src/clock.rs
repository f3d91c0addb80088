//! The wall clock in Unix nanoseconds: a leaf every module may read the time from.

/// Now, in Unix nanoseconds (0 before 1970, saturating far ahead).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
