//! Parser unit tests: values, sizes, variables and scopes, environment, Go's key-stack quirks.

use std::collections::HashMap;

use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

fn parse(src: &str) -> Map {
    parse_str_with_env(src, "t.conf", &env_of(&[])).unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

fn parse_err(src: &str) -> String {
    match parse_str_with_env(src, "t.conf", &env_of(&[])) {
        Ok(m) => panic!("{src:?} parsed: {m:?}"),
        Err(e) => e.to_string(),
    }
}

fn value<'m>(map: &'m Map, key: &str) -> &'m Value {
    &map.get(key)
        .unwrap_or_else(|| panic!("no {key} in {map:?}"))
        .node
        .value
}

fn json(src: &str) -> String {
    to_go_json(&parse(src)).trim_end().to_owned()
}

#[test]
fn parser_sizes_like_go() {
    let cases = [
        ("1k", 1000),
        ("1kb", 1024),
        ("1KiB", 1024),
        ("1ki", 1024),
        ("2m", 2_000_000),
        ("2MB", 2 << 20),
        ("1g", 1_000_000_000),
        ("1gib", 1 << 30),
        ("1t", 1_000_000_000_000),
        ("1tb", 1 << 40),
        ("1p", 1_000_000_000_000_000),
        ("1pb", 1 << 50),
        ("1e", 1_000_000_000_000_000_000),
        ("1eb", 1 << 60),
        ("-1k", -1000),
        ("007", 7),
    ];
    for (text, want) in cases {
        assert_eq!(
            value(&parse(&format!("a: {text}")), "a"),
            &Value::Int(want),
            "{text}"
        );
    }
    // Go's int64 multiplication wraps.
    assert_eq!(
        value(&parse("a: 10e"), "a"),
        &Value::Int(-8_446_744_073_709_551_616)
    );
    assert_eq!(
        parse_err("a: 9223372036854775808"),
        "integer '9223372036854775808' is out of the range"
    );
    assert_eq!(
        parse_err("a: 99999999999999999999k"),
        "integer '99999999999999999999k' is out of the range"
    );
}

#[test]
fn parser_unknown_size_suffix_drops_the_value_like_go() {
    assert_eq!(
        json("port: 5\nmax: 1kbb\nname: x"),
        r#"{"name":"x","port":5}"#
    );
}

#[test]
fn parser_floats_dates_bools_strings() {
    assert_eq!(value(&parse("a: 2.5"), "a"), &Value::Float(2.5));
    assert_eq!(value(&parse("a: off"), "a"), &Value::Bool(false));
    assert_eq!(
        json("a: 2016-05-04T18:53:41Z"),
        r#"{"a":"2016-05-04T18:53:41Z"}"#
    );
    assert_eq!(
        parse_err("a: 2016-13-04T18:53:41Z"),
        "expected Zulu formatted DateTime, but got '2016-13-04T18:53:41Z'"
    );
    assert_eq!(
        json("a: \"2m\"\nb: '10s'\nc: 1h30m"),
        r#"{"a":"2m","b":"10s","c":"1h30m"}"#
    );
}

