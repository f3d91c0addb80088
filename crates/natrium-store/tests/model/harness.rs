//! The operations, their proptest strategy, and the comparison of a store with the model.
//! Generic over `StreamStore` through a constructor, so the file store runs the same cases.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use natrium_store::{
    DiscardPolicy, Filter, MsgTtl, NewMsg, StoreConfig, StoreError, StoredMsg, StreamStore,
    UpdateReason,
};
use proptest::prelude::*;

use super::reference::{Model, ModelMsg, ModelNew};

pub const SEC: i64 = 1_000_000_000;
const SUBJECTS: &[&str] = &["a", "b", "c.x", "c.y", "d.e.f", "d.z.f"];
const FILTERS: &[&[&str]] = &[
    &[""],
    &[">"],
    &["a"],
    &["b"],
    &["c.*"],
    &["c.>"],
    &["*"],
    &["d.*.f"],
    &["a", "c.x"],
    &["b", "d.>"],
    &["zzz"],
];

#[derive(Debug, Clone)]
pub enum Op {
    Store {
        subject: usize,
        headers: usize,
        payload: usize,
        ttl: MsgTtl,
        rollup: bool,
        dt: i64,
    },
    StoreRaw {
        subject: usize,
        payload: usize,
        seq_offset: u64,
    },
    Remove(u64),
    Erase(u64),
    Purge,
    PurgeEx {
        filter: usize,
        seq: u64,
        keep: u64,
    },
    Compact(u64),
    Truncate(u64),
    Skip,
    SkipMsgs(u64),
    Load(u64),
    LoadNext {
        filter: usize,
        start: u64,
    },
    LoadLast(usize),
    Filtered {
        filter: usize,
        start: u64,
    },
    NumPending {
        filter: usize,
        start: u64,
        last_per_subject: bool,
    },
    SubjectsState(usize),
    SeqFromTime(i64),
    Config(StoreConfig),
    Expire {
        dt: i64,
    },
}

fn ttl() -> impl Strategy<Value = MsgTtl> {
    prop_oneof![
        6 => Just(MsgTtl::None),
        1 => Just(MsgTtl::Never),
        2 => (1u64..6).prop_map(MsgTtl::Secs),
    ]
}

fn config() -> impl Strategy<Value = StoreConfig> {
    (
        proptest::option::weighted(0.4, 1u64..8),
        proptest::option::weighted(0.3, 40u64..400),
        proptest::option::weighted(0.3, 1u64..10),
        proptest::option::weighted(0.4, 1u64..3),
        proptest::option::weighted(0.2, 5u64..60),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(max_msgs, max_bytes, age, per_subject, max_msg_size, new, dnps)| StoreConfig {
                max_msgs,
                max_bytes,
                max_age: age.map(Duration::from_secs),
                max_msgs_per_subject: per_subject,
                max_msg_size,
                discard: if new {
                    DiscardPolicy::New
                } else {
                    DiscardPolicy::Old
                },
                discard_new_per_subject: dnps,
            },
        )
}

