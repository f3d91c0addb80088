//! Property tests for the configuration language: no input makes the lexer, parser or option
//! layer panic, and generated configurations (in NATS syntax and in JSON syntax) parse back to
//! the tree they were generated from.

use std::collections::BTreeMap;

use natrium_conf::lang::{parse_str_with_env, to_go_json, Map, Node, Value};
use natrium_conf::{Position, ServerOptions};
use proptest::prelude::*;

fn no_env(_: &str) -> Option<String> {
    None
}

/// Characters that exercise every lexer state.
fn noisy_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "port",
        "include",
        "x.conf",
        ":",
        "=",
        " ",
        "\t",
        "\n",
        "\r",
        ",",
        ";",
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        "\"",
        "'",
        "\\",
        "\\x4",
        "$",
        "$2a$",
        "#",
        "/",
        "//",
        "-",
        ".",
        "1",
        "12",
        "1k",
        "kb",
        "e",
        "2016-05-04T18:53:41Z",
        "true",
        "é",
        "\u{0}",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn proptest_parser_never_panics_on_noise(src in noisy_text()) {
        if let Ok(map) = parse_str_with_env(&src, "/nonexistent/t.conf", &no_env) {
            let _ = to_go_json(&map);
            let _ = ServerOptions::from_map(&map, "t.conf");
        }
    }

    #[test]
    fn proptest_parser_never_panics_on_arbitrary_text(src in "\\PC{0,200}") {
        let _ = parse_str_with_env(&src, "/nonexistent/t.conf", &no_env);
    }
}

#[derive(Debug, Clone)]
enum Gen {
    Int(i64),
    Bool(bool),
    Float(u32, u32),
    Str(String),
    Array(Vec<Gen>),
    Map(BTreeMap<String, Gen>),
}

fn gen_key() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,7}".prop_filter("include is a directive", |k| k != "include")
}

fn gen_value() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Gen::Int),
        any::<bool>().prop_map(Gen::Bool),
        (0u32..100_000, 1u32..1000).prop_map(|(i, f)| Gen::Float(i, f)),
        "[ -~\t\n]{0,12}".prop_map(Gen::Str),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Gen::Array),
            prop::collection::btree_map(gen_key(), inner, 0..5).prop_map(Gen::Map),
        ]
    })
}

fn pos() -> Position {
    Position {
        file: "g".into(),
        line: 1,
        column: 0,
    }
}

fn to_value(g: &Gen) -> Value {
    match g {
        Gen::Int(n) => Value::Int(*n),
        Gen::Bool(b) => Value::Bool(*b),
        Gen::Float(i, f) => Value::Float(format!("{i}.{f:03}").parse().unwrap()),
        Gen::Str(s) => Value::Str(s.clone()),
        Gen::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| Node::new(to_value(v), pos()))
                .collect(),
        ),
        Gen::Map(m) => Value::Map(to_map(m)),
    }
}

fn to_map(m: &BTreeMap<String, Gen>) -> Map {
    let mut map = Map::new();
    for (k, v) in m {
        map.insert(k.clone(), pos(), Node::new(to_value(v), pos()));
    }
    map
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Renders in NATS syntax, cycling through the separators the language allows.
fn render(g: &Gen, style: usize) -> String {
    match g {
        Gen::Int(n) => n.to_string(),
        Gen::Bool(b) => {
            let (yes, no) = [
                ("true", "false"),
                ("yes", "no"),
                ("on", "off"),
                ("TRUE", "False"),
            ][style % 4];
            (if *b { yes } else { no }).to_owned()
        }
        Gen::Float(i, f) => format!("{i}.{f:03}"),
        Gen::Str(s) => quote(s),
        Gen::Array(items) => {
            let sep = [", ", "\n", ",\n", " , "][style % 4];
            let body: Vec<String> = items.iter().map(|v| render(v, style + 1)).collect();
            // Go reads `1]` as the string "1]", so a value never touches the closing bracket.
            format!("[{} ]", body.join(sep))
        }
        Gen::Map(m) => format!("{{\n{}\n}}", render_entries(m, style + 1)),
    }
}

fn render_entries(m: &BTreeMap<String, Gen>, style: usize) -> String {
    let kv = [": ", " = ", " ", ":", "="][style % 5];
    let sep = ["\n", "; ", ", ", "\n# comment\n", " // c\n"][style % 5];
    let body: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}{kv}{}", render(v, style + 1)))
        .collect();
    body.join(sep)
}

fn render_json(g: &Gen) -> String {
    match g {
        Gen::Int(n) => n.to_string(),
        Gen::Bool(b) => b.to_string(),
        Gen::Float(i, f) => format!("{i}.{f:03}"),
        Gen::Str(s) => quote(s),
        Gen::Array(items) => {
            format!(
                "[{} ]",
                items.iter().map(render_json).collect::<Vec<_>>().join(", ")
            )
        }
        Gen::Map(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("\"{k}\": {}", render_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn proptest_generated_config_round_trips(
        top in prop::collection::btree_map(gen_key(), gen_value(), 1..6),
        style in 0usize..20,
    ) {
        let want = to_go_json(&to_map(&top));
        let text = render_entries(&top, style);
        let parsed = parse_str_with_env(&text, "g.conf", &no_env);
        prop_assert!(parsed.is_ok(), "{text:?}: {parsed:?}");
        prop_assert_eq!(to_go_json(&parsed.unwrap()), want.clone(), "{}", text);

        let json = render_json(&Gen::Map(top));
        let parsed = parse_str_with_env(&json, "g.json", &no_env);
        prop_assert!(parsed.is_ok(), "{json:?}: {parsed:?}");
        prop_assert_eq!(to_go_json(&parsed.unwrap()), want, "{}", json);
    }
}
