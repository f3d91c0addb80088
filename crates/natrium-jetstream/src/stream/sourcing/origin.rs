//! One origin of a stream (its mirror, or one of its sources) and the task that copies from
//! it: it asks the origin's API (`$JS.API`, or the `external.api` prefix, through the
//! account's imports) for a push consumer delivering to an inbox it subscribed first, copies
//! what arrives, and asks again, with Go's throttle and backoff, whenever the consumer cannot
//! be created, a delivery is missed or the origin falls silent.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use natrium_core::account::{Account, SubRef};
use natrium_core::endpoint::{Delivery, Sink, Subscription};
use natrium_core::internal::InternalClient;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::apply::{self, Batch, Next, Reply, Track};
use super::identity;
use super::inbox::OriginInbox;
use super::names;
use super::request::{self, Spec, Start, HEALTH_CHECK_NS};
use super::status::Status;
use crate::clock::now_ns;
use crate::config::gotime::GoTime;
use crate::config::stream::StreamSource;
use crate::errors::{table, ApiError};
use crate::stream::Stream;

/// Go's `sourceConsumerRetryThreshold`: the least time between two create requests.
const RETRY_THRESHOLD: Duration = Duration::from_secs(2);
/// Go's `retryBackOff` (per failure, doubled) and `retryMaximum`.
const BACKOFF_STEP: Duration = Duration::from_secs(5);
const BACKOFF_MAX: Duration = Duration::from_secs(120);
/// Go's `srcConsumerWaitTime`: how long an answer to a create request is waited for.
const ANSWER_WAIT: Duration = Duration::from_secs(30);
/// Go's `srcDurableConsumerWaitTime`: a user's durable only needs a reset.
const DURABLE_ANSWER_WAIT: Duration = Duration::from_secs(5);
/// Deliveries copied per lock of the stream.
const BATCH_MAX: usize = 1024;

/// The stream's direct-get service, as a mirror with `mirror_direct` uses it: it adds the
/// origin's direct-get subjects once it caught up (`None` takes them away).
pub trait MirrorDirect: Send + Sync {
    fn set_mirror(&self, origin: Option<&str>);
}

/// What an origin is for the stream.
pub struct OriginParts {
    pub stream: Arc<Stream>,
    pub src: StreamSource,
    pub mirror: bool,
    /// A mirror's direct-get service (for `mirror_direct`).
    pub direct: Option<Arc<dyn MirrorDirect>>,
    /// `JS_MIRROR_<hash>` or `JS_SRC_<hash>`.
    pub consumer_name: String,
    pub metadata: BTreeMap<String, String>,
    pub status: Arc<Status>,
    /// A source's last origin sequence found in the stream at start, and the origin's
    /// identity then.
    pub resumed_seq: u64,
    pub resumed_ident: String,
    pub client: InternalClient,
    pub stop: CancellationToken,
}

/// One running origin.
pub struct Origin {
    stream: Arc<Stream>,
    account: Arc<Account>,
    src: StreamSource,
    mirror: bool,
    direct: Option<Arc<dyn MirrorDirect>>,
    consumer_name: String,
    metadata: BTreeMap<String, String>,
    status: Arc<Status>,
    transforms: Vec<nats_subject::SubjectTransform>,
    inbox: Arc<OriginInbox>,
    stop: CancellationToken,
    work: Mutex<Work>,
}

/// Why no consumer was set up.
enum Failed {
    NoAnswer,
    Refused(ApiError),
    Recreated,
}

/// What only the task touches, behind one lock so a blocking batch can take it along.
struct Work {
    client: InternalClient,
    track: Track,
}

