//! Applying a subject mapping allocates nothing once its output buffer has grown: every
//! mapping function writes straight into it (the `Transform_*` bench rows report the same).

use std::alloc::System;

use nats_subject::SubjectTransform;
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
    let region = Region::new(GLOBAL);
    for _ in 0..1000 {
        assert!(t.apply(b"orders.eu-west-1.customer123456.a.b", &mut out));
        assert!(!t.apply(b"other.x", &mut out));
    }
    assert_eq!(region.change().allocations, 0);
}
