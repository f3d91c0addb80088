//! `mappings` at the top level and in accounts: what they read into and Go's refusals.

use natrium_auth::account::SubjectMapping;
use nats_subject::MapDest;

use super::*;
use crate::lang::parse_str_with_env;

fn load(src: &str) -> Result<LoadedConfig, ConfError> {
    let map = parse_str_with_env(src, "f.conf", &|_: &str| None)?;
    ServerOptions::from_map(&map, "f.conf")
}

fn mappings_of(src: &str, account: &str) -> Vec<SubjectMapping> {
    let o = load(src).unwrap_or_else(|e| panic!("{src:?}: {e}")).options;
    o.accounts
        .into_iter()
        .find(|a| a.name == account)
        .map(|a| a.mappings)
        .unwrap_or_default()
}

fn err(src: &str) -> String {
    match load(src) {
        Ok(l) => panic!("{src:?} loaded: {:?}", l.options.accounts),
        Err(e) => e.to_string(),
    }
}

fn dest(subject: &str, weight: u8, cluster: &str) -> MapDest {
    MapDest {
        subject: subject.to_owned(),
        weight,
        cluster: cluster.to_owned(),
    }
}

#[test]
fn mappings_top_level_define_the_global_account() {
    let m = mappings_of("mappings { foo: bar, \"a.*\": \"b.$1\" }", "$G");
    assert_eq!(
        m,
        vec![
            SubjectMapping {
                source: "foo".into(),
                dests: vec![dest("bar", 100, "")],
            },
            SubjectMapping {
                source: "a.*".into(),
                dests: vec![dest("b.$1", 100, "")],
            },
        ]
    );
    assert_eq!(mappings_of("maps { x: y }", "$G").len(), 1);
}

#[test]
fn mappings_weighted_and_per_account() {
    let src = r#"
accounts {
  A {
    mappings {
      s: [ {destination: x, weight: 40%}, {dest: y, weight: "60%", cluster: c1}, {dest: z, weight: 10} ]
      t: {destination: u, weight: 100}
    }
  }
  B { maps { s: other } }
}
"#;
    let a = mappings_of(src, "A");
    assert_eq!(
        a[0].dests,
        vec![dest("x", 40, ""), dest("y", 60, "c1"), dest("z", 10, "")]
    );
    assert_eq!(a[1].dests, vec![dest("u", 100, "")]);
    assert_eq!(mappings_of(src, "B")[0].dests, vec![dest("other", 100, "")]);
}

#[test]
fn mappings_refused_with_gos_words() {
    assert_eq!(
        err("mappings { \"a..b\": x }"),
        "f.conf:1:0: Subject \"a..b\" is not a valid subject"
    );
    assert_eq!(
        err("mappings {\n  foo: \"bar.$1\"\n}"),
        "f.conf:2:3: Error adding mapping for \"foo\" to \"bar.$1\" : invalid mapping \
         destination: wildcard index out of range in $1"
    );
    assert_eq!(
        err("mappings {\n  foo: [{dest: x, weight: 60}, {dest: y, weight: 50}]\n}"),
        "f.conf:2:3: Error adding mapping for \"foo\" : total weight needs to be <= 100"
    );
    assert_eq!(
        err("mappings {\n  foo: [{dest: x, weight: 50}, {dest: x, weight: 50}]\n}"),
        "f.conf:2:3: Error adding mapping for \"foo\" : duplicate entry for \"x\""
    );
    assert!(err("mappings { foo: [{dest: x, weight: \"abc%\"}] }")
        .ends_with("Invalid weight \"abc\" for mapping destination"));
    assert!(err("mappings { foo: [{dest: x, weight: 101}] }")
        .ends_with("Invalid weight 101 for mapping destination"));
    assert!(err("mappings { foo: [{dest: x, weight: -1}] }")
        .ends_with("Invalid weight -1 for mapping destination"));
    // A map item's problems are placed just after its brace, as Go places them.
    assert_eq!(
        err("mappings { foo: [{dest: x}] }"),
        "f.conf:1:26: Missing weight for mapping destination \"x\""
    );
    assert_eq!(
        err("mappings { foo: [\n  {dest: x}\n] }"),
        "f.conf:2:12: Missing weight for mapping destination \"x\""
    );
    assert_eq!(
        err("mappings { foo: [{dest: 1, weight: 1}] }"),
        "f.conf:1:37: interface conversion: interface {} is int64, not string"
    );
    assert_eq!(
        err("mappings { foo: [{dest: x, weight: 1, color: red}] }"),
        "f.conf:1:38: Unknown field \"color\" for mapping destination"
    );
    assert_eq!(
        err("mappings { foo: [ 1 ] }"),
        "f.conf:1:18: Expected an entry for the mapping destination"
    );
    assert_eq!(
        err("mappings { foo: 1 }"),
        "f.conf:1:11: Expected an entry for the mapping destination"
    );
    // Positions and texts as Go v2.15.2 prints them.
    assert_eq!(
        err("mappings { foo: [{dest: x, weight: 0.5}] }"),
        "f.conf:1:27: Unknown entry type for weight of 0.5\n"
    );
    assert_eq!(
        err("mappings: 1"),
        "f.conf:1:0: interface conversion: interface {} is int64, not map[string]interface {}"
    );
    assert_eq!(
        err("accounts { A { mappings { foo: \"a b\" } } }"),
        "f.conf:1:26: Error adding mapping for \"foo\" to \"a b\" : invalid mapping \
         destination: invalid transform"
    );
}