pub fn op() -> impl Strategy<Value = Op> {
    let subject = 0..SUBJECTS.len();
    let filter = 0..FILTERS.len();
    let seq = 0u64..50;
    prop_oneof![
        20 => (subject.clone(), 0usize..12, 0usize..40, ttl(), any::<bool>(), 0i64..2 * SEC)
            .prop_map(|(subject, headers, payload, ttl, rollup, dt)| Op::Store { subject, headers, payload, ttl, rollup, dt }),
        2 => (subject.clone(), 0usize..20, 0u64..3).prop_map(|(subject, payload, seq_offset)| Op::StoreRaw { subject, payload, seq_offset }),
        3 => seq.clone().prop_map(Op::Remove),
        1 => seq.clone().prop_map(Op::Erase),
        1 => Just(Op::Purge),
        2 => (filter.clone(), 0u64..40, 0u64..4).prop_map(|(filter, seq, keep)| Op::PurgeEx { filter, seq, keep }),
        1 => (0u64..60).prop_map(Op::Compact),
        1 => seq.clone().prop_map(Op::Truncate),
        1 => Just(Op::Skip),
        1 => (0u64..4).prop_map(Op::SkipMsgs),
        3 => seq.clone().prop_map(Op::Load),
        4 => (filter.clone(), seq.clone()).prop_map(|(filter, start)| Op::LoadNext { filter, start }),
        2 => filter.clone().prop_map(Op::LoadLast),
        2 => (filter.clone(), seq.clone()).prop_map(|(filter, start)| Op::Filtered { filter, start }),
        3 => (filter.clone(), seq, any::<bool>()).prop_map(|(filter, start, last_per_subject)| Op::NumPending { filter, start, last_per_subject }),
        1 => filter.prop_map(Op::SubjectsState),
        2 => (0i64..60 * SEC).prop_map(Op::SeqFromTime),
        2 => config().prop_map(Op::Config),
        2 => (0i64..12 * SEC).prop_map(|dt| Op::Expire { dt }),
    ]
}

fn filter(i: usize) -> Filter {
    Filter::many(FILTERS[i].iter().map(|s| s.as_bytes())).unwrap()
}

/// Errors compared by variant and fields (`StoreError` holds `io::Error`, so no `PartialEq`).
fn same_err(a: &StoreError, b: &StoreError) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

pub fn check_msg(
    got: Result<StoredMsg, StoreError>,
    want: Result<(u64, &ModelMsg), StoreError>,
    what: &str,
) {
    match (got, want) {
        (Ok(g), Ok((seq, m))) => {
            assert_eq!(g.seq, seq, "{what}: seq");
            assert_eq!(g.timestamp_ns, m.ts, "{what}: ts");
            assert_eq!(g.subject.as_ref(), m.subject.as_slice(), "{what}: subject");
            assert_eq!(g.headers.as_ref(), m.headers.as_slice(), "{what}: headers");
            assert_eq!(g.payload.as_ref(), m.payload.as_slice(), "{what}: payload");
        }
        (Err(g), Err(w)) => assert!(same_err(&g, &w), "{what}: {g:?} vs {w:?}"),
        (g, w) => panic!("{what}: store {g:?}, model {w:?}"),
    }
}

/// One storage-update event, owned.
pub type Event = (i64, i64, u64, UpdateReason);

/// Registers a storage-update callback on `store` that records every event.
pub fn hook(store: &mut dyn StreamStore) -> Arc<Mutex<Vec<Event>>> {
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = Arc::clone(&events);
    store.register_storage_updates(Box::new(move |u| {
        sink.lock()
            .unwrap()
            .push((u.msgs, u.bytes, u.seq, u.reason));
    }));
    events
}

/// Runs `ops` on a fresh store from `make` and on the model, comparing after every step.
pub fn run(make: &dyn Fn(StoreConfig) -> Box<dyn StreamStore>, initial: StoreConfig, ops: &[Op]) {
    let mut store = make(initial.clone());
    let mut model = Model::new(initial);
    let events = hook(&mut *store);
    let mut now = SEC;
    for (step, op) in ops.iter().enumerate() {
        let before = store.fast_state();
        model.removed.clear();
        apply(&mut *store, &mut model, op, &mut now, step);
        check_state(&*store, &model, step, op);
        check_events(&events, &before, &*store, &model, step, op);
    }
}

