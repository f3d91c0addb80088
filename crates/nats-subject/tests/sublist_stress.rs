//! Multi-threaded stress: writers insert, match and remove while readers match the same
//! subjects, so cache stores race with invalidations. Each writer checks the two guarantees
//! on its own subscriptions: visible to every match that starts after `insert` returned, and
//! gone from every match that starts after `remove` returned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use nats_subject::{MatchResult, Sublist};

/// (pattern, a literal it matches).
const PAIRS: &[(&str, &str)] = &[
    ("orders.created", "orders.created"),
    ("orders.*", "orders.created"),
    ("orders.>", "orders.created"),
    (">", "orders.created"),
    ("*.created", "orders.created"),
    ("orders.*", "orders.deleted"),
    ("orders.deleted", "orders.deleted"),
    ("a.b.c", "a.b.c"),
    ("a.*.c", "a.b.c"),
    ("a.>", "a.b.c"),
    ("*.*.*", "a.b.c"),
];

const LITERALS: &[&str] = &["orders.created", "orders.deleted", "a.b.c", "a.b", "x"];

fn contains(result: &MatchResult<u64>, queue: bool, id: u64) -> bool {
    if queue {
        result
            .queues
            .iter()
            .any(|g| &*g.name == b"workers" && g.members.contains(&id))
    } else {
        result.plain.contains(&id)
    }
}

fn no_duplicates(result: &MatchResult<u64>) -> bool {
    let mut ids: Vec<u64> = result.iter().copied().collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    ids.len() == n
}

fn writer(sl: &Sublist<u64>, thread: u64, iterations: u64) {
    let mut last_generation = sl.generation();
    for i in 0..iterations {
        let id = (thread << 32) | i;
        let (pattern, literal) = PAIRS[(i as usize * 7 + thread as usize) % PAIRS.len()];
        let queue = i % 3 == 0;
        let q: Option<&[u8]> = queue.then_some(b"workers");
        sl.insert(pattern.as_bytes(), q, id).unwrap();
        let generation = sl.generation();
        assert!(
            generation > last_generation,
            "generation must grow on insert"
        );
        last_generation = generation;
        let seen = sl.matches(literal.as_bytes());
        assert!(
            contains(&seen, queue, id),
            "{pattern} id {id} missing after insert"
        );
        assert!(no_duplicates(&seen));
        sl.remove(pattern.as_bytes(), q, &id).unwrap();
        let generation = sl.generation();
        assert!(
            generation > last_generation,
            "generation must grow on remove"
        );
        last_generation = generation;
        let seen = sl.matches(literal.as_bytes());
        assert!(
            !contains(&seen, queue, id),
            "{pattern} id {id} present after remove"
        );
    }
}

fn reader(sl: &Sublist<u64>, stop: &AtomicBool) -> u64 {
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for literal in LITERALS {
            let r = sl.matches(literal.as_bytes());
            assert!(no_duplicates(&r));
            // The permanent subscription on `>` is always there.
            assert!(r.plain.contains(&u64::MAX));
            n += 1;
        }
    }
    n
}

fn stress(cache: bool) {
    let sl = Arc::new(Sublist::new(cache));
    sl.insert(b">", None, u64::MAX).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (sl, stop) = (Arc::clone(&sl), Arc::clone(&stop));
            thread::spawn(move || reader(&sl, &stop))
        })
        .collect();
    let writers: Vec<_> = (0..3u64)
        .map(|t| {
            let sl = Arc::clone(&sl);
            thread::spawn(move || writer(&sl, t, 6_000))
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let matched: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(matched > 0);
    assert_eq!(sl.count(), 1);
    assert_eq!(sl.node_count(), 1);
    assert!(sl.check_invariants());
    let stats = sl.stats();
    assert_eq!(stats.num_inserts, stats.num_removes + 1);
}

#[test]
fn sublist_stress_concurrent_with_cache() {
    stress(true);
}

#[test]
fn sublist_stress_concurrent_without_cache() {
    stress(false);
}
