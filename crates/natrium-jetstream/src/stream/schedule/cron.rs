//! Cron patterns of message schedules as Go v2.15.2 reads them: six fields (second, minute,
//! hour, day of month, month, day of week), each a comma list of `*`, `?`, `n`, `a-b` and
//! `/step` ranges, months and weekdays also by their three-letter English names. The next
//! fire is searched field by field in the schedule's zone, as Go's (robfig-derived) search
//! does, up to five years ahead; a pattern that never fires in that span is invalid.

use super::zone::Zone;

/// Set when a field was `*` or `?` (without a step above 1): the day-of-month and
/// day-of-week fields then combine with "and" rather than "or".
const STAR_BIT: u64 = 1 << 63;
const NANOS_PER_SEC: i64 = 1_000_000_000;
/// How far ahead the search goes.
const YEARS_AHEAD_MAX: i64 = 5;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// A parsed pattern: one bit per allowed value of each field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cron {
    second: u64,
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
}

struct Bounds {
    min: u64,
    max: u64,
    names: &'static [&'static str],
    /// The value of the first name.
    first_name: u64,
}

const SECONDS: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
    first_name: 0,
};
const MINUTES: Bounds = SECONDS;
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
    first_name: 0,
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
    first_name: 0,
};
const MONTH: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &MONTHS,
    first_name: 1,
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &WEEKDAYS,
    first_name: 0,
};

impl Cron {
    /// Parses six whitespace-separated fields.
    pub fn parse(pattern: &str) -> Option<Cron> {
        let mut fields = pattern.split_whitespace();
        let mut next = |bounds: &Bounds| field(fields.next()?, bounds);
        let cron = Cron {
            second: next(&SECONDS)?,
            minute: next(&MINUTES)?,
            hour: next(&HOURS)?,
            dom: next(&DOM)?,
            month: next(&MONTH)?,
            dow: next(&DOW)?,
        };
        fields.next().is_none().then_some(cron)
    }

    /// The first instant (Unix seconds) after `after_ns` (Unix nanoseconds, truncated to its
    /// second) that the pattern matches in `zone`; `None` when none comes within five years.
    pub fn next(&self, zone: &Zone, after_ns: i64) -> Option<i64> {
        let mut t = after_ns.div_euclid(NANOS_PER_SEC) + 1;
        let mut truncated = false;
        let year_max = zone.civil(t).year + YEARS_AHEAD_MAX;
        'wrap: loop {
            let c = zone.civil(t);
            if c.year > year_max {
                return None;
            }
            while !bit(self.month, zone.civil(t).month) {
                let c = zone.civil(t);
                let base = if truncated {
                    c
                } else {
                    zone.civil(zone.date(c.year, c.month, 1, 0, 0, 0))
                };
                truncated = true;
                t = zone.date(
                    base.year,
                    base.month + 1,
                    base.day,
                    base.hour,
                    base.minute,
                    base.second,
                );
                if zone.civil(t).month == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(zone, t) {
                let c = zone.civil(t);
                let base = if truncated {
                    c
                } else {
                    zone.civil(zone.date(c.year, c.month, c.day, 0, 0, 0))
                };
                truncated = true;
                t = zone.date(
                    base.year,
                    base.month,
                    base.day + 1,
                    base.hour,
                    base.minute,
                    base.second,
                );
                if zone.civil(t).day == 1 {
                    continue 'wrap;
                }
            }
            while !bit(self.hour, zone.civil(t).hour) {
                if !truncated {
                    truncated = true;
                    let c = zone.civil(t);
                    t = zone.date(c.year, c.month, c.day, c.hour, 0, 0);
                }
                t += 3600;
                if zone.civil(t).hour == 0 {
                    continue 'wrap;
                }
            }
            while !bit(self.minute, zone.civil(t).minute) {
                if !truncated {
                    truncated = true;
                    t -= t.rem_euclid(60);
                }
                t += 60;
                if zone.civil(t).minute == 0 {
                    continue 'wrap;
                }
            }
            while !bit(self.second, zone.civil(t).second) {
                truncated = true;
                t += 1;
                if zone.civil(t).second == 0 {
                    continue 'wrap;
                }
            }
            return Some(t);
        }
    }

    /// Go's rule: with a star in either day field both must match, else either may.
    fn day_matches(&self, zone: &Zone, t: i64) -> bool {
        let c = zone.civil(t);
        let dom = bit(self.dom, c.day);
        let dow = bit(self.dow, c.weekday);
        if (self.dom | self.dow) & STAR_BIT != 0 {
            dom && dow
        } else {
            dom || dow
        }
    }
}

fn bit(bits: u64, value: i64) -> bool {
    u32::try_from(value).is_ok_and(|v| v < 63 && bits & (1 << v) != 0)
}

/// A comma list of ranges (empty items are skipped, as Go's split drops them).
fn field(text: &str, bounds: &Bounds) -> Option<u64> {
    text.split(',')
        .filter(|r| !r.is_empty())
        .try_fold(0, |bits, r| Some(bits | range(r, bounds)?))
}

/// `number | name | * | ?`, then an optional `-end`, then an optional `/step`.
fn range(expr: &str, bounds: &Bounds) -> Option<u64> {
    let mut by_step = expr.split('/');
    let span = by_step.next()?;
    let step_text = by_step.next();
    if by_step.next().is_some() {
        return None;
    }
    let ends: Vec<&str> = span.split('-').collect();
    let (mut start, mut end, mut extra);
    if matches!(ends.first(), Some(&"*" | &"?")) {
        // Go ignores whatever follows a star's hyphen.
        (start, end, extra) = (bounds.min, bounds.max, STAR_BIT);
    } else {
        start = number_or_name(ends.first()?, bounds)?;
        end = match ends.len() {
            1 => start,
            2 => number_or_name(ends.get(1)?, bounds)?,
            _ => return None,
        };
        extra = 0;
    }
    let step = match step_text {
        None => 1,
        Some(text) => {
            let step = number(text)?;
            if ends.len() == 1 {
                end = bounds.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
    };
    if start < bounds.min || end > bounds.max || start > end || step == 0 {
        return None;
    }
    let mut bits = 0;
    while start <= end {
        bits |= 1 << start;
        start += step;
    }
    Some(bits | extra)
}

fn number_or_name(text: &str, bounds: &Bounds) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    if let Some(i) = bounds.names.iter().position(|n| *n == lower) {
        return Some(bounds.first_name + i as u64);
    }
    number(text)
}

/// Go's `strconv.Atoi` of a non-negative number (a leading sign is allowed).
fn number(text: &str) -> Option<u64> {
    let n: i64 = text.parse().ok()?;
    u64::try_from(n).ok()
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
