//! JSON text as Go's `encoding/json` writes it: serde_json's output with `<`, `>` and `&`
//! escaped as `\u003c`, `\u003e`, `\u0026` and the line separators U+2028/U+2029 as
//! `\u2028`/`\u2029`, so responses are byte-identical to Go's.

use serde::Serialize;

/// `v` encoded as Go encodes it. A value serde can't encode (a map with non-string keys)
/// gives `null`, which none of the API documents produce.
pub fn to_go_json<T: Serialize>(v: &T) -> Vec<u8> {
    let plain = serde_json::to_vec(v).unwrap_or_else(|_| b"null".to_vec());
    natrium_gofmt::json::go_escape(&plain)
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
