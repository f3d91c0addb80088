//! A Go `time.Time` as JSON carries it: RFC 3339 with nanoseconds, trailing zeros of the
//! fraction dropped, the sender's UTC offset kept (`Z` for UTC), as Go's `MarshalJSON` writes
//! it back.

use chrono::{DateTime, FixedOffset, Offset, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant with the UTC offset it was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoTime(pub DateTime<FixedOffset>);

impl GoTime {
    /// Parses RFC 3339 text (Go's `time.RFC3339Nano` layout on input).
    pub fn parse(text: &str) -> Option<Self> {
        DateTime::parse_from_rfc3339(text).ok().map(GoTime)
    }

    /// Unix nanoseconds, saturating outside `i64`.
    pub fn unix_nanos(&self) -> i64 {
        self.0
            .timestamp_nanos_opt()
            .unwrap_or(if self.0.timestamp() < 0 {
                i64::MIN
            } else {
                i64::MAX
            })
    }

    /// The same instant in UTC (Go's `t.UTC()`).
    #[must_use]
    pub fn utc(&self) -> Self {
        GoTime(self.0.with_timezone(&Utc).fixed_offset())
    }

    /// Go's zero time, `0001-01-01T00:00:00Z`.
    pub fn is_zero(&self) -> bool {
        self.0.naive_utc() == chrono::NaiveDateTime::default().with_year_one()
    }

    /// Go's `RFC3339Nano` text.
    pub fn to_go_string(&self) -> String {
        use chrono::Timelike;
        use std::fmt::Write;
        let dt = self.0;
        let mut out = dt.format("%Y-%m-%dT%H:%M:%S").to_string();
        let nanos = dt.nanosecond() % 1_000_000_000;
        if nanos > 0 {
            let frac = format!("{nanos:09}");
            out.push('.');
            out.push_str(frac.trim_end_matches('0'));
        }
        let offset = dt.offset().fix().local_minus_utc();
        if offset == 0 {
            out.push('Z');
        } else {
            let sign = if offset < 0 { '-' } else { '+' };
            let abs = offset.unsigned_abs();
            let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60);
        }
        out
    }
}

/// `NaiveDateTime::default()` is 1970; Go's zero is year 1.
trait YearOne {
    fn with_year_one(self) -> chrono::NaiveDateTime;
}

impl YearOne for chrono::NaiveDateTime {
    fn with_year_one(self) -> chrono::NaiveDateTime {
        chrono::NaiveDate::from_ymd_opt(1, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .unwrap_or(self)
    }
}

/// The layout Go's JSON decoding of a time reads, and its parts as `time.Parse` reports them.
const LAYOUT: &str = "2006-01-02T15:04:05Z07:00";
const PARTS: [&str; 11] = [
    "2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05",
];

/// Checks `text` as Go's strict RFC 3339 parse does, with its error text (`parsing time "x" as
/// "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`).
pub fn check_rfc3339(text: &str) -> Result<(), String> {
    let quote = natrium_gofmt::go_quote;
    let cannot = |rest: &str, part: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(text),
            quote(LAYOUT),
            quote(rest),
            quote(part)
        )
    };
    let mut rest = text;
    for part in PARTS {
        let digits = part.bytes().all(|b| b.is_ascii_digit());
        let n = part.len();
        let head = rest.get(..n).unwrap_or_default();
        let ok = if digits {
            head.len() == n && head.bytes().all(|b| b.is_ascii_digit())
        } else {
            head == part
        };
        if !ok {
            return Err(cannot(rest, part));
        }
        rest = rest.get(n..).unwrap_or_default();
    }
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = frac.get(digits..).unwrap_or_default();
    }
    let zone_ok = rest == "Z"
        || (rest.len() == 6
            && matches!(rest.as_bytes().first(), Some(b'+' | b'-'))
            && rest.get(3..4) == Some(":"));
    if !zone_ok {
        return Err(cannot(rest, "Z07:00"));
    }
    if GoTime::parse(text).is_none() {
        return Err(format!("parsing time {}: out of range", quote(text)));
    }
    Ok(())
}

impl Serialize for GoTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_go_string())
    }
}

impl<'de> Deserialize<'de> for GoTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        check_rfc3339(&text).map_err(serde::de::Error::custom)?;
        GoTime::parse(&text).ok_or_else(|| serde::de::Error::custom("time out of range"))
    }
}

#[cfg(test)]
mod tests {
    use super::GoTime;

    #[test]
    fn config_gotime_echoes_as_go() {
        let t = GoTime::parse("2030-01-01T00:00:00.500000Z").unwrap();
        assert_eq!(t.to_go_string(), "2030-01-01T00:00:00.5Z");
        let t = GoTime::parse("2030-01-01T01:00:00+01:00").unwrap();
        assert_eq!(t.to_go_string(), "2030-01-01T01:00:00+01:00");
        assert_eq!(t.utc().to_go_string(), "2030-01-01T00:00:00Z");
        assert!(GoTime::parse("0001-01-01T00:00:00Z").unwrap().is_zero());
        assert!(!t.is_zero());
        assert_eq!(
            super::check_rfc3339("x").unwrap_err(),
            r#"parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#
        );
        assert_eq!(
            super::check_rfc3339("2030-01-01").unwrap_err(),
            r#"parsing time "2030-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T""#
        );
    }
}
