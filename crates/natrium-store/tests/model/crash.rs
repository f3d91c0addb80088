//! The harness with syncs and crashes: after a crash (and the recovery of a reopen), the
//! store must equal the model as it was at the last `sync()`, every message of it loading
//! with its subject, headers and payload.

use natrium_store::{StoreConfig, StreamStore};
use proptest::prelude::*;

use super::harness::{apply, check_events, check_msg, check_state, hook, op, Op, SEC};
use super::reference::Model;

#[derive(Debug, Clone)]
pub enum CrashOp {
    Op(Op),
    /// `sync()`: its answer must be the last sequence, and that state becomes durable.
    Sync,
    /// Crash (only synced bytes survive), then reopen.
    Crash,
}

pub fn crash_op() -> impl Strategy<Value = CrashOp> {
    prop_oneof![
        16 => op().prop_map(CrashOp::Op),
        3 => Just(CrashOp::Sync),
        1 => Just(CrashOp::Crash),
    ]
}

/// Runs `ops` against a store from `open` (which reopens after `crash`), counting bytes with
/// Go's file-store formula as the model does with `file_sizing`.
pub fn run(
    open: &dyn Fn(StoreConfig) -> Box<dyn StreamStore>,
    crash: &dyn Fn(),
    initial: StoreConfig,
    ops: &[CrashOp],
) {
    let mut store = open(initial.clone());
    let mut model = Model::new(initial);
    model.file_sizing = true;
    let mut synced = model.clone();
    let mut events = hook(&mut *store);
    let mut now = SEC;
    for (step, op) in ops.iter().enumerate() {
        match op {
            CrashOp::Op(op) => {
                let before = store.fast_state();
                // An erase that removes a message syncs before it returns (format §8).
                let erases = matches!(op, Op::Erase(seq) if model.msgs.contains_key(seq));
                model.removed.clear();
                apply(&mut *store, &mut model, op, &mut now, step);
                check_state(&*store, &model, step, op);
                check_events(&events, &before, &*store, &model, step, op);
                if erases {
                    synced = model.clone();
                }
            }
            CrashOp::Sync => {
                assert_eq!(store.sync().unwrap(), model.last, "sync at step {step}");
                // What the engine does once the acks went out: the index, when due.
                store.maintain();
                synced = model.clone();
            }
            CrashOp::Crash => {
                drop(store);
                crash();
                store = open(synced.config.clone());
                model = synced.clone();
                events = hook(&mut *store);
                let what = Op::Purge;
                check_state(&*store, &model, step, &what);
                for (seq, msg) in &model.msgs {
                    let loaded = store.load_msg(*seq);
                    check_msg(
                        loaded,
                        Ok((*seq, msg)),
                        &format!("step {step} crash, seq {seq}"),
                    );
                }
            }
        }
    }
}
