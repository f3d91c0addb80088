//! Go's `time.Time` in JSON: RFC 3339 in UTC with nanoseconds, trailing zeros of the fraction
//! dropped (`time.RFC3339Nano`), and Go's zero time for "never".

use std::fmt::Write;

/// Go's zero `time.Time` as JSON writes it.
pub const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// Unix nanoseconds as Go's `RFC3339Nano` in UTC; 0 is Go's zero time (a stream with no
/// messages reports its first and last times so).
pub fn rfc3339_nanos(unix_ns: i64) -> String {
    if unix_ns == 0 {
        return ZERO_TIME.to_owned();
    }
    let secs = unix_ns.div_euclid(1_000_000_000);
    let nanos = unix_ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let day_secs = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let mut out = String::with_capacity(36);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60
    );
    if nanos != 0 {
        let mut frac = format!("{nanos:09}");
        while frac.ends_with('0') {
            frac.pop();
        }
        out.push('.');
        out.push_str(&frac);
    }
    out.push('Z');
    out
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_rfc3339_like_go() {
        assert_eq!(rfc3339_nanos(0), ZERO_TIME);
        assert_eq!(
            rfc3339_nanos(1_795_978_822_012_841_220),
            "2026-11-29T19:00:22.01284122Z"
        );
        assert_eq!(rfc3339_nanos(1_000_000_000), "1970-01-01T00:00:01Z");
        assert_eq!(
            rfc3339_nanos(951_782_400_500_000_000),
            "2000-02-29T00:00:00.5Z"
        );
    }
}
