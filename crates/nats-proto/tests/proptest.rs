//! Property tests of the client parser: encoded ops parse back to themselves however the bytes
//! are split into reads, and arbitrary bytes never panic and never over-consume.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use nats_proto::encode::{write_connect, write_hpub, write_pub, write_sub, write_unsub};
use nats_proto::{parse_client_op, ClientOp, Parsed, ParserLimits, ProtoError, Publish};
use proptest::prelude::*;

/// An owned copy of a `ClientOp`, for generating and comparing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Connect(Vec<u8>),
    Pub {
        subject: Vec<u8>,
        reply: Option<Vec<u8>>,
        headers: Option<Vec<u8>>,
        payload: Vec<u8>,
    },
    Sub {
        subject: Vec<u8>,
        queue: Option<Vec<u8>>,
        sid: Vec<u8>,
    },
    Unsub {
        sid: Vec<u8>,
        max_msgs: Option<u64>,
    },
    Ping,
    Pong,
    Info(Vec<u8>),
    Ok,
    Err(Vec<u8>),
}

impl Op {
    fn from_parsed(op: &ClientOp<'_>) -> Self {
        match *op {
            ClientOp::Connect(j) => Op::Connect(j.to_vec()),
            ClientOp::Pub(Publish {
                subject,
                reply,
                headers,
                payload,
            }) => Op::Pub {
                subject: subject.to_vec(),
                reply: reply.map(<[u8]>::to_vec),
                headers: headers.map(<[u8]>::to_vec),
                payload: payload.to_vec(),
            },
            ClientOp::Sub {
                subject,
                queue,
                sid,
            } => Op::Sub {
                subject: subject.to_vec(),
                queue: queue.map(<[u8]>::to_vec),
                sid: sid.to_vec(),
            },
            ClientOp::Unsub { sid, max_msgs } => Op::Unsub {
                sid: sid.to_vec(),
                max_msgs,
            },
            ClientOp::Ping => Op::Ping,
            ClientOp::Pong => Op::Pong,
            ClientOp::Info(j) => Op::Info(j.to_vec()),
            ClientOp::Ok => Op::Ok,
            ClientOp::Err(t) => Op::Err(t.to_vec()),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Op::Connect(j) => write_connect(out, j),
            Op::Pub {
                subject,
                reply,
                headers: None,
                payload,
            } => {
                write_pub(out, subject, reply.as_deref(), payload);
            }
            Op::Pub {
                subject,
                reply,
                headers: Some(h),
                payload,
            } => {
                write_hpub(out, subject, reply.as_deref(), h, payload);
            }
            Op::Sub {
                subject,
                queue,
                sid,
            } => write_sub(out, subject, queue.as_deref(), sid),
            Op::Unsub { sid, max_msgs } => write_unsub(out, sid, *max_msgs),
            Op::Ping => out.extend_from_slice(b"PING\r\n"),
            Op::Pong => out.extend_from_slice(b"PONG\r\n"),
            Op::Info(j) => {
                out.extend_from_slice(b"INFO ");
                out.extend_from_slice(j);
                out.extend_from_slice(b"\r\n");
            }
            Op::Ok => out.extend_from_slice(b"+OK\r\n"),
            Op::Err(t) => {
                out.extend_from_slice(b"-ERR ");
                out.extend_from_slice(t);
                out.extend_from_slice(b"\r\n");
            }
        }
    }
}

/// A subject, reply, queue or sid: no blanks, CR or LF.
fn token() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            Just(b'.'),
            Just(b'*'),
            Just(b'>'),
            Just(b'_'),
            b'a'..=b'z',
            b'0'..=b'9'
        ],
        1..40,
    )
}

