//! Unit tests of the memory store's rules; the model-based property test in
//! `tests/stream_model.rs` covers the operations in combination.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::MemStore;
use crate::{
    DiscardPolicy, Filter, MsgTtl, NewMsg, StoreConfig, StoreError, StreamStore, UpdateReason,
};

fn msg(subject: &str, payload: &str, ts: i64) -> NewMsg<'static> {
    let subject: &'static str = Box::leak(subject.to_owned().into_boxed_str());
    NewMsg::new(
        subject.as_bytes(),
        Bytes::new(),
        Bytes::copy_from_slice(payload.as_bytes()),
        ts,
    )
}

#[test]
fn store_mem_store_and_load() {
    let mut s = MemStore::new(StoreConfig::default());
    assert_eq!(s.store_msg(msg("a", "1", 10)).unwrap().seq, 1);
    assert_eq!(s.store_msg(msg("b", "22", 20)).unwrap().seq, 2);
    let m = s.load_msg(2).unwrap();
    assert_eq!(
        (m.subject.as_ref(), m.payload.as_ref(), m.timestamp_ns),
        (&b"b"[..], &b"22"[..], 20)
    );
    assert!(matches!(s.load_msg(3), Err(StoreError::Eof)));
    assert!(s.remove_msg(1).unwrap());
    assert!(matches!(s.load_msg(1), Err(StoreError::NotFound)));
    let st = s.state();
    assert_eq!(
        (st.msgs, st.first_seq, st.last_seq, st.bytes),
        (1, 2, 2, 1 + 2 + 16)
    );
}

#[test]
fn store_mem_discard_new_limits() {
    let config = StoreConfig {
        max_msgs: Some(2),
        max_msgs_per_subject: Some(1),
        discard: DiscardPolicy::New,
        discard_new_per_subject: true,
        ..StoreConfig::default()
    };
    let mut s = MemStore::new(config);
    s.store_msg(msg("a", "x", 1)).unwrap();
    assert!(matches!(
        s.store_msg(msg("a", "y", 2)),
        Err(StoreError::MaxMsgsPerSubject)
    ));
    let mut rollup = msg("a", "y", 2);
    rollup.rollup = true;
    s.store_msg(rollup).unwrap();
    s.store_msg(msg("b", "x", 3)).unwrap();
    assert!(matches!(
        s.store_msg(msg("c", "x", 4)),
        Err(StoreError::MaxMsgs)
    ));
    assert_eq!(s.state().msgs, 2);
}

#[test]
fn store_mem_discard_old_reports_removals() {
    let removed = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&removed);
    let mut s = MemStore::new(StoreConfig {
        max_msgs: Some(2),
        ..StoreConfig::default()
    });
    s.register_storage_updates(Box::new(move |u| {
        if u.msgs < 0 {
            sink.lock().unwrap().push((u.seq, u.reason));
        }
    }));
    for i in 0..4 {
        s.store_msg(msg("a", "x", i)).unwrap();
    }
    assert_eq!(
        *removed.lock().unwrap(),
        vec![(1, UpdateReason::Limit), (2, UpdateReason::Limit)]
    );
    assert_eq!(s.state().first_seq, 3);
}

#[test]
fn store_mem_purge_ex_keep_and_compact_past_end() {
    let mut s = MemStore::new(StoreConfig::default());
    for i in 0..6 {
        s.store_msg(msg(if i % 2 == 0 { "a" } else { "b" }, "x", i))
            .unwrap();
    }
    assert_eq!(s.purge_ex(b"a", 0, 1).unwrap(), 2);
    assert_eq!(s.load_last_msg(&Filter::new(b"a").unwrap()).unwrap().seq, 5);
    assert_eq!(s.compact(100).unwrap(), 4);
    let st = s.state();
    assert_eq!((st.first_seq, st.last_seq, st.msgs), (100, 99, 0));
    assert_eq!(s.store_msg(msg("a", "x", 9)).unwrap().seq, 100);
}

#[test]
fn store_mem_expiry_by_age_and_ttl() {
    let config = StoreConfig {
        max_age: Some(Duration::from_secs(10)),
        ..StoreConfig::default()
    };
    let mut s = MemStore::new(config);
    let sec = 1_000_000_000;
    let mut never = msg("a", "x", 0);
    never.ttl = MsgTtl::Never;
    s.store_msg(never).unwrap();
    s.store_msg(msg("a", "x", sec)).unwrap();
    let mut short = msg("b", "x", 2 * sec);
    short.ttl = MsgTtl::Secs(1);
    s.store_msg(short).unwrap();
    assert_eq!(s.next_expiry(), Some(3 * sec));
    assert_eq!(s.expire_due(3 * sec).unwrap(), 1);
    assert_eq!(s.next_expiry(), Some(11 * sec));
    assert_eq!(s.expire_due(11 * sec).unwrap(), 1);
    assert_eq!(s.state().msgs, 1, "the never-expiring message stays");
    assert_eq!(s.next_expiry(), None);
}

