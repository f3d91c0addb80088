//! Applying a subject mapping allocates nothing once its output buffer has grown: every
//! mapping function writes straight into it (the `Transform_*` bench rows report the same),
//! and an account mapping's match and weighted draw add nothing. One test only: the counts
//! are process-wide, and the test harness allocates between tests.

use std::alloc::System;

use nats_subject::{MapDest, Mapped, SubjectTransform, WeightedMapping};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn transform_apply_allocates_nothing() {
    let dest = "o.{{partition(16,1,2)}}.{{split(1,-)}}.{{SliceFromRight(2,3)}}.{{left(1,2)}}.\
                {{SplitFromLeft(2,4)}}.{{random(5)}}.$2.{{partition(3)}}.>";
    let t = SubjectTransform::mapping("orders.*.*.>", dest)
        .unwrap()
        .unwrap();
    let mut out = Vec::new();
    assert!(t.apply(b"orders.eu-west-1.customer123456.a.b", &mut out));
    let dest = |subject: &str, weight| MapDest {
        subject: subject.to_owned(),
        weight,
        cluster: String::new(),
    };
    let weighted = WeightedMapping::new(
        "orders.*.>",
        &[dest("a.$1.>", 30), dest("b.{{partition(4,1)}}.>", 30)],
    )
    .unwrap();
    let region = Region::new(GLOBAL);
    for _ in 0..1000 {
        assert!(t.apply(b"orders.eu-west-1.customer123456.a.b", &mut out));
        assert!(!t.apply(b"other.x", &mut out));
        assert!(weighted.matches(b"orders.eu.x.y"));
        assert_eq!(weighted.select(b"orders.eu.x.y", "", &mut out), Mapped::To);
        assert!(!weighted.matches(b"other.x"));
    }
    assert_eq!(region.change().allocations, 0);
}
