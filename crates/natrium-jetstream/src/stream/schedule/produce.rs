//! The message a schedule produces when it fires, as Go v2.15.2 builds it: the schedule
//! message's payload and headers (or those of the last message on `Nats-Schedule-Source`,
//! when there is one), without the schedule headers, `Nats-Expected-*`, `Nats-Msg-Id`,
//! `Nats-TTL` and `Nats-Rollup`, then `Nats-Scheduler` (the schedule's subject),
//! `Nats-Schedule-Next` (the next fire, or `purge` after an `@at`), and the schedule's TTL
//! and rollup as `Nats-TTL` and `Nats-Rollup`; published on `Nats-Schedule-Target`.

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use natrium_store::StoredMsg;

use super::fields::{ScheduleFields, PURGE, SCHEDULER, SCHEDULE_NEXT};
use super::pattern::Next;
use crate::stream::headers::{MSG_ID, ROLLUP, TTL};

const VERSION_LINE: &[u8] = b"NATS/1.0\r\n";
/// A block with no field (`NATS/1.0\r\n\r\n`): Go drops what shrinks to this.
const EMPTY_BLOCK_LEN: usize = 12;

/// Builds the message of a schedule stored as `schedule` (its fields already read and
/// checked: `target` is non-empty), firing with `next` after this fire.
pub fn produce(
    schedule: &StoredMsg,
    fields: &ScheduleFields<'_>,
    target: &[u8],
    source: Option<&StoredMsg>,
    next: &Next,
) -> Delivery {
    let ttl = ScheduleFields::text(fields.ttl).map(<[u8]>::to_vec);
    let rollup = ScheduleFields::text(fields.rollup).map(<[u8]>::to_vec);
    let base = source.unwrap_or(schedule);
    let mut block = base.headers.to_vec();
    remove_fields(&mut block, |name| name.starts_with(b"Nats-Schedule"));
    remove_fields(&mut block, |name| name.starts_with(b"Nats-Expected-"));
    remove_fields(&mut block, |name| {
        name == MSG_ID || name == TTL || name == ROLLUP
    });
    let mut block = append_field(&block, SCHEDULER, &schedule.subject);
    if next.repeat {
        block = append_field(&block, SCHEDULE_NEXT, next.rfc3339().as_bytes());
    } else {
        block = append_field(&block, SCHEDULE_NEXT, PURGE);
    }
    if let Some(ttl) = ttl {
        block = append_field(&block, TTL, &ttl);
    }
    if let Some(rollup) = rollup {
        block = append_field(&block, ROLLUP, &rollup);
    }
    Delivery {
        subject: Bytes::copy_from_slice(target),
        reply: None,
        headers: Some(Bytes::from(block)),
        payload: base.payload.clone(),
        sid: 0,
        origin: None,
    }
}

/// Go's `genHeader`: the field appended at the end of `block` (a new block when empty).
pub fn append_field(block: &[u8], name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(block.len() + name.len() + value.len() + 16);
    match block.strip_suffix(b"\r\n") {
        Some(head) if !head.is_empty() => out.extend_from_slice(head),
        _ => out.extend_from_slice(VERSION_LINE),
    }
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend(
        value
            .iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// Removes the field lines whose name `drop` picks; a block left with no field becomes
/// empty (Go's nil header).
pub fn remove_fields(block: &mut Vec<u8>, drop: impl Fn(&[u8]) -> bool) {
    let Some(first_end) = find_crlf(block, 0) else {
        return;
    };
    let mut out = Vec::with_capacity(block.len());
    out.extend_from_slice(block.get(..first_end + 2).unwrap_or_default());
    let mut at = first_end + 2;
    while let Some(end) = find_crlf(block, at) {
        let line = block.get(at..end).unwrap_or_default();
        let name = line.split(|&b| b == b':').next().unwrap_or_default();
        if line.is_empty() || !line.contains(&b':') || !drop(name) {
            out.extend_from_slice(block.get(at..end + 2).unwrap_or_default());
        }
        at = end + 2;
    }
    out.extend_from_slice(block.get(at..).unwrap_or_default());
    if out.len() <= EMPTY_BLOCK_LEN {
        out.clear();
    }
    *block = out;
}

fn find_crlf(block: &[u8], from: usize) -> Option<usize> {
    let rest = block.get(from..)?;
    rest.windows(2).position(|w| w == b"\r\n").map(|i| i + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_produce_header_edits_like_go() {
        assert_eq!(append_field(b"", b"A", b"1"), b"NATS/1.0\r\nA: 1\r\n\r\n");
        assert_eq!(
            append_field(b"NATS/1.0\r\nA: 1\r\n\r\n", b"B", b"2"),
            b"NATS/1.0\r\nA: 1\r\nB: 2\r\n\r\n"
        );
        let mut block =
            b"NATS/1.0\r\nNats-Schedule: @every 1s\r\nFoo: bar\r\nNats-Scheduler: x\r\n\r\n"
                .to_vec();
        remove_fields(&mut block, |n| n.starts_with(b"Nats-Schedule"));
        assert_eq!(block, b"NATS/1.0\r\nFoo: bar\r\n\r\n");
        remove_fields(&mut block, |n| n == b"Foo");
        assert!(block.is_empty());
    }

    #[test]
    fn schedule_produce_message_like_go() {
        let block = b"NATS/1.0\r\nNats-Schedule: @every 5s\r\nNats-Schedule-Target: t.a\r\n\
                      Nats-Schedule-TTL: 5m\r\nNats-Msg-Id: m1\r\nNats-Rollup: sub\r\n\
                      Nats-Expected-Last-Sequence: 4\r\nKeep: me\r\n\r\n";
        let schedule = StoredMsg {
            seq: 3,
            timestamp_ns: 0,
            subject: Bytes::from_static(b"s.a"),
            headers: Bytes::from_static(block),
            payload: Bytes::from_static(b"hi"),
        };
        let fields = ScheduleFields::read(block);
        let next = Next {
            at_ns: 5_000_000_000,
            repeat: true,
            offset_secs: 0,
        };
        let out = produce(&schedule, &fields, b"t.a", None, &next);
        assert_eq!(&out.subject[..], b"t.a");
        assert_eq!(&out.payload[..], b"hi");
        assert_eq!(
            out.headers.as_deref().unwrap(),
            &b"NATS/1.0\r\nKeep: me\r\nNats-Scheduler: s.a\r\n\
               Nats-Schedule-Next: 1970-01-01T00:00:05Z\r\nNats-TTL: 5m\r\n\r\n"[..]
        );
        let once = Next {
            repeat: false,
            ..next
        };
        let out = produce(&schedule, &fields, b"t.a", None, &once);
        assert!(out
            .headers
            .as_deref()
            .unwrap()
            .ends_with(b"Nats-Schedule-Next: purge\r\nNats-TTL: 5m\r\n\r\n"));
    }
}
