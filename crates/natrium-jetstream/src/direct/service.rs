//! One stream's direct-get service: the subscriptions on `$JS.API.DIRECT.GET.<stream>` and
//! `$JS.API.DIRECT.GET.<stream>.>` in queue group `_sys_` (so mirrors may later share them),
//! taken while `allow_direct` is set (and a mirror's on its origin's subjects, with
//! `mirror_direct`), and the task answering them from the stream's store.
//!
//! Overflow rule: never drop. Requests go into an [`IngestQueue`]; past
//! [`DIRECT_QUEUE_MSGS_MAX`] requests or [`DIRECT_QUEUE_BYTES_MAX`] bytes the requester is
//! stalled until the task catches up, as Go answers a client's direct get inline on that
//! client's read loop.
//!
//! A get of a subject's last message (the clients' KV `get`) is answered on the requester's
//! task instead when nothing is queued ahead of it, the stream is not locked, and the load
//! reads nothing from disk: that saves the hops to the task (and, for a file stream, to a
//! blocking thread) on a get's round trip. The answer goes out through the stream's own
//! internal client, as Go sends direct-get answers through the stream's send queue.

use std::sync::Arc;

use natrium_core::account::SubRef;
use natrium_core::endpoint::{Delivery, Sink, Subscription};
use natrium_core::internal::InternalClient;
use nats_proto::headers::Headers;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::reply::{self, status, Reply};
use super::request::{decode_direct, MsgGetRequest};
use crate::service::{JetStream, API_LEVEL};
use crate::stream::capture::{IngestQueue, InlineIngest};
use crate::stream::running::StreamCore;
use crate::stream::sourcing::origin::MirrorDirect;
use crate::stream::Stream;

/// Requests queued per stream before requesters are stalled.
pub const DIRECT_QUEUE_MSGS_MAX: usize = 1024;
pub const DIRECT_QUEUE_BYTES_MAX: usize = 8 * 1024 * 1024;
/// Requests answered per wake-up (bounds one blocking section of a file store).
const BATCH_MAX: usize = 64;

/// Go's queue group for direct gets.
const QUEUE_GROUP: &[u8] = b"_sys_";
/// The subscription ids: the plain form and the subject-in-token form.
const SID_PLAIN: u64 = 1;
const SID_LAST_BY_SUBJECT: u64 = 2;
/// The same two forms of a mirror's origin (`mirror_direct`).
const SID_MIRROR_PLAIN: u64 = 3;
const SID_MIRROR_LAST_BY_SUBJECT: u64 = 4;
/// `Nats-Required-Api-Level`: a request needing a newer API is refused.
const REQUIRED_API_LEVEL: &[u8] = b"Nats-Required-Api-Level";

/// A stream's direct-get subscriptions and task.
pub struct DirectGet {
    stream: Arc<Stream>,
    queue: Arc<IngestQueue>,
    subs: Mutex<Vec<Arc<Subscription>>>,
    /// The subscriptions on the origin's subjects of a mirror with `mirror_direct`.
    mirror_subs: Mutex<Vec<Arc<Subscription>>>,
    stop: CancellationToken,
    /// The server's `max_pending`: a batch answer's byte budget when the request sets none.
    max_pending: i64,
}

impl DirectGet {
    /// Starts the task of `stream` (not yet subscribed: see [`DirectGet::set_enabled`]).
    pub fn start(js: &JetStream, stream: &Arc<Stream>) -> Arc<DirectGet> {
        let (client, _inbox) = InternalClient::start(&js.server, Arc::clone(&stream.account));
        let queue = Arc::new(IngestQueue::new(
            client.cid(),
            DIRECT_QUEUE_MSGS_MAX,
            DIRECT_QUEUE_BYTES_MAX,
        ));
        let max_pending = i64::try_from(js.server.config().max_pending).unwrap_or(i64::MAX);
        let direct = Arc::new(DirectGet {
            stream: Arc::clone(stream),
            queue: Arc::clone(&queue),
            subs: Mutex::new(Vec::new()),
            mirror_subs: Mutex::new(Vec::new()),
            stop: CancellationToken::new(),
            max_pending,
        });
        let weak = Arc::downgrade(&direct);
        queue.set_inline(weak);
        tokio::spawn(Arc::clone(&direct).run(client));
        direct
    }

