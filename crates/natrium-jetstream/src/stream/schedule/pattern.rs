//! `Nats-Schedule` values as Go v2.15.2 reads them: `@at <RFC 3339 time>` (once),
//! `@every <Go duration of at least 1s>`, the predefined `@yearly`, `@annually`, `@monthly`,
//! `@weekly`, `@daily`, `@midnight`, `@hourly`, and six-field cron patterns (`super::cron`).
//! A time zone applies to cron patterns only. A repeating schedule that would be due more
//! than once already (after a restart) skips ahead and fires once.

use std::fmt::Write as _;

use super::cron::Cron;
use super::fields::Invalid;
use super::zone::{self, Zone};

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// When a schedule fires next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    /// Unix nanoseconds.
    pub at_ns: i64,
    /// `@every` and cron repeat; `@at` fires once.
    pub repeat: bool,
    /// The zone's offset at `at_ns` in seconds (how Go prints `Nats-Schedule-Next`).
    pub offset_secs: i64,
}

impl Next {
    /// `Nats-Schedule-Next` for a repeating schedule: Go's `RFC3339Nano` in the zone.
    pub fn rfc3339(&self) -> String {
        rfc3339_nanos_at(self.at_ns, self.offset_secs)
    }
}

/// The next fire of `pattern` after the schedule's reference time `ts_ns` (the time it was
/// stored, or its last due time), with the clock at `now_ns`. `Ok(None)` for an empty
/// pattern (no schedule); `Err` for an invalid one.
pub fn next(
    pattern: &str,
    zone: Option<&Zone>,
    ts_ns: i64,
    now_ns: i64,
) -> Result<Option<Next>, Invalid> {
    if pattern.is_empty() {
        return Ok(None);
    }
    if let Some(at) = pattern.strip_prefix("@at ") {
        if zone.is_some() {
            return Err(Invalid::Pattern);
        }
        let (at_ns, offset_secs) = parse_rfc3339(at).ok_or(Invalid::Pattern)?;
        return Ok(Some(Next {
            at_ns,
            repeat: false,
            offset_secs,
        }));
    }
    if let Some(every) = pattern.strip_prefix("@every ") {
        if zone.is_some() {
            return Err(Invalid::Pattern);
        }
        let dur = natrium_gofmt::parse_go_duration(every).map_err(|_| Invalid::Pattern)?;
        if dur < NANOS_PER_SEC {
            return Err(Invalid::Pattern);
        }
        let mut at_ns = round_to_second(ts_ns).saturating_add(dur);
        if at_ns < now_ns {
            at_ns = round_to_second(now_ns).saturating_add(dur);
        }
        return Ok(Some(Next {
            at_ns,
            repeat: true,
            offset_secs: 0,
        }));
    }
    let cron = match pattern {
        "@yearly" | "@annually" => "0 0 0 1 1 *",
        "@monthly" => "0 0 0 1 * *",
        "@weekly" => "0 0 0 * * 0",
        "@daily" | "@midnight" => "0 0 0 * * *",
        "@hourly" => "0 0 * * * *",
        other => other,
    };
    let cron = Cron::parse(cron).ok_or(Invalid::Pattern)?;
    let utc = Zone::utc();
    let zone = zone.unwrap_or(&utc);
    let mut at = cron.next(zone, ts_ns).ok_or(Invalid::Pattern)?;
    if at.saturating_mul(NANOS_PER_SEC) < now_ns {
        at = cron
            .next(zone, round_to_second(now_ns))
            .ok_or(Invalid::Pattern)?;
    }
    Ok(Some(Next {
        at_ns: at.saturating_mul(NANOS_PER_SEC),
        repeat: true,
        offset_secs: zone.offset(at),
    }))
}