#[test]
fn store_mem_due_expiries_lists_without_removing() {
    let config = StoreConfig {
        max_age: Some(Duration::from_secs(10)),
        ..StoreConfig::default()
    };
    let mut s = MemStore::new(config);
    let sec = 1_000_000_000;
    let mut never = msg("a", "x", 0);
    never.ttl = MsgTtl::Never;
    s.store_msg(never).unwrap();
    s.store_msg(msg("a", "x", sec)).unwrap();
    let mut short = msg("b", "x", 2 * sec);
    short.ttl = MsgTtl::Secs(1);
    s.store_msg(short).unwrap();
    s.store_msg(msg("c", "x", 5 * sec)).unwrap();
    assert_eq!(s.due_expiries(2 * sec, 10), Vec::<u64>::new());
    assert_eq!(s.due_expiries(3 * sec, 10), vec![3]);
    assert_eq!(s.due_expiries(11 * sec, 10), vec![2, 3]);
    assert_eq!(s.due_expiries(15 * sec, 10), vec![2, 3, 4]);
    assert_eq!(s.due_expiries(15 * sec, 2), vec![2, 3]);
    assert_eq!(s.state().msgs, 4, "listing removes nothing");
}

#[test]
fn store_mem_time_lookup_and_skips() {
    let mut s = MemStore::new(StoreConfig::default());
    for ts in [10, 20, 30, 40] {
        s.store_msg(msg("a", "x", ts)).unwrap();
    }
    s.remove_msg(2).unwrap();
    assert_eq!(s.seq_from_time(15), 3);
    assert_eq!(s.seq_from_time(5), 1);
    assert_eq!(s.seq_from_time(45), 5);
    s.skip_msgs(0, 3, 50).unwrap();
    assert_eq!(s.state().last_seq, 7);
    assert_eq!(s.state().deleted, vec![2, 5, 6, 7]);
    assert!(matches!(
        s.skip_msg(3, 0),
        Err(StoreError::SequenceMismatch {
            expected: 8,
            got: 3
        })
    ));
}

#[test]
fn store_mem_filters_and_pending() {
    let mut s = MemStore::new(StoreConfig::default());
    for (i, subj) in ["a.1", "a.2", "b.1", "a.1", "b.2"].iter().enumerate() {
        s.store_msg(msg(subj, "x", i as i64)).unwrap();
    }
    let a = Filter::new(b"a.*").unwrap();
    assert_eq!(s.load_next_msg(&a, 3).unwrap().seq, 4);
    assert_eq!(
        s.load_next_msg(&Filter::new(b"a.1").unwrap(), 2)
            .unwrap()
            .seq,
        4
    );
    assert_eq!(s.num_pending(2, &a, false), (2, 5));
    assert_eq!(s.num_pending(2, &a, true), (2, 5));
    assert_eq!(s.num_pending(3, &a, true), (1, 5));
    let many = Filter::many([&b"b.2"[..], b"a.2"]).unwrap();
    assert_eq!(s.load_next_msg(&many, 1).unwrap().seq, 2);
    let subjects = s.subjects_state(&Filter::all());
    assert_eq!(subjects.len(), 4);
    assert_eq!(subjects[0].0.as_ref(), b"a.1");
    assert_eq!(
        (subjects[0].1.msgs, subjects[0].1.first, subjects[0].1.last),
        (2, 1, 4)
    );
}

#[test]
fn store_mem_erase_zeroes_unshared_bytes() {
    let mut s = MemStore::new(StoreConfig::default());
    s.store_msg(msg("a", "secret", 1)).unwrap();
    let loaded = s.load_msg(1).unwrap();
    assert!(s.erase_msg(1).unwrap());
    assert_eq!(
        loaded.payload.as_ref(),
        b"secret",
        "a reader's copy is its own"
    );
    assert!(!s.erase_msg(1).unwrap());
}

#[test]
fn store_mem_subject_links_across_billions_of_sequences() {
    // Messages of one subject more than u32::MAX sequences apart are still linked.
    let mut s = MemStore::new(StoreConfig::default());
    s.store_msg(msg("a", "1", 10)).unwrap();
    s.store_msg(msg("b", "x", 11)).unwrap();
    let far = 3 + u64::from(u32::MAX) * 2;
    s.skip_msgs(3, far - 3, 12).unwrap();
    assert_eq!(s.store_msg(msg("a", "2", 13)).unwrap().seq, far);
    assert_eq!(s.store_msg(msg("a", "3", 14)).unwrap().seq, far + 1);
    let a = Filter::new(b"a").unwrap();
    let state = s.filtered_state(1, &a);
    assert_eq!((state.msgs, state.first, state.last), (3, 1, far + 1));
    // Forward from the first, and from between the two far apart.
    assert_eq!(s.load_next_msg(&a, 1).unwrap().seq, 1);
    assert_eq!(s.load_next_msg(&a, 2).unwrap().seq, far);
    // Removing the middle one links the first straight to the last, farther still.
    assert!(s.remove_msg(far).unwrap());
    assert_eq!(s.load_next_msg(&a, 2).unwrap().seq, far + 1);
    assert!(s.remove_msg(1).unwrap());
    let state = s.filtered_state(1, &a);
    assert_eq!((state.msgs, state.first, state.last), (1, far + 1, far + 1));
}

#[test]
fn store_mem_file_store_entry_stays_small() {
    // One per stored message of a file stream: its size is the store's memory per message.
    let size = std::mem::size_of::<super::state::Entry<crate::filestore::block::Loc>>();
    assert!(size <= 40, "Entry<Loc> is {size} bytes");
}
