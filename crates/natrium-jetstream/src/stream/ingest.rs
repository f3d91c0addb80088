//! Storing what a stream captured: each message checked against the stream's rules and the
//! publisher's expectations (headers), stored, and acknowledged with Go's PubAck JSON once it
//! is as durable as the stream's policy asks.
//!
//! Group commit: the ingest task hands over everything queued so far; every message is
//! written, the store syncs once, then all the acks go out. A failed sync turns every ack of
//! the batch into an error, so no publisher is told a message is stored that may be gone.

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use natrium_store::{DedupWindow, Filter, MsgTtl, NewMsg, StoreError, StreamStore};

use super::headers::PublishHeaders;
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::resources::Quota;

/// What became of one published message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Stored(u64),
    /// A counter's increment stored (`super::counter`): its sequence and the new total.
    Counted(u64, String),
    /// The `Nats-Msg-Id` was seen inside the duplicate window; the first copy's sequence.
    Duplicate(u64),
    Refused(ApiError),
    /// A message of an atomic batch staged until its commit (`super::batch`): an empty reply.
    Staged,
    /// An atomic batch committed: its last sequence, id and number of messages.
    Batch {
        seq: u64,
        id: String,
        count: u64,
    },
    /// A fast batch message (`super::batch::fast`): its sequence when stored, and what its
    /// publisher is told, in order (flow acks, gaps, errors, the batch's PubAck).
    Fast {
        seq: Option<u64>,
        replies: Vec<Bytes>,
    },
}

impl Outcome {
    /// The message was stored (and may need a sync, and wakes consumers).
    pub fn is_stored(&self) -> bool {
        matches!(
            self,
            Outcome::Stored(_)
                | Outcome::Counted(..)
                | Outcome::Batch { .. }
                | Outcome::Fast { seq: Some(_), .. }
        )
    }
}

/// A stream's writable state: its store and what publishing needs beside it.
pub struct Ingest {
    pub store: Box<dyn StreamStore>,
    pub dedup: DedupWindow,
    /// The `Nats-Msg-Id` of the last message stored (for `Nats-Expected-Last-Msg-Id`).
    /// Empty when the last message had none; reused, so an id costs no allocation.
    last_msg_id: Vec<u8>,
    /// `{"stream":"<name>",` (and `"domain":"<d>",`) `"seq":`: every ack starts so.
    ack_prefix: Vec<u8>,
    /// The account's and the server's limits a message must fit.
    pub(crate) quota: Quota,
    /// Message schedules (`super::schedule`).
    pub(crate) scheduler: super::schedule::Scheduler,
    /// The message being processed was taken from a source: Go skips the checks its origin
    /// made (see [`Ingest::process_sourced`]).
    sourced: bool,
}

impl Ingest {
    /// The ingest of a store whose updates already reach `quota`'s counters.
    pub fn new(
        store: Box<dyn StreamStore>,
        config: &StreamConfig,
        domain: &str,
        quota: Quota,
    ) -> Self {
        let window = std::time::Duration::from_nanos(config.duplicate_window.max(0) as u64);
        let mut ingest = Self {
            store,
            dedup: DedupWindow::new(window),
            last_msg_id: Vec::new(),
            ack_prefix: Vec::new(),
            quota,
            scheduler: super::schedule::Scheduler::default(),
            sourced: false,
        };
        ingest.set_ack_prefix(&config.name, domain);
        ingest
    }

    /// Takes the stream's bytes out of the account's and the server's usage and stops
    /// counting (the stream is being deleted).
    pub fn detach_quota(&mut self) {
        self.store.register_storage_updates(Box::new(|_| {}));
        let bytes = i64::try_from(self.store.fast_state().bytes).unwrap_or(i64::MAX);
        self.quota.count(-bytes);
    }

    /// The `Nats-Msg-Id` of the last message stored (none: cleared).
    pub(crate) fn set_last_msg_id(&mut self, id: Option<&[u8]>) {
        self.last_msg_id.clear();
        self.last_msg_id.extend_from_slice(id.unwrap_or_default());
    }

