//! A snapshot's transfer to the client's deliver subject, on its own thread, with Go's flow
//! control.
//!
//! The archive ([`natrium_store::archive`]) is produced as it is sent: messages are read from
//! the store a batch at a time ([`BATCH_MSGS`], [`BATCH_BYTES`]) with the stream locked only
//! while the batch is loaded (the `Bytes` are shared, nothing is copied), then encoded and
//! compressed unlocked. Publishing goes on meanwhile: the archive holds the messages up to
//! the last sequence of the state taken when the snapshot began; a message removed before
//! the transfer reaches it (limits, expiry, a delete) is archived as a deleted sequence.
//! What is buffered is at most one chunk plus one batch. The consumers' records, read when
//! the snapshot began, follow the messages.
//!
//! Flow control, as Go's: `window / chunk` chunks may be unacknowledged; each full chunk
//! carries the reply `$JS.SNAPSHOT.ACK.<stream>.<id>.<size>.<index>` and any message there
//! frees a slot. The last, short chunk has no reply. Then an empty message ends the transfer,
//! its status in a header: `204` (none when the archive fit in one short chunk), `408 No
//! Flow Response` when no slot freed within [`ACK_TIMEOUT`] of the last chunk, `408 No
//! Interest` when the deliver subject lost its subscribers, `500 <error>` when the store
//! failed. Before the first chunk the transfer waits up to [`INTEREST_WAIT`] for a subscriber
//! (clients subscribe once they have the response).

use std::sync::Arc;
use std::time::{Duration, Instant};

use natrium_core::account::{Account, InterestListener};
use natrium_core::internal::InternalClient;
use natrium_store::archive::{ArchiveConsumer, ArchiveState, ArchiveWriter};
use natrium_store::{Filter, StoreError, StoredMsg};

use super::sinks::{AckWindow, SinkSub, Wake};
use super::TransferGuard;
use crate::stream::Stream;

/// Go's default chunk and window, and the ranges it clamps requests to.
pub const CHUNK_BYTES_DEFAULT: usize = 128 * 1024;
pub const WINDOW_BYTES_DEFAULT: usize = 8 * 1024 * 1024;
const CHUNK_BYTES_RANGE: (usize, usize) = (1024, 1024 * 1024);
const WINDOW_BYTES_RANGE: (usize, usize) = (1024, 32 * 1024 * 1024);
/// Go's `snapshotAckTimeout`.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long Go waits for a subscriber on the deliver subject before sending anyway.
pub const INTEREST_WAIT: Duration = Duration::from_secs(2);
/// Messages and bytes read from the store per lock.
pub const BATCH_MSGS: usize = 256;
pub const BATCH_BYTES: usize = 256 * 1024;

/// The chunk and window sizes for a request's values (0 for the default), clamped as Go
/// clamps them; the window holds at least one chunk.
pub fn sizes(chunk: i64, window: i64) -> (usize, usize) {
    let pick = |asked: i64, default: usize, (lo, hi): (usize, usize)| {
        let asked = if asked == 0 {
            default
        } else {
            usize::try_from(asked).unwrap_or(0)
        };
        asked.clamp(lo, hi)
    };
    let chunk = pick(chunk, CHUNK_BYTES_DEFAULT, CHUNK_BYTES_RANGE);
    let window = pick(window, WINDOW_BYTES_DEFAULT, WINDOW_BYTES_RANGE).max(chunk);
    (chunk, window)
}

/// One snapshot to send.
pub struct Transfer {
    pub stream: Arc<Stream>,
    pub client: InternalClient,
    pub deliver: String,
    pub chunk_bytes: usize,
    pub window_bytes: usize,
    pub state: ArchiveState,
    /// The consumers to archive after the messages (none with `no_consumers`).
    pub consumers: Vec<ArchiveConsumer>,
    /// Its place among the transfers running, freed when it ends.
    pub guard: TransferGuard,
}

/// How a transfer ended, as its last message's header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// All sent; `true` when at least one full chunk went out (Go's `204` header).
    Complete(bool),
    NoFlowResponse,
    NoInterest,
    Failed(String),
}

