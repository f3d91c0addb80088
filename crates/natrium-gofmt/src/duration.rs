//! Go's duration syntax (`time.ParseDuration`) and rendering (`time.Duration.String`).
//!
//! Configuration files write durations as strings (`"2m"`, `"1h30m"`, `"500ms"`), and Go prints
//! durations back in error messages (`invalid lame_duck_duration of 5s`), log lines (`Slow
//! Consumer Detected: WriteDeadline of 10s exceeded`), reload lines and monitoring JSON, so both
//! directions must match Go exactly. Durations are signed nanosecond counts, as in Go.

use std::fmt::Write as _;
use std::time::Duration;

use crate::quote::go_quote;

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Parses a Go duration such as `1h30m`, `-1.5s`, `300ms` or `0`, returning nanoseconds.
/// The error is Go's text (`time: unknown unit "x" in duration "5x"`).
pub fn parse_go_duration(text: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(text));
    let mut s = text;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (int_digits, rest) = s.split_at(int_len);
        let whole = leading_int(int_digits).ok_or_else(invalid)?;
        s = rest;
        let mut fraction: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut frac_digits = false;
        if let Some(rest) = s.strip_prefix('.') {
            let len = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let (digits, after) = rest.split_at(len);
            (fraction, scale) = leading_fraction(digits);
            frac_digits = !digits.is_empty();
            s = after;
        }
        if int_digits.is_empty() && !frac_digits {
            return Err(invalid());
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let (unit_text, after) = s.split_at(unit_len);
        s = after;
        if unit_text.is_empty() {
            return Err(format!("time: missing unit in duration {}", go_quote(text)));
        }
        let unit: u64 = match unit_text {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => NANOS_PER_SEC,
            "m" => 60 * NANOS_PER_SEC,
            "h" => 3_600 * NANOS_PER_SEC,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit_text),
                    go_quote(text)
                ));
            }
        };
        let limit = 1u64 << 63;
        if whole > limit / unit {
            return Err(invalid());
        }
        let mut v = whole * unit;
        if fraction > 0 {
            v = v.saturating_add((fraction as f64 * (unit as f64 / scale)) as u64);
            if v > limit {
                return Err(invalid());
            }
        }
        total = total.saturating_add(v);
        if total > limit {
            return Err(invalid());
        }
    }
    if negative {
        return Ok(0i64.wrapping_sub_unsigned(total));
    }
    i64::try_from(total).map_err(|_| invalid())
}

fn leading_int(digits: &str) -> Option<u64> {
    let mut v: u64 = 0;
    for d in digits.bytes() {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        if v > 1 << 63 {
            return None;
        }
    }
    Some(v)
}

/// Go keeps the digits it can represent and ignores the rest.
fn leading_fraction(digits: &str) -> (u64, f64) {
    let mut v: u64 = 0;
    let mut scale = 1.0;
    let mut overflow = false;
    for d in digits.bytes() {
        if overflow {
            continue;
        }
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(d - b'0')))
        {
            Some(next) if next <= 1 << 63 => {
                v = next;
                scale *= 10.0;
            }
            _ => overflow = true,
        }
    }
    (v, scale)
}

/// A duration as Go's `Duration.String` writes it: `1m30s`, `1.5ms`, `2h0m0s`, `0s`. Longer
/// than Go's `Duration` can hold (292 years), it saturates.
pub fn go_duration(d: Duration) -> String {
    go_duration_nanos(duration_to_nanos(d))
}

/// Renders nanoseconds as Go's `Duration.String` does: `1m30s`, `1.5ms`, `2h0m0s`, `0s`.
pub fn go_duration_nanos(nanos: i64) -> String {
    let negative = nanos < 0;
    let mut u = nanos.unsigned_abs();
    let mut out = String::new();
    if u < NANOS_PER_SEC {
        let (prec, unit) = match u {
            0 => return "0s".to_owned(),
            1..=999 => (0, "ns"),
            1_000..=999_999 => (3, "\u{b5}s"),
            _ => (6, "ms"),
        };
        let frac = fraction_text(&mut u, prec);
        let _ = write!(out, "{u}{frac}{unit}");
    } else {
        let frac = fraction_text(&mut u, 9);
        let _ = write!(out, "{}{frac}s", u % 60);
        u /= 60;
        if u > 0 {
            out.insert_str(0, &format!("{}m", u % 60));
            u /= 60;
            if u > 0 {
                out.insert_str(0, &format!("{u}h"));
            }
        }
    }
    if negative {
        out.insert(0, '-');
    }
    out
}

/// Splits off `prec` decimal digits of `v`, trimmed of trailing zeros, as `.ddd` (or nothing).
fn fraction_text(v: &mut u64, prec: u32) -> String {
    let pow = 10u64.pow(prec);
    let frac = *v % pow;
    *v /= pow;
    if frac == 0 {
        return String::new();
    }
    let digits = format!("{frac:0width$}", width = prec as usize);
    format!(".{}", digits.trim_end_matches('0'))
}

