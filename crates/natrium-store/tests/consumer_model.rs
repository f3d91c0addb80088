//! The file consumer store against the memory one: random sequences of consumer operations
//! (in-order deliveries, redeliveries and acks, and arbitrary ones) give the same answers
//! and the same state on both, across stops and reopens, and a crash brings the file store
//! back to the state of its last `sync`. `NATRIUM_PROPTEST_CASES` raises the number of cases
//! for long runs (the default keeps the suite fast).

use std::path::Path;
use std::sync::Arc;

use natrium_store::io::{CrashMode, SimFs, StorageIo};
use natrium_store::{
    AckPolicy, ConsumerState, ConsumerStore, ConsumerStoreConfig, FileConsumerStore,
    MemConsumerStore, StoreError,
};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("NATRIUM_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

const DIR: &str = "/s/obs/c";

/// What the test asks for; the in-order kinds are resolved against the current state.
#[derive(Debug, Clone)]
enum Op {
    /// Deliver the next message: consumer sequence + 1, stream sequence + `gap`.
    DeliverNext {
        gap: u64,
        ts: i64,
    },
    /// Redeliver the `i`-th pending message (modulo their number).
    Redeliver {
        i: usize,
        ts: i64,
    },
    /// Acknowledge the `i`-th pending message with its consumer sequence.
    AckPending {
        i: usize,
    },
    /// Arbitrary calls.
    Deliver {
        cseq: u64,
        sseq: u64,
        count: u64,
        ts: i64,
    },
    Ack {
        cseq: u64,
        sseq: u64,
    },
    RemoveRedeliveredBelow(u64),
    SetStarting(u64),
    Reset(u64),
    /// `update` / `force_update` with the current state moved on by `by` deliveries.
    Update {
        by: u64,
        force: bool,
    },
    Sync,
    /// Stop, then open again from the files.
    Reopen,
    /// Crash without a sync, then open again.
    Crash {
        torn: bool,
    },
}

/// A resolved call, replayable on a fresh memory store.
#[derive(Debug, Clone)]
enum Call {
    Delivered(u64, u64, u64, i64),
    Acks(u64, u64),
    RemoveBelow(u64),
    Starting(u64),
    Reset(u64),
    Update(ConsumerState, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let seq = 0u64..40;
    prop_oneof![
        4 => (1u64..4, any::<i64>()).prop_map(|(gap, ts)| Op::DeliverNext { gap, ts }),
        2 => (any::<usize>(), any::<i64>()).prop_map(|(i, ts)| Op::Redeliver { i, ts }),
        3 => any::<usize>().prop_map(|i| Op::AckPending { i }),
        1 => (seq.clone(), seq.clone(), 1u64..5, -5i64..5)
            .prop_map(|(cseq, sseq, count, ts)| Op::Deliver { cseq, sseq, count, ts }),
        1 => (seq.clone(), seq.clone()).prop_map(|(cseq, sseq)| Op::Ack { cseq, sseq }),
        1 => seq.clone().prop_map(Op::RemoveRedeliveredBelow),
        1 => seq.clone().prop_map(Op::SetStarting),
        1 => seq.prop_map(Op::Reset),
        1 => (0u64..3, any::<bool>()).prop_map(|(by, force)| Op::Update { by, force }),
        2 => Just(Op::Sync),
        1 => Just(Op::Reopen),
        1 => any::<bool>().prop_map(|torn| Op::Crash { torn }),
    ]
}

fn config() -> impl Strategy<Value = ConsumerStoreConfig> {
    let policy = prop_oneof![
        Just(AckPolicy::None),
        Just(AckPolicy::All),
        Just(AckPolicy::Explicit),
        Just(AckPolicy::FlowControl),
    ];
    (policy, proptest::option::of(1u64..4)).prop_map(|(ack_policy, max_deliver)| {
        ConsumerStoreConfig {
            ack_policy,
            max_deliver,
        }
    })
}

fn resolve(op: &Op, s: &ConsumerState) -> Option<Call> {
    let nth = |i: usize| {
        let n = s.pending.len();
        (n > 0).then(|| s.pending.iter().nth(i % n)).flatten()
    };
    Some(match op {
        Op::DeliverNext { gap, ts } => {
            Call::Delivered(s.delivered.consumer + 1, s.delivered.stream + gap, 1, *ts)
        }
        Op::Redeliver { i, ts } => {
            let (seq, _) = nth(*i)?;
            let count = s.delivery_count(*seq) + 1;
            Call::Delivered(s.delivered.consumer + 1, *seq, count, *ts)
        }
        Op::AckPending { i } => {
            let (seq, p) = nth(*i)?;
            Call::Acks(p.consumer_seq, *seq)
        }
        Op::Deliver {
            cseq,
            sseq,
            count,
            ts,
        } => Call::Delivered(*cseq, *sseq, *count, *ts),
        Op::Ack { cseq, sseq } => Call::Acks(*cseq, *sseq),
        Op::RemoveRedeliveredBelow(seq) => Call::RemoveBelow(*seq),
        Op::SetStarting(seq) => Call::Starting(*seq),
        Op::Reset(seq) => Call::Reset(*seq),
        Op::Update { by, force } => {
            let mut next = s.clone();
            next.delivered.consumer += by;
            next.delivered.stream += by;
            Call::Update(next, *force)
        }
        Op::Sync | Op::Reopen | Op::Crash { .. } => return None,
    })
}

fn apply(store: &mut dyn ConsumerStore, call: &Call) -> Result<(), String> {
    let result = match call {
        Call::Delivered(c, s, n, ts) => store.update_delivered(*c, *s, *n, *ts),
        Call::Acks(c, s) => store.update_acks(*c, *s),
        Call::RemoveBelow(s) => {
            store.remove_redelivered_below(*s);
            Ok(())
        }
        Call::Starting(s) => store.set_starting(*s),
        Call::Reset(s) => store.reset(*s),
        Call::Update(state, false) => store.update(state),
        Call::Update(state, true) => store.force_update(state),
    };
    result.map_err(|e: StoreError| e.to_string())
}

fn open(fs: &SimFs, config: ConsumerStoreConfig) -> FileConsumerStore {
    let io: Arc<dyn StorageIo> = Arc::new(fs.clone());
    FileConsumerStore::open(io, Path::new(DIR), config).unwrap()
}

fn run(config: ConsumerStoreConfig, ops: &[Op]) {
    let fs = SimFs::new();
    let mut file = open(&fs, config);
    let mut mem = MemConsumerStore::new(config);
    // Every call applied so far, and those covered by the last sync.
    let mut log: Vec<Call> = Vec::new();
    let mut synced = 0;
    for op in ops {
        match op {
            Op::Sync => {
                file.sync().unwrap();
                synced = log.len();
            }
            Op::Reopen => {
                file.stop().unwrap();
                synced = log.len();
                file = open(&fs, config);
            }
            Op::Crash { torn } => {
                drop(file);
                fs.crash(if *torn {
                    CrashMode::TornPrefix { keep_bytes: 11 }
                } else {
                    CrashMode::DropUnsynced
                });
                file = open(&fs, config);
                log.truncate(synced);
                mem = MemConsumerStore::new(config);
                for call in &log {
                    let _ = apply(&mut mem, call);
                }
            }
            _ => {
                let Some(call) = resolve(op, &mem.state().unwrap()) else {
                    continue;
                };
                let want = apply(&mut mem, &call);
                assert_eq!(apply(&mut file, &call), want, "{call:?}");
                log.push(call);
            }
        }
        assert_eq!(file.state().unwrap(), mem.state().unwrap(), "after {op:?}");
        assert_eq!(file.has_state(), mem.has_state(), "after {op:?}");
    }
    file.stop().unwrap();
    let reopened = open(&fs, config);
    assert_eq!(
        reopened.state().unwrap(),
        mem.state().unwrap(),
        "after stop"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn store_consumer_file_matches_memory(config in config(), ops in proptest::collection::vec(op(), 1..80)) {
        run(config, &ops);
    }
}