impl Ending {
    fn header(&self) -> Option<Vec<u8>> {
        match self {
            Ending::Complete(false) => None,
            Ending::Complete(true) => Some(b"NATS/1.0 204\r\n\r\n".to_vec()),
            Ending::NoFlowResponse => Some(b"NATS/1.0 408 No Flow Response\r\n\r\n".to_vec()),
            Ending::NoInterest => Some(b"NATS/1.0 408 No Interest\r\n\r\n".to_vec()),
            Ending::Failed(err) => Some(format!("NATS/1.0 500 {err}\r\n\r\n").into_bytes()),
        }
    }

    /// The error of Go's completion advisory and log line, if any.
    pub fn error(&self) -> Option<String> {
        match self {
            Ending::Complete(_) => None,
            Ending::NoFlowResponse => Some("no flow response".to_owned()),
            Ending::NoInterest => Some("no interest".to_owned()),
            Ending::Failed(err) => Some(err.clone()),
        }
    }
}

/// Removes the interest listener when the transfer ends.
struct Listening<'a> {
    account: &'a Account,
    listener: Arc<dyn InterestListener>,
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.account.remove_interest_listener(&self.listener);
    }
}

impl Transfer {
    /// Sends the whole archive and the closing message; returns how it ended.
    pub fn run(&mut self) -> Ending {
        let account = Arc::clone(&self.stream.account);
        let window = Arc::new(AckWindow::new(self.client.cid()));
        let listener: Arc<dyn InterestListener> = Arc::clone(&window) as _;
        account.add_interest_listener(Arc::clone(&listener));
        let _listening = Listening {
            account: &account,
            listener,
        };
        let interest_by = Instant::now() + INTEREST_WAIT;
        while !self.client.has_interest(&self.deliver) && Instant::now() < interest_by {
            window.wait(interest_by);
        }
        let ack_prefix = format!(
            "$JS.SNAPSHOT.ACK.{}.{}",
            self.stream.name,
            natrium_core::events::event_id()
        );
        let sink = Arc::clone(&window) as Arc<dyn natrium_core::endpoint::Sink>;
        let Some(_acks) = SinkSub::new(&account, &sink, &format!("{ack_prefix}.>")) else {
            return self.end(&account, Ending::Failed("invalid ack subject".to_owned()));
        };
        let ending = self.send_chunks(&account, &window, &ack_prefix);
        self.end(&account, ending)
    }

    fn send_chunks(&mut self, account: &Arc<Account>, window: &AckWindow, ack: &str) -> Ending {
        let slots = (self.window_bytes / self.chunk_bytes).max(1);
        let mut free = slots;
        let mut index = 1u64;
        let mut ack_by = Instant::now() + ACK_TIMEOUT;
        let consumers = std::mem::take(&mut self.consumers);
        let mut archive = match Archive::new(&self.state, consumers) {
            Ok(archive) => archive,
            Err(err) => return Ending::Failed(err),
        };
        loop {
            while free == 0 {
                match window.wait(ack_by) {
                    Wake::Acks(n) => free = (free + n).min(slots),
                    Wake::Interest if !self.client.has_interest(&self.deliver) => {
                        return Ending::NoInterest;
                    }
                    Wake::Interest => {}
                    Wake::Timeout => return Ending::NoFlowResponse,
                }
            }
            free -= 1;
            match archive.next_chunk(self.chunk_bytes, &self.stream, &self.state) {
                Err(err) => return Ending::Failed(err),
                Ok(Chunk::Full(bytes)) => {
                    let reply = format!("{ack}.{}.{index}", bytes.len());
                    self.client
                        .publish_in(account, &self.deliver, Some(&reply), &bytes);
                    index += 1;
                    ack_by = Instant::now() + ACK_TIMEOUT;
                }
                Ok(Chunk::Last(bytes)) => {
                    if !bytes.is_empty() {
                        self.client.publish_in(account, &self.deliver, None, &bytes);
                    }
                    return Ending::Complete(index > 1);
                }
            }
        }
    }

    fn end(&mut self, account: &Arc<Account>, ending: Ending) -> Ending {
        match ending.header() {
            Some(header) => {
                self.client
                    .publish_with_headers(account, &self.deliver, &header, b"");
            }
            None => self.client.publish_in(account, &self.deliver, None, b""),
        }
        ending
    }
}

