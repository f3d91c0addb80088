//! Unit tests of `Sublist`: matching shapes, queue groups, the cache, pruning and counters.

use super::*;
use crate::result::QueueGroup;

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

fn plain(sl: &Sublist<u32>, subject: &str) -> Vec<u32> {
    sorted(sl.matches(subject.as_bytes()).plain.clone())
}

fn groups(sl: &Sublist<u32>, subject: &str) -> Vec<(String, Vec<u32>)> {
    let r = sl.matches(subject.as_bytes());
    let mut out: Vec<_> = r
        .queues
        .iter()
        .map(|g| {
            (
                String::from_utf8(g.name.to_vec()).unwrap(),
                sorted(g.members.clone()),
            )
        })
        .collect();
    out.sort();
    out
}

fn both() -> [Sublist<u32>; 2] {
    [Sublist::new(true), Sublist::new(false)]
}

#[test]
fn sublist_literal_and_wildcards() {
    for sl in both() {
        sl.insert(b"foo.bar", None, 1).unwrap();
        sl.insert(b"foo.*", None, 2).unwrap();
        sl.insert(b"foo.>", None, 3).unwrap();
        sl.insert(b">", None, 4).unwrap();
        sl.insert(b"*.bar", None, 5).unwrap();
        sl.insert(b"*.*.baz", None, 6).unwrap();
        sl.insert(b"foo", None, 7).unwrap();
        assert_eq!(plain(&sl, "foo.bar"), vec![1, 2, 3, 4, 5]);
        assert_eq!(plain(&sl, "foo.baz"), vec![2, 3, 4]);
        assert_eq!(plain(&sl, "foo.bar.baz"), vec![3, 4, 6]);
        assert_eq!(plain(&sl, "foo"), vec![4, 7]);
        assert_eq!(plain(&sl, "bar"), vec![4]);
        assert_eq!(plain(&sl, "x.y.z.w"), vec![4]);
        // Matching twice exercises the cache hit path where enabled.
        assert_eq!(plain(&sl, "foo.bar"), vec![1, 2, 3, 4, 5]);
        assert!(sl.matches(b"foo..bar").is_empty());
        assert!(sl.matches(b"").is_empty());
        assert!(sl.check_invariants());
    }
}

#[test]
fn sublist_wildcard_chars_inside_tokens_are_literal() {
    for sl in both() {
        sl.insert(b"foo.*a", None, 1).unwrap();
        sl.insert(b"foo.>bar", None, 2).unwrap();
        assert_eq!(plain(&sl, "foo.*a"), vec![1]);
        assert!(plain(&sl, "foo.ba").is_empty());
        assert_eq!(plain(&sl, "foo.>bar"), vec![2]);
        assert!(plain(&sl, "foo.x.bar").is_empty());
    }
}

#[test]
fn sublist_queue_groups_merge_by_name() {
    for sl in both() {
        sl.insert(b"orders.created", Some(b"workers"), 1).unwrap();
        sl.insert(b"orders.created", Some(b"workers"), 2).unwrap();
        sl.insert(b"orders.*", Some(b"workers"), 3).unwrap();
        sl.insert(b"orders.>", Some(b"audit"), 4).unwrap();
        sl.insert(b"orders.created", None, 5).unwrap();
        assert_eq!(plain(&sl, "orders.created"), vec![5]);
        assert_eq!(
            groups(&sl, "orders.created"),
            vec![("audit".into(), vec![4]), ("workers".into(), vec![1, 2, 3])]
        );
        assert_eq!(
            groups(&sl, "orders.deleted"),
            vec![("audit".into(), vec![4]), ("workers".into(), vec![3])]
        );
        let r = sl.matches(b"orders.created");
        assert_eq!(r.fanout(), 3);
        assert_eq!(r.iter().count(), 5);
        sl.remove(b"orders.created", Some(b"workers"), &1).unwrap();
        sl.remove(b"orders.created", Some(b"workers"), &2).unwrap();
        assert_eq!(
            groups(&sl, "orders.created")[1],
            ("workers".into(), vec![3])
        );
        assert_eq!(
            sl.remove(b"orders.created", Some(b"workers"), &2),
            Err(SublistError::NotFound)
        );
        assert_eq!(
            sl.remove(b"orders.created", Some(b"other"), &5),
            Err(SublistError::NotFound)
        );
        assert!(sl.check_invariants());
    }
}

#[test]
fn sublist_same_value_kept_once_per_subject_and_queue() {
    for sl in both() {
        sl.insert(b"a.b", None, 1).unwrap();
        sl.insert(b"a.b", None, 1).unwrap();
        sl.insert(b"a.b", Some(b"q"), 1).unwrap();
        sl.insert(b"a.b", Some(b"q"), 1).unwrap();
        assert_eq!(sl.count(), 2);
        assert_eq!(plain(&sl, "a.b"), vec![1]);
        assert_eq!(groups(&sl, "a.b"), vec![("q".into(), vec![1])]);
        assert_eq!(sl.stats().num_inserts, 2);
        sl.remove(b"a.b", None, &1).unwrap();
        assert_eq!(sl.remove(b"a.b", None, &1), Err(SublistError::NotFound));
        assert_eq!(sl.count(), 1);
    }
}