/// Go's `Time.Round(time.Second)`: halves round up.
fn round_to_second(ns: i64) -> i64 {
    let rem = ns.rem_euclid(NANOS_PER_SEC);
    let down = ns - rem;
    if rem >= NANOS_PER_SEC / 2 {
        down.saturating_add(NANOS_PER_SEC)
    } else {
        down
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` as Go's `time.Parse(time.RFC3339, …)` takes
/// it: Unix nanoseconds and the offset in seconds.
pub fn parse_rfc3339(text: &str) -> Option<(i64, i64)> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let month_days = days_in_month(year, month)?;
    if day < 1 || day > month_days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut at = 19;
    let mut nanos = 0;
    if matches!(b.get(at), Some(b'.' | b',')) {
        let digits = b
            .get(at + 1..)?
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos = num(at + 1, digits)? * 10_i64.pow(9 - digits as u32);
        at += 1 + digits;
    }
    let offset = match b.get(at..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let secs = h * 3600 + m * 60;
            if *sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return None,
    };
    let days = zone::days_from_civil(year, month, day);
    let local = days * zone::SECS_PER_DAY + hour * 3600 + minute * 60 + second;
    let unix = local - offset;
    Some((unix.checked_mul(NANOS_PER_SEC)?.checked_add(nanos)?, offset))
}

fn days_in_month(year: i64, month: i64) -> Option<i64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    Some(match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    })
}

/// Go's `RFC3339Nano` of an instant seen at `offset_secs`: `Z` at offset zero, else `±hh:mm`;
/// the fraction without trailing zeros.
pub fn rfc3339_nanos_at(unix_ns: i64, offset_secs: i64) -> String {
    let secs = unix_ns.div_euclid(NANOS_PER_SEC) + offset_secs;
    let nanos = unix_ns.rem_euclid(NANOS_PER_SEC);
    let (year, month, day) = zone::civil_from_days(secs.div_euclid(zone::SECS_PER_DAY));
    let day_secs = secs.rem_euclid(zone::SECS_PER_DAY);
    let mut out = String::with_capacity(36);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60
    );
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    if offset_secs == 0 {
        out.push('Z');
    } else {
        let sign = if offset_secs < 0 { '-' } else { '+' };
        let abs = offset_secs.abs();
        let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: i64 = NANOS_PER_SEC;

    #[test]
    fn schedule_pattern_rfc3339_like_go() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01Z"), Some((NS, 0)));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:01+01:00"), Some((NS, 3600)));
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:01.5Z"),
            Some((NS + NS / 2, 0))
        );
        for bad in [
            "1970-01-01 00:00:01Z",
            "1970-01-01T00:00:01",
            "1970-02-30T00:00:00Z",
            "1970-01-01T24:00:00Z",
            "1970-01-01T00:00:00z",
            "1970-01-01T00:00:00+0100",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(rfc3339_nanos_at(NS, 0), "1970-01-01T00:00:01Z");
        assert_eq!(
            rfc3339_nanos_at(NS + 120_000_000, 3600),
            "1970-01-01T01:00:01.12+01:00"
        );
        assert_eq!(rfc3339_nanos_at(0, -19_800), "1969-12-31T18:30:00-05:30");
    }

    #[test]
    fn schedule_pattern_next_like_go() {
        let now = 1_795_000_000 * NS + 300_000_000;
        assert_eq!(next("", None, now, now), Ok(None));
        let at = next("@at 2026-11-25T00:00:00Z", None, now, now)
            .unwrap()
            .unwrap();
        assert!(!at.repeat);
        assert_eq!(
            next("@at 2026-11-25T00:00:00Z", Some(&Zone::utc()), now, now),
            Err(Invalid::Pattern)
        );
        assert_eq!(next("@at", None, now, now), Err(Invalid::Pattern));
        // `@every` from the stored time, rounded to its second.
        let every = next("@every 5s", None, now, now).unwrap().unwrap();
        assert_eq!((every.at_ns, every.repeat), (1_795_000_005 * NS, true));
        assert_eq!(every.rfc3339(), rfc3339_nanos_at(1_795_000_005 * NS, 0));
        // Long past: one interval after now.
        let late = next("@every 5s", None, now - 3600 * NS, now)
            .unwrap()
            .unwrap();
        assert_eq!(late.at_ns, 1_795_000_005 * NS);
        assert_eq!(next("@every 999ms", None, now, now), Err(Invalid::Pattern));
        assert_eq!(next("@every 1x", None, now, now), Err(Invalid::Pattern));
        assert_eq!(
            next("@every 1s", Some(&Zone::utc()), now, now),
            Err(Invalid::Pattern)
        );
        let hourly = next("@hourly", None, now, now).unwrap().unwrap();
        assert_eq!(hourly.at_ns % (3600 * NS), 0);
        assert_eq!(next("@HOURLY", None, now, now), Err(Invalid::Pattern));
        assert_eq!(
            next("@yearly", None, now, now),
            next("0 0 0 1 1 *", None, now, now)
        );
        // A cron whose first fire after the stored time is past skips to after now.
        let past = next("0 0 * * * *", None, now - 7200 * NS, now)
            .unwrap()
            .unwrap();
        assert_eq!(past, hourly);
        let berlin = Zone::load("Europe/Berlin").unwrap();
        let local = next("0 0 9 * * *", Some(&berlin), now, now)
            .unwrap()
            .unwrap();
        assert!(
            local.rfc3339().ends_with("T09:00:00+01:00"),
            "{}",
            local.rfc3339()
        );
    }
}