    fn set_ack_prefix(&mut self, name: &str, domain: &str) {
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let mut prefix = format!("{{\"stream\":{},", quote(name));
        if !domain.is_empty() {
            prefix.push_str("\"domain\":");
            prefix.push_str(&quote(domain));
            prefix.push(',');
        }
        prefix.push_str("\"seq\":");
        self.ack_prefix = prefix.into_bytes();
    }

    /// [`Ingest::process`] for a message taken from a source, as Go's `sourced` path: its
    /// counter increment, TTL, rollup and schedule are not checked again (only the increment
    /// must be an integer) and it may carry `Nats-Stream-Source`.
    pub fn process_sourced(
        &mut self,
        config: &StreamConfig,
        msg: &Delivery,
        now_ns: i64,
        interested: bool,
    ) -> Outcome {
        self.sourced = true;
        let outcome = self.process(config, msg, now_ns, interested);
        self.sourced = false;
        outcome
    }

    /// Checks and stores one message at `now_ns`. `interested` false (an interest stream
    /// whose consumers all filter it out, or that has none) takes its sequence without
    /// storing it, as Go does; the publisher gets the usual ack.
    pub fn process(
        &mut self,
        config: &StreamConfig,
        msg: &Delivery,
        now_ns: i64,
        interested: bool,
    ) -> Outcome {
        // A schedule is stored with a rollup of its subject added.
        let scheduled;
        let checked = if self.sourced {
            Ok(None)
        } else {
            self.scheduler.check(config, &*self.store, msg, now_ns)
        };
        let msg = match checked {
            Ok(None) => msg,
            Ok(Some(headers)) => {
                scheduled = Delivery {
                    headers: Some(headers),
                    ..msg.clone()
                };
                &scheduled
            }
            Err(err) => return Outcome::Refused(err),
        };
        let block = msg.headers.as_deref().unwrap_or_default();
        let hdrs = if block.is_empty() {
            PublishHeaders::default()
        } else {
            PublishHeaders::read(block)
        };
        match self.check(config, msg, &hdrs) {
            Ok(Some(dup)) => return Outcome::Duplicate(dup),
            Ok(None) => {}
            Err(err) => return Outcome::Refused(err),
        }
        let ttl = match ttl(config, &hdrs, self.sourced) {
            Ok(ttl) => ttl,
            Err(err) => return Outcome::Refused(err),
        };
        let (ttl, mut headers) = super::markers::raise_ttl(config, ttl, msg.headers.as_ref());
        let mut payload = msg.payload.clone();
        let mut counted = None;
        if let (true, Some(incr)) = (config.allow_msg_counter, hdrs.incr) {
            let block = headers.as_deref().unwrap_or_default();
            match super::counter::apply(&*self.store, &msg.subject, block, &payload, incr) {
                Ok(c) if exceeds_max_size(config, c.headers.len() + c.payload.len()) => {
                    return Outcome::Refused(table::STREAM_MESSAGE_EXCEEDS_MAXIMUM.err());
                }
                Ok(c) => {
                    headers = Some(c.headers);
                    payload = c.payload;
                    counted = Some(c.val);
                }
                Err(err) => return Outcome::Refused(err),
            }
        }
        if !interested {
            return match self.store.skip_msg(0, now_ns) {
                Ok(seq) => {
                    self.last_msg_id.clear();
                    if let Some(id) = hdrs.msg_id {
                        self.dedup.insert(id, seq, now_ns);
                        self.last_msg_id.extend_from_slice(id);
                    }
                    Outcome::Stored(seq)
                }
                Err(err) => Outcome::Refused(store_failed(&err)),
            };
        }
        let stored_block = headers.clone().unwrap_or_default();
        let new = NewMsg {
            ttl,
            rollup: hdrs.rollup == Some(&b"sub"[..]),
            ..NewMsg::new(&msg.subject, headers.unwrap_or_default(), payload, now_ns)
        };
        match self.store.store_msg(new) {
            Ok(stored) => {
                // A rollup keeps only the message just stored: of its subject, or of all.
                let rolled = match hdrs.rollup {
                    Some(b"sub") => self.store.purge_ex(&msg.subject, 0, 1).map(drop),
                    Some(b"all") => self.store.purge_ex(b"", 0, 1).map(drop),
                    _ => Ok(()),
                };
                let placed = (stored.seq, &msg.subject[..], &stored_block[..]);
                let scheduled = rolled.and_then(|()| {
                    self.scheduler
                        .on_stored(config, &mut *self.store, placed, now_ns)
                });
                if let Err(err) = scheduled {
                    return Outcome::Refused(store_failed(&err));
                }
                self.last_msg_id.clear();
                if let Some(id) = hdrs.msg_id {
                    self.dedup.insert(id, stored.seq, now_ns);
                    self.last_msg_id.extend_from_slice(id);
                }
                match counted {
                    Some(val) => Outcome::Counted(stored.seq, val),
                    None => Outcome::Stored(stored.seq),
                }
            }
            Err(err) => Outcome::Refused(store_failed(&err)),
        }
    }