#[test]
fn sublist_rejects_invalid_input() {
    let sl = Sublist::new(true);
    for s in ["", "foo..bar", ".foo", "foo.", ">.foo", "foo bar", "a\tb"] {
        assert_eq!(
            sl.insert(s.as_bytes(), None, 1),
            Err(SublistError::InvalidSubject),
            "{s:?}"
        );
    }
    assert_eq!(
        sl.insert(b"foo", Some(b""), 1),
        Err(SublistError::InvalidQueue)
    );
    assert_eq!(
        sl.insert(b"foo", Some(b"a b"), 1),
        Err(SublistError::InvalidQueue)
    );
    assert_eq!(
        sl.remove(b"foo..bar", None, &1),
        Err(SublistError::InvalidSubject)
    );
    assert_eq!(sl.remove(b"foo", None, &1), Err(SublistError::NotFound));
    assert_eq!(sl.count(), 0);
    assert_eq!(sl.generation(), 0);
}

#[test]
fn sublist_cache_sees_inserts_and_removes() {
    let sl = Sublist::new(true);
    sl.insert(b"a.b", None, 1).unwrap();
    assert_eq!(plain(&sl, "a.b"), vec![1]);
    let cached = sl.matches(b"a.b");
    assert!(
        Arc::ptr_eq(&cached, &sl.matches(b"a.b")),
        "second match should hit the cache"
    );
    sl.insert(b"a.*", None, 2).unwrap();
    assert_eq!(plain(&sl, "a.b"), vec![1, 2]);
    sl.insert(b"a.b", None, 3).unwrap();
    assert_eq!(plain(&sl, "a.b"), vec![1, 2, 3]);
    sl.remove(b"a.*", None, &2).unwrap();
    assert_eq!(plain(&sl, "a.b"), vec![1, 3]);
    sl.insert(b"x.y", None, 9).unwrap();
    // An unrelated insert leaves the entry in place.
    let before = sl.matches(b"a.b");
    sl.insert(b"x.z", None, 10).unwrap();
    assert!(Arc::ptr_eq(&before, &sl.matches(b"a.b")));
    sl.remove(b"a.b", None, &1).unwrap();
    sl.remove(b"a.b", None, &3).unwrap();
    assert!(sl.matches(b"a.b").is_empty());
    // The old snapshot a caller holds does not change.
    assert_eq!(sorted(before.plain.clone()), vec![1, 3]);
}

#[test]
fn sublist_generation_changes_only_on_change() {
    let sl = Sublist::new(true);
    let g0 = sl.generation();
    sl.insert(b"a", None, 1).unwrap();
    let g1 = sl.generation();
    assert_ne!(g0, g1);
    sl.insert(b"a", None, 1).unwrap();
    assert_eq!(sl.generation(), g1, "a duplicate insert changes nothing");
    let (g, r) = sl.matches_with_generation(b"a");
    assert_eq!((g, r.plain.clone()), (g1, vec![1]));
    let _ = sl.remove(b"b", None, &1);
    assert_eq!(sl.generation(), g1);
    sl.remove(b"a", None, &1).unwrap();
    assert_ne!(sl.generation(), g1);
}

#[test]
fn sublist_prunes_back_to_baseline() {
    for sl in both() {
        sl.insert(b"keep.me", None, 0).unwrap();
        let baseline = sl.node_count();
        assert_eq!(baseline, 2);
        for i in 0..10_000u32 {
            let subject = format!("keep.{}.deep.{}.x", i % 97, i);
            let wild = format!("keep.*.{}.>", i % 13);
            sl.insert(subject.as_bytes(), None, i + 1).unwrap();
            sl.insert(wild.as_bytes(), Some(b"q"), i + 1).unwrap();
            let _ = sl.matches(format!("keep.{}.{}.z", i % 97, i % 13).as_bytes());
            sl.remove(subject.as_bytes(), None, &(i + 1)).unwrap();
            sl.remove(wild.as_bytes(), Some(b"q"), &(i + 1)).unwrap();
        }
        assert_eq!(sl.node_count(), baseline);
        assert!(sl.check_invariants());
        // Many at once, then all removed.
        for i in 0..10_000u32 {
            sl.insert(format!("bulk.{}.{}", i % 100, i).as_bytes(), None, i + 1)
                .unwrap();
        }
        assert!(sl.node_count() > 10_000);
        for i in 0..10_000u32 {
            sl.remove(format!("bulk.{}.{}", i % 100, i).as_bytes(), None, &(i + 1))
                .unwrap();
        }
        assert_eq!(sl.node_count(), baseline);
        assert_eq!(sl.count(), 1);
        sl.remove(b"keep.me", None, &0).unwrap();
        assert_eq!(sl.node_count(), 0);
        assert!(sl.check_invariants());
    }
}

