use super::*;

const NS: i64 = 1_000_000_000;

fn utc(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
    Zone::utc().date(y, mo, d, h, mi, s)
}

fn next(pattern: &str, zone: &Zone, after: i64) -> Option<i64> {
    Cron::parse(pattern).unwrap().next(zone, after * NS)
}

#[test]
fn schedule_cron_parse_like_go() {
    for ok in [
        "* * * * * *",
        "0 0 0 1 1 *",
        "*/5 0-30/10 1,2,3 ? jan-MAR sun",
        "0 0 9 * * MON-fri",
        "+5 0 0 1 * *",
        "0 0 0 ,1,, * *",
        "5/15 * * * * *",
        "0 *-3 * * * *",
    ] {
        assert!(Cron::parse(ok).is_some(), "{ok}");
    }
    for bad in [
        "* * * * *",
        "* * * * * * *",
        "60 * * * * *",
        "* * 24 * * *",
        "* * * 0 * *",
        "* * * * 13 *",
        "* * * * * 7",
        "5-1 * * * * *",
        "*/0 * * * * *",
        "1-2-3 * * * * *",
        "1/2/3 * * * * *",
        "-1 * * * * *",
        "x * * * * *",
        "* * * * foo *",
    ] {
        assert!(Cron::parse(bad).is_none(), "{bad}");
    }
}

#[test]
fn schedule_cron_next_utc() {
    let z = Zone::utc();
    let t = utc(2026, 11, 25, 10, 20, 30);
    assert_eq!(next("* * * * * *", &z, t), Some(t + 1));
    assert_eq!(
        next("0 * * * * *", &z, t),
        Some(utc(2026, 11, 25, 10, 21, 0))
    );
    assert_eq!(
        next("0 0 * * * *", &z, t),
        Some(utc(2026, 11, 25, 11, 0, 0))
    );
    assert_eq!(next("0 0 0 * * *", &z, t), Some(utc(2026, 11, 26, 0, 0, 0)));
    assert_eq!(next("0 0 0 1 * *", &z, t), Some(utc(2026, 12, 1, 0, 0, 0)));
    assert_eq!(next("0 0 0 1 1 *", &z, t), Some(utc(2027, 1, 1, 0, 0, 0)));
    // 2026-11-25 is a Wednesday: the next Sunday is the 29th.
    assert_eq!(next("0 0 0 * * 0", &z, t), Some(utc(2026, 11, 29, 0, 0, 0)));
    // Both day fields restricted: either matches (the 1st or a Friday).
    assert_eq!(
        next("0 0 0 1 * fri", &z, t),
        Some(utc(2026, 11, 27, 0, 0, 0))
    );
    // A star in one day field: both must match (any weekday, the 13th).
    assert_eq!(
        next("0 0 0 13 * *", &z, t),
        Some(utc(2026, 12, 13, 0, 0, 0))
    );
    assert_eq!(next("0 0 0 30 2 *", &z, t), None);
    assert_eq!(next("0 0 0 29 2 *", &z, t), Some(utc(2028, 2, 29, 0, 0, 0)));
    // Exactly on a match: strictly after.
    let on = utc(2026, 11, 25, 11, 0, 0);
    assert_eq!(
        next("0 0 * * * *", &z, on),
        Some(utc(2026, 11, 25, 12, 0, 0))
    );
    // Sub-second input truncates first.
    assert_eq!(
        Cron::parse("* * * * * *")
            .unwrap()
            .next(&z, t * NS + 999_999_999),
        Some(t + 1)
    );
}

#[test]
fn schedule_cron_next_across_dst_like_go() {
    let berlin = Zone::load("Europe/Berlin").unwrap();
    // Daily at 02:30 local: on the spring-forward day (2026-03-29) 02:30 does not exist;
    // Go's search steps hours as elapsed time, never sees hour 2 that day, and fires next
    // on the 30th at 02:30 CEST (00:30Z).
    let before = utc(2026, 3, 28, 12, 0, 0);
    assert_eq!(
        next("0 30 2 * * *", &berlin, before),
        Some(utc(2026, 3, 30, 0, 30, 0))
    );
    let after = utc(2026, 3, 29, 12, 0, 0);
    assert_eq!(
        next("0 30 2 * * *", &berlin, after),
        Some(utc(2026, 3, 30, 0, 30, 0))
    );
    // Fall back (2026-10-25): daily at 02:30 fires at the first 02:30 (CEST, 00:30Z) and,
    // as in Go, a second search from there finds the second 02:30 (CET, 01:30Z).
    let eve = utc(2026, 10, 24, 12, 0, 0);
    let first = next("0 30 2 * * *", &berlin, eve).unwrap();
    assert_eq!(first, utc(2026, 10, 25, 0, 30, 0));
    assert_eq!(
        next("0 30 2 * * *", &berlin, first),
        Some(utc(2026, 10, 25, 1, 30, 0))
    );
    // Midnight in New York across its spring change is 05:00Z then 04:00Z.
    let ny = Zone::load("America/New_York").unwrap();
    let sat = utc(2026, 3, 7, 12, 0, 0);
    let sun = utc(2026, 3, 8, 5, 0, 0);
    assert_eq!(next("0 0 0 * * *", &ny, sat), Some(sun));
    assert_eq!(
        next("0 0 0 * * *", &ny, sun),
        Some(utc(2026, 3, 9, 4, 0, 0))
    );
}

#[test]
fn schedule_cron_next_is_monotonic_and_matches() {
    // A light property check over a spread of instants and patterns: the next fire is
    // strictly later, and its wall clock in the zone matches every field.
    let zones = [
        Zone::utc(),
        Zone::load("Europe/Berlin").unwrap(),
        Zone::load("Asia/Kolkata").unwrap(),
    ];
    let patterns = ["0 */7 * * * *", "30 15 3 * * 1-5", "0 0 2 * * *"];
    let mut t = utc(2026, 1, 1, 0, 0, 0);
    for step in 0..200_i64 {
        t += 86_400 * 3 + step * 3_607;
        for zone in &zones {
            for pattern in patterns {
                let cron = Cron::parse(pattern).unwrap();
                let fire = cron.next(zone, t * NS).unwrap();
                assert!(fire > t, "{pattern} at {t}");
                let c = zone.civil(fire);
                assert!(bit(cron.second, c.second) && bit(cron.minute, c.minute));
                assert!(bit(cron.month, c.month) && cron.day_matches(zone, fire));
            }
        }
    }
}

/// Go's own answers around the DST changes of zones with whole-hour, half-hour (Lord Howe)
/// and no changes, and a sample of the rest of 2026.
#[test]
fn schedule_cron_next_matches_go() {
    let cases = include_str!("cron_go_cases.txt");
    for line in cases.lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.split('|').collect();
        let zone = Zone::load(parts[1]).unwrap();
        let after: i64 = parts[2].parse().unwrap();
        let want: i64 = parts[3].parse().unwrap();
        let got = Cron::parse(parts[0]).unwrap().next(&zone, after * NS);
        assert_eq!(got.unwrap_or(-1), want, "{line}");
    }
}
