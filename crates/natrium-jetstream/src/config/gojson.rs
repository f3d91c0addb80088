//! JSON text as Go's `encoding/json` writes it: serde_json's output with `<`, `>` and `&`
//! escaped as `\u003c`, `\u003e`, `\u0026` and the line separators U+2028/U+2029 as
//! `\u2028`/`\u2029`, so responses are byte-identical to Go's.

use serde::Serialize;

/// `v` encoded as Go encodes it. A value serde can't encode (a map with non-string keys)
/// gives `null`, which none of the API documents produce.
pub fn to_go_json<T: Serialize>(v: &T) -> Vec<u8> {
    let plain = serde_json::to_vec(v).unwrap_or_else(|_| b"null".to_vec());
    go_escape(&plain)
}

/// The escapes Go adds to serde_json's text. These characters only occur inside JSON strings,
/// so the whole text can be rewritten byte by byte.
fn go_escape(plain: &[u8]) -> Vec<u8> {
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
    use super::to_go_json;

    #[test]
    fn config_gojson_escapes_like_go() {
        let v = serde_json::json!({"s": "a<b>&c\u{2028}\u{2029}é\n\u{1}"});
        assert_eq!(
            String::from_utf8(to_go_json(&v)).unwrap(),
            r#"{"s":"a\u003cb\u003e\u0026c\u2028\u2029é\n\u0001"}"#
        );
    }
}
