//! Go's `encoding/json` escapes: `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026`, and the
//! line separators U+2028/U+2029 as `\u2028`/`\u2029`. Applied to serde_json's text, they make
//! JetStream's API answers and the monitoring documents byte-identical to Go's.

/// The escapes Go adds to serde_json's text. These characters only occur inside JSON strings,
/// so the whole text can be rewritten byte by byte.
pub fn go_escape(plain: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(plain.len() + plain.len() / 16);
    let mut i = 0;
    while let Some(&b) = plain.get(i) {
        match b {
            b'<' => out.extend_from_slice(br"\u003c"),
            b'>' => out.extend_from_slice(br"\u003e"),
            b'&' => out.extend_from_slice(br"\u0026"),
            0xE2 if plain.get(i + 1) == Some(&0x80)
                && matches!(plain.get(i + 2), Some(0xA8 | 0xA9)) =>
            {
                let last = if plain.get(i + 2) == Some(&0xA8) {
                    b'8'
                } else {
                    b'9'
                };
                out.extend_from_slice(br"\u202");
                out.push(last);
                i += 2;
            }
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::go_escape;

    #[test]
    fn gofmt_json_escapes_like_go() {
        let plain = "{\"s\":\"a<b>&c\u{2028}\u{2029}\u{e9}\"}";
        let want = "{\"s\":\"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\u{e9}\"}";
        assert_eq!(
            String::from_utf8(go_escape(plain.as_bytes())).unwrap(),
            want
        );
    }
}
