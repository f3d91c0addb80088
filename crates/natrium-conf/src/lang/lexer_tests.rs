//! Lexer unit tests: token kinds, positions (Go's column rule) and error lines.

use super::*;

fn kinds(src: &str) -> Vec<TokKind> {
    let lexed = lex(src);
    assert!(lexed.error.is_none(), "{src:?}: {:?}", lexed.error);
    lexed.tokens.into_iter().map(|t| t.kind).collect()
}

fn error(src: &str) -> (usize, String) {
    let e = lex(src)
        .error
        .unwrap_or_else(|| panic!("{src:?} lexed without error"));
    (e.line, e.message)
}

fn key(s: &str) -> TokKind {
    TokKind::Key(s.to_owned())
}

fn st(s: &str) -> TokKind {
    TokKind::Str(s.to_owned())
}

fn int(s: &str) -> TokKind {
    TokKind::Int(s.to_owned())
}

#[test]
fn lexer_separators_colon_equals_space() {
    for src in [
        "port: 4222",
        "port = 4222",
        "port 4222",
        "port:4222",
        "port\t=\t4222",
    ] {
        assert_eq!(
            kinds(src),
            vec![key("port"), int("4222"), TokKind::Eof],
            "{src}"
        );
    }
}

#[test]
fn lexer_newline_between_key_and_value_only_without_separator() {
    assert_eq!(kinds("port\n 5"), vec![key("port"), int("5"), TokKind::Eof]);
    assert_eq!(
        error("port:\n 5"),
        (2, "Expected value but found new line".into())
    );
    // Inside a block a newline may follow the separator.
    assert!(lex("a {b:\n 1}").error.is_none());
}

#[test]
fn lexer_blocks_and_arrays() {
    assert_eq!(
        kinds("a { b: 1; c = [x, \"y\"\n z] }"),
        vec![
            key("a"),
            TokKind::MapStart,
            key("b"),
            int("1"),
            key("c"),
            TokKind::ArrayStart,
            st("x"),
            st("y"),
            st("z"),
            TokKind::ArrayEnd,
            TokKind::MapEnd,
            TokKind::Eof
        ]
    );
    assert_eq!(kinds("a {}")[1..3], [TokKind::MapStart, TokKind::MapEnd]);
    assert_eq!(
        kinds("a: [1,2,]")[1..5],
        [TokKind::ArrayStart, int("1"), int("2"), TokKind::ArrayEnd]
    );
}

#[test]
fn lexer_comments() {
    assert_eq!(
        kinds("# c\n// d\nport: 1 # e\n"),
        vec![key("port"), int("1"), TokKind::Eof]
    );
    assert_eq!(
        kinds("a [ # c\n x // d\n ]")[1..4],
        [TokKind::ArrayStart, st("x"), TokKind::ArrayEnd]
    );
    // `#` inside an unquoted value is part of it.
    assert_eq!(kinds("a: x#y")[1], st("x#y"));
}

#[test]
fn lexer_booleans_any_case() {
    for (w, b) in [
        ("true", true),
        ("YES", true),
        ("On", true),
        ("false", false),
        ("No", false),
    ] {
        assert_eq!(kinds(&format!("a: {w}"))[1], TokKind::Bool(b), "{w}");
    }
    assert_eq!(kinds("a: truex")[1], st("truex"));
    assert_eq!(kinds("a: \"true\"")[1], st("true"));
}

#[test]
fn lexer_numbers_sizes_floats_dates() {
    assert_eq!(kinds("a: -12")[1], int("-12"));
    assert_eq!(kinds("a: 64MB")[1], int("64MB"));
    assert_eq!(kinds("a: 1.5")[1], TokKind::Float("1.5".into()));
    assert_eq!(kinds("a: 127.0.0.1")[1], st("127.0.0.1"));
    assert_eq!(kinds("a: 1e3")[1], st("1e3"));
    assert_eq!(kinds("a: [1k]")[2], st("1k"));
    assert_eq!(kinds("a: 1]")[1], st("1]"));
    assert_eq!(kinds("a: 12:30")[1], st("12:30"));
    assert_eq!(
        kinds("a: 2016-05-04T18:53:41Z")[1],
        TokKind::Datetime("2016-05-04T18:53:41Z".into())
    );
}

#[test]
fn lexer_number_errors_like_go() {
    assert_eq!(error("a: .5"), (1, "Floats must start with a digit".into()));
    assert_eq!(
        error("a: 5.x"),
        (
            1,
            "Floats must have a digit after the '.', but got 'x' instead.".into()
        )
    );
    assert_eq!(
        error("a: 5.\n"),
        (
            2,
            "Floats must have a digit after the '.', but got '\\n' instead.".into()
        )
    );
    assert_eq!(error("a: -x"), (1, "Expected a digit but got 'x'.".into()));
    assert_eq!(
        error("a: -.5"),
        (1, "Floats must start with a digit, not '.'.".into())
    );
    assert_eq!(
        error("a: 1-2"),
        (1, "All ISO8601 dates must be in full Zulu form.".into())
    );
    assert_eq!(
        error("a: 2016-05-04T18:53:41"),
        (
            1,
            "Expected 'Z' in ISO8601 datetime, but found '\0' instead.".into()
        )
    );
}

