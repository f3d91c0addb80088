//! Go's `encoding/json` rendering of a parsed tree, and the digest `nats-server` prints.
//!
//! Go reports `configuration file f.conf is valid (sha256:…)`, where the hash covers the JSON
//! encoding of the parsed map (keys sorted, HTML characters escaped, one trailing newline), not
//! the file's bytes. Reproducing it lets `-t` print the same digest and gives tests an exact
//! oracle for how the parser read a file.

use std::fmt::Write as _;

use super::value::{Map, Value};

/// The JSON text Go encodes for this map, trailing newline included.
pub fn to_go_json(map: &Map) -> String {
    let mut out = String::new();
    write_map(&mut out, map);
    out.push('\n');
    out
}

/// Go's configuration digest: `sha256:` and the hex SHA-256 of [`to_go_json`].
pub fn config_digest(map: &Map) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(to_go_json(map).as_bytes());
    let mut out = String::with_capacity("sha256:".len() + 64);
    out.push_str("sha256:");
    for b in digest {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => write_float(out, *f),
        Value::Str(s) => write_string(out, s),
        Value::Datetime(dt) => write_string(out, &dt.to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, &item.value);
            }
            out.push(']');
        }
        Value::Map(map) => write_map(out, map),
    }
}

fn write_map(out: &mut String, map: &Map) {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
    out.push('{');
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, &e.key);
        out.push(':');
        write_value(out, &e.node.value);
    }
    out.push('}');
}

/// `f` as Go's JSON encoder (and, for the magnitudes that matter here, `%v`) writes it.
pub(crate) fn format_float(f: f64) -> String {
    let mut out = String::new();
    write_float(&mut out, f);
    out
}

/// Go writes the shortest round-trip digits, in plain notation for magnitudes in [1e-6, 1e21)
/// and in exponent notation otherwise, with a two-digit minimum dropped (`1e-7`, `1e+21`).
fn write_float(out: &mut String, f: f64) {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        let _ = write!(out, "{f}");
        return;
    }
    let text = format!("{f:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => {
            let _ = write!(out, "{mantissa}e+{exp}");
        }
        _ => out.push_str(&text),
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::parse_str;

    fn json(src: &str) -> String {
        parse_str(src, "t.conf").map_or_else(|e| e.to_string(), |m| to_go_json(&m))
    }

    #[test]
    fn gojson_sorted_keys_and_types() {
        assert_eq!(json("port: 4222"), "{\"port\":4222}\n");
        assert_eq!(
            json("b: [1, \"x\", true]\na: {z: 1.5, y: 2016-05-04T18:53:41Z}"),
            "{\"a\":{\"y\":\"2016-05-04T18:53:41Z\",\"z\":1.5},\"b\":[1,\"x\",true]}\n"
        );
    }

    #[test]
    fn gojson_escapes_like_go() {
        assert_eq!(
            json("a: \"<&>\\t\""),
            "{\"a\":\"\\u003c\\u0026\\u003e\\t\"}\n"
        );
    }

    #[test]
    fn gojson_floats_like_go() {
        let mut s = String::new();
        for f in [1.5, 2.0, 1e21, 1e-7, 123_456.789, 1e20, -0.000_001] {
            write_float(&mut s, f);
            s.push(' ');
        }
        assert_eq!(
            s,
            "1.5 2 1e+21 1e-7 123456.789 100000000000000000000 -0.000001 "
        );
    }

    #[test]
    fn gojson_digest_matches_go() {
        // Recorded from `nats-server -t` on a file containing `port: 4222`.
        let map = parse_str("port: 4222", "t.conf");
        assert_eq!(
            map.map(|m| config_digest(&m)).unwrap_or_default(),
            "sha256:797533ebd0dfba7d34a0f9337ecf147e442871f48ddfd07ed751575a5737267e"
        );
    }
}