    /// The stream's rules and the publisher's expectations; `Ok(Some(seq))` for a duplicate.
    fn check(
        &mut self,
        config: &StreamConfig,
        msg: &Delivery,
        hdrs: &PublishHeaders<'_>,
    ) -> Result<Option<u64>, ApiError> {
        if config.sealed {
            return Err(table::STREAM_SEALED.err());
        }
        let size = msg.headers.as_ref().map_or(0, Bytes::len) + msg.payload.len();
        if exceeds_max_size(config, size) {
            return Err(table::STREAM_MESSAGE_EXCEEDS_MAXIMUM.err());
        }
        super::counter::check_incr(config, hdrs, msg.payload.len(), self.sourced)?;
        if let Some(expected) = hdrs.expected_stream {
            if expected != config.name.as_bytes() {
                return Err(table::STREAM_NOT_MATCH.err());
            }
        }
        if hdrs.stream_source && !self.sourced {
            return Err(table::MESSAGE_SOURCE_HDR_NOT_ALLOWED.err());
        }
        if let Some(id) = hdrs.msg_id {
            if let Some(seq) = self.dedup.check(id) {
                return Ok(Some(seq));
            }
        }
        if let Some(expected) = hdrs.expected_last_seq {
            let last = self.store.fast_state().last_seq;
            if expected != last {
                return Err(table::STREAM_WRONG_LAST_SEQUENCE.with(&[("seq", &last)]));
            }
        }
        if let Some(expected) = hdrs.expected_last_msg_id {
            let last = self.last_msg_id.as_slice();
            if expected != last {
                let last = String::from_utf8_lossy(last);
                return Err(table::STREAM_WRONG_LAST_MSG_ID.with(&[("id", &last)]));
            }
        }
        if let Some(expected) = hdrs.expected_last_subject_seq {
            let subject = hdrs
                .expected_last_subject_seq_subject
                .unwrap_or(&msg.subject);
            let last = match Filter::new(subject) {
                Ok(filter) => self.store.load_last_msg(&filter).map_or(0, |m| m.seq),
                Err(_) => 0,
            };
            if expected != last {
                return Err(table::STREAM_WRONG_LAST_SEQUENCE.with(&[("seq", &last)]));
            }
        }
        if let Some(rollup) = hdrs.rollup {
            if (!config.allow_rollup_hdrs || config.deny_purge) && !self.sourced {
                return Err(table::STREAM_ROLLUP_FAILED_F.with(&[("err", &"rollup not permitted")]));
            }
            if rollup != b"sub" && rollup != b"all" {
                let text = String::from_utf8_lossy(rollup);
                let err = format!("rollup value invalid: {text:?}");
                return Err(table::STREAM_ROLLUP_FAILED_F.with(&[("err", &err)]));
            }
        }
        super::counter::require_incr(config, hdrs)?;
        let headers = msg.headers.as_ref().map_or(0, Bytes::len);
        self.quota
            .admit(msg.subject.len(), headers, msg.payload.len())?;
        Ok(None)
    }

