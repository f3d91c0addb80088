//! The CONNECT merge against a reference: a repeated CONNECT's fields replace those in force,
//! fields it leaves out (or sends as `null`) keep their values, as Go's decoder does when it
//! decodes over the options it holds.

use std::collections::BTreeMap;

use nats_proto::ConnectOptions;
use proptest::prelude::*;
use serde_json::{json, Value};

const BOOLS: [&str; 6] = [
    "verbose",
    "pedantic",
    "echo",
    "headers",
    "no_responders",
    "tls_required",
];
const STRINGS: [&str; 8] = [
    "name",
    "lang",
    "version",
    "user",
    "pass",
    "auth_token",
    "nkey",
    "jwt",
];

/// One CONNECT body: each field absent, `null`, or a value.
fn body() -> impl Strategy<Value = BTreeMap<String, Value>> {
    let bools = proptest::collection::vec(
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            any::<bool>().prop_map(|b| Some(json!(b)))
        ],
        BOOLS.len(),
    );
    let strings = proptest::collection::vec(
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            "[a-z]{0,4}".prop_map(|s| Some(json!(s)))
        ],
        STRINGS.len(),
    );
    (bools, strings).prop_map(|(bools, strings)| {
        let mut map = BTreeMap::new();
        for (name, value) in BOOLS.iter().zip(bools).chain(STRINGS.iter().zip(strings)) {
            if let Some(value) = value {
                map.insert((*name).to_owned(), value);
            }
        }
        map
    })
}

/// The reference: Go's defaults, then each body's non-null fields in turn.
fn reference(bodies: &[BTreeMap<String, Value>]) -> BTreeMap<String, Value> {
    let mut state: BTreeMap<String, Value> = BOOLS
        .iter()
        .map(|n| {
            (
                (*n).to_owned(),
                json!(matches!(*n, "verbose" | "pedantic" | "echo")),
            )
        })
        .collect();
    for body in bodies {
        for (name, value) in body {
            if !value.is_null() {
                state.insert(name.clone(), value.clone());
            }
        }
    }
    state
}

fn observed(o: &ConnectOptions) -> BTreeMap<String, Value> {
    let mut state = BTreeMap::new();
    for (name, value) in [
        ("verbose", o.verbose),
        ("pedantic", o.pedantic),
        ("echo", o.echo),
        ("headers", o.headers),
        ("no_responders", o.no_responders),
        ("tls_required", o.tls_required),
    ] {
        state.insert(name.to_owned(), json!(value));
    }
    for (name, value) in [
        ("name", &o.name),
        ("lang", &o.lang),
        ("version", &o.version),
    ] {
        if !value.is_empty() {
            state.insert(name.to_owned(), json!(value));
        }
    }
    for (name, value) in [
        ("user", &o.user),
        ("pass", &o.pass),
        ("auth_token", &o.auth_token),
        ("nkey", &o.nkey),
        ("jwt", &o.jwt),
    ] {
        if let Some(value) = value {
            state.insert(name.to_owned(), json!(value));
        }
    }
    state
}

proptest! {
    #[test]
    fn connect_merge_matches_reference(bodies in proptest::collection::vec(body(), 1..4)) {
        let mut options = ConnectOptions::default();
        for body in &bodies {
            let text = serde_json::to_vec(body).unwrap_or_default();
            options = options.merge(&text).unwrap_or_default();
        }
        // An empty string a body set is a value in the reference but reads as unset for the
        // three description fields, which Go keeps as empty strings too.
        let mut want = reference(&bodies);
        want.retain(|k, v| !(matches!(k.as_str(), "name" | "lang" | "version") && v == &json!("")));
        prop_assert_eq!(observed(&options), want);
    }
}