/// Nanoseconds to a `Duration`, or `None` when negative.
pub fn nanos_to_duration(nanos: i64) -> Option<Duration> {
    u64::try_from(nanos).ok().map(Duration::from_nanos)
}

/// A `Duration` to Go's signed nanoseconds, saturating.
pub fn duration_to_nanos(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_parse_like_go() {
        let ok = |s: &str| parse_go_duration(s).unwrap();
        assert_eq!(ok("2m"), 120 * 1_000_000_000);
        assert_eq!(ok("1h30m"), 5_400 * 1_000_000_000);
        assert_eq!(ok("500ms"), 500_000_000);
        assert_eq!(ok("1.5s"), 1_500_000_000);
        assert_eq!(ok(".5s"), 500_000_000);
        assert_eq!(ok("5.s"), 5_000_000_000);
        assert_eq!(ok("-1m"), -60_000_000_000);
        assert_eq!(ok("+5s"), 5_000_000_000);
        assert_eq!(ok("0"), 0);
        assert_eq!(ok("-0"), 0);
        assert_eq!(ok("1h2m3s4ms5us6ns"), 3_723_004_005_006);
        assert_eq!(ok("5\u{b5}s"), 5_000);
        assert_eq!(ok("5\u{3bc}s"), 5_000);
    }

    #[test]
    fn duration_errors_like_go() {
        let err = |s: &str| parse_go_duration(s).unwrap_err();
        assert_eq!(err("abc"), "time: invalid duration \"abc\"");
        assert_eq!(err(""), "time: invalid duration \"\"");
        assert_eq!(err("5"), "time: missing unit in duration \"5\"");
        assert_eq!(err("5x"), "time: unknown unit \"x\" in duration \"5x\"");
        assert_eq!(err("5S"), "time: unknown unit \"S\" in duration \"5S\"");
        assert_eq!(err("1.5.5s"), "time: missing unit in duration \"1.5.5s\"");
        assert_eq!(
            err("99999999999h"),
            "time: invalid duration \"99999999999h\""
        );
        assert_eq!(err("."), "time: invalid duration \".\"");
    }

    #[test]
    fn duration_format_like_go() {
        let s = 1_000_000_000i64;
        assert_eq!(go_duration_nanos(0), "0s");
        assert_eq!(go_duration_nanos(5 * s), "5s");
        assert_eq!(go_duration_nanos(-60 * s), "-1m0s");
        assert_eq!(go_duration_nanos(29_999_000_000), "29.999s");
        assert_eq!(go_duration_nanos(3_600 * s), "1h0m0s");
        assert_eq!(go_duration_nanos(90 * s + 500_000_000), "1m30.5s");
        assert_eq!(go_duration_nanos(1_500_000), "1.5ms");
        assert_eq!(go_duration_nanos(1_000), "1\u{b5}s");
        assert_eq!(go_duration_nanos(42), "42ns");
        assert_eq!(go_duration_nanos(i64::MIN), "-2562047h47m16.854775808s");
        assert_eq!(go_duration_nanos(i64::MAX), "2562047h47m16.854775807s");
        assert_eq!(go_duration_nanos(-1), "-1ns");
        assert_eq!(go_duration_nanos(999_999), "999.999\u{b5}s");
        assert_eq!(go_duration_nanos(999_999_999), "999.999999ms");
    }

    #[test]
    fn duration_std_form_like_go() {
        let ms = Duration::from_millis;
        assert_eq!(go_duration(Duration::ZERO), "0s");
        assert_eq!(go_duration(Duration::from_nanos(250)), "250ns");
        assert_eq!(go_duration(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(go_duration(Duration::from_nanos(2_500)), "2.5\u{b5}s");
        assert_eq!(go_duration(ms(100)), "100ms");
        assert_eq!(go_duration(ms(1500)), "1.5s");
        assert_eq!(go_duration(ms(60_000)), "1m0s");
        assert_eq!(go_duration(ms(61_500)), "1m1.5s");
        assert_eq!(go_duration(ms(3_723_000)), "1h2m3s");
        assert_eq!(go_duration(ms(7_200_000)), "2h0m0s");
        assert_eq!(go_duration(Duration::MAX), "2562047h47m16.854775807s");
    }

    #[test]
    fn duration_round_trips_through_go_syntax() {
        for nanos in [
            0,
            1,
            999,
            1_000,
            1_500,
            61_500_000_000,
            3_600_000_000_000,
            -42,
            i64::MAX,
        ] {
            assert_eq!(parse_go_duration(&go_duration_nanos(nanos)).unwrap(), nanos);
        }
    }
}
