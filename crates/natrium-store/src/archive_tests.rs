use bytes::Bytes;
use proptest::prelude::*;

use super::*;

fn msg(seq: u64, subject: &str, headers: &[u8], payload: &[u8]) -> StoredMsg {
    StoredMsg {
        seq,
        timestamp_ns: 1_700_000_000_000_000_000 + seq as i64,
        subject: Bytes::copy_from_slice(subject.as_bytes()),
        headers: Bytes::copy_from_slice(headers),
        payload: Bytes::copy_from_slice(payload),
    }
}

fn encode(state: &ArchiveState, msgs: &[StoredMsg]) -> Vec<u8> {
    let mut w = ArchiveWriter::new(Vec::new(), state).unwrap();
    for m in msgs {
        w.msg(m).unwrap();
    }
    w.finish().unwrap()
}

/// The archive's uncompressed bytes, re-framed (to build malformed archives).
fn reframe(raw: &[u8]) -> Vec<u8> {
    let mut enc = snap::write::FrameEncoder::new(Vec::new());
    enc.write_all(raw).unwrap();
    enc.into_inner().unwrap()
}

fn raw(archive: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    snap::read::FrameDecoder::new(archive)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn archive_round_trips_messages_and_gaps() {
    let state = ArchiveState {
        first_seq: 3,
        last_seq: 9,
        msgs: 2,
        bytes: 100,
        created_ns: 1_700_000_000_123_456_789,
    };
    let msgs = [
        msg(3, "a.b", b"NATS/1.0\r\nX: y\r\n\r\n", b"one"),
        msg(7, "c", b"", b""),
    ];
    let bytes = encode(&state, &msgs);
    let Decoded {
        state: got_state,
        msgs: got,
        consumers,
    } = decode_all(&bytes, ArchiveLimits::default()).unwrap();
    assert_eq!(got_state, state);
    assert!(consumers.is_empty());
    assert_eq!(got.len(), 2);
    for (a, b) in got.iter().zip(&msgs) {
        assert_eq!(a.seq, b.seq);
        assert_eq!(a.timestamp_ns, b.timestamp_ns);
        assert_eq!(a.subject, b.subject);
        assert_eq!(a.headers, b.headers);
        assert_eq!(a.payload, b.payload);
    }
}

#[test]
fn archive_state_written_before_the_creation_time_still_reads() {
    // Magic, then a 32-byte state record (no creation time), then the end record.
    let mut raw = MAGIC.to_vec();
    raw.extend_from_slice(&[TAG_STATE, 32, 0, 0, 0]);
    for n in [2u64, 2, 1, 40] {
        raw.extend_from_slice(&n.to_le_bytes());
    }
    raw.extend_from_slice(&[TAG_MSG, 27, 0, 0, 0]);
    raw.extend_from_slice(&2u64.to_le_bytes());
    raw.extend_from_slice(&7i64.to_le_bytes());
    raw.extend_from_slice(&1u32.to_le_bytes());
    raw.extend_from_slice(&0u32.to_le_bytes());
    raw.extend_from_slice(b"sxy");
    raw.extend_from_slice(&[TAG_END, 0, 0, 0, 0]);
    let got = decode_all(&reframe(&raw), ArchiveLimits::default()).unwrap();
    let want = ArchiveState {
        first_seq: 2,
        last_seq: 2,
        msgs: 1,
        bytes: 40,
        created_ns: 0,
    };
    assert_eq!(got.state, want);
    assert_eq!(got.msgs.len(), 1);
    assert_eq!(&got.msgs[0].payload[..], b"xy");
    // Any other state size is malformed.
    let mut short = MAGIC.to_vec();
    short.extend_from_slice(&[TAG_STATE, 36, 0, 0, 0]);
    short.extend_from_slice(&[0; 36]);
    assert!(decode_all(&reframe(&short), ArchiveLimits::default()).is_err());
}

#[test]
fn archive_empty_stream_round_trips() {
    let bytes = encode(&ArchiveState::default(), &[]);
    let got = decode_all(&bytes, ArchiveLimits::default()).unwrap();
    assert_eq!(got, Decoded::default());
}

#[test]
fn archive_refuses_truncation_at_every_byte() {
    let state = ArchiveState {
        first_seq: 1,
        last_seq: 2,
        msgs: 2,
        bytes: 10,
        created_ns: 0,
    };
    let plain = raw(&encode(
        &state,
        &[msg(1, "a", b"", b"x"), msg(2, "a", b"", b"y")],
    ));
    for cut in 0..plain.len() {
        let err = decode_all(&reframe(&plain[..cut]), ArchiveLimits::default()).unwrap_err();
        assert!(
            matches!(err, ArchiveError::Truncated | ArchiveError::BadMagic),
            "cut {cut}: {err}"
        );
    }
}

#[test]
fn archive_refuses_structure_errors() {
    let state = ArchiveState {
        first_seq: 5,
        last_seq: 6,
        msgs: 1,
        bytes: 1,
        created_ns: 0,
    };
    let limits = ArchiveLimits::default();
    // Out of range and out of order.
    for bad in [[msg(4, "a", b"", b"")], [msg(7, "a", b"", b"")]] {
        let err = decode_all(&encode(&state, &bad), limits).unwrap_err();
        assert!(matches!(err, ArchiveError::OutOfOrder(_)), "{err}");
    }
    let twice = [msg(5, "a", b"", b""), msg(5, "a", b"", b"")];
    assert!(matches!(
        decode_all(&encode(&state, &twice), limits),
        Err(ArchiveError::OutOfOrder(5))
    ));
    // A wildcard subject.
    assert!(matches!(
        decode_all(&encode(&state, &[msg(5, "a.*", b"", b"")]), limits),
        Err(ArchiveError::Malformed(_))
    ));
    // Trailing bytes after the end record.
    let mut plain = raw(&encode(&state, &[]));
    plain.push(0);
    assert!(matches!(
        decode_all(&reframe(&plain), limits),
        Err(ArchiveError::TrailingData)
    ));
    // Not compressed at all, or another magic.
    assert!(decode_all(b"garbage garbage", limits).is_err());
    let mut other = raw(&encode(&state, &[]));
    other[0] = b'X';
    assert!(matches!(
        decode_all(&reframe(&other), limits),
        Err(ArchiveError::BadMagic)
    ));
    // Inverted range.
    let inverted = ArchiveState {
        first_seq: 9,
        last_seq: 3,
        ..state
    };
    assert!(matches!(
        decode_all(&encode(&inverted, &[]), limits),
        Err(ArchiveError::Malformed(_))
    ));
}

#[test]
fn archive_checks_sizes_before_buffering() {
    let state = ArchiveState {
        first_seq: 1,
        last_seq: 1,
        msgs: 1,
        bytes: 1,
        created_ns: 0,
    };
    let limits = ArchiveLimits {
        subject_bytes_max: 16,
        msg_bytes_max: 8,
        consumer_bytes_max: 64,
    };
    let big = encode(&state, &[msg(1, "a", b"", &[0; 9])]);
    assert!(matches!(
        decode_all(&big, limits),
        Err(ArchiveError::TooLarge(_))
    ));
    // A record claiming 4 GiB is refused from its header alone.
    let mut plain = raw(&encode(&state, &[]));
    let end = plain.len() - 5;
    plain.truncate(end);
    plain.extend_from_slice(&[TAG_MSG, 0xff, 0xff, 0xff, 0xff]);
    assert!(matches!(
        decode_all(&reframe(&plain), limits),
        Err(ArchiveError::TooLarge(_))
    ));
}

fn arb_msgs() -> impl Strategy<Value = Vec<(u64, String, Vec<u8>, Vec<u8>)>> {
    prop::collection::vec(
        (
            1u64..4,
            "[a-z]{1,5}(\\.[a-z]{1,5}){0,2}",
            prop::collection::vec(any::<u8>(), 0..20),
            prop::collection::vec(any::<u8>(), 0..200),
        ),
        0..20,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn archive_prop_round_trip(first in 1u64..1000, gaps in arb_msgs(), tail in 0u64..3) {
        let mut seq = first - 1;
        let mut msgs = Vec::new();
        for (gap, subject, headers, payload) in &gaps {
            seq += gap;
            msgs.push(msg(seq, subject, headers, payload));
        }
        let state = ArchiveState { first_seq: first, last_seq: seq.max(first - 1) + tail, msgs: msgs.len() as u64, bytes: 0, created_ns: 0 };
        let bytes = encode(&state, &msgs);
        let Decoded { state: got_state, msgs: got, .. } =
            decode_all(&bytes, ArchiveLimits::default()).unwrap();
        prop_assert_eq!(got_state, state);
        prop_assert_eq!(got.len(), msgs.len());
        for (a, b) in got.iter().zip(&msgs) {
            prop_assert_eq!(a.seq, b.seq);
            prop_assert_eq!(&a.subject, &b.subject);
            prop_assert_eq!(&a.headers, &b.headers);
            prop_assert_eq!(&a.payload, &b.payload);
        }
    }

    /// Arbitrary bytes, framed or not, and flipped bytes of a valid archive: an error or a
    /// valid archive, never a panic.
    #[test]
    fn archive_prop_garbage_never_panics(data in prop::collection::vec(any::<u8>(), 0..512), flip in any::<(usize, u8)>()) {
        let _ = decode_all(&data, ArchiveLimits::default());
        let mut framed = MAGIC.to_vec();
        framed.extend_from_slice(&data);
        let _ = decode_all(&reframe(&framed), ArchiveLimits::default());
        let state = ArchiveState { first_seq: 1, last_seq: 3, msgs: 2, bytes: 0, created_ns: 0 };
        let mut plain = raw(&encode(&state, &[msg(1, "a", b"h", b"p"), msg(3, "b", b"", b"q")]));
        let at = flip.0 % plain.len();
        plain[at] ^= flip.1.max(1);
        let _ = decode_all(&reframe(&plain), ArchiveLimits::default());
    }
}

fn consumer(name: &str, state: ConsumerState) -> ArchiveConsumer {
    ArchiveConsumer {
        name: name.to_owned(),
        created_ns: 1_700_000_000_123_456_789,
        config: Bytes::from_static(br#"{"durable_name":"d","ack_policy":"explicit"}"#),
        state,
    }
}

fn sample_state() -> ConsumerState {
    use crate::consumer::{Pending, SequencePair};
    let mut state = ConsumerState {
        delivered: SequencePair {
            consumer: 9,
            stream: 12,
        },
        ack_floor: SequencePair {
            consumer: 4,
            stream: 6,
        },
        ..ConsumerState::default()
    };
    for (seq, dseq) in [(8, 6), (11, 8)] {
        let p = Pending {
            consumer_seq: dseq,
            timestamp_ns: 1_700_000_000_000_000_000 + seq,
        };
        state.pending.insert(seq as u64, p);
    }
    state.redelivered.insert(8, 2);
    state
}

fn encode_with(state: &ArchiveState, msgs: &[StoredMsg], cons: &[ArchiveConsumer]) -> Vec<u8> {
    let mut w = ArchiveWriter::new(Vec::new(), state).unwrap();
    for m in msgs {
        w.msg(m).unwrap();
    }
    for c in cons {
        w.consumer(c).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn archive_round_trips_consumers_after_messages() {
    let state = ArchiveState {
        first_seq: 1,
        last_seq: 12,
        msgs: 1,
        bytes: 10,
        created_ns: 0,
    };
    let cons = [
        consumer("d", sample_state()),
        consumer("e", ConsumerState::default()),
    ];
    let bytes = encode_with(&state, &[msg(3, "a", b"", b"x")], &cons);
    let got = decode_all(&bytes, ArchiveLimits::default()).unwrap();
    assert_eq!(got.msgs.len(), 1);
    assert_eq!(got.consumers, cons);
    // With no messages at all.
    let bytes = encode_with(&state, &[], &cons[..1]);
    assert_eq!(
        decode_all(&bytes, ArchiveLimits::default())
            .unwrap()
            .consumers,
        cons[..1]
    );
}

#[test]
fn archive_refuses_bad_consumer_records() {
    let state = ArchiveState {
        first_seq: 1,
        last_seq: 3,
        msgs: 1,
        bytes: 1,
        created_ns: 0,
    };
    let limits = ArchiveLimits::default();
    let cons = [consumer("d", sample_state())];
    // A message after a consumer.
    let mut w = ArchiveWriter::new(Vec::new(), &state).unwrap();
    w.consumer(&cons[0]).unwrap();
    w.msg(&msg(2, "a", b"", b"")).unwrap();
    assert!(matches!(
        decode_all(&w.finish().unwrap(), limits),
        Err(ArchiveError::BadTag(TAG_MSG))
    ));
    // The same name twice.
    let twice = [cons[0].clone(), cons[0].clone()];
    assert!(matches!(
        decode_all(&encode_with(&state, &[], &twice), limits),
        Err(ArchiveError::DuplicateConsumer(_))
    ));
    // Too large for the limit, refused from its header.
    let small = ArchiveLimits {
        consumer_bytes_max: 30,
        ..limits
    };
    assert!(matches!(
        decode_all(&encode_with(&state, &[], &cons), small),
        Err(ArchiveError::TooLarge(_))
    ));
    // Another version; a damaged state; a name length past the body.
    let plain = raw(&encode_with(&state, &[], &cons));
    let at = plain.iter().position(|b| *b == TAG_CONSUMER).unwrap();
    for (offset, value) in [(5, 2u8), (plain.len() - at - 7, 0xff), (14, 0xff)] {
        let mut bad = plain.clone();
        bad[at + offset] = value;
        assert!(
            matches!(
                decode_all(&reframe(&bad), limits),
                Err(ArchiveError::Malformed(_))
            ),
            "offset {offset}"
        );
    }
    // An empty name is refused by the writer.
    let mut w = ArchiveWriter::new(Vec::new(), &state).unwrap();
    assert!(w.consumer(&consumer("", ConsumerState::default())).is_err());
}

fn arb_consumer_state() -> impl Strategy<Value = ConsumerState> {
    use crate::consumer::{Pending, SequencePair};
    (
        0u64..1000,
        0u64..100,
        prop::collection::btree_map(1u64..200, (0u64..50, any::<i64>()), 0..20),
        prop::collection::btree_map(1u64..200, 1u64..10, 0..10),
    )
        .prop_map(|(floor, ahead, pending, redelivered)| {
            let pending = pending
                .into_iter()
                .map(|(gap, (dseq, ts))| {
                    let p = Pending {
                        consumer_seq: floor + dseq,
                        timestamp_ns: ts,
                    };
                    (floor + gap, p)
                })
                .collect();
            ConsumerState {
                ack_floor: SequencePair {
                    consumer: floor,
                    stream: floor,
                },
                delivered: SequencePair {
                    consumer: floor + ahead,
                    stream: floor + 200,
                },
                pending,
                redelivered,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn archive_prop_consumers_round_trip(
        states in prop::collection::vec((arb_consumer_state(), any::<i64>(), prop::collection::vec(any::<u8>(), 0..64)), 0..5),
        flip in any::<(usize, u8)>(),
    ) {
        let state = ArchiveState { first_seq: 1, last_seq: 2, msgs: 1, bytes: 1, created_ns: 0 };
        let cons: Vec<ArchiveConsumer> = states
            .into_iter()
            .enumerate()
            .map(|(i, (state, created_ns, config))| ArchiveConsumer {
                name: format!("c{i}"),
                created_ns,
                config: Bytes::from(config),
                state,
            })
            .collect();
        let bytes = encode_with(&state, &[msg(2, "a", b"", b"p")], &cons);
        let got = decode_all(&bytes, ArchiveLimits::default()).unwrap();
        prop_assert_eq!(&got.consumers, &cons);
        // A flipped byte: an error or a valid archive, never a panic.
        let mut plain = raw(&bytes);
        let at = flip.0 % plain.len();
        plain[at] ^= flip.1.max(1);
        let _ = decode_all(&reframe(&plain), ArchiveLimits::default());
    }
}