impl Origin {
    pub fn start(parts: OriginParts) -> Arc<Origin> {
        let transforms = parts
            .src
            .subject_transforms
            .iter()
            .filter(|t| !t.dest.is_empty())
            .filter_map(|t| {
                let from = if t.src.is_empty() { ">" } else { &t.src };
                nats_subject::SubjectTransform::new(from.as_bytes(), t.dest.as_bytes()).ok()
            })
            .collect();
        let origin = Arc::new(Origin {
            account: Arc::clone(&parts.stream.account),
            inbox: Arc::new(OriginInbox::new(parts.client.cid())),
            stream: parts.stream,
            src: parts.src,
            mirror: parts.mirror,
            direct: parts.direct,
            consumer_name: parts.consumer_name,
            metadata: parts.metadata,
            status: parts.status,
            transforms,
            stop: parts.stop,
            work: Mutex::new(Work {
                client: parts.client,
                track: Track {
                    sseq: parts.resumed_seq,
                    ident: parts.resumed_ident,
                    ..Track::default()
                },
            }),
        });
        tokio::spawn(Arc::clone(&origin).run());
        origin
    }

    async fn run(self: Arc<Self>) {
        let mut fails = 0u32;
        let mut last_request: Option<Instant> = None;
        loop {
            let delay = retry_delay(last_request, fails);
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.stop.cancelled() => return,
            }
            last_request = Some(Instant::now());
            let deliver = match &self.src.consumer {
                // A user's durable delivers where it was configured to.
                Some(durable) => durable.deliver_subject.clone(),
                None => names::deliver_subject(self.deliver_prefix(), self.mirror),
            };
            self.inbox.clear();
            match self.setup(&deliver).await {
                Ok(()) => {
                    fails = 0;
                    self.status.set_error(None);
                    // Subscribed once the consumer exists, as Go does: its answer tells
                    // where it starts, before anything is delivered.
                    let sink: Arc<dyn Sink> = Arc::clone(&self.inbox) as Arc<dyn Sink>;
                    let sub = crate::sink_sub::subscribe(&self.account, &sink, 1, &deliver, None);
                    if let Some(sub) = sub {
                        self.consume().await;
                        unsubscribe(&self.account, sub);
                    }
                }
                Err(Failed::NoAnswer) => fails += 1,
                Err(Failed::Refused(err)) => {
                    fails += 1;
                    self.status.set_error(Some(err));
                }
                // The origin was created again: asked again at once, from its start.
                Err(Failed::Recreated) => {}
            }
            if self.stop.is_cancelled() {
                return;
            }
        }
    }

    fn deliver_prefix(&self) -> Option<&str> {
        self.src.external.as_ref().map(|e| e.deliver.as_str())
    }

    /// Asks for a consumer delivering to `deliver`; on success the track is at its start.
    async fn setup(&self, deliver: &str) -> Result<(), Failed> {
        self.status.asked();
        let (body, filter) = request::body(Spec {
            origin: &self.src.name,
            name: self.consumer_name.clone(),
            deliver_subject: deliver,
            start: self.start_position(),
            filter_subject: &self.src.filter_subject,
            filter_subjects: self
                .src
                .subject_transforms
                .iter()
                .map(|t| t.src.clone())
                .collect(),
            metadata: self.metadata.clone(),
        });
        let api = self.src.external.as_ref().map(|e| e.api.as_str());
        let durable = self.src.consumer.as_ref().map(|c| c.name.as_str());
        let (subject, body, wait) = match durable {
            // A user's durable is reset to its ack floor, with an empty request.
            Some(name) => (
                names::reset_subject(api, &self.src.name, name),
                Vec::new(),
                DURABLE_ANSWER_WAIT,
            ),
            None => (
                names::create_subject(api, &self.src.name, &self.consumer_name, &filter),
                body,
                ANSWER_WAIT,
            ),
        };
        let answer = self
            .request(&subject, &body, wait)
            .await
            .ok_or(Failed::NoAnswer)?;
        let created = match request::parse_answer(&answer.payload) {
            Ok(created) => created,
            Err(err) if err.err_code == table::CONSUMER_STREAM_IDENTITY_MISMATCH_F.err_code => {
                let mut work = self.work.lock();
                work.track = Track {
                    recreated: true,
                    ..Track::default()
                };
                return Err(Failed::Recreated);
            }
            Err(err) => {
                let kind = if self.mirror { "mirror" } else { "source" };
                tracing::warn!(
                    "JetStream error response for stream {} create {kind} consumer {}: {}",
                    self.stream.name,
                    self.src.name,
                    err.description
                );
                return Err(Failed::Refused(err));
            }
        };
        if durable.is_some() && !created.acks_by_flow_control() {
            let def = if self.mirror {
                table::MIRROR_CONSUMER_REQUIRES_ACK_FC
            } else {
                table::SOURCE_CONSUMER_REQUIRES_ACK_FC
            };
            return Err(Failed::Refused(def.err()));
        }
        let delivered = created.delivered.stream_seq;
        let ident = answer
            .headers
            .as_deref()
            .and_then(identity::parse_identity)
            .unwrap_or_default();
        let mut work = self.work.lock();
        let old = std::mem::take(&mut work.track);
        let mut track = Track {
            cname: created.name,
            sseq: old.sseq,
            ident: ident.clone(),
            ..Track::default()
        };
        if self.mirror {
            track.sseq = self.mirror_catch_up(delivered).map_err(Failed::Refused)?;
        } else {
            let recreated =
                old.recreated || (!ident.is_empty() && !old.ident.is_empty() && old.ident != ident);
            if recreated {
                tracing::warn!(
                    "JetStream source stream {:?} for stream '{} > {}' was recreated, resetting source state",
                    self.src.name,
                    self.account.name,
                    self.stream.name
                );
                track.sseq = 0;
            }
            track.sseq = track.sseq.max(delivered);
        }
        work.track = track;
        drop(work);
        self.status.heard();
        Ok(())
    }

    /// A mirror's store moved to where the new consumer starts: a fresh mirror of an origin
    /// whose first messages are gone starts at the origin's first sequence, a mirror behind
    /// it skips what the origin no longer has. Returns the last origin sequence taken.
    fn mirror_catch_up(&self, delivered: u64) -> Result<u64, ApiError> {
        let mut core = self.stream.core.lock();
        let store = &mut core.ingest.store;
        let state = store.fast_state();
        if state.last_seq < delivered {
            let moved = if state.msgs == 0 {
                store.compact(delivered + 1).map(drop)
            } else {
                store.skip_msgs(state.last_seq + 1, delivered - state.last_seq, now_ns())
            };
            if let Err(err) = moved {
                return Err(table::MIRROR_CONSUMER_SETUP_FAILED.with(&[("err", &err)]));
            }
        }
        Ok(delivered.max(state.last_seq))
    }

    /// Where the next consumer starts (Go's choices in `setupMirrorConsumer` and
    /// `trySetupSourceConsumer`).
    fn start_position(&self) -> Start {
        let state = self.stream.core.lock().ingest.store.fast_state();
        let from_config = || {
            if self.src.opt_start_seq > 0 {
                return Some(Start::Seq(self.src.opt_start_seq));
            }
            let time = self.src.opt_start_time.as_deref().and_then(GoTime::parse)?;
            Some(Start::Time(time))
        };
        if self.mirror {
            if state.msgs == 0 && state.first_seq == 0 {
                return from_config().unwrap_or(Start::All);
            }
            return Start::Seq(state.last_seq + 1);
        }
        let (seq, recreated) = {
            let work = self.work.lock();
            (work.track.sseq + 1, work.track.recreated)
        };
        if seq > 1 {
            return Start::Seq(seq);
        }
        let last_time = (state.last_ts != 0).then(|| go_time(state.last_ts));
        match from_config() {
            Some(Start::Time(t)) => match last_time {
                Some(last) if t.unix_nanos() < state.last_ts => Start::Time(last),
                _ => Start::Time(t),
            },
            Some(start) => start,
            None => match last_time {
                Some(last) if state.first_seq > 1 && !recreated => Start::Time(last),
                _ => Start::All,
            },
        }
    }

    /// Publishes one request and waits for its answer on a fresh reply inbox.
    async fn request(&self, subject: &str, body: &[u8], wait: Duration) -> Option<Delivery> {
        let reply = names::sync_subject("$JSC.R");
        let answers = Arc::new(OriginInbox::new(self.inbox.cid()));
        let sink: Arc<dyn Sink> = Arc::clone(&answers) as Arc<dyn Sink>;
        let sub = crate::sink_sub::subscribe(&self.account, &sink, 2, &reply, None)?;
        {
            let mut work = self.work.lock();
            if !work.client.has_interest(subject) {
                // Nobody answers (the origin's API is not up yet): as a timeout, sooner.
                drop(work);
                unsubscribe(&self.account, sub);
                return None;
            }
            // Go asks for API level 4 (a mirror) or 5 (a source, with the identity it knows).
            let headers = if self.mirror {
                "NATS/1.0\r\nNats-Required-Api-Level: 4\r\n\r\n".to_owned()
            } else {
                format!(
                    "NATS/1.0\r\nNats-Required-Api-Level: 5\r\n{}: {}\r\n\r\n",
                    identity::HEADER,
                    work.track.ident
                )
            };
            work.client.publish_request(
                &self.account,
                subject,
                Some(&reply),
                Some(headers.as_bytes()),
                body,
            );
        }
        let answer = tokio::select! {
            () = answers.wake.notified() => {
                let mut got = Vec::new();
                answers.take(1, &mut got);
                got.pop()
            }
            () = tokio::time::sleep(wait) => None,
            () = self.stop.cancelled() => None,
        };
        unsubscribe(&self.account, sub);
        answer
    }

    /// What names this origin's consumer: the origin stream, the API it is reached through
    /// and the consumer's name.
    pub fn key(&self) -> (&str, Option<&str>, &str) {
        let api = self.src.external.as_ref().map(|e| e.api.as_str());
        (&self.src.name, api, &self.consumer_name)
    }

    /// Asks the origin once to delete the consumer this origin names, waiting Go's 10 s for
    /// the answer; a failure is logged when that consumer was the one in use. A user's own
    /// durable (`consumer` in the configuration) is left alone, as Go leaves it.
    pub async fn delete_consumer(self: Arc<Self>) {
        if self.src.consumer.is_some() {
            return;
        }
        let api = self.src.external.as_ref().map(|e| e.api.as_str());
        let subject = names::delete_subject(api, &self.src.name, &self.consumer_name);
        let reply = names::sync_subject("$JSC.R");
        let answers = Arc::new(OriginInbox::new(self.inbox.cid()));
        let sink: Arc<dyn Sink> = Arc::clone(&answers) as Arc<dyn Sink>;
        let Some(sub) = crate::sink_sub::subscribe(&self.account, &sink, 3, &reply, None) else {
            return;
        };
        let in_use = {
            let mut work = self.work.lock();
            work.client
                .publish_in(&self.account, &subject, Some(&reply), b"");
            work.track.cname == self.consumer_name
        };
        let wait = Duration::from_nanos(HEALTH_CHECK_NS.unsigned_abs());
        let answer = tokio::select! {
            () = answers.wake.notified() => {
                let mut got = Vec::new();
                answers.take(1, &mut got);
                got.pop()
            }
            () = tokio::time::sleep(wait) => None,
        };
        unsubscribe(&self.account, sub);
        let failed = match answer {
            None => Some("timed out".to_owned()),
            Some(msg) => serde_json::from_slice::<DeleteAnswer>(&msg.payload)
                .map_err(|e| e.to_string())
                .map_or_else(Some, |a| a.error.map(|e| e.description)),
        };
        if let (Some(err), true) = (failed, in_use) {
            let kind = if self.mirror { "mirror" } else { "source" };
            tracing::warn!(
                "Cleanup of {kind} consumer '{} > {}' failed for stream '{} > {}': {err}",
                self.src.name,
                self.consumer_name,
                self.account.name,
                self.stream.name
            );
        }
    }

    /// Copies deliveries until a retry is due or the stream stops.
    async fn consume(self: &Arc<Self>) {
        let check = Duration::from_nanos(HEALTH_CHECK_NS as u64);
        let mut health = tokio::time::interval(check);
        health.tick().await;
        let file_backed = self.stream.dir.is_some();
        loop {
            tokio::select! {
                () = self.inbox.wake.notified() => {}
                _ = health.tick() => {
                    if now_ns().saturating_sub(self.status.last_heard_ns()) > HEALTH_CHECK_NS {
                        return;
                    }
                    continue;
                }
                () = self.stop.cancelled() => return,
            }
            loop {
                let mut batch = Vec::new();
                self.inbox.take(BATCH_MAX, &mut batch);
                if batch.is_empty() {
                    break;
                }
                self.status.heard();
                let next = if file_backed {
                    let origin = Arc::clone(self);
                    tokio::task::spawn_blocking(move || origin.copy(&batch))
                        .await
                        .unwrap_or(Next::Retry)
                } else {
                    self.copy(&batch)
                };
                if next == Next::Retry {
                    return;
                }
            }
        }
    }

    /// Copies one batch into the stream, then publishes the answers it calls for.
    fn copy(&self, batch: &[Delivery]) -> Next {
        let interest = if self.mirror {
            None
        } else {
            crate::consumer::retention::interest_filters(&self.stream)
        };
        let mut work = self.work.lock();
        let work = &mut *work;
        let mut replies: Vec<Reply> = Vec::new();
        let mut next = Next::Continue;
        let (stored, caught_up) = {
            let mut core = self.stream.core.lock();
            let mirror_direct = core.config.mirror_direct;
            let mut b = Batch {
                core: &mut core,
                account: &self.account,
                track: &mut work.track,
                status: &self.status,
                replies: &mut replies,
                stored: false,
                interest: interest.as_deref(),
                now_ns: now_ns(),
                caught_up: false,
            };
            for msg in batch {
                next = if self.mirror {
                    apply::mirror_msg(&mut b, msg, &self.transforms)
                } else {
                    apply::source_msg(&mut b, msg, &self.transforms)
                };
                if next == Next::Retry {
                    break;
                }
            }
            (b.stored, b.caught_up && mirror_direct)
        };
        if stored {
            self.stream.stored_elsewhere();
        }
        if let Some(direct) = self.direct.as_ref().filter(|_| caught_up) {
            direct.set_mirror(Some(&self.src.name));
        }
        for reply in replies {
            match &reply.headers {
                Some(h) => work
                    .client
                    .publish_with_headers(&self.account, &reply.subject, h, b""),
                None => work
                    .client
                    .publish_in(&self.account, &reply.subject, None, b""),
            }
        }
        next
    }
}

