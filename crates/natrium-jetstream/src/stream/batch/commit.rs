//! The commit of an atomic batch: every message checked in order as Go checks a batch
//! (`checkMsgHeadersPreClusteredProposal`: expectations hold against the stream as it was
//! before the batch, only the first message may expect a last sequence, a subject the batch
//! already wrote cannot be expected or rolled up, message ids are new to the stream and the
//! batch), then the whole batch stored at once with `StreamStore::store_batch`, which writes
//! it all or nothing. One ack answers the commit: `{"stream":…,"seq":<last>,"batch":<id>,
//! "count":<n>}`.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use natrium_store::{Filter, MsgTtl, NewMsg};

use super::parse::BATCH_COMMIT;
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::stream::counter::{self, STREAM_SOURCE};
use crate::stream::header_edit;
use crate::stream::headers::{PublishHeaders, EXPECTED_LAST_MSG_ID};
use crate::stream::ingest::{self, Ingest, Outcome};
use crate::stream::republish::Committed;

/// A message of the batch as it will be stored.
struct Checked {
    subject: Bytes,
    headers: Bytes,
    payload: Bytes,
    ttl: MsgTtl,
    rollup: Option<Rollup>,
    msg_id: Option<Vec<u8>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rollup {
    Subject,
    All,
}

/// What the checks so far staged: subjects written, expectations met, ids and counters.
#[derive(Default)]
struct Diff {
    subjects: HashSet<Bytes>,
    expected: HashMap<Vec<u8>, u64>,
    ids: HashSet<Vec<u8>>,
    /// A counter subject's message as this batch last left it.
    counters: HashMap<Bytes, (Bytes, Bytes)>,
}

impl Ingest {
    /// What Go checks of each batch message on arrival, before the batch: the stream is not
    /// sealed, the server's and the account's limits, `max_msg_size`.
    pub(crate) fn admit_batch_msg(
        &self,
        config: &StreamConfig,
        msg: &Delivery,
    ) -> Result<(), ApiError> {
        if config.sealed {
            return Err(table::STREAM_SEALED.err());
        }
        let headers = msg.headers.as_ref().map_or(0, Bytes::len);
        self.quota
            .admit(msg.subject.len(), headers, msg.payload.len())?;
        if ingest::exceeds_max_size(config, headers + msg.payload.len()) {
            return Err(table::STREAM_MESSAGE_EXCEEDS_MAXIMUM.err());
        }
        Ok(())
    }
}

/// Checks and stores the batch `msgs` (the commit message last, unless it was `eob`); when
/// `committed` is given, what was stored goes there for the stream's republish.
pub fn commit(
    ingest: &mut Ingest,
    config: &StreamConfig,
    (id, msgs, eob): (&str, &[Delivery], bool),
    now_ns: i64,
    committed: Option<&mut Vec<Committed>>,
) -> Outcome {
    match check_and_store(ingest, config, (id, msgs, eob), now_ns, committed) {
        Ok(outcome) => outcome,
        Err(err) => Outcome::Refused(err),
    }
}

fn check_and_store(
    ingest: &mut Ingest,
    config: &StreamConfig,
    (id, msgs, eob): (&str, &[Delivery], bool),
    now_ns: i64,
    committed: Option<&mut Vec<Committed>>,
) -> Result<Outcome, ApiError> {
    let last_seq = ingest.store.fast_state().last_seq;
    let mut diff = Diff::default();
    let mut checked = Vec::with_capacity(msgs.len());
    for (k, msg) in msgs.iter().enumerate() {
        checked.push(check_one(
            ingest,
            config,
            &mut diff,
            msg,
            last_seq + k as u64,
        )?);
    }
    if let (true, Some(last)) = (eob, checked.last_mut()) {
        // Committed by an end-of-batch message: the last stored one says it committed.
        last.headers = Bytes::from(header_edit::set_field(&last.headers, BATCH_COMMIT, b"1"));
    }
    let (subjects, headers, payloads) = checked.iter().fold((0, 0, 0), |acc, c| {
        (
            acc.0 + c.subject.len(),
            acc.1 + c.headers.len(),
            acc.2 + c.payload.len(),
        )
    });
    ingest.quota.admit(subjects, headers, payloads)?;
    // Each subject's message before each of the batch's, for the republish.
    let before = committed
        .is_some()
        .then(|| last_seqs(ingest, &checked, last_seq));
    let news: Vec<NewMsg<'_>> = checked
        .iter()
        .map(|c| NewMsg {
            ttl: c.ttl,
            rollup: c.rollup == Some(Rollup::Subject),
            ..NewMsg::new(&c.subject, c.headers.clone(), c.payload.clone(), now_ns)
        })
        .collect();
    let stored = ingest
        .store
        .store_batch(&news)
        .map_err(|e| ingest::store_failed(&e))?;
    for (c, s) in checked.iter().zip(&stored) {
        // A rollup keeps, of its subject or of all, nothing stored before it.
        let purged = match c.rollup {
            Some(Rollup::Subject) => ingest.store.purge_ex(&c.subject, s.seq, 0).map(drop),
            Some(Rollup::All) => ingest.store.purge_ex(b"", s.seq, 0).map(drop),
            None => Ok(()),
        };
        purged.map_err(|e| ingest::store_failed(&e))?;
        if let Some(msg_id) = &c.msg_id {
            ingest.dedup.insert(msg_id, s.seq, now_ns);
        }
    }
    ingest.set_last_msg_id(checked.last().and_then(|c| c.msg_id.as_deref()));
    if let (Some(out), Some(before)) = (committed, before) {
        for ((c, s), last_seq) in checked.iter().zip(&stored).zip(before) {
            out.push(Committed {
                seq: s.seq,
                subject: c.subject.clone(),
                headers: c.headers.clone(),
                payload: c.payload.clone(),
                last_seq,
            });
        }
    }
    let seq = stored.last().map_or(last_seq, |s| s.seq);
    Ok(Outcome::Batch {
        seq,
        id: id.to_owned(),
        count: stored.len() as u64,
    })
}

/// For each checked message, in order, its subject's last sequence before it: from the
/// store for a subject's first message in the batch, else the batch's previous one (the
/// batch is stored from `last_seq + 1` on).
fn last_seqs(ingest: &Ingest, checked: &[Checked], last_seq: u64) -> Vec<u64> {
    let mut seen: HashMap<&[u8], u64> = HashMap::new();
    let mut out = Vec::with_capacity(checked.len());
    for (k, c) in checked.iter().enumerate() {
        let before = seen.get(&c.subject[..]).copied().unwrap_or_else(|| {
            Filter::new(&c.subject).map_or(0, |f| {
                let state = ingest.store.filtered_state(0, &f);
                if state.msgs == 0 {
                    0
                } else {
                    state.last
                }
            })
        });
        out.push(before);
        seen.insert(&c.subject[..], last_seq.saturating_add(k as u64 + 1));
    }
    out
}

/// The checks of the batch's message `msg`, taken with the stream at `clseq` (the last
/// sequence before the batch plus the messages of the batch before this one).
fn check_one(
    ingest: &Ingest,
    config: &StreamConfig,
    diff: &mut Diff,
    msg: &Delivery,
    clseq: u64,
) -> Result<Checked, ApiError> {
    let block = msg.headers.clone().unwrap_or_default();
    let hdrs = PublishHeaders::read(&block);
    if hdrs.expected_last_msg_id.is_some() {
        let header = String::from_utf8_lossy(EXPECTED_LAST_MSG_ID);
        return Err(table::ATOMIC_PUBLISH_UNSUPPORTED_HEADER_BATCH.with(&[("header", &header)]));
    }
    if block.len() > usize::from(u16::MAX) {
        return Err(table::STREAM_HEADER_EXCEEDS_MAXIMUM.err());
    }
    counter::check_incr(config, &hdrs, msg.payload.len(), false)?;
    if hdrs
        .expected_stream
        .is_some_and(|s| s != config.name.as_bytes())
    {
        return Err(table::STREAM_NOT_MATCH.err());
    }
    let ttl = ingest::ttl(config, &hdrs, false)?;
    if let Some(msg_id) = hdrs.msg_id {
        if diff.ids.contains(msg_id) || ingest.dedup.check(msg_id).is_some() {
            return Err(table::ATOMIC_PUBLISH_CONTAINS_DUPLICATE_MESSAGE.err());
        }
        diff.ids.insert(msg_id.to_vec());
    }
    if field(&block, STREAM_SOURCE).is_some() {
        return Err(table::MESSAGE_SOURCE_HDR_NOT_ALLOWED.err());
    }
    counter::require_incr(config, &hdrs)?;
    let (mut headers, mut payload) = (block.clone(), msg.payload.clone());
    if let (true, Some(incr)) = (config.allow_msg_counter, hdrs.incr) {
        (headers, payload) = count(ingest, config, diff, msg, incr)?;
    }
    check_expectations(ingest, diff, &msg.subject, &hdrs, clseq)?;
    let rollup = check_rollup(config, diff, &msg.subject, hdrs.rollup)?;
    diff.subjects.insert(msg.subject.clone());
    let (ttl, raised) = crate::stream::markers::raise_ttl(config, ttl, Some(&headers));
    Ok(Checked {
        subject: msg.subject.clone(),
        headers: raised.unwrap_or(headers),
        payload,
        ttl,
        rollup,
        msg_id: hdrs.msg_id.map(<[u8]>::to_vec),
    })
}

/// A counter's increment on top of the subject's total: the stream's, or what this batch
/// last made it.
fn count(
    ingest: &Ingest,
    config: &StreamConfig,
    diff: &mut Diff,
    msg: &Delivery,
    incr: &[u8],
) -> Result<(Bytes, Bytes), ApiError> {
    let block = msg.headers.as_deref().unwrap_or_default();
    let last = diff.counters.get(&msg.subject).cloned();
    let c = counter::apply_on(
        &*ingest.store,
        last,
        &msg.subject,
        block,
        &msg.payload,
        incr,
    )?;
    if ingest::exceeds_max_size(config, c.headers.len() + c.payload.len()) {
        return Err(table::STREAM_MESSAGE_EXCEEDS_MAXIMUM.err());
    }
    diff.counters
        .insert(msg.subject.clone(), (c.headers.clone(), c.payload.clone()));
    Ok((c.headers, c.payload))
}

/// `Nats-Expected-Last-Sequence` (the first message only) and
/// `Nats-Expected-Last-Subject-Sequence` (a subject the batch has not written), as Go
/// checks them within a batch.
fn check_expectations(
    ingest: &Ingest,
    diff: &mut Diff,
    subject: &Bytes,
    hdrs: &PublishHeaders<'_>,
    clseq: u64,
) -> Result<(), ApiError> {
    let wrong = |seq: u64| table::STREAM_WRONG_LAST_SEQUENCE.with(&[("seq", &seq)]);
    if let Some(expected) = hdrs.expected_last_seq {
        if expected != clseq {
            return Err(wrong(clseq));
        }
        if !diff.subjects.is_empty() {
            return Err(table::STREAM_WRONG_LAST_SEQUENCE_CONSTANT.err());
        }
    }
    let Some(expected) = hdrs.expected_last_subject_seq else {
        if hdrs.expected_last_subject_seq_subject.is_some() {
            return Err(table::STREAM_EXPECTED_LAST_SEQ_PER_SUBJECT_INVALID.err());
        }
        return Ok(());
    };
    let on: &[u8] = hdrs.expected_last_subject_seq_subject.unwrap_or(subject);
    if diff.subjects.contains(on) {
        return Err(table::STREAM_WRONG_LAST_SEQUENCE_CONSTANT.err());
    }
    let last = match diff.expected.get(on) {
        Some(&seen) => seen,
        None => Filter::new(on)
            .ok()
            .and_then(|f| ingest.store.load_last_msg(&f).ok())
            .map_or(0, |m| m.seq),
    };
    if expected != last {
        return Err(wrong(last));
    }
    diff.expected.insert(on.to_vec(), last);
    Ok(())
}

/// `Nats-Rollup` in a batch: `sub` on the first message of its subject, `all` on the first
/// message of the batch.
fn check_rollup(
    config: &StreamConfig,
    diff: &Diff,
    subject: &Bytes,
    rollup: Option<&[u8]>,
) -> Result<Option<Rollup>, ApiError> {
    let Some(rollup) = rollup else {
        return Ok(None);
    };
    let failed = |err: &str| table::STREAM_ROLLUP_FAILED_F.with(&[("err", &err)]);
    if !config.allow_rollup_hdrs || config.deny_purge {
        return Err(failed("rollup not permitted"));
    }
    match rollup {
        b"sub" if diff.subjects.contains(subject) => Err(failed("batch rollup sub invalid")),
        b"sub" => Ok(Some(Rollup::Subject)),
        b"all" if !diff.subjects.is_empty() => Err(failed("batch rollup all invalid")),
        b"all" => Ok(Some(Rollup::All)),
        other => {
            let text = String::from_utf8_lossy(other);
            Err(failed(&format!("rollup value invalid: {text:?}")))
        }
    }
}

/// A non-empty field `name` of `block`.
fn field<'a>(block: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let parsed = nats_proto::headers::Headers::parse(block).ok()?;
    parsed.get(name).filter(|v| !v.is_empty())
}
