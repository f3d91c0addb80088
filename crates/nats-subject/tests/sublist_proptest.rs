//! Property tests: the trie agrees with a naive reference matcher after random inserts and
//! removes (cache on and off), `subjects_collide` agrees with brute force, and validation
//! agrees with a naive split-based definition.

use std::collections::BTreeMap;

use nats_subject::{
    is_valid_publish_subject, is_valid_subject, subject_matches, subjects_collide, InterestChange,
    Sublist, SublistError,
};
use proptest::prelude::*;

/// A valid pattern over a three-letter alphabet: 1-4 tokens, `*` anywhere, `>` only last.
fn pattern() -> impl Strategy<Value = String> {
    let token = prop_oneof![Just("a"), Just("b"), Just("c"), Just("*")];
    (prop::collection::vec(token, 1..=4), any::<bool>()).prop_map(|(tokens, fwc)| {
        let mut tokens: Vec<&str> = tokens;
        if fwc {
            if let Some(last) = tokens.last_mut() {
                *last = ">";
            }
        }
        tokens.join(".")
    })
}

/// Every literal of 1-4 tokens over `a`, `b`, `c`.
fn universe() -> Vec<String> {
    let mut out: Vec<String> = vec![String::new()];
    let mut all = Vec::new();
    for _ in 0..4 {
        out = out
            .iter()
            .flat_map(|p| {
                ["a", "b", "c"].map(|t| {
                    if p.is_empty() {
                        t.to_owned()
                    } else {
                        format!("{p}.{t}")
                    }
                })
            })
            .collect();
        all.extend(out.iter().cloned());
    }
    all
}

