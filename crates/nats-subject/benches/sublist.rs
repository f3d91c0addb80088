//! Subscription-index micro-benchmarks with the shapes of Go's `server/sublist_test.go`
//! benchmarks and the scratch `AnchorSublist_*` rows (see the project's Go anchor table):
//! 37,448 plain subscriptions (every subject of 1-5 tokens over 8 words) plus three wildcards.
//! Rows named `*_cache_hit` repeat one subject on a cached index, like every upstream Match
//! benchmark; `*_nocache` rows walk the trie on every call.

use std::alloc::System;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use nats_subject::{subject_matches, SubjectTransform, Sublist};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// Counts heap allocations so that match rows can report allocations per operation.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Calls made to average allocations over (after one warm-up call).
const ALLOC_SAMPLE_CALLS: usize = 10_000;

/// Prints the row's heap allocations per call of `op`, then benchmarks it.
fn bench_op<R>(c: &mut Criterion, name: &str, mut op: impl FnMut() -> R) {
    black_box(op());
    let region = Region::new(GLOBAL);
    for _ in 0..ALLOC_SAMPLE_CALLS {
        black_box(op());
    }
    let allocs = region.change().allocations as f64 / ALLOC_SAMPLE_CALLS as f64;
    println!("allocations per op: {name}: {allocs}");
    c.bench_function(name, |b| b.iter(&mut op));
}

/// Stand-in for the runtime's subscription: an `Arc` compared by pointer, as `SubRef` is.
#[derive(Clone)]
struct Sub(Arc<u64>);

impl PartialEq for Sub {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Sub {}

impl std::hash::Hash for Sub {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(Arc::as_ptr(&self.0), state);
    }
}

const WORDS: [&str; 8] = [
    "synadia",
    "nats",
    "jetstream",
    "nkeys",
    "jwt",
    "deny",
    "auth",
    "drain",
];
const WILDCARDS: [&str; 3] = ["cloud.>", "cloud.nats.component.>", "cloud.*.*.nkeys.*"];

/// Every subject of 1..=5 tokens over `WORDS`: 8 + 64 + 512 + 4096 + 32768 = 37,448.
fn subjects() -> Vec<String> {
    let mut all = Vec::new();
    let mut prefix: Vec<String> = vec![String::new()];
    for _ in 0..5 {
        prefix = prefix
            .iter()
            .flat_map(|p| {
                WORDS.iter().map(move |w| {
                    if p.is_empty() {
                        (*w).to_owned()
                    } else {
                        format!("{p}.{w}")
                    }
                })
            })
            .collect();
        all.extend(prefix.iter().cloned());
    }
    assert_eq!(all.len(), 37_448);
    all
}

fn sub(id: u64) -> Sub {
    Sub(Arc::new(id))
}

fn build(cache: bool, subjects: &[String]) -> Sublist<Sub> {
    let sl = Sublist::new(cache);
    for (i, s) in subjects.iter().enumerate() {
        sl.insert(s.as_bytes(), None, sub(i as u64)).unwrap();
    }
    for (i, w) in WILDCARDS.iter().enumerate() {
        sl.insert(w.as_bytes(), None, sub(1_000_000 + i as u64))
            .unwrap();
    }
    sl
}

/// `orders.created`: 10 queue subscriptions in 3 groups and one plain subscription.
fn build_queue(cache: bool) -> Sublist<Sub> {
    let sl = Sublist::new(cache);
    for i in 0..10u64 {
        let group = ["workers", "audit", "billing"][i as usize % 3];
        sl.insert(b"orders.created", Some(group.as_bytes()), sub(i))
            .unwrap();
    }
    sl.insert(b"orders.created", None, sub(10)).unwrap();
    sl
}

