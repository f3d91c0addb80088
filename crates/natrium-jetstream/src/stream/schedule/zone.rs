//! Time zones for cron schedules (`Nats-Schedule-Time-Zone`) and Go's wall-clock arithmetic:
//! a zone is loaded by name as Go's `time.LoadLocation` loads it (the system's TZif files), and
//! [`Zone::date`] turns a wall-clock time into an instant as Go's `time.Date` does, including
//! its choices inside a DST gap or overlap, so that next-fire times match Go's to the second.

use std::path::Path;

use tz::TimeZone;

/// Where Go looks for zone files on Unix (`platformZoneSources`), after `$ZONEINFO`.
const ZONE_DIRS: [&str; 4] = [
    "/usr/share/zoneinfo/",
    "/usr/share/lib/zoneinfo/",
    "/usr/lib/locale/TZ/",
    "/etc/zoneinfo/",
];
/// Go refuses zone files larger than this (`maxFileSize` in its zoneinfo reader).
const ZONE_FILE_BYTES_MAX: u64 = 10 << 20;
pub const SECS_PER_DAY: i64 = 86_400;

/// A loaded time zone; `None` is UTC.
#[derive(Debug, Clone, Default)]
pub struct Zone(Option<TimeZone>);

/// A wall-clock reading: year, month (1-12), day, hour, minute, second, weekday (0 = Sunday).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub weekday: i64,
}

impl Zone {
    pub fn utc() -> Self {
        Zone(None)
    }

    /// Loads `name` as Go's `time.LoadLocation` does: "" and "UTC" are UTC, "Local" the
    /// server's zone, a name with `..` or a leading slash is refused, any other is a TZif file
    /// under `$ZONEINFO` or the system's zoneinfo directories.
    pub fn load(name: &str) -> Option<Zone> {
        match name {
            "" | "UTC" => return Some(Zone(None)),
            "Local" => return Some(Zone(TimeZone::local().ok())),
            _ => {}
        }
        if name.contains("..") || name.starts_with('/') || name.starts_with('\\') {
            return None;
        }
        let env = std::env::var("ZONEINFO").ok().filter(|d| !d.is_empty());
        let dirs = env.iter().map(String::as_str).chain(ZONE_DIRS);
        for dir in dirs {
            let path = Path::new(dir).join(name);
            let small = std::fs::metadata(&path)
                .is_ok_and(|m| m.is_file() && m.len() <= ZONE_FILE_BYTES_MAX);
            if !small {
                continue;
            }
            if let Some(zone) = std::fs::read(&path)
                .ok()
                .and_then(|bytes| TimeZone::from_tz_data(&bytes).ok())
            {
                return Some(Zone(Some(zone)));
            }
        }
        None
    }

    /// The zone's offset from UTC in seconds at the instant `unix` (seconds).
    pub fn offset(&self, unix: i64) -> i64 {
        self.0.as_ref().map_or(0, |zone| {
            zone.find_local_time_type(unix)
                .map_or(0, |t| i64::from(t.ut_offset()))
        })
    }

    /// The wall clock at the instant `unix` (seconds).
    pub fn civil(&self, unix: i64) -> Civil {
        let local = unix + self.offset(unix);
        let days = local.div_euclid(SECS_PER_DAY);
        let secs = local.rem_euclid(SECS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: secs / 3600,
            minute: secs / 60 % 60,
            second: secs % 60,
            weekday: (days + 4).rem_euclid(7),
        }
    }

    /// The instant of a wall-clock time, as Go's `time.Date`: out-of-range months and days
    /// carry over; in a gap or an overlap the offset is the one in force at the wall clock
    /// read as UTC, or, if the result falls outside that offset's period, the one in force
    /// at the result.
    pub fn date(&self, year: i64, month: i64, day: i64, hour: i64, minute: i64, sec: i64) -> i64 {
        let m0 = month - 1;
        let year = year + m0.div_euclid(12);
        let month = m0.rem_euclid(12) + 1;
        let days = days_from_civil(year, month, 1) + day - 1;
        let local = days * SECS_PER_DAY + hour * 3600 + minute * 60 + sec;
        let guess = self.offset(local);
        if guess == 0 {
            return local;
        }
        local - self.offset(local - guess)
    }
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (month 1-12).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a number of days since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_zone_civil_round_trip() {
        for days in [-800_000, -1, 0, 59, 10_957, 20_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        let utc = Zone::utc();
        // 2026-03-29T01:30:00Z, a Sunday.
        let t = utc.date(2026, 3, 29, 1, 30, 0);
        assert_eq!(t, 1_774_747_800);
        let c = utc.civil(t);
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.weekday),
            (2026, 3, 29, 1, 30, 0)
        );
        // Go's carries: month 13 is January of the next year, day 32 of January is Feb 1.
        assert_eq!(
            utc.date(2025, 13, 1, 0, 0, 0),
            utc.date(2026, 1, 1, 0, 0, 0)
        );
        assert_eq!(
            utc.date(2026, 1, 32, 0, 0, 0),
            utc.date(2026, 2, 1, 0, 0, 0)
        );
    }

    #[test]
    fn schedule_zone_load_like_go() {
        assert!(Zone::load("UTC").is_some());
        assert!(Zone::load("../etc/passwd").is_none());
        assert!(Zone::load("/etc/localtime").is_none());
        assert!(Zone::load("Not/AZone").is_none());
        assert!(Zone::load("Europe").is_none());
        let berlin = Zone::load("Europe/Berlin").unwrap();
        // Winter +1h, summer +2h.
        assert_eq!(berlin.offset(1_767_225_600), 3600);
        assert_eq!(berlin.offset(1_782_864_000), 7200);
    }

    #[test]
    fn schedule_zone_date_in_gap_and_overlap_like_go() {
        let berlin = Zone::load("Europe/Berlin").unwrap();
        // 2026-03-29 02:30 does not exist in Berlin: Go gives 03:30 CEST (01:30Z).
        let gap = berlin.date(2026, 3, 29, 2, 30, 0);
        assert_eq!(gap, Zone::utc().date(2026, 3, 29, 1, 30, 0));
        // 2026-10-25 02:30 happens twice: Go takes the second (CET, 01:30Z).
        let overlap = berlin.date(2026, 10, 25, 2, 30, 0);
        assert_eq!(overlap, Zone::utc().date(2026, 10, 25, 1, 30, 0));
    }
}