#[test]
fn lexer_strings_and_escapes() {
    assert_eq!(kinds(r#"a: "x\ty\n\"\\\x41""#)[1], st("x\ty\n\"\\A"));
    assert_eq!(kinds(r"a: 'x\ty'")[1], st(r"x\ty"));
    assert_eq!(kinds(r"a: x\ty")[1], st("x\ty"));
    assert_eq!(kinds("a: \"line1\nline2\"")[1], st("line1\nline2"));
    assert_eq!(kinds("a: (\n block\n)\n")[1], st("\n block\n"));
    let (line, message) = error(r#"a: "\q""#);
    assert_eq!(line, 1);
    assert!(message.starts_with("Invalid escape character 'q'. Only the following"));
    assert_eq!(
        error(r#"a: "\xzz""#),
        (
            1,
            "Expected two hexadecimal digits after '\\x', but got 'zz'".into()
        )
    );
    assert_eq!(error("a: \"abc"), (1, "Unexpected EOF.".into()));
    assert_eq!(
        error("a: (\nb\n"),
        (3, "Unexpected EOF processing block.".into())
    );
}

#[test]
fn lexer_variables_and_bcrypt() {
    assert_eq!(kinds("a: $VAR")[1], TokKind::Variable("VAR".into()));
    assert_eq!(kinds("a: $2a$11$abc")[1], st("$2a$11$abc"));
    assert_eq!(kinds("a: $xyz'")[1], st("$xyz"));
    assert_eq!(kinds("a: \"$VAR\"")[1], st("$VAR"));
}

#[test]
fn lexer_include() {
    assert_eq!(
        kinds("include ./a.conf")[0],
        TokKind::Include("./a.conf".into())
    );
    assert_eq!(
        kinds("include 'a b.conf'")[0],
        TokKind::Include("a b.conf".into())
    );
    assert_eq!(
        kinds("INCLUDE a.conf")[0],
        TokKind::Include("a.conf".into())
    );
    assert_eq!(kinds("include: a.conf")[0], key("include"));
    assert_eq!(
        error("include [a]"),
        (
            1,
            "Expected include value but found start of an array".into()
        )
    );
    assert_eq!(
        error("include 5"),
        (
            1,
            "Expected include value but found start of a number".into()
        )
    );
}

#[test]
fn lexer_json_style_top_level_braces() {
    assert_eq!(
        kinds(r#"{"port": 4222, "debug": true}"#),
        vec![
            key("port"),
            int("4222"),
            key("debug"),
            TokKind::Bool(true),
            TokKind::Eof
        ]
    );
    assert_eq!(
        error("{port: 1 x"),
        (
            1,
            "Expected a block-level value to end with a new line, comment or EOF, but got 'x' \
             instead."
                .into()
        )
    );
}

#[test]
fn lexer_positions_follow_go_columns() {
    let lexed = lex("port: 1\n  bar = \"x\"");
    let pos: Vec<(usize, usize)> = lexed.tokens.iter().map(|t| (t.line, t.column)).collect();
    // Line 1 columns are 0-based, later lines 1-based; quoted values start after the quote.
    assert_eq!(pos, vec![(1, 0), (1, 6), (2, 3), (2, 10), (2, 12)]);
}

#[test]
fn lexer_top_level_errors_like_go() {
    assert_eq!(
        error("a: 1 2"),
        (
            1,
            "Expected a top-level value to end with a new line, comment or EOF, but got '2' \
             instead."
                .into()
        )
    );
    assert_eq!(error("=1"), (1, "Unexpected key separator '='".into()));
    assert_eq!(
        error("a { : 1 }"),
        (1, "Unexpected key separator ':'.".into())
    );
    assert_eq!(error("a { b: 1"), (1, "Expected a map value terminator \",\" or a map terminator \"}\", but got '\0' instead.".into()));
    assert_eq!(
        error("a {\nb: 1\n"),
        (3, "Unexpected EOF processing map.".into())
    );
    assert_eq!(
        error("a: [1,,2]"),
        (1, "Unexpected array value terminator ','.".into())
    );
}

#[test]
fn lexer_deep_nesting_is_an_error_not_a_crash() {
    let src = format!("a: {}", "[".repeat(100_000));
    let e = lex(&src).error;
    assert!(e.is_some_and(|e| e.message.contains("nested more than")));
}