fn bench_insert(c: &mut Criterion, subjects: &[String]) {
    let items: Vec<(Vec<u8>, Sub)> = subjects
        .iter()
        .enumerate()
        .map(|(i, s)| (s.clone().into_bytes(), sub(i as u64)))
        .collect();
    for (name, cache) in [("SublistInsert", true), ("SublistInsertNoCache", false)] {
        // Go's shape: round-robin into one index, so after the first pass these are re-inserts.
        let sl = Sublist::new(cache);
        let mut i = 0usize;
        c.bench_function(name, |b| {
            b.iter(|| {
                let (s, v) = &items[i % items.len()];
                i += 1;
                sl.insert(black_box(s), None, v.clone()).unwrap();
            });
        });
        // Every insert adds a subscription: a fresh index per 37,448 inserts, dropped untimed.
        c.bench_function(&format!("{name}Fresh"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    let sl = Sublist::new(cache);
                    let n = (iters - done).min(items.len() as u64) as usize;
                    let start = Instant::now();
                    for (s, v) in &items[..n] {
                        sl.insert(black_box(s), None, v.clone()).unwrap();
                    }
                    total += start.elapsed();
                    done += n as u64;
                    drop(sl);
                }
                total
            });
        });
    }
}

fn bench_match(c: &mut Criterion, subjects: &[String]) {
    let cached = build(true, subjects);
    let uncached = build(false, subjects);
    let rows: [(&str, &[u8], usize); 6] = [
        ("SublistMatchSingleToken", b"synadia", 1),
        ("SublistMatchTwoTokens", b"synadia.nats", 1),
        ("SublistMatchThreeTokens", b"synadia.nats.jetstream", 1),
        (
            "SublistMatchFourTokensSingleResult",
            b"synadia.nats.jetstream.nkeys",
            1,
        ),
        (
            "SublistMatchFourTokensMultiResults",
            b"cloud.nats.component.router",
            2,
        ),
        (
            "SublistMissOnLastTokenOfFive",
            b"synadia.nats.jetstream.nkeys.zzz",
            0,
        ),
    ];
    for (name, subject, expected) in rows {
        assert_eq!(cached.matches(subject).fanout(), expected, "{name}");
        bench_op(c, &format!("{name}_cache_hit"), || {
            cached.matches(black_box(subject))
        });
    }
    let nocache: [(&str, &[u8]); 2] = [
        (
            "AnchorSublist_ExactNoCache",
            b"synadia.nats.jetstream.nkeys",
        ),
        (
            "AnchorSublist_WildcardNoCache",
            b"cloud.nats.component.router",
        ),
    ];
    for (name, subject) in nocache {
        bench_op(c, name, || uncached.matches(black_box(subject)));
    }

    let queue = build_queue(true);
    let queue_nocache = build_queue(false);
    let r = queue.matches(b"orders.created");
    assert_eq!(
        (r.plain.len(), r.queues.len(), r.iter().count()),
        (1, 3, 11)
    );
    bench_op(c, "AnchorSublist_QueueMatch_cache_hit", || {
        queue.matches(black_box(b"orders.created"))
    });
    bench_op(c, "AnchorSublist_QueueMatchNoCache", || {
        queue_nocache.matches(black_box(b"orders.created"))
    });

    let wide = Sublist::new(false);
    for i in 0..512 {
        wide.insert(b"foo", None, sub(i)).unwrap();
    }
    bench_op(c, "SublistMatch10kSubsWithNoCache_512_on_foo", || {
        wide.matches(black_box(b"foo"))
    });
}

fn bench_remove(c: &mut Criterion) {
    // Go removes b.N subscriptions from `foo`; here the population per subject is fixed at
    // 1,000 (past the size where membership is indexed), refilled as it drains.
    const POPULATION: usize = 1_000;
    for (name, queue) in [
        ("SublistRemove1TokenSingle", None),
        ("SublistRemove1TokenQGSingle", Some(&b"bar"[..])),
    ] {
        let sl = Sublist::new(true);
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    let n = (iters - done).min(POPULATION as u64) as usize;
                    let subs: Vec<Sub> = (0..n as u64).map(sub).collect();
                    for s in &subs {
                        sl.insert(b"foo", queue, s.clone()).unwrap();
                    }
                    let _ = sl.matches(b"foo");
                    let start = Instant::now();
                    for s in &subs {
                        sl.remove(black_box(b"foo"), queue, s).unwrap();
                    }
                    total += start.elapsed();
                    done += n as u64;
                }
                total
            });
        });
    }
}

