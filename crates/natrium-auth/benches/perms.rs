//! Permission checks on the paths a message takes: a publish check on a cache miss, a
//! subscribe check with queue entries, the delivery filter of a wildcard subscription, and an
//! `allow_responses` record-then-spend pair. Each row prints its heap allocations per call.

use std::alloc::System;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use natrium_auth::{
    ClientPermissions, Permissions, ReplyTable, ResponsePermission, SubjectPermission,
};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const ALLOC_SAMPLE_CALLS: usize = 10_000;

fn bench_op<R>(c: &mut Criterion, name: &str, mut op: impl FnMut() -> R) {
    black_box(op());
    let region = Region::new(GLOBAL);
    for _ in 0..ALLOC_SAMPLE_CALLS {
        black_box(op());
    }
    let allocs = region.change().allocations as f64 / ALLOC_SAMPLE_CALLS as f64;
    println!("{name}: {allocs:.2} allocations per call");
    c.bench_function(name, |b| b.iter(&mut op));
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn perms() -> ClientPermissions {
    ClientPermissions::compile(&Permissions {
        publish: Some(SubjectPermission {
            allow: Some(strings(&["orders.>", "events.*.created", "svc.a", "svc.b"])),
            deny: strings(&["orders.secret.>", "events.admin.created"]),
        }),
        subscribe: Some(SubjectPermission {
            allow: Some(strings(&["orders.>", "work q1", "work.* v1.*", "_INBOX.>"])),
            deny: strings(&["orders.secret.>", "orders.audit", "work q9"]),
        }),
        response: None,
    })
}

fn benches(c: &mut Criterion) {
    let p = perms();
    bench_op(c, "perms_publish_allowed", || {
        p.can_publish(black_box(b"orders.eu.42"))
    });
    bench_op(c, "perms_publish_denied", || {
        p.can_publish(black_box(b"orders.secret.x"))
    });
    bench_op(c, "perms_subscribe_queue", || {
        p.can_subscribe(black_box(b"work.x"), Some(black_box(b"v1.a")))
    });
    bench_op(c, "perms_delivery_filter_pass", || {
        p.delivery_denied(black_box(b"orders.eu.42"), None)
    });
    bench_op(c, "perms_delivery_filter_drop", || {
        p.delivery_denied(black_box(b"orders.audit"), None)
    });
    let mut table = ReplyTable::new(ResponsePermission::default(), 16_384);
    let now = Instant::now();
    let reply = b"_INBOX.abcdefghijklmnopqrstuv.1234";
    bench_op(c, "perms_reply_record_and_spend", || {
        table.record(black_box(reply), now);
        table.allow(black_box(reply), now)
    });
}

criterion_group! {
    name = perms_benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(perms_benches);