pub fn apply(store: &mut dyn StreamStore, model: &mut Model, op: &Op, now: &mut i64, step: usize) {
    let what = format!("step {step} {op:?}");
    match op {
        Op::Store { .. } | Op::StoreRaw { .. } => apply_store(store, model, op, now, &what),
        Op::Remove(seq) => compare(
            store.remove_msg(*seq),
            Ok(model.remove(*seq, Some(UpdateReason::Removed))),
            &what,
        ),
        Op::Erase(seq) => compare(
            store.erase_msg(*seq),
            Ok(model.remove(*seq, Some(UpdateReason::Erased))),
            &what,
        ),
        Op::Purge => compare(store.purge(), Ok(model.purge()), &what),
        Op::PurgeEx { filter, seq, keep } => {
            let subject = FILTERS[*filter][0].as_bytes();
            compare(
                store.purge_ex(subject, *seq, *keep),
                Ok(model.purge_ex(subject, *seq, *keep)),
                &what,
            );
        }
        Op::Compact(seq) => compare(store.compact(*seq), Ok(model.compact(*seq)), &what),
        Op::Truncate(seq) => {
            let seq = (*seq).min(model.last);
            store.truncate(seq).unwrap();
            model.truncate(seq);
        }
        Op::Skip => compare(store.skip_msg(0, *now), model.skip(0, 1, *now), &what),
        Op::SkipMsgs(n) => compare(
            store.skip_msgs(0, *n, *now),
            model.skip(0, *n, *now).map(|_| ()),
            &what,
        ),
        Op::Load(_)
        | Op::LoadNext { .. }
        | Op::LoadLast(_)
        | Op::Filtered { .. }
        | Op::NumPending { .. }
        | Op::SubjectsState(_)
        | Op::SeqFromTime(_) => check_query(store, model, op, &what),
        Op::Config(config) => {
            store.update_config(config.clone()).unwrap();
            model.update_config(config.clone());
        }
        Op::Expire { dt } => {
            *now += dt;
            assert_eq!(
                store.next_expiry(),
                model.next_expiry(),
                "{what}: next expiry"
            );
            compare(store.expire_due(*now), Ok(model.expire(*now)), &what);
        }
    }
}

/// The two store operations, applied to both sides with the same message.
fn apply_store(store: &mut dyn StreamStore, model: &mut Model, op: &Op, now: &mut i64, what: &str) {
    match op {
        Op::Store {
            subject,
            headers,
            payload,
            ttl,
            rollup,
            dt,
        } => {
            *now += dt;
            let msg = ModelMsg {
                subject: SUBJECTS[*subject].as_bytes().to_vec(),
                headers: vec![b'h'; *headers],
                payload: vec![b'p'; *payload],
                ts: *now,
                ttl: *ttl,
            };
            let new = NewMsg {
                subject: &msg.subject,
                headers: Bytes::from(msg.headers.clone()),
                payload: Bytes::from(msg.payload.clone()),
                timestamp_ns: *now,
                ttl: *ttl,
                rollup: *rollup,
            };
            let got = store.store_msg(new).map(|s| (s.seq, s.timestamp_ns));
            let want = model.store(
                ModelNew {
                    msg,
                    rollup: *rollup,
                },
                0,
                true,
            );
            compare(got, want, what);
        }
        Op::StoreRaw {
            subject,
            payload,
            seq_offset,
        } => {
            let seq = model.last + seq_offset;
            let msg = ModelMsg {
                subject: SUBJECTS[*subject].as_bytes().to_vec(),
                headers: Vec::new(),
                payload: vec![b'r'; *payload],
                ts: *now,
                ttl: MsgTtl::None,
            };
            let new = NewMsg::new(
                &msg.subject,
                Bytes::new(),
                Bytes::from(msg.payload.clone()),
                *now,
            );
            let got = store
                .store_raw_msg(new, seq, false)
                .map(|s| (s.seq, s.timestamp_ns));
            compare(
                got,
                model.store(ModelNew { msg, rollup: false }, seq, false),
                what,
            );
        }
        _ => unreachable!("not a store: {op:?}"),
    }
}

