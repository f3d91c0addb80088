//! A stream's portable archive: what `$JS.API.STREAM.SNAPSHOT` sends and `RESTORE` reads
//! back. A pure codec over `Read`/`Write`: no clock, no I/O of its own, no store.
//!
//! The archive is logical, not a copy of the store's files: a state record, then every
//! message with its sequence and time, then one record per consumer (unless the snapshot
//! left them out), then an end record, all inside the Snappy frame
//! format (CRC-checked frames of at most 64 KiB). A memory stream archives as a file stream
//! does, an encrypted store's archive holds no key, and restoring rebuilds the store
//! through its own API, so its files are checked and written as any others.
//!
//! ```text
//! magic      "NATRSNP1"                                   8 bytes
//! record     tag u8 | body length u32 LE | body
//!   STATE  1 first_seq u64 | last_seq u64 | msgs u64 | bytes u64 | created i64
//!            (40 bytes; 32, without `created`, in archives written before 2026-11-25)
//!   MSG    2 seq u64 | time i64 | subject len u32 | headers len u32
//!            | subject | headers | payload (the rest of the body)
//!   END    3 empty body
//!   CONSUMER 4 version u8 (1) | created i64 | name len u32 | config len u32 | state len u32
//!            | name | config (JSON) | state (the body of a consumer's `state.dat`)
//! ```
//! All integers little-endian. The state comes first and once; messages follow in strictly
//! increasing sequence inside `first_seq..=last_seq` (a sequence not archived was deleted);
//! consumer records follow the last message, each name once; the end record is last and
//! nothing follows it. A missing end is a truncated archive. An archive written before
//! consumer records existed simply has none.
//!
//! Decoding reads peer bytes: every length is checked against the caller's limits before a
//! byte is buffered, arithmetic is checked, and malformed input is an error, never a panic.

use std::io::{self, Read, Write};

use bytes::{Bytes, BytesMut};

use crate::consumer::ConsumerState;
use crate::filestore::consumer_state;
use crate::types::StoredMsg;

/// The first eight bytes of every archive (after decompression).
pub const MAGIC: &[u8; 8] = b"NATRSNP1";

const TAG_STATE: u8 = 1;
const TAG_MSG: u8 = 2;
const TAG_END: u8 = 3;
const TAG_CONSUMER: u8 = 4;
/// The consumer record's layout version, its body's first byte.
const CONSUMER_VERSION: u8 = 1;
/// Version, created time, name, config and state lengths.
const CONSUMER_FIXED_BYTES: usize = 21;
/// Longest consumer name (file names end there).
const CONSUMER_NAME_BYTES_MAX: usize = 255;
const STATE_BODY_BYTES: usize = 40;
/// The state record of archives written before it carried the stream's creation time.
const STATE_BODY_BYTES_V0: usize = 32;
/// Sequence, time, subject length, headers length.
const MSG_FIXED_BYTES: usize = 24;

/// What the archive says of the stream it was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArchiveState {
    pub first_seq: u64,
    pub last_seq: u64,
    /// Messages and bytes (Go's accounting) at the start of the snapshot; a restore checks
    /// its budget against them before it stores anything.
    pub msgs: u64,
    pub bytes: u64,
    /// Unix nanoseconds of the stream's creation, which a restore keeps (0: not known).
    pub created_ns: i64,
}

/// One archived message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveMsg {
    pub seq: u64,
    pub timestamp_ns: i64,
    pub subject: Bytes,
    pub headers: Bytes,
    pub payload: Bytes,
}

/// One archived consumer: what recreates it with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveConsumer {
    pub name: String,
    /// Unix nanoseconds of the consumer's creation.
    pub created_ns: i64,
    /// Its configuration as JSON (the store does not read it).
    pub config: Bytes,
    pub state: ConsumerState,
}

/// What [`ArchiveReader::next_record`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    State(ArchiveState),
    Msg(ArchiveMsg),
    Consumer(ArchiveConsumer),
    /// The end record, with nothing after it.
    End,
}