    /// Subscribes (`allow_direct` set) or unsubscribes; idempotent.
    pub fn set_enabled(&self, enabled: bool) {
        let name = enabled.then_some(self.stream.name.as_str());
        self.set_subs(&self.subs, name, (SID_PLAIN, SID_LAST_BY_SUBJECT));
    }

    /// A mirror with `mirror_direct` answers the direct gets of its origin `origin` too, in
    /// the same queue group, once it has caught up (Go's `subscribeToMirrorDirect`); `None`
    /// unsubscribes. Idempotent.
    pub fn set_mirror(&self, origin: Option<&str>) {
        let sids = (SID_MIRROR_PLAIN, SID_MIRROR_LAST_BY_SUBJECT);
        self.set_subs(&self.mirror_subs, origin, sids);
    }

    fn set_subs(&self, subs: &Mutex<Vec<Arc<Subscription>>>, name: Option<&str>, sids: (u64, u64)) {
        let mut subs = subs.lock();
        let Some(name) = name else {
            for sub in subs.drain(..) {
                let _ = self.stream.account.unsubscribe(&SubRef(sub));
            }
            return;
        };
        if !subs.is_empty() {
            return;
        }
        let sink: Arc<dyn Sink> = Arc::clone(&self.queue) as Arc<dyn Sink>;
        let plain = format!("$JS.API.DIRECT.GET.{name}");
        let by_subject = format!("{plain}.>");
        for (sid, subject) in [(sids.0, plain), (sids.1, by_subject)] {
            let account = &self.stream.account;
            let queue = Some(QUEUE_GROUP);
            subs.extend(crate::sink_sub::subscribe(
                account, &sink, sid, &subject, queue,
            ));
        }
    }

    /// Unsubscribes and ends the task.
    pub fn stop(&self) {
        self.set_enabled(false);
        self.set_mirror(None);
        self.stop.cancel();
    }

    async fn run(self: Arc<Self>, mut client: InternalClient) {
        let file_backed = self.stream.dir.is_some();
        loop {
            tokio::select! {
                () = self.queue.wake.notified() => {}
                () = self.stop.cancelled() => break,
            }
            loop {
                let mut batch = Vec::new();
                self.queue.take(BATCH_MAX, &mut batch);
                if batch.is_empty() {
                    break;
                }
                if file_backed {
                    // Store reads may wait on the disk: off the async workers.
                    let me = Arc::clone(&self);
                    let handed = tokio::task::spawn_blocking(move || {
                        me.answer_all(&mut client, &batch);
                        client
                    })
                    .await;
                    match handed {
                        Ok(back) => client = back,
                        Err(_) => return,
                    }
                } else {
                    self.answer_all(&mut client, &batch);
                }
            }
        }
    }

    fn answer_all(&self, client: &mut InternalClient, batch: &[Delivery]) {
        let mut replies = Vec::new();
        for msg in batch {
            let Some(reply_to) = reply_subject(msg) else {
                continue;
            };
            match request_of(msg) {
                Ok(req) => {
                    let core = self.stream.core.lock();
                    self.answer(&core, &req, &mut replies);
                }
                Err(reply) => replies.push(reply),
            }
            self.publish(client, reply_to, &mut replies);
        }
    }

    /// The replies to a checked request, from the store under `core`.
    fn answer(&self, core: &StreamCore, req: &MsgGetRequest, out: &mut Vec<Reply>) {
        let (store, name) = (&*core.ingest.store, &self.stream.name);
        reply::answer(store, name, req, self.max_pending, out);
        self.stream.after_reads(core);
    }

    fn publish(&self, client: &mut InternalClient, reply_to: &str, replies: &mut Vec<Reply>) {
        let account = &self.stream.account;
        for Reply { headers, payload } in replies.drain(..) {
            match headers {
                Some(h) => client.publish_with_headers(account, reply_to, &h, &payload),
                None => client.publish_in(account, reply_to, None, &payload),
            }
        }
    }
}

impl InlineIngest for DirectGet {
    /// Answers a last-by-subject get on the requester's task when that keeps the order of
    /// the queue and cannot wait on the disk (see the module doc); `false` queues it.
    fn try_inline(&self, msg: &Delivery) -> bool {
        let inline_form = matches!(msg.sid, SID_LAST_BY_SUBJECT | SID_MIRROR_LAST_BY_SUBJECT)
            && msg.payload.is_empty();
        if !inline_form || !self.queue.is_empty() {
            return false;
        }
        let (Some(reply_to), Ok(req)) = (reply_subject(msg), request_of(msg)) else {
            return false;
        };
        let Some(mut core) = self.stream.core.try_lock() else {
            return false;
        };
        let Ok(filter) = natrium_store::Filter::new(req.last_by_subj.as_bytes()) else {
            return false;
        };
        if !core.ingest.store.last_msg_in_memory(&filter) {
            return false;
        }
        let mut replies = Vec::new();
        self.answer(&core, &req, &mut replies);
        self.publish(core.client(), reply_to, &mut replies);
        true
    }
}