fn queue_name(q: u8) -> Option<Vec<u8>> {
    match q % 3 {
        0 => None,
        1 => Some(b"q1".to_vec()),
        _ => Some(b"q2".to_vec()),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(String, u8, u8),
    RemoveExisting(usize),
    RemoveRandom(String, u8, u8),
    Match(String),
}

fn op() -> impl Strategy<Value = Op> {
    let literal = prop::sample::select(universe());
    prop_oneof![
        4 => (pattern(), any::<u8>(), 0u8..6).prop_map(|(p, q, id)| Op::Insert(p, q, id)),
        2 => any::<usize>().prop_map(Op::RemoveExisting),
        1 => (pattern(), any::<u8>(), 0u8..6).prop_map(|(p, q, id)| Op::RemoveRandom(p, q, id)),
        2 => literal.prop_map(Op::Match),
    ]
}

type Entry = (String, Option<Vec<u8>>, u8);

/// (plain ids, group name -> ids), all sorted.
type Shape = (Vec<u8>, BTreeMap<Vec<u8>, Vec<u8>>);

fn reference_match(reference: &[Entry], literal: &str) -> Shape {
    let mut plain = Vec::new();
    let mut groups: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (p, q, id) in reference {
        if subject_matches(p.as_bytes(), literal.as_bytes()) {
            match q {
                None => plain.push(*id),
                Some(q) => groups.entry(q.clone()).or_default().push(*id),
            }
        }
    }
    plain.sort_unstable();
    for v in groups.values_mut() {
        v.sort_unstable();
    }
    (plain, groups)
}

fn sublist_match(sl: &Sublist<u8>, literal: &str) -> Shape {
    let r = sl.matches(literal.as_bytes());
    let mut plain = r.plain.clone();
    plain.sort_unstable();
    let mut groups = BTreeMap::new();
    for g in &r.queues {
        assert!(!g.members.is_empty(), "empty group in result");
        let mut members = g.members.clone();
        members.sort_unstable();
        assert!(
            groups.insert(g.name.to_vec(), members).is_none(),
            "group listed twice"
        );
    }
    (plain, groups)
}

fn apply(sl: &Sublist<u8>, reference: &mut Vec<Entry>, op: &Op) {
    match op {
        Op::Insert(p, q, id) => {
            let q = queue_name(*q);
            let change = sl.insert(p.as_bytes(), q.as_deref(), *id).unwrap();
            let had_interest = reference.iter().any(|(rp, rq, _)| *rp == *p && *rq == q);
            let entry = (p.clone(), q, *id);
            let expected = if had_interest {
                InterestChange::Unchanged
            } else {
                InterestChange::Appeared
            };
            assert_eq!(change, expected, "insert {entry:?}");
            if !reference.contains(&entry) {
                reference.push(entry);
            }
        }
        Op::RemoveExisting(i) => {
            if reference.is_empty() {
                return;
            }
            let (p, q, id) = reference.swap_remove(i % reference.len());
            let change = sl.remove(p.as_bytes(), q.as_deref(), &id).unwrap();
            let left = reference.iter().any(|(rp, rq, _)| *rp == p && *rq == q);
            let expected = if left {
                InterestChange::Unchanged
            } else {
                InterestChange::Gone
            };
            assert_eq!(change, expected, "remove {p} {q:?}");
        }
        Op::RemoveRandom(p, q, id) => {
            let q = queue_name(*q);
            let entry = (p.clone(), q.clone(), *id);
            let got = sl.remove(p.as_bytes(), q.as_deref(), id);
            if let Some(i) = reference.iter().position(|e| *e == entry) {
                reference.swap_remove(i);
                assert!(got.is_ok());
            } else {
                assert_eq!(got, Err(SublistError::NotFound));
            }
        }
        Op::Match(literal) => {
            assert_eq!(
                sublist_match(sl, literal),
                reference_match(reference, literal)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sublist_agrees_with_reference(ops in prop::collection::vec(op(), 1..120)) {
        let universe = universe();
        for cache in [true, false] {
            let sl = Sublist::new(cache);
            let mut reference: Vec<Entry> = Vec::new();
            for op in &ops {
                apply(&sl, &mut reference, op);
                prop_assert_eq!(sl.count(), reference.len());
            }
            for literal in &universe {
                prop_assert_eq!(sublist_match(&sl, literal), reference_match(&reference, literal));
            }
            let mut all = sl.all();
            all.sort_unstable();
            let mut ids: Vec<u8> = reference.iter().map(|e| e.2).collect();
            ids.sort_unstable();
            prop_assert_eq!(all, ids);
            prop_assert!(sl.check_invariants());
            // Removing everything prunes the trie back to nothing.
            let present = reference.len();
            prop_assert_eq!(sl.remove_batch(reference.drain(..)), present);
            prop_assert_eq!(sl.count(), 0);
            prop_assert_eq!(sl.node_count(), 0);
            for literal in universe.iter().take(12) {
                prop_assert!(sl.matches(literal.as_bytes()).is_empty());
            }
        }
    }

    #[test]
    fn matching_collide_agrees_with_brute_force(a in pattern(), b in pattern()) {
        let brute = universe()
            .iter()
            .any(|l| subject_matches(a.as_bytes(), l.as_bytes()) && subject_matches(b.as_bytes(), l.as_bytes()));
        prop_assert_eq!(subjects_collide(a.as_bytes(), b.as_bytes()), brute, "{} vs {}", a, b);
        prop_assert_eq!(subjects_collide(b.as_bytes(), a.as_bytes()), brute);
    }

    #[test]
    fn matching_agrees_with_token_reference(p in pattern(), l in prop::sample::select(universe())) {
        let pt: Vec<&str> = p.split('.').collect();
        let lt: Vec<&str> = l.split('.').collect();
        let expected = if pt.last() == Some(&">") {
            lt.len() >= pt.len()
                && pt.iter().zip(&lt).take(pt.len() - 1).all(|(p, l)| *p == "*" || p == l)
        } else {
            pt.len() == lt.len() && pt.iter().zip(&lt).all(|(p, l)| *p == "*" || p == l)
        };
        prop_assert_eq!(subject_matches(p.as_bytes(), l.as_bytes()), expected);
    }

    #[test]
    fn validate_agrees_with_split_definition(
        bytes in prop::collection::vec(prop::sample::select(b"ab.*> \t\r\n\x0c".to_vec()), 0..10)
    ) {
        let tokens: Vec<&[u8]> = bytes.split(|&b| b == b'.').collect();
        let no_space = !bytes.iter().any(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
        let non_empty = !bytes.is_empty() && tokens.iter().all(|t| !t.is_empty());
        let fwc_last = tokens.iter().rev().skip(1).all(|t| *t != b">");
        let valid = no_space && non_empty && fwc_last;
        prop_assert_eq!(is_valid_subject(&bytes), valid);
        let literal = tokens.iter().all(|t| *t != b"*" && *t != b">");
        prop_assert_eq!(is_valid_publish_subject(&bytes), valid && literal);
    }
}
