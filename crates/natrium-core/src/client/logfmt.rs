//! Formatting for client log lines that operators' tooling matches against Go's: durations as
//! Go's `time.Duration` prints them (`100ms`, `1.5s`, `2m0s`) and bytes quoted as Go's `%q`
//! (`"FOO\r"`, `"\x00\x01"`).

use std::fmt::Write as _;
use std::time::Duration;

/// A duration as Go's `time.Duration.String()` writes it.
pub(crate) fn go_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    if nanos < 1_000_000_000 {
        let (scale, decimals, unit) = match nanos {
            0..=999 => (1, 0, "ns"),
            1_000..=999_999 => (1_000, 3, "\u{b5}s"),
            _ => (1_000_000, 6, "ms"),
        };
        let _ = write!(
            out,
            "{}{}{unit}",
            nanos / scale,
            fraction(nanos % scale, decimals)
        );
        return out;
    }
    let secs = nanos / 1_000_000_000;
    let (hours, minutes, seconds) = (secs / 3600, secs / 60 % 60, secs % 60);
    if hours > 0 {
        let _ = write!(out, "{hours}h");
    }
    if hours > 0 || minutes > 0 {
        let _ = write!(out, "{minutes}m");
    }
    let _ = write!(out, "{seconds}{}s", fraction(nanos % 1_000_000_000, 9));
    out
}

/// `.ddd` with `decimals` digits of `frac`, trailing zeros trimmed; empty when zero.
fn fraction(frac: u128, decimals: usize) -> String {
    if frac == 0 || decimals == 0 {
        return String::new();
    }
    let digits = format!("{frac:0decimals$}");
    format!(".{}", digits.trim_end_matches('0'))
}

/// Bytes quoted the way Go's `%q` quotes a byte slice: printable text as is, `"` and `\`
/// escaped, C escapes for control characters, `\xNN` for other bytes and invalid UTF-8.
pub(crate) fn go_quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{b}' => out.push_str("\\v"),
                c if c.is_ascii_control() => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c if c.is_control() => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logfmt_durations_read_like_go() {
        let ms = Duration::from_millis;
        assert_eq!(go_duration(Duration::ZERO), "0s");
        assert_eq!(go_duration(Duration::from_nanos(250)), "250ns");
        assert_eq!(go_duration(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(go_duration(Duration::from_nanos(2_500)), "2.5\u{b5}s");
        assert_eq!(go_duration(ms(100)), "100ms");
        assert_eq!(go_duration(ms(1500)), "1.5s");
        assert_eq!(go_duration(ms(10_000)), "10s");
        assert_eq!(go_duration(ms(60_000)), "1m0s");
        assert_eq!(go_duration(ms(3_723_000)), "1h2m3s");
        assert_eq!(go_duration(ms(7_200_000)), "2h0m0s");
    }

    #[test]
    fn logfmt_quote_like_go() {
        assert_eq!(go_quote(b"FOO\r"), r#""FOO\r""#);
        assert_eq!(go_quote(b"\x00\x01\x02garbag"), r#""\x00\x01\x02garbag""#);
        assert_eq!(go_quote(b"q\"x\\"), r#""q\"x\\""#);
        assert_eq!(go_quote("é\u{85}".as_bytes()), "\"é\\u0085\"");
        assert_eq!(go_quote(b"a\xffb\x7f"), r#""a\xffb\x7f""#);
    }
}