/// A request's reply subject; a request without one is not answered.
fn reply_subject(msg: &Delivery) -> Option<&str> {
    msg.reply
        .as_deref()
        .and_then(|r| std::str::from_utf8(r).ok())
        .filter(|r| !r.is_empty())
}

/// One request checked as Go checks each form: the request, or the status to answer.
fn request_of(msg: &Delivery) -> Result<MsgGetRequest, Reply> {
    if requires_newer_api(msg.headers.as_deref()) {
        return Err(status("412 Required Api Level"));
    }
    if matches!(msg.sid, SID_LAST_BY_SUBJECT | SID_MIRROR_LAST_BY_SUBJECT) {
        last_by_subject_request(&msg.subject, &msg.payload)
    } else {
        plain_request(&msg.payload)
    }
}

impl MirrorDirect for DirectGet {
    fn set_mirror(&self, origin: Option<&str>) {
        DirectGet::set_mirror(self, origin);
    }
}

/// `Nats-Required-Api-Level` above ours, or not a number.
fn requires_newer_api(headers: Option<&[u8]>) -> bool {
    let Some(block) = headers.filter(|h| !h.is_empty()) else {
        return false;
    };
    let Ok(parsed) = Headers::parse(block) else {
        return false;
    };
    match parsed.get(REQUIRED_API_LEVEL).filter(|v| !v.is_empty()) {
        None => false,
        Some(v) => std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .is_none_or(|level| level > i64::from(API_LEVEL)),
    }
}

/// The body of `DIRECT.GET.<stream>`.
fn plain_request(body: &[u8]) -> Result<MsgGetRequest, Reply> {
    if body.is_empty() {
        return Err(status("408 Empty Request"));
    }
    let req = decode_direct(body).ok_or_else(|| status("408 Malformed Request"))?;
    if req.direct_is_empty() {
        return Err(status("408 Empty Request"));
    }
    if req.direct_conflicts() {
        return Err(status("408 Bad Request"));
    }
    Ok(req)
}

/// `DIRECT.GET.<stream>.<subject…>`: the last message on the subject in the tokens.
fn last_by_subject_request(subject: &[u8], body: &[u8]) -> Result<MsgGetRequest, Reply> {
    let mut req = if body.is_empty() {
        MsgGetRequest::default()
    } else {
        decode_direct(body).ok_or_else(|| status("408 Malformed Request"))?
    };
    // The subject starts after the fifth dot: `$JS.API.DIRECT.GET.<stream>.`.
    let key = subject
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'.')
        .nth(4)
        .and_then(|(i, _)| subject.get(i + 1..))
        .filter(|k| !k.is_empty());
    let Some(key) = key.and_then(|k| std::str::from_utf8(k).ok()) else {
        return Err(status("408 Bad Request"));
    };
    if req.has_selection() {
        return Err(status("408 Bad Request"));
    }
    key.clone_into(&mut req.last_by_subj);
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_subject_form_takes_the_tokens_after_the_stream() {
        let req = last_by_subject_request(b"$JS.API.DIRECT.GET.S.a.b", b"").unwrap();
        assert_eq!(req.last_by_subj, "a.b");
        assert_eq!(
            last_by_subject_request(b"$JS.API.DIRECT.GET.S.a", br#"{"seq":1}"#).unwrap_err(),
            status("408 Bad Request")
        );
        assert_eq!(
            last_by_subject_request(b"$JS.API.DIRECT.GET.S.a", b"{bad").unwrap_err(),
            status("408 Malformed Request")
        );
    }

    #[test]
    fn direct_required_api_level() {
        assert!(requires_newer_api(Some(
            b"NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n"
        )));
        assert!(!requires_newer_api(Some(
            b"NATS/1.0\r\nNats-Required-Api-Level: 1\r\n\r\n"
        )));
        assert!(requires_newer_api(Some(
            b"NATS/1.0\r\nNats-Required-Api-Level: x\r\n\r\n"
        )));
        assert!(!requires_newer_api(None));
    }
}