/// The next piece of the archive.
enum Chunk {
    /// A chunk of exactly the chunk size.
    Full(Vec<u8>),
    /// What remained at the end (possibly nothing).
    Last(Vec<u8>),
}

/// The archive being produced: its writer until the end record, then the bytes left.
struct Archive {
    writer: Option<ArchiveWriter<Vec<u8>>>,
    rest: Vec<u8>,
    next_seq: u64,
    read_all: bool,
    batch: Vec<StoredMsg>,
    consumers: Vec<ArchiveConsumer>,
}

impl Archive {
    fn new(state: &ArchiveState, consumers: Vec<ArchiveConsumer>) -> Result<Self, String> {
        let writer = ArchiveWriter::new(Vec::new(), state).map_err(|e| e.to_string())?;
        Ok(Self {
            writer: Some(writer),
            rest: Vec::new(),
            next_seq: state.first_seq.max(1),
            read_all: false,
            batch: Vec::new(),
            consumers,
        })
    }

    fn next_chunk(
        &mut self,
        chunk: usize,
        stream: &Stream,
        state: &ArchiveState,
    ) -> Result<Chunk, String> {
        loop {
            let buffered = match &mut self.writer {
                Some(writer) => writer.get_mut(),
                None => &mut self.rest,
            };
            if buffered.len() >= chunk {
                let rest = buffered.split_off(chunk);
                return Ok(Chunk::Full(std::mem::replace(buffered, rest)));
            }
            if self.writer.is_none() {
                return Ok(Chunk::Last(std::mem::take(&mut self.rest)));
            }
            if self.read_all {
                if let Some(mut writer) = self.writer.take() {
                    for consumer in self.consumers.drain(..) {
                        writer.consumer(&consumer).map_err(|e| e.to_string())?;
                    }
                    self.rest = writer.finish().map_err(|e| e.to_string())?;
                }
                continue;
            }
            self.read_batch(stream, state.last_seq)?;
            if let Some(writer) = &mut self.writer {
                for msg in self.batch.drain(..) {
                    writer.msg(&msg).map_err(|e| e.to_string())?;
                }
            }
        }
    }

    /// Loads the next messages with the stream locked, at most a batch.
    fn read_batch(&mut self, stream: &Stream, last_seq: u64) -> Result<(), String> {
        let core = stream.core.lock();
        let store = &core.ingest.store;
        let mut bytes = 0;
        while self.batch.len() < BATCH_MSGS && bytes < BATCH_BYTES {
            if self.next_seq > last_seq {
                self.read_all = true;
                break;
            }
            match store.load_next_msg(&Filter::all(), self.next_seq) {
                Ok(msg) if msg.seq <= last_seq => {
                    self.next_seq = msg.seq + 1;
                    bytes += msg.subject.len() + msg.headers.len() + msg.payload.len();
                    self.batch.push(msg);
                }
                Ok(_) | Err(StoreError::Eof) => {
                    self.read_all = true;
                    break;
                }
                Err(err) => {
                    let at = self.next_seq;
                    return Err(format!("couldn't load next message after seq {at}: {err}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_sizes_clamp_like_go() {
        assert_eq!(sizes(0, 0), (128 * 1024, 8 * 1024 * 1024));
        assert_eq!(sizes(100, 100), (1024, 1024));
        assert_eq!(sizes(4096, 2048), (4096, 4096));
        assert_eq!(sizes(1 << 30, 1 << 40), (1024 * 1024, 32 * 1024 * 1024));
        assert_eq!(sizes(-5, -5), (1024, 1024));
    }

    #[test]
    fn snapshot_ending_headers_like_go() {
        assert_eq!(Ending::Complete(false).header(), None);
        assert_eq!(
            Ending::Complete(true).header().unwrap(),
            b"NATS/1.0 204\r\n\r\n"
        );
        assert_eq!(
            Ending::NoFlowResponse.header().unwrap(),
            b"NATS/1.0 408 No Flow Response\r\n\r\n"
        );
        assert_eq!(
            Ending::Failed("boom".into()).header().unwrap(),
            b"NATS/1.0 500 boom\r\n\r\n"
        );
    }
}
