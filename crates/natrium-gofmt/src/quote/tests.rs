use super::*;
use proptest::prelude::*;

#[test]
fn quote_controls_and_escapes_like_go() {
    assert_eq!(go_quote_bytes(b"FOO\r"), r#""FOO\r""#);
    assert_eq!(go_quote_bytes(b"\x00\x01\x7f"), r#""\x00\x01\x7f""#);
    assert_eq!(
        go_quote("\t\u{b}\u{c}\u{7}\u{8}\n\"\\'"),
        r#""\t\v\f\a\b\n\"\\'""#
    );
    assert_eq!(go_quote(""), r#""""#);
    assert_eq!(go_quote("foo.bar"), r#""foo.bar""#);
}

#[test]
fn quote_non_printable_unicode_like_go() {
    assert_eq!(go_quote("é\u{85}"), "\"é\\u0085\"");
    assert_eq!(
        go_quote("\u{a0}\u{ad}\u{200b}\u{2028}\u{feff}"),
        r#""\u00a0\u00ad\u200b\u2028\ufeff""#
    );
    assert_eq!(
        go_quote("\u{1f600}\u{e0001}\u{10ffff}\u{f0000}"),
        "\"\u{1f600}\\U000e0001\\U0010ffff\\U000f0000\""
    );
    // Unassigned in Unicode 15.0.0.
    assert_eq!(go_quote("\u{378}"), r#""\u0378""#);
    // U+FFFD written out is a printable symbol; only bad bytes are escaped.
    assert_eq!(go_quote("\u{fffd}"), "\"\u{fffd}\"");
}

#[test]
fn quote_invalid_utf8_byte_by_byte_like_go() {
    assert_eq!(go_quote_bytes(b"a\xffb"), r#""a\xffb""#);
    assert_eq!(go_quote_bytes(b"\xed\xa0\x80"), r#""\xed\xa0\x80""#);
    assert_eq!(go_quote_bytes(b"\xe2\x82A"), r#""\xe2\x82A""#);
    assert_eq!(go_quote_bytes(b"\xc0\x80"), r#""\xc0\x80""#);
}

#[test]
fn quote_rune_like_go() {
    // Recorded from Go: `%q` of these integers.
    assert_eq!(go_quote_rune(97), "'a'");
    assert_eq!(go_quote_rune(7), r"'\a'");
    assert_eq!(go_quote_rune(0xe9), "'é'");
    assert_eq!(go_quote_rune(0x85), r"'\u0085'");
    assert_eq!(go_quote_rune(39), r"'\''");
    assert_eq!(go_quote_rune(34), "'\"'");
    for invalid in [-1, 0xd800, 0x11_0000, i64::MAX] {
        assert_eq!(go_quote_rune(invalid), "'\u{fffd}'");
    }
}

#[test]
fn quote_streams_clean_text_as_one_piece() {
    let mut pieces = Vec::new();
    write_go_quoted(b"orders.created", |p| pieces.push(p.to_owned()));
    assert_eq!(pieces, ["\"", "orders.created", "\""]);
}

#[test]
fn quote_printable_table_is_well_formed() {
    assert!(PRINTABLE_BOUNDS.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(PRINTABLE_BOUNDS.len() % 2, 0);
    assert!(PRINTABLE_BOUNDS.last().is_some_and(|&b| b <= 0x11_0000));
    // Every control character is non-printable, whatever the table's Unicode version.
    assert!((0..=0x10_ffff)
        .filter_map(char::from_u32)
        .filter(|c| c.is_control())
        .all(|c| !is_go_printable(c)));
}

/// Go's `strconv.Quote` of pseudo-random inputs, recorded by `gen-go-data.sh`.
#[test]
fn quote_matches_recorded_go_output() {
    let data = include_str!("../../tests/data/go_quote.txt");
    let mut checked = 0;
    for line in data.lines() {
        let (hex, expected) = line.split_once('\t').unwrap();
        let input: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(go_quote_bytes(&input), expected, "input {hex}");
        checked += 1;
    }
    assert!(checked >= 400);
}

/// A plain reading of the rules, one character at a time, with a linear table scan.
#[allow(clippy::format_push_string)] // Plain on purpose: it is the reference.
fn reference_quote(bytes: &[u8]) -> String {
    let printable = |c: char| {
        let code = u32::from(c);
        PRINTABLE_BOUNDS
            .chunks_exact(2)
            .any(|r| (r[0]..r[1]).contains(&code))
    };
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let code = u32::from(c);
            out.push_str(&match c {
                '"' => "\\\"".to_owned(),
                '\\' => "\\\\".to_owned(),
                c if printable(c) => c.to_string(),
                '\u{7}' => "\\a".to_owned(),
                '\u{8}' => "\\b".to_owned(),
                '\u{c}' => "\\f".to_owned(),
                '\n' => "\\n".to_owned(),
                '\r' => "\\r".to_owned(),
                '\t' => "\\t".to_owned(),
                '\u{b}' => "\\v".to_owned(),
                _ if code < 0x20 || code == 0x7f => format!("\\x{code:02x}"),
                _ if code < 0x1_0000 => format!("\\u{code:04x}"),
                _ => format!("\\U{code:08x}"),
            });
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

proptest! {
    #[test]
    fn quote_bytes_agree_with_reference(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(go_quote_bytes(&bytes), reference_quote(&bytes));
    }

    #[test]
    fn quote_text_agrees_with_reference(s in "\\PC*|[\\x00-\\x7f\u{80}-\u{3000}]*|.*") {
        prop_assert_eq!(go_quote(&s), reference_quote(s.as_bytes()));
    }
}