/// Why an archive was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("not a stream snapshot")]
    BadMagic,
    #[error("backup was truncated")]
    Truncated,
    #[error("unexpected record {0} in snapshot")]
    BadTag(u8),
    #[error("snapshot record of {0} bytes exceeds maximum")]
    TooLarge(u64),
    #[error("malformed snapshot record: {0}")]
    Malformed(&'static str),
    #[error("message sequence {0} out of order")]
    OutOfOrder(u64),
    #[error("consumer {0:?} twice in snapshot")]
    DuplicateConsumer(String),
    #[error("snapshot has data after its end")]
    TrailingData,
    #[error("snapshot decompression: {0}")]
    Io(#[from] io::Error),
}

/// Writes an archive into `W` through the Snappy frame format.
pub struct ArchiveWriter<W: Write> {
    out: snap::write::FrameEncoder<W>,
}

impl<W: Write> ArchiveWriter<W> {
    /// Starts an archive with its magic and state record.
    ///
    /// # Errors
    /// The writer's errors.
    pub fn new(out: W, state: &ArchiveState) -> io::Result<Self> {
        let mut out = snap::write::FrameEncoder::new(out);
        out.write_all(MAGIC)?;
        let mut body = [0u8; STATE_BODY_BYTES];
        let created = state.created_ns.cast_unsigned();
        for (slot, n) in body.chunks_exact_mut(8).zip([
            state.first_seq,
            state.last_seq,
            state.msgs,
            state.bytes,
            created,
        ]) {
            slot.copy_from_slice(&n.to_le_bytes());
        }
        write_record(&mut out, TAG_STATE, &[&body])?;
        Ok(Self { out })
    }

    /// Appends one message.
    ///
    /// # Errors
    /// The writer's errors; `InvalidInput` for a message whose parts do not fit the format.
    pub fn msg(&mut self, msg: &StoredMsg) -> io::Result<()> {
        let too_big = || io::Error::new(io::ErrorKind::InvalidInput, "message too large");
        let subject_len = u32::try_from(msg.subject.len()).map_err(|_| too_big())?;
        let headers_len = u32::try_from(msg.headers.len()).map_err(|_| too_big())?;
        let mut fixed = [0u8; MSG_FIXED_BYTES];
        let fields = msg
            .seq
            .to_le_bytes()
            .into_iter()
            .chain(msg.timestamp_ns.to_le_bytes())
            .chain(subject_len.to_le_bytes())
            .chain(headers_len.to_le_bytes());
        for (slot, byte) in fixed.iter_mut().zip(fields) {
            *slot = byte;
        }
        write_record(
            &mut self.out,
            TAG_MSG,
            &[&fixed, &msg.subject, &msg.headers, &msg.payload],
        )
    }

    /// Appends one consumer; after the last message.
    ///
    /// # Errors
    /// The writer's errors; `InvalidInput` for a consumer whose parts do not fit the format.
    pub fn consumer(&mut self, consumer: &ArchiveConsumer) -> io::Result<()> {
        let bad = |what| io::Error::new(io::ErrorKind::InvalidInput, what);
        if consumer.name.is_empty() || consumer.name.len() > CONSUMER_NAME_BYTES_MAX {
            return Err(bad("consumer name length"));
        }
        let mut state = Vec::new();
        consumer_state::encode(&consumer.state, &mut state);
        let len = |n: usize| u32::try_from(n).map_err(|_| bad("consumer too large"));
        let mut fixed = Vec::with_capacity(CONSUMER_FIXED_BYTES);
        fixed.push(CONSUMER_VERSION);
        fixed.extend_from_slice(&consumer.created_ns.to_le_bytes());
        fixed.extend_from_slice(&len(consumer.name.len())?.to_le_bytes());
        fixed.extend_from_slice(&len(consumer.config.len())?.to_le_bytes());
        fixed.extend_from_slice(&len(state.len())?.to_le_bytes());
        debug_assert_eq!(fixed.len(), CONSUMER_FIXED_BYTES);
        write_record(
            &mut self.out,
            TAG_CONSUMER,
            &[&fixed, consumer.name.as_bytes(), &consumer.config, &state],
        )
    }

    /// The writer underneath, to take the compressed bytes written so far out of it. Bytes
    /// still in the encoder's 64 KiB frame buffer reach it on [`ArchiveWriter::flush`].
    pub fn get_mut(&mut self) -> &mut W {
        self.out.get_mut()
    }

    /// Compresses what is buffered into the writer underneath.
    ///
    /// # Errors
    /// The writer's errors.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes the end record and flushes; returns the writer underneath.
    ///
    /// # Errors
    /// The writer's errors.
    pub fn finish(mut self) -> io::Result<W> {
        write_record(&mut self.out, TAG_END, &[])?;
        self.out.into_inner().map_err(|e| e.error().kind().into())
    }
}

fn write_record(out: &mut impl Write, tag: u8, parts: &[&[u8]]) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let len = u32::try_from(len)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "record too large"))?;
    let [l0, l1, l2, l3] = len.to_le_bytes();
    out.write_all(&[tag, l0, l1, l2, l3])?;
    for part in parts {
        out.write_all(part)?;
    }
    Ok(())
}