fn bench_literal(c: &mut Criterion) {
    // Our own 21 literal/pattern pairs of the kinds Go's SublistMatchLiteral uses (not its set).
    let pairs: [(&[u8], &[u8]); 21] = [
        (b"foo", b"foo"),
        (b"foo", b"bar"),
        (b"*", b"foo"),
        (b">", b"foo.bar"),
        (b"foo.*", b"foo.bar"),
        (b"foo.>", b"foo.bar.baz"),
        (b"foo.*.baz", b"foo.bar.baz"),
        (b"foo.*.baz", b"foo.bar.bat"),
        (b"*.*.*", b"foo.bar.baz"),
        (b"*.bar.*", b"foo.bar.baz"),
        (b"foo.bar.>", b"foo.bar"),
        (b"stats.>", b"stats.test.22"),
        (b"stats.*.*", b"stats.test.22"),
        (b"foo.bar", b"foo.bar.baz"),
        (b"foo.bar.baz", b"foo.bar"),
        (b"cloud.*.*.nkeys.*", b"cloud.nats.component.nkeys.a"),
        (b"cloud.nats.component.>", b"cloud.nats.component.router"),
        (b"synadia.nats.jetstream", b"synadia.nats.jetstream"),
        (b"*.nats.>", b"synadia.nats.jetstream.nkeys"),
        (b"a.b.c.d.e", b"a.b.c.d.f"),
        (b"_INBOX.*", b"_INBOX.abcdefgh"),
    ];
    c.bench_function("SublistMatchLiteral_21_calls", |b| {
        b.iter(|| {
            let mut n = 0;
            for (p, l) in &pairs {
                n += usize::from(subject_matches(black_box(p), black_box(l)));
            }
            n
        });
    });
}

/// Subject mappings (a stream's `subject_transform`, republish): applying one writes into a
/// reused buffer and allocates nothing.
fn bench_transform(c: &mut Criterion) {
    let rows = [
        (
            "Transform_wildcards",
            "orders.*.*.>",
            "o.$2.{{wildcard(1)}}.>",
        ),
        (
            "Transform_partition",
            "orders.*.*",
            "o.{{partition(16,1,2)}}.$1.$2",
        ),
        (
            "Transform_split_slice",
            "orders.*.*",
            "o.{{split(1,-)}}.{{SliceFromRight(2,3)}}.{{left(1,2)}}",
        ),
    ];
    for (name, src, dest) in rows {
        let t = SubjectTransform::mapping(src, dest)
            .expect("valid mapping")
            .expect("a destination");
        let mut out = Vec::new();
        bench_op(c, name, || {
            t.apply(
                black_box(b"orders.eu-west-1.customer123456.extra"),
                &mut out,
            ) || t.apply(black_box(b"orders.eu-west-1.customer123456"), &mut out)
        });
    }
}

/// An account's weighted mapping as a publish meets it: the match, the draw and the rewrite.
fn bench_weighted_mapping(c: &mut Criterion) {
    let dest = |subject: &str, weight| nats_subject::MapDest {
        subject: subject.to_owned(),
        weight,
        cluster: String::new(),
    };
    let m = nats_subject::WeightedMapping::new(
        "orders.*.*",
        &[dest("left.$1.$2", 50), dest("right.$2.$1", 50)],
    )
    .expect("valid mapping");
    let mut out = Vec::new();
    bench_op(c, "Mapping_weighted", || {
        let subject = black_box(b"orders.eu-west-1.customer123456");
        m.matches(subject) && m.select(subject, "", &mut out) == nats_subject::Mapped::To
    });
}

fn benches(c: &mut Criterion) {
    let subjects = subjects();
    bench_insert(c, &subjects);
    bench_match(c, &subjects);
    bench_remove(c);
    bench_literal(c);
    bench_transform(c);
    bench_weighted_mapping(c);
}

criterion_group!(sublist, benches);
criterion_main!(sublist);
