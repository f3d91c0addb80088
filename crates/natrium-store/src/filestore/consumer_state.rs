//! The body of a consumer's `state.dat` (`docs/store-format.md` §7): the ack floor and the
//! last delivery, then the pending messages and the redelivery counts, each list in
//! ascending stream sequence with every sequence written as its gap from the one before.
//!
//! The encoding is total: every state the bookkeeping rules can reach encodes, including the
//! odd ones (a redelivery count kept below the ack floor for a message that went past
//! `max_deliver`, a pending entry whose consumer sequence is below the floor's). Decoding
//! checks structure only: every integer well formed, counts within what the remaining bytes
//! can hold (checked before any entry is read), sequences strictly ascending without passing
//! `u64::MAX`, and no byte left over. Anything else is corruption, never a panic.

use std::collections::BTreeMap;

use super::varint::{put_uvarint, put_varint, Cursor};
use crate::consumer::{ConsumerState, Pending, SequencePair};
use crate::error::StoreError;

/// The fewest bytes a pending entry takes: three one-byte integers.
const PENDING_ENTRY_BYTES_MIN: usize = 3;
/// The fewest bytes a redelivery entry takes: two one-byte integers.
const REDELIVERED_ENTRY_BYTES_MIN: usize = 2;

const CORRUPT: StoreError = StoreError::Corrupt {
    what: "consumer state body",
};

/// Appends the body encoding of `state` to `out`.
pub fn encode(state: &ConsumerState, out: &mut Vec<u8>) {
    put_uvarint(out, state.ack_floor.consumer);
    put_uvarint(out, state.ack_floor.stream);
    put_uvarint(out, state.delivered.consumer);
    put_uvarint(out, state.delivered.stream);
    put_uvarint(out, state.pending.len() as u64);
    let mut prev = 0;
    for (seq, p) in &state.pending {
        put_uvarint(out, seq - prev);
        prev = *seq;
        // Usually just above the floor; the wrapping difference read as signed keeps a
        // consumer sequence below the floor encodable too.
        put_varint(
            out,
            p.consumer_seq.wrapping_sub(state.ack_floor.consumer) as i64,
        );
        put_varint(out, p.timestamp_ns);
    }
    put_uvarint(out, state.redelivered.len() as u64);
    let mut prev = 0;
    for (seq, count) in &state.redelivered {
        put_uvarint(out, seq - prev);
        prev = *seq;
        put_uvarint(out, *count);
    }
}

/// Decodes a body read from disk.
pub fn decode(body: &[u8]) -> Result<ConsumerState, StoreError> {
    decode_inner(&mut Cursor::new(body)).ok_or(CORRUPT)
}

fn decode_inner(cur: &mut Cursor<'_>) -> Option<ConsumerState> {
    let ack_floor = SequencePair {
        consumer: cur.uvarint()?,
        stream: cur.uvarint()?,
    };
    let delivered = SequencePair {
        consumer: cur.uvarint()?,
        stream: cur.uvarint()?,
    };
    let mut pending = BTreeMap::new();
    let mut seqs = Ascending::default();
    for _ in 0..count(cur, PENDING_ENTRY_BYTES_MIN)? {
        let seq = seqs.next(cur.uvarint()?)?;
        let delta = cur.varint()? as u64;
        let p = Pending {
            consumer_seq: ack_floor.consumer.wrapping_add(delta),
            timestamp_ns: cur.varint()?,
        };
        pending.insert(seq, p);
    }
    let mut redelivered = BTreeMap::new();
    let mut seqs = Ascending::default();
    for _ in 0..count(cur, REDELIVERED_ENTRY_BYTES_MIN)? {
        redelivered.insert(seqs.next(cur.uvarint()?)?, cur.uvarint()?);
    }
    if cur.remaining() != 0 {
        return None;
    }
    Some(ConsumerState {
        delivered,
        ack_floor,
        pending,
        redelivered,
    })
}

/// Reads a list's count, refusing one the remaining bytes cannot hold.
fn count(cur: &mut Cursor<'_>, entry_bytes_min: usize) -> Option<u64> {
    let count = cur.uvarint()?;
    (count <= (cur.remaining() / entry_bytes_min) as u64).then_some(count)
}

/// A list's sequences, each read as a gap from the one before (the first from 0).
#[derive(Default)]
struct Ascending {
    prev: Option<u64>,
}

impl Ascending {
    /// The next sequence; `None` on damage: a gap of zero after the first entry, or a
    /// sequence past `u64::MAX`.
    fn next(&mut self, gap: u64) -> Option<u64> {
        let seq = match self.prev {
            None => gap,
            Some(_) if gap == 0 => return None,
            Some(prev) => prev.checked_add(gap)?,
        };
        self.prev = Some(seq);
        Some(seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ConsumerState {
        let mut s = ConsumerState {
            delivered: SequencePair {
                consumer: 40,
                stream: 120,
            },
            ack_floor: SequencePair {
                consumer: 30,
                stream: 100,
            },
            ..ConsumerState::default()
        };
        for (seq, cseq, ts) in [(101, 31, 5), (105, 33, -7), (120, 40, i64::MAX)] {
            s.pending.insert(
                seq,
                Pending {
                    consumer_seq: cseq,
                    timestamp_ns: ts,
                },
            );
        }
        s.redelivered.insert(0, 1);
        s.redelivered.insert(50, 3);
        s.redelivered.insert(u64::MAX, u64::MAX);
        s
    }

    fn round_trip(state: &ConsumerState) -> ConsumerState {
        let mut body = Vec::new();
        encode(state, &mut body);
        decode(&body).unwrap()
    }

    #[test]
    fn store_consumer_state_body_round_trips() {
        assert_eq!(
            round_trip(&ConsumerState::default()),
            ConsumerState::default()
        );
        let s = sample();
        assert_eq!(round_trip(&s), s);
        let mut odd = s.clone();
        // A pending consumer sequence below the floor's, and extremes.
        odd.pending.insert(
            110,
            Pending {
                consumer_seq: 0,
                timestamp_ns: i64::MIN,
            },
        );
        odd.pending.insert(
            u64::MAX,
            Pending {
                consumer_seq: u64::MAX,
                timestamp_ns: 0,
            },
        );
        assert_eq!(round_trip(&odd), odd);
    }

    #[test]
    fn store_consumer_state_body_damage_is_corrupt() {
        let mut body = Vec::new();
        encode(&sample(), &mut body);
        for len in 0..body.len() {
            assert!(decode(&body[..len]).is_err(), "cut at {len}");
        }
        let mut longer = body.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        // A count larger than the bytes could hold, before any entry is read.
        let mut huge = Vec::new();
        for v in [0, 0, 0, 0, u64::MAX] {
            put_uvarint(&mut huge, v);
        }
        assert!(decode(&huge).is_err());
        // A zero gap (a repeated sequence) and a sum past u64::MAX.
        let mut repeated = Vec::new();
        for v in [0, 0, 0, 0, 0, 2, 5, 1, 0, 1] {
            put_uvarint(&mut repeated, v);
        }
        assert!(decode(&repeated).is_err());
        let mut overflow = Vec::new();
        for v in [0, 0, 0, 0, 0, 2, u64::MAX, 1, 1, 1] {
            put_uvarint(&mut overflow, v);
        }
        assert!(decode(&overflow).is_err());
    }
}