#[test]
fn parser_last_definition_wins() {
    assert_eq!(json("port: 1\nport: 2"), r#"{"port":2}"#);
}

#[test]
fn parser_json_syntax() {
    assert_eq!(
        json(r#"{"port": 4567, "auth": {"timeout": 1.5}, "tags": ["a", "b"]}"#),
        r#"{"auth":{"timeout":1.5},"port":4567,"tags":["a","b"]}"#
    );
}

#[test]
fn parser_semicolons_and_commas_separate() {
    assert_eq!(json("a: 1; b: 2, c: 3"), r#"{"a":1,"b":2,"c":3}"#);
}

#[test]
fn parser_variables_resolve_in_scope() {
    assert_eq!(json("x = 5\nport: $x"), r#"{"port":5,"x":5}"#);
    assert_eq!(
        json("t = 3\nauth { timeout: $t }"),
        r#"{"auth":{"timeout":3},"t":3}"#
    );
    assert_eq!(
        json("auth { t = 3; timeout: $t }"),
        r#"{"auth":{"t":3,"timeout":3}}"#
    );
    // The value at the time of reference.
    assert_eq!(json("t = 3\np: $t\nt = 4"), r#"{"p":3,"t":4}"#);
    // A block's variables are not visible outside it.
    assert_eq!(
        parse_err("auth { t = 3 }\nport: $t"),
        "variable reference for 't' on line 2 can not be found"
    );
    // Only earlier definitions count, and names are case-sensitive.
    assert_eq!(
        parse_err("port: $x\nx = 5"),
        "variable reference for 'x' on line 1 can not be found"
    );
    assert_eq!(
        parse_err("T = 3\nport: $t"),
        "variable reference for 't' on line 2 can not be found"
    );
}

#[test]
fn parser_marks_used_variables() {
    let map = parse("size = 1MB\nother = 2\nmax: $size");
    assert!(map.get("size").unwrap().node.used_as_variable());
    assert!(!map.get("other").unwrap().node.used_as_variable());
    assert!(!map.get("max").unwrap().node.used_as_variable());
}

#[test]
fn parser_environment_fallback_parses_the_value() {
    let env = env_of(&[
        ("NUM", "1234"),
        ("SIZE", "1k"),
        ("MAP", "{timeout: 3}"),
        ("SP", "a b"),
        ("CHAIN", "$NUM"),
        ("SELF", "$SELF"),
    ]);
    let p = |src: &str| parse_str_with_env(src, "t.conf", &env).map(|m| to_go_json(&m));
    assert_eq!(p("a: $NUM").unwrap(), "{\"a\":1234}\n");
    assert_eq!(p("a: $SIZE").unwrap(), "{\"a\":1000}\n");
    assert_eq!(p("a: $MAP").unwrap(), "{\"a\":{\"timeout\":3}}\n");
    assert_eq!(p("a: $CHAIN").unwrap(), "{\"a\":1234}\n");
    // A file variable shadows the environment.
    assert_eq!(p("NUM = 1\na: $NUM").unwrap(), "{\"NUM\":1,\"a\":1}\n");
    assert_eq!(
        p("a: $SP").unwrap_err().to_string(),
        "variable reference for 'SP' on line 1 could not be parsed: Parse error on line 1: \
         'Expected a top-level value to end with a new line, comment or EOF, but got 'b' instead.'"
    );
    assert!(p("a: $SELF")
        .unwrap_err()
        .to_string()
        .contains("expands more than"));
}

#[test]
fn parser_bcrypt_is_not_a_variable() {
    assert_eq!(
        json("p: $2a$11$abcdefghijk"),
        r#"{"p":"$2a$11$abcdefghijk"}"#
    );
}

#[test]
fn parser_key_without_value_takes_the_block_like_go() {
    // Go keeps keys on one stack: `b` has no value, so the block goes to `b`, at top level.
    assert_eq!(json("a { b }"), r#"{"b":{}}"#);
    assert_eq!(json("a { x: 1, b }\nc: 2"), r#"{"b":{"x":1},"c":2}"#);
}

#[test]
fn parser_missing_value_at_end() {
    assert_eq!(parse_err("port"), "config is invalid (t.conf:1:4)");
    assert_eq!(parse_err("\n  port\n"), "config is invalid (t.conf:3:1)");
    // A lone `}` at the end is tolerated.
    assert_eq!(json("port: 1\n}"), r#"{"port":1}"#);
}

#[test]
fn parser_key_positions() {
    let map = parse("port: 1\n  auth {\n    timeout: 2 }");
    let auth = map.get("auth").unwrap();
    assert_eq!((auth.key_pos.line, auth.key_pos.column), (2, 3));
    let Value::Map(inner) = &auth.node.value else {
        panic!("not a map")
    };
    let timeout = inner.get("timeout").unwrap();
    assert_eq!((timeout.key_pos.line, timeout.key_pos.column), (3, 5));
    assert_eq!(&*timeout.key_pos.file, "t.conf");
}

#[test]
fn parser_syntax_error_message() {
    assert_eq!(parse_err("a: [1 2]"), "Parse error on line 1: 'Expected an array value terminator \",\" or an array terminator \"]\", but got '2' instead.'");
}