    /// The acknowledgement for `outcome`, as Go writes it, into `out` (no allocation once
    /// `out` has grown).
    pub fn ack(&self, outcome: &Outcome, out: &mut Vec<u8>) {
        use std::io::Write as _;
        out.clear();
        // Writes into a Vec cannot fail.
        match outcome {
            Outcome::Stored(seq) => {
                out.extend_from_slice(&self.ack_prefix);
                let _ = write!(out, "{seq}}}");
            }
            Outcome::Counted(seq, val) => {
                out.extend_from_slice(&self.ack_prefix);
                let _ = write!(out, "{seq},\"val\":");
                let _ = serde_json::to_writer(&mut *out, val);
                out.push(b'}');
            }
            Outcome::Duplicate(seq) => {
                out.extend_from_slice(&self.ack_prefix);
                // Go's spelling, space included.
                let _ = write!(out, "{seq},\"duplicate\": true}}");
            }
            Outcome::Staged | Outcome::Fast { .. } => {}
            Outcome::Batch { seq, id, count } => {
                out.extend_from_slice(&self.ack_prefix);
                let _ = write!(out, "{seq},\"batch\":");
                let _ = serde_json::to_writer(&mut *out, id);
                let _ = write!(out, ",\"count\":{count}}}");
            }
            Outcome::Refused(err) => {
                out.extend_from_slice(b"{\"error\":");
                let _ = serde_json::to_writer(&mut *out, err);
                out.push(b',');
                out.extend_from_slice(self.ack_prefix.get(1..).unwrap_or_default());
                out.extend_from_slice(b"0}");
            }
        }
    }
}

/// Headers and payload over the stream's `max_msg_size`.
pub(crate) fn exceeds_max_size(config: &StreamConfig, size: usize) -> bool {
    config.max_msg_size > 0 && size > config.max_msg_size as usize
}

/// `Nats-TTL`: refused unless the stream allows per-message TTLs; a Go duration or a number
/// of seconds, or `never`.
pub(crate) fn ttl(
    config: &StreamConfig,
    hdrs: &PublishHeaders<'_>,
    sourced: bool,
) -> Result<MsgTtl, ApiError> {
    let Some(value) = hdrs.ttl else {
        return Ok(MsgTtl::None);
    };
    if !config.allow_msg_ttl && !sourced {
        return Err(table::MESSAGE_TTL_DISABLED.err());
    }
    parse_ttl(value)
}

/// A `Nats-TTL` value: a Go duration or a number of seconds (at least one), or `never`.
pub(crate) fn parse_ttl(value: &[u8]) -> Result<MsgTtl, ApiError> {
    let text = std::str::from_utf8(value).unwrap_or_default();
    if text.eq_ignore_ascii_case("never") {
        return Ok(MsgTtl::Never);
    }
    let secs = match text.parse::<i64>() {
        Ok(n) => Some(n),
        Err(_) => natrium_gofmt::parse_go_duration(text)
            .ok()
            .map(|ns| ns / 1_000_000_000),
    };
    match secs {
        Some(n) if n >= 1 => Ok(MsgTtl::Secs(n as u64)),
        _ => Err(table::MESSAGE_TTL_INVALID.err()),
    }
}

/// A store refusal as the publisher sees it: Go's 10047 for a full disk, else 10077 with the
/// store's words.
pub fn store_failed(err: &StoreError) -> ApiError {
    match err {
        StoreError::StorageFull => table::STORAGE_RESOURCES_EXCEEDED.err(),
        other => table::STREAM_STORE_FAILED_F.with(&[("err", other)]),
    }
}