/// Argument text of CONNECT/INFO/-ERR: starts with a non-blank, holds no LF, does not end in CR.
fn text() -> impl Strategy<Value = Vec<u8>> {
    (
        b'!'..=b'~',
        proptest::collection::vec(prop_oneof![Just(b' '), Just(b'\t'), b'!'..=b'~'], 0..60),
    )
        .prop_map(|(first, mut rest)| {
            rest.insert(0, first);
            rest
        })
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..200)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        text().prop_map(Op::Connect),
        (token(), proptest::option::of(token()), payload()).prop_map(
            |(subject, reply, payload)| {
                Op::Pub {
                    subject,
                    reply,
                    headers: None,
                    payload,
                }
            }
        ),
        (token(), proptest::option::of(token()), payload(), payload()).prop_map(
            |(subject, reply, headers, payload)| Op::Pub {
                subject,
                reply,
                headers: Some(headers),
                payload
            }
        ),
        (token(), proptest::option::of(token()), token()).prop_map(|(subject, queue, sid)| {
            Op::Sub {
                subject,
                queue,
                sid,
            }
        }),
        (token(), proptest::option::of(1u64..=999_999_999))
            .prop_map(|(sid, max_msgs)| Op::Unsub { sid, max_msgs }),
        Just(Op::Ping),
        Just(Op::Pong),
        text().prop_map(Op::Info),
        Just(Op::Ok),
        text().prop_map(Op::Err),
    ]
}

/// Feeds `input` to the parser in reads cut at `cuts`, as the runtime does.
fn drive(input: &[u8], cuts: &[usize], limits: &ParserLimits) -> (Vec<Op>, Option<ProtoError>) {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    bounds.push(input.len());
    bounds.sort_unstable();
    let mut buf = Vec::new();
    let mut ops = Vec::new();
    let mut from = 0;
    for to in bounds {
        buf.extend_from_slice(&input[from..to]);
        from = to;
        loop {
            match parse_client_op(&buf, limits) {
                Ok(Parsed::Op { op, consumed }) => {
                    assert!(consumed > 0 && consumed <= buf.len());
                    ops.push(Op::from_parsed(&op));
                    buf.drain(..consumed);
                }
                Ok(Parsed::Incomplete { min_total }) => {
                    assert!(min_total > buf.len());
                    break;
                }
                Err(e) => return (ops, Some(e)),
            }
        }
    }
    (ops, None)
}

/// Protocol-shaped fragments, so random inputs reach deep into the parser.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"PUB ".to_vec()),
        Just(b"HPUB ".to_vec()),
        Just(b"SUB ".to_vec()),
        Just(b"UNSUB ".to_vec()),
        Just(b"PING".to_vec()),
        Just(b"PONG".to_vec()),
        Just(b"CONNECT ".to_vec()),
        Just(b"INFO ".to_vec()),
        Just(b"+OK".to_vec()),
        Just(b"-ERR ".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"foo".to_vec()),
        Just(b"NATS/1.0\r\n\r\n".to_vec()),
        (0u32..40).prop_map(|n| n.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 1..4),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn proptest_encoded_ops_round_trip(
        ops in proptest::collection::vec(op(), 1..12),
        cuts in proptest::collection::vec(any::<usize>(), 0..4),
    ) {
        let mut wire = Vec::new();
        for op in &ops {
            op.encode(&mut wire);
        }
        let limits = ParserLimits::default();
        let (parsed, error) = drive(&wire, &cuts, &limits);
        prop_assert_eq!(error, None);
        prop_assert_eq!(parsed, ops);
    }

    #[test]
    fn proptest_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let limits = ParserLimits { max_control_line: 64, max_payload: 128 };
        let _ = drive(&bytes, &[], &limits);
    }

    #[test]
    fn proptest_split_reads_agree_with_whole_buffer(
        pieces in proptest::collection::vec(fragment(), 0..40),
        cuts in proptest::collection::vec(any::<usize>(), 1..5),
        small in any::<bool>(),
    ) {
        let input: Vec<u8> = pieces.concat();
        let limits = if small {
            ParserLimits { max_control_line: 8, max_payload: 16 }
        } else {
            ParserLimits::default()
        };
        prop_assert_eq!(drive(&input, &cuts, &limits), drive(&input, &[], &limits));
    }
}