/// The read-only operations: the store's answer must be the model's.
fn check_query(store: &dyn StreamStore, model: &Model, op: &Op, what: &str) {
    match op {
        Op::Load(seq) => check_msg(store.load_msg(*seq), model.load(*seq), what),
        Op::LoadNext { filter: f, start } => {
            check_msg(
                store.load_next_msg(&filter(*f), *start),
                model.load_next(&filter(*f), *start),
                what,
            );
        }
        Op::LoadLast(f) => check_msg(
            store.load_last_msg(&filter(*f)),
            model.load_last(&filter(*f)),
            what,
        ),
        Op::Filtered { filter: f, start } => {
            assert_eq!(
                store.filtered_state(*start, &filter(*f)),
                model.filtered(*start, &filter(*f)),
                "{what}"
            );
        }
        Op::NumPending {
            filter: f,
            start,
            last_per_subject,
        } => {
            let got = store.num_pending(*start, &filter(*f), *last_per_subject);
            assert_eq!(
                got,
                model.num_pending(*start, &filter(*f), *last_per_subject),
                "{what}"
            );
        }
        Op::SubjectsState(f) => {
            let got: Vec<_> = store
                .subjects_state(&filter(*f))
                .into_iter()
                .map(|(s, st)| (s.to_vec(), st))
                .collect();
            assert_eq!(got, model.subjects_state(&filter(*f)), "{what}");
        }
        Op::SeqFromTime(ts) => {
            assert_eq!(store.seq_from_time(*ts), model.seq_from_time(*ts), "{what}");
        }
        _ => unreachable!("not a query: {op:?}"),
    }
}

#[allow(clippy::needless_pass_by_value)] // Call sites read best with the results inline.
fn compare<T: PartialEq + std::fmt::Debug>(
    got: Result<T, StoreError>,
    want: Result<T, StoreError>,
    what: &str,
) {
    match (&got, &want) {
        (Ok(g), Ok(w)) => assert_eq!(g, w, "{what}"),
        (Err(g), Err(w)) => assert!(same_err(g, w), "{what}: {g:?} vs {w:?}"),
        _ => panic!("{what}: store {got:?}, model {want:?}"),
    }
}

pub fn check_state(store: &dyn StreamStore, model: &Model, step: usize, op: &Op) {
    let want = model.state();
    assert_eq!(store.state(), want, "state after step {step} {op:?}");
    let mut fast = want;
    fast.deleted.clear();
    assert_eq!(
        store.fast_state(),
        fast,
        "fast state after step {step} {op:?}"
    );
    let all: Vec<_> = store
        .subjects_state(&Filter::all())
        .into_iter()
        .map(|(s, st)| (s.to_vec(), st))
        .collect();
    assert_eq!(
        all,
        model.subjects_state(&Filter::all()),
        "subjects after step {step} {op:?}"
    );
}

/// The callback's deltas add up to the state's change, and its single-message removals are
/// the model's.
pub fn check_events(
    events: &Mutex<Vec<Event>>,
    before: &natrium_store::StreamState,
    store: &dyn StreamStore,
    model: &Model,
    step: usize,
    op: &Op,
) {
    let after = store.fast_state();
    let drained: Vec<Event> = std::mem::take(&mut *events.lock().unwrap());
    let msgs: i64 = drained.iter().map(|e| e.0).sum();
    let bytes: i64 = drained.iter().map(|e| e.1).sum();
    assert_eq!(
        msgs,
        after.msgs as i64 - before.msgs as i64,
        "event msgs at step {step} {op:?}"
    );
    assert_eq!(
        bytes,
        after.bytes as i64 - before.bytes as i64,
        "event bytes at step {step} {op:?}"
    );
    let single = |r: UpdateReason| {
        matches!(
            r,
            UpdateReason::Removed
                | UpdateReason::Erased
                | UpdateReason::Limit
                | UpdateReason::SubjectLimit
                | UpdateReason::MaxAge
                | UpdateReason::Ttl
        )
    };
    let mut got: Vec<(u64, UpdateReason)> = drained
        .iter()
        .filter(|e| e.0 == -1 && single(e.3))
        .map(|e| (e.2, e.3))
        .collect();
    let mut want = model.removed.clone();
    got.sort_unstable_by_key(|e| e.0);
    want.sort_unstable_by_key(|e| e.0);
    assert_eq!(got, want, "removals at step {step} {op:?}");
}