/// The part of Go's `JSApiConsumerDeleteResponse` the clean-up reads.
#[derive(serde::Deserialize)]
struct DeleteAnswer {
    #[serde(default)]
    error: Option<ApiError>,
}

fn unsubscribe(account: &Account, sub: Arc<Subscription>) {
    let _ = account.unsubscribe(&SubRef(sub));
}

/// Go's wait before the next create request: what is left of the throttle since the last,
/// the backoff of `fails` failures, and 100 to 200 ms of jitter.
fn retry_delay(last_request: Option<Instant>, fails: u32) -> Duration {
    let throttle = last_request.map_or(Duration::ZERO, |at| {
        RETRY_THRESHOLD.saturating_sub(at.elapsed())
    });
    let backoff = BACKOFF_STEP.saturating_mul(fails * 2).min(BACKOFF_MAX);
    let jitter = Duration::from_millis(100 + fastrand_ms());
    throttle + backoff + jitter
}

/// 0 to 99, from the clock's low bits (jitter needs no better).
fn fastrand_ms() -> u64 {
    (now_ns().unsigned_abs() / 1_000) % 100
}

fn go_time(ns: i64) -> GoTime {
    GoTime(chrono::DateTime::from_timestamp_nanos(ns).fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_sourcing_retry_delay_as_go() {
        let first = retry_delay(None, 0);
        assert!(first >= Duration::from_millis(100) && first < Duration::from_millis(200));
        let backed = retry_delay(None, 1);
        assert!(backed >= Duration::from_secs(10));
        assert!(retry_delay(None, 100) < Duration::from_secs(121));
    }
}
