use super::*;

const SEC: i64 = 1_000_000_000;

fn delivered(state: &mut DeliveryState, sseqs: &[u64], now: i64) -> u64 {
    let mut next = 0;
    for sseq in sseqs {
        let dseq = state.dseq;
        state.dseq += 1;
        state.track_pending(*sseq, dseq, now, 30 * SEC);
        next = sseq + 1;
    }
    next
}

#[test]
fn consumer_state_explicit_acks_move_the_floor() {
    let mut s = DeliveryState::starting(1);
    let next = delivered(&mut s, &[1, 2, 3], 0);
    let acked = s.ack(AckPolicy::Explicit, (2, 2), next, 0).unwrap();
    assert_eq!(acked.seqs, vec![2]);
    assert_eq!(s.ack_floor, SequencePair::default());
    s.ack(AckPolicy::Explicit, (1, 1), next, 0).unwrap();
    assert_eq!(
        s.ack_floor,
        SequencePair {
            consumer: 2,
            stream: 2
        }
    );
    s.ack(AckPolicy::Explicit, (3, 3), next, 0).unwrap();
    assert_eq!(
        s.ack_floor,
        SequencePair {
            consumer: 3,
            stream: 3
        }
    );
    assert!(s.pending.is_empty());
    assert!(s.ack(AckPolicy::Explicit, (4, 4), next, 0).is_none());
}

#[test]
fn consumer_state_ack_all_acks_everything_below() {
    let mut s = DeliveryState::starting(1);
    let next = delivered(&mut s, &[1, 2, 3, 4], 0);
    let acked = s.ack(AckPolicy::All, (3, 3), next, 4).unwrap();
    assert_eq!(acked.seqs, vec![1, 2, 3]);
    assert!(acked.unblocked);
    assert_eq!(s.pending.keys().copied().collect::<Vec<_>>(), vec![4]);
    assert_eq!(
        s.ack_floor,
        SequencePair {
            consumer: 3,
            stream: 3
        }
    );
    assert_eq!(
        s.ack(AckPolicy::All, (2, 2), next, 0),
        Some(Acked::default())
    );
}

#[test]
fn consumer_state_redelivers_after_ack_wait() {
    let mut s = DeliveryState::starting(1);
    let next = delivered(&mut s, &[1, 2], 0);
    let timing = AckTiming {
        ack_wait: 30 * SEC,
        backoff: &[],
        max_deliver: 0,
    };
    let early = s.check_pending(10 * SEC, &timing, 1, next);
    assert!(!early.redeliver);
    assert_eq!(s.ack_due, Some(30 * SEC));
    let due = s.check_pending(30 * SEC, &timing, 1, next);
    assert!(due.redeliver);
    assert_eq!(s.next_to_redeliver(), Some(1));
    assert_eq!(s.inc_delivery_count(1), 2);
    assert_eq!(s.next_to_redeliver(), Some(2));
    assert_eq!(s.next_to_redeliver(), None);
}

#[test]
fn consumer_state_backoff_steps() {
    let timing = AckTiming {
        ack_wait: 30 * SEC,
        backoff: &[SEC, 5 * SEC],
        max_deliver: 0,
    };
    assert_eq!(timing.wait_for(0), SEC + ACK_WAIT_DELAY_NS);
    assert_eq!(timing.wait_for(7), 5 * SEC + ACK_WAIT_DELAY_NS);
    let mut s = DeliveryState::starting(1);
    let next = delivered(&mut s, &[1], 0);
    assert!(s.check_pending(SEC, &timing, 1, next).redeliver);
}

#[test]
fn consumer_state_max_deliver_leaves_pending() {
    let timing = AckTiming {
        ack_wait: SEC,
        backoff: &[],
        max_deliver: 1,
    };
    let mut s = DeliveryState::starting(1);
    let next = delivered(&mut s, &[1], 0);
    let out = s.check_pending(2 * SEC, &timing, 1, next);
    assert!(!out.redeliver);
    assert_eq!(out.exceeded, vec![(1, 1)]);
    assert_eq!(out.store_delivered, vec![(1, 1, 2, 0)]);
    assert!(s.pending.is_empty());
    assert!(s.need_ack(AckPolicy::Explicit, 1, next));
}

#[test]
fn consumer_state_drops_pending_below_the_stream() {
    let timing = AckTiming {
        ack_wait: SEC,
        backoff: &[],
        max_deliver: 0,
    };
    let mut s = DeliveryState::starting(1);
    let next = delivered(&mut s, &[1, 2], 0);
    let out = s.check_pending(0, &timing, 2, next);
    assert!(out.state_changed);
    assert_eq!(
        s.ack_floor,
        SequencePair {
            consumer: 1,
            stream: 1
        }
    );
}

#[test]
fn consumer_state_round_trips_through_the_store_form() {
    let mut s = DeliveryState::starting(5);
    let next = delivered(&mut s, &[5, 6], 7);
    s.inc_delivery_count(5);
    let stored = s.to_store(next);
    assert_eq!(
        stored.delivered,
        SequencePair {
            consumer: 2,
            stream: 6
        }
    );
    let back = DeliveryState::recovered(&stored, 30 * SEC, 100);
    assert_eq!(back.dseq, 3);
    assert_eq!(back.pending.len(), 2);
    assert_eq!(back.delivery_count(5), 1);
    assert_eq!(back.ack_due, Some(100 + RECOVERED_CHECK_NS));
}