/// Limits a reader applies before it buffers a record.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveLimits {
    /// Largest subject.
    pub subject_bytes_max: usize,
    /// Largest headers + payload of one message.
    pub msg_bytes_max: usize,
    /// Largest consumer record (its config and state, which grows with the pending
    /// messages: about 10 bytes each).
    pub consumer_bytes_max: usize,
}

impl Default for ArchiveLimits {
    fn default() -> Self {
        Self {
            subject_bytes_max: crate::limits::SUBJECT_BYTES_MAX,
            msg_bytes_max: crate::limits::MESSAGE_BYTES_MAX,
            consumer_bytes_max: CONSUMER_RECORD_BYTES_MAX,
        }
    }
}

/// Default largest consumer record: room for about six million pending messages.
pub const CONSUMER_RECORD_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Where a reader is in the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Magic,
    State,
    /// Messages or the end; the last sequence read so far (`first_seq - 1` at first).
    Msgs {
        last: u64,
    },
    /// Consumers or the end.
    Consumers,
    Done,
}

/// Reads an archive from `R` (compressed bytes), record by record, checking its structure.
pub struct ArchiveReader<R: Read> {
    input: snap::read::FrameDecoder<R>,
    limits: ArchiveLimits,
    expect: Expect,
    state: ArchiveState,
    /// The consumer names read so far (each once).
    consumers: std::collections::HashSet<String>,
}

impl<R: Read> ArchiveReader<R> {
    pub fn new(input: R, limits: ArchiveLimits) -> Self {
        Self {
            input: snap::read::FrameDecoder::new(input),
            limits,
            expect: Expect::Magic,
            state: ArchiveState::default(),
            consumers: std::collections::HashSet::new(),
        }
    }

    /// The compressed input underneath.
    pub fn get_mut(&mut self) -> &mut R {
        self.input.get_mut()
    }

    /// The next record; after [`Record::End`], `Ok(None)`.
    ///
    /// # Errors
    /// A malformed, truncated or oversized archive, or the input's errors.
    pub fn next_record(&mut self) -> Result<Option<Record>, ArchiveError> {
        if self.expect == Expect::Magic {
            let mut magic = [0u8; 8];
            read_exact(&mut self.input, &mut magic)?;
            if &magic != MAGIC {
                return Err(ArchiveError::BadMagic);
            }
            self.expect = Expect::State;
        }
        if self.expect == Expect::Done {
            return Ok(None);
        }
        let mut head = [0u8; 5];
        read_exact(&mut self.input, &mut head)?;
        let [tag, l0, l1, l2, l3] = head;
        let len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        let record = match (self.expect, tag) {
            (Expect::State, TAG_STATE) => Record::State(self.read_state(len)?),
            (Expect::Msgs { last }, TAG_MSG) => Record::Msg(self.read_msg(len, last)?),
            (Expect::Msgs { .. } | Expect::Consumers, TAG_CONSUMER) => {
                self.expect = Expect::Consumers;
                Record::Consumer(self.read_consumer(len)?)
            }
            (Expect::Msgs { .. } | Expect::Consumers, TAG_END) => {
                if len != 0 {
                    return Err(ArchiveError::Malformed("end record with a body"));
                }
                let mut probe = [0u8; 1];
                if read_some(&mut self.input, &mut probe)? != 0 {
                    return Err(ArchiveError::TrailingData);
                }
                self.expect = Expect::Done;
                Record::End
            }
            (_, tag) => return Err(ArchiveError::BadTag(tag)),
        };
        Ok(Some(record))
    }