#[test]
fn sublist_prune_keeps_needed_ancestors() {
    let sl = Sublist::new(false);
    sl.insert(b"a", None, 1).unwrap();
    sl.insert(b"a.b.c", None, 2).unwrap();
    sl.insert(b"a.b.d", None, 3).unwrap();
    sl.insert(b"a.*.>", None, 4).unwrap();
    assert_eq!(sl.node_count(), 6);
    sl.remove(b"a.b.c", None, &2).unwrap();
    assert_eq!(sl.node_count(), 5);
    assert!(sl.check_invariants());
    sl.remove(b"a.b.d", None, &3).unwrap();
    assert_eq!(sl.node_count(), 3);
    sl.remove(b"a.*.>", None, &4).unwrap();
    assert_eq!(sl.node_count(), 1);
    assert!(sl.check_invariants());
    assert_eq!(plain(&sl, "a"), vec![1]);
}

#[test]
fn sublist_remove_batch() {
    for sl in both() {
        let mut items = Vec::new();
        for i in 0..40u32 {
            let subject = if i % 2 == 0 {
                format!("a.{i}")
            } else {
                format!("a.{i}.*")
            };
            let queue = (i % 3 == 0).then(|| b"q".to_vec());
            sl.insert(subject.as_bytes(), queue.as_deref(), i).unwrap();
            items.push((subject.into_bytes(), queue, i));
        }
        sl.insert(b"a.>", None, 100).unwrap();
        for i in 0..40u32 {
            let _ = sl.matches(format!("a.{i}").as_bytes());
            let _ = sl.matches(format!("a.{i}.x").as_bytes());
        }
        let g = sl.generation();
        items.push((b"missing".to_vec(), None, 7));
        assert_eq!(sl.remove_batch(items), 40);
        assert_ne!(sl.generation(), g);
        assert_eq!(sl.count(), 1);
        assert_eq!(plain(&sl, "a.3.x"), vec![100]);
        assert_eq!(plain(&sl, "a.2"), vec![100]);
        assert!(groups(&sl, "a.0").is_empty());
        assert_eq!(sl.node_count(), 2);
        assert!(sl.check_invariants());
        assert_eq!(
            sl.remove_batch(Vec::<(&[u8], Option<&[u8]>, u32)>::new()),
            0
        );
    }
}

#[test]
fn sublist_stats_and_all() {
    let sl = Sublist::new(true);
    sl.insert(b"a", None, 1).unwrap();
    sl.insert(b"a", Some(b"q"), 2).unwrap();
    sl.insert(b"*", None, 3).unwrap();
    sl.insert(b"b", None, 4).unwrap();
    sl.remove(b"b", None, &4).unwrap();
    let _ = sl.matches(b"a");
    let _ = sl.matches(b"a");
    let _ = sl.matches(b"c");
    let _ = sl.matches(b"c");
    let s = sl.stats();
    assert_eq!(s.num_subs, 3);
    assert_eq!(s.num_inserts, 4);
    assert_eq!(s.num_removes, 1);
    assert_eq!(s.num_matches, 4);
    assert_eq!(s.cache_hits, 2);
    assert!((s.cache_hit_rate - 0.5).abs() < f64::EPSILON);
    assert_eq!(s.num_cache, 2);
    assert_eq!(s.max_fanout, 3);
    assert!((s.avg_fanout - 2.0).abs() < f64::EPSILON);
    assert_eq!(sorted(sl.all()), vec![1, 2, 3]);

    let nc = Sublist::new(false);
    nc.insert(b"a", None, 1).unwrap();
    let _ = nc.matches(b"a");
    let s = nc.stats();
    assert_eq!((s.num_matches, s.num_cache, s.cache_hits), (1, 0, 0));
    assert!(format!("{nc:?}").contains("count: 1"));
}

#[test]
fn sublist_result_shape() {
    let sl = Sublist::new(true);
    sl.insert(b"x", Some(b"g"), 1).unwrap();
    let r = sl.matches(b"x");
    assert_eq!(
        *r,
        MatchResult {
            plain: vec![],
            queues: vec![QueueGroup {
                name: Box::from(&b"g"[..]),
                members: vec![1]
            }]
        }
    );
}

#[test]
fn sublist_replace_swaps_in_one_step() {
    for sl in both() {
        sl.insert(b"a.>", None, 1).unwrap();
        sl.insert(b"a.b", Some(b"q"), 2).unwrap();
        assert_eq!(plain(&sl, "a.b"), [1]);
        let generation = sl.generation();
        sl.replace(b"a.>", None, &1, 10).unwrap();
        sl.replace(b"a.b", Some(b"q"), &2, 20).unwrap();
        assert!(sl.generation() > generation);
        assert_eq!(plain(&sl, "a.b"), [10]);
        assert_eq!(groups(&sl, "a.b"), [("q".to_owned(), vec![20])]);
        assert_eq!(sl.count(), 2);
        // Not there: nothing changes.
        assert!(sl.replace(b"a.>", None, &1, 11).is_err());
        assert_eq!(plain(&sl, "a.b"), [10]);
    }
}
