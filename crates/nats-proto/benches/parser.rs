//! Parser and frame-formatting micro-benchmarks, with the frame shapes of the Go anchors in
//! `shared/reference/go-microbench-anchors.md` section 1 (parser + argument processing only).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::alloc::System;
use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use nats_proto::encode::write_msg_header;
use nats_proto::{parse_client_op, MsgFrameTemplate, Parsed, ParserLimits};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// Counts heap allocations so that each row can report allocations per operation.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Calls made to average allocations over (after one warm-up call).
const ALLOC_SAMPLE_CALLS: usize = 10_000;

/// Prints the row's heap allocations per call of `op`, then benchmarks it.
fn bench_op<R>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, mut op: impl FnMut() -> R) {
    black_box(op());
    let region = Region::new(GLOBAL);
    for _ in 0..ALLOC_SAMPLE_CALLS {
        black_box(op());
    }
    let allocs = region.change().allocations as f64 / ALLOC_SAMPLE_CALLS as f64;
    println!("allocations per op: {name}: {allocs}");
    g.bench_function(name, |b| b.iter(&mut op));
}

fn pub_frame(line: &[u8], payload_len: usize) -> Vec<u8> {
    let mut v = line.to_vec();
    v.extend((0..payload_len).map(|i| b'a' + (i % 26) as u8));
    v.extend_from_slice(b"\r\n");
    v
}

/// Parses one frame and checks it consumed everything.
#[inline]
fn parse_one(buf: &[u8], limits: &ParserLimits) -> usize {
    match parse_client_op(black_box(buf), limits) {
        Ok(Parsed::Op { op, consumed }) => {
            black_box(op);
            consumed
        }
        other => panic!("{other:?}"),
    }
}

fn bench_parser(c: &mut Criterion) {
    let limits = ParserLimits::default();
    let mut g = c.benchmark_group("parse");
    let single: Vec<(&str, Vec<u8>)> = vec![
        ("PING", b"PING\r\n".to_vec()),
        ("PUB_5B", pub_frame(b"PUB foo 5\r\n", 5)),
        ("PUB_16B", pub_frame(b"PUB foo.bar 16\r\n", 16)),
        (
            "PUB_reply_16B",
            pub_frame(b"PUB foo.bar _INBOX.abcdefgh 16\r\n", 16),
        ),
        ("PUB_128B", pub_frame(b"PUB foo.bar 128\r\n", 128)),
        ("HPUB_16B", {
            let mut v = b"HPUB foo.bar 26 42\r\nNATS/1.0\r\nX-Key: value\r\n\r\n".to_vec();
            v.extend_from_slice(b"0123456789abcdef\r\n");
            v
        }),
    ];
    for (name, frame) in &single {
        assert_eq!(parse_one(frame, &limits), frame.len());
        g.throughput(Throughput::Elements(1));
        bench_op(&mut g, name, || parse_one(frame, &limits));
    }

    let one = pub_frame(b"PUB foo.bar 16\r\n", 16);
    let hundred: Vec<u8> = one.iter().copied().cycle().take(one.len() * 100).collect();
    g.throughput(Throughput::Elements(100));
    bench_op(&mut g, "PUB_16B_x100", || {
        let mut rest = black_box(&hundred[..]);
        let mut n = 0;
        while let Ok(Parsed::Op { op, consumed }) = parse_client_op(rest, &limits) {
            black_box(op);
            rest = &rest[consumed..];
            n += 1;
        }
        assert_eq!(n, 100);
    });

    // A payload split across two reads: the runtime appends the second read to its buffer and
    // parses again, so the copy into the read buffer is part of the cost, as in Go.
    for (name, size) in [("PUB_split_128B", 128), ("PUB_split_4KB", 4096)] {
        let line = format!("PUB foo.bar {size}\r\n");
        let frame = pub_frame(line.as_bytes(), size);
        let cut = line.len() + size / 2;
        let (first, second) = frame.split_at(cut);
        let mut read_buf: Vec<u8> = Vec::with_capacity(frame.len());
        g.throughput(Throughput::Elements(1));
        bench_op(&mut g, name, || {
            read_buf.clear();
            read_buf.extend_from_slice(black_box(first));
            let min = match parse_client_op(&read_buf, &limits) {
                Ok(Parsed::Incomplete { min_total }) => min_total,
                other => panic!("{other:?}"),
            };
            read_buf.extend_from_slice(black_box(second));
            assert!(read_buf.len() >= min);
            parse_one(&read_buf, &limits)
        });
    }
    g.finish();
}

fn bench_msg_format(c: &mut Criterion) {
    let mut g = c.benchmark_group("format");
    g.throughput(Throughput::Elements(1));
    let payload = [b'x'; 16];
    let mut out: Vec<u8> = Vec::with_capacity(256);

    bench_op(&mut g, "MSG_header_direct_16B", || {
        out.clear();
        write_msg_header(&mut out, black_box(b"foo.bar"), black_box(b"12"), None, 16);
        out.extend_from_slice(&payload);
        out.extend_from_slice(b"\r\n");
        black_box(out.len())
    });

    let mut template = MsgFrameTemplate::default();
    bench_op(&mut g, "MSG_template_build", || {
        template.set_msg(
            black_box(b"foo.bar"),
            black_box(Some(b"_INBOX.abcdefgh")),
            16,
        );
        black_box(template.line_len(0))
    });

    let template = MsgFrameTemplate::msg(b"foo.bar", Some(b"_INBOX.abcdefgh"), 16);
    bench_op(&mut g, "MSG_template_write_16B", || {
        out.clear();
        template.write_frame(black_box(b"12"), b"", &payload, &mut out);
        black_box(out.len())
    });

    // One publish fanned out to 10 subscriptions: build once, write ten times.
    let sids: Vec<Vec<u8>> = (1..=10).map(|i: u32| i.to_string().into_bytes()).collect();
    let mut template = MsgFrameTemplate::default();
    g.throughput(Throughput::Elements(10));
    bench_op(&mut g, "MSG_fanout_10_16B", || {
        out.clear();
        template.set_msg(black_box(b"foo.bar"), None, 16);
        for sid in &sids {
            template.write_frame(sid, b"", &payload, &mut out);
        }
        black_box(out.len())
    });
    g.finish();
}

criterion_group!(benches, bench_parser, bench_msg_format);
criterion_main!(benches);