    fn read_state(&mut self, len: usize) -> Result<ArchiveState, ArchiveError> {
        if len != STATE_BODY_BYTES && len != STATE_BODY_BYTES_V0 {
            return Err(ArchiveError::Malformed("state record size"));
        }
        let mut body = [0u8; STATE_BODY_BYTES];
        read_exact(&mut self.input, body.get_mut(..len).unwrap_or_default())?;
        let mut n = body.chunks_exact(8).map(le_u64);
        let mut field = || n.next().unwrap_or_default();
        let state = ArchiveState {
            first_seq: field(),
            last_seq: field(),
            msgs: field(),
            bytes: field(),
            created_ns: field().cast_signed(),
        };
        // An empty stream that never held a message has both at 0; otherwise the range is
        // `first..=last`, possibly empty (`first == last + 1`).
        let before_first = state.first_seq.saturating_sub(1);
        if before_first > state.last_seq || (state.first_seq == 0 && state.last_seq != 0) {
            return Err(ArchiveError::Malformed("state sequences"));
        }
        self.state = state;
        self.expect = Expect::Msgs { last: before_first };
        Ok(state)
    }

    fn read_msg(&mut self, len: usize, last: u64) -> Result<ArchiveMsg, ArchiveError> {
        let max = MSG_FIXED_BYTES
            .saturating_add(self.limits.subject_bytes_max)
            .saturating_add(self.limits.msg_bytes_max);
        if len > max {
            return Err(ArchiveError::TooLarge(len as u64));
        }
        if len < MSG_FIXED_BYTES {
            return Err(ArchiveError::Malformed("message record size"));
        }
        let mut fixed = [0u8; MSG_FIXED_BYTES];
        read_exact(&mut self.input, &mut fixed)?;
        let (seq_ts, lens) = fixed.split_at(16);
        let (seq, ts) = seq_ts.split_at(8);
        let (subject_len, headers_len) = lens.split_at(4);
        let seq = le_u64(seq);
        let timestamp_ns = le_u64(ts) as i64;
        let subject_len = le_u32(subject_len) as usize;
        let headers_len = le_u32(headers_len) as usize;
        if seq <= last || seq > self.state.last_seq {
            return Err(ArchiveError::OutOfOrder(seq));
        }
        let rest = len - MSG_FIXED_BYTES;
        let Some(payload_len) = rest
            .checked_sub(subject_len)
            .and_then(|r| r.checked_sub(headers_len))
        else {
            return Err(ArchiveError::Malformed("message part lengths"));
        };
        if subject_len == 0 || subject_len > self.limits.subject_bytes_max {
            return Err(ArchiveError::Malformed("message subject length"));
        }
        if headers_len + payload_len > self.limits.msg_bytes_max {
            return Err(ArchiveError::TooLarge((headers_len + payload_len) as u64));
        }
        let mut body = BytesMut::zeroed(rest);
        read_exact(&mut self.input, &mut body)?;
        let mut body = body.freeze();
        let subject = body.split_to(subject_len);
        let headers = body.split_to(headers_len);
        if !nats_subject::is_valid_publish_subject(&subject) {
            return Err(ArchiveError::Malformed("message subject"));
        }
        self.expect = Expect::Msgs { last: seq };
        Ok(ArchiveMsg {
            seq,
            timestamp_ns,
            subject,
            headers,
            payload: body,
        })
    }
}

impl<R: Read> ArchiveReader<R> {
    fn read_consumer(&mut self, len: usize) -> Result<ArchiveConsumer, ArchiveError> {
        if len > self.limits.consumer_bytes_max {
            return Err(ArchiveError::TooLarge(len as u64));
        }
        if len < CONSUMER_FIXED_BYTES {
            return Err(ArchiveError::Malformed("consumer record size"));
        }
        let mut body = vec![0u8; len];
        read_exact(&mut self.input, &mut body)?;
        let (fixed, rest) = body.split_at(CONSUMER_FIXED_BYTES);
        let (version, fixed) = fixed.split_at(1);
        if version != [CONSUMER_VERSION] {
            return Err(ArchiveError::Malformed("consumer record version"));
        }
        let (created, lens) = fixed.split_at(8);
        let mut lens = lens.chunks_exact(4).map(|b| le_u32(b) as usize);
        let mut next_len = || lens.next().unwrap_or_default();
        let (name_len, config_len, state_len) = (next_len(), next_len(), next_len());
        let total = name_len
            .checked_add(config_len)
            .and_then(|n| n.checked_add(state_len));
        if total != Some(rest.len()) {
            return Err(ArchiveError::Malformed("consumer part lengths"));
        }
        let (name, rest) = rest.split_at(name_len);
        let (config, state) = rest.split_at(config_len);
        if name.is_empty() || name.len() > CONSUMER_NAME_BYTES_MAX {
            return Err(ArchiveError::Malformed("consumer name length"));
        }
        let Ok(name) = std::str::from_utf8(name) else {
            return Err(ArchiveError::Malformed("consumer name"));
        };
        let state =
            consumer_state::decode(state).map_err(|_| ArchiveError::Malformed("consumer state"))?;
        if !self.consumers.insert(name.to_owned()) {
            return Err(ArchiveError::DuplicateConsumer(name.to_owned()));
        }
        Ok(ArchiveConsumer {
            name: name.to_owned(),
            created_ns: le_u64(created) as i64,
            config: Bytes::copy_from_slice(config),
            state,
        })
    }
}

fn le_u64(b: &[u8]) -> u64 {
    let mut n = [0u8; 8];
    for (d, s) in n.iter_mut().zip(b) {
        *d = *s;
    }
    u64::from_le_bytes(n)
}

fn le_u32(b: &[u8]) -> u32 {
    let mut n = [0u8; 4];
    for (d, s) in n.iter_mut().zip(b) {
        *d = *s;
    }
    u32::from_le_bytes(n)
}

/// `read_exact` with the end of input reported as a truncated archive.
fn read_exact(input: &mut impl Read, buf: &mut [u8]) -> Result<(), ArchiveError> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            ArchiveError::Truncated
        } else {
            ArchiveError::Io(e)
        }
    })
}

fn read_some(input: &mut impl Read, buf: &mut [u8]) -> Result<usize, ArchiveError> {
    loop {
        match input.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ArchiveError::Io(e)),
        }
    }
}

/// A whole archive, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Decoded {
    pub state: ArchiveState,
    pub msgs: Vec<ArchiveMsg>,
    pub consumers: Vec<ArchiveConsumer>,
}

/// Decodes a whole archive held in memory (tests and the fuzz target).
///
/// # Errors
/// As [`ArchiveReader::next_record`]; a missing end record is [`ArchiveError::Truncated`].
pub fn decode_all(bytes: &[u8], limits: ArchiveLimits) -> Result<Decoded, ArchiveError> {
    let mut reader = ArchiveReader::new(bytes, limits);
    let mut state = None;
    let mut out = Decoded::default();
    while let Some(record) = reader.next_record()? {
        match record {
            Record::State(s) => state = Some(s),
            Record::Msg(m) => out.msgs.push(m),
            Record::Consumer(c) => out.consumers.push(c),
            Record::End => {}
        }
    }
    out.state = state.ok_or(ArchiveError::Truncated)?;
    Ok(out)
}

#[cfg(test)]
#[path = "archive_tests.rs"]
mod tests;
