//! Message tracing (ADR-41): a message published with a `Nats-Trace-Dest` header (or, in an
//! account with `msg_trace`, a sampled W3C `traceparent`) makes the server report what it did
//! with it, as one JSON event published on the destination subject in the publisher's account.
//! With `Nats-Trace-Only` the message goes through every decision but is not delivered.
//!
//! - [`header`]: reading the header block as Go reads it, and rewriting a field.
//! - [`event`]: the JSON document.
//! - `deliver`: the publish path's traced variant of a delivery, and the account crossings.
//!
//! Cost: a message without headers pays nothing; one with headers pays [`may_trace`] (two
//! substring searches) at the connection, and the publisher one predictable branch per
//! delivery on a field that is `None`. Everything else runs only for traced messages.

pub(super) mod deliver;
pub mod event;
pub mod header;

use std::sync::Arc;

use nats_subject::is_valid_publish_subject;

pub use event::Compression;
pub use event::MsgTraceEvent;
use event::{now_ts, ConnKind, Egress, Ingress, SubjectMapping, TraceRequest, TraceStep};
pub use header::may_trace;
use header::{TraceHeaders, TRACE_DEST, TRACE_ONLY, TRACE_ORIGIN_ACCOUNT};

use crate::account::Account;
use crate::client::ClientHandle;

/// Egress errors, Go's texts.
const NO_ECHO: &str = "Not delivered because of no echo";
const SUB_DENY: &str = "Not delivered because subscription denies this subject";
const CLIENT_CLOSED: &str = "Not delivered because client is closed";
const AUTO_SUB_EXCEEDED: &str = "Not delivered because auto-unsubscribe exceeded";

/// Prefixes a client may not publish on, so not trace to either (Go's gateway-routed replies,
/// and Raft groups outside the system account).
const GATEWAY_REPLY_PREFIX: &[u8] = b"_GR_.";
const NRG_PREFIX: &[u8] = b"$NRG.";

/// The traced message's wish for a compressed event.
const ACCEPT_ENCODING: &[u8] = b"Accept-Encoding";

/// What a publish's headers ask for, before the destination's permission is checked.
pub enum TracePlan {
    /// No tracing; deliver as usual.
    Untraced,
    /// Drop the message: it was to be traced only, and cannot be traced.
    Skip,
    /// Deliver with `Nats-Trace-Dest: trace disabled`, so nothing downstream traces it.
    Disable,
    /// Trace it, once the publisher may publish on the destination.
    Trace(Box<TraceIntent>),
}

/// A trace the headers ask for: where to, and whether to deliver at all.
pub struct TraceIntent {
    pub dest: String,
    pub only: bool,
    headers: TraceHeaders,
}

/// Reads what `block` asks for, for a client of `account`; logs, as Go does, a trace that
/// cannot happen.
pub fn plan(block: &[u8], account: &Account, client: &ClientHandle) -> TracePlan {
    let Some(headers) = TraceHeaders::parse(block) else {
        return TracePlan::Untraced;
    };
    // A sampled `traceparent` alone: the account's setting decides (Nats-Trace-Only ignored).
    let external = !headers.dest_found;
    let only = !external
        && headers
            .first(TRACE_ONLY)
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "on"));
    if let Some(origin) = headers.first(TRACE_ORIGIN_ACCOUNT) {
        tracing::error!(
            "{} - Message tracing disabled because of header \"Nats-Trace-Origin-Account\" \
             with value={}",
            client.log_prefix(),
            natrium_gofmt::go_quote_bytes(origin.as_bytes())
        );
        return if only {
            TracePlan::Skip
        } else {
            TracePlan::Disable
        };
    }
    let dest = if external {
        let Some(setting) = account.state().spec.msg_trace.clone() else {
            return TracePlan::Untraced;
        };
        if !sampled(setting.sampling) {
            return TracePlan::Disable;
        }
        setting.dest
    } else {
        headers.first(TRACE_DEST).unwrap_or_default().to_owned()
    };
    if !is_valid_publish_subject(dest.as_bytes()) {
        tracing::error!(
            "{} - Destination {} is not valid, won't be able to trace events",
            client.log_prefix(),
            natrium_gofmt::go_quote_bytes(dest.as_bytes())
        );
        return if only {
            TracePlan::Skip
        } else {
            TracePlan::Untraced
        };
    }
    TracePlan::Trace(Box::new(TraceIntent {
        dest,
        only,
        headers,
    }))
}

/// Whether this message is among the `sampling` percent traced. Go draws 0 to 99 and traces
/// when the draw is at most `sampling` (one percent more than asked); so do we.
fn sampled(sampling: u8) -> bool {
    sampling >= 100 || fastrand::u8(..100) <= sampling
}

/// Whether the trace destination is one no client may publish on, whatever its permissions.
pub fn dest_reserved(dest: &[u8], in_system_account: bool) -> bool {
    dest.starts_with(GATEWAY_REPLY_PREFIX) || (dest.starts_with(NRG_PREFIX) && !in_system_account)
}

/// A message being traced: the event so far, and where it goes when done.
pub struct MsgTracer {
    /// The publisher's account: the event is published there.
    account: Arc<Account>,
    dest: String,
    only: bool,
    /// Published in the system account, whose own services take trace-only messages too.
    system: bool,
    compression: Compression,
    event: MsgTraceEvent,
    /// Set while the message is delivered in an account importing it as a stream.
    export: Option<ExportCrossing>,
}

/// The stream export being crossed (see [`MsgTracer::export`]).
struct ExportCrossing {
    importer: String,
    /// `allow_trace` on the import: without it, deliveries there are not traced.
    allow: bool,
    /// The export's subject and the importer's local one, to name subscriptions as Go's
    /// shadow subscriptions are named (in the exporter's terms).
    from: Box<[u8]>,
    local: Box<[u8]>,
}

/// A finished trace, for the system services to publish.
pub struct TraceReport {
    pub account: Arc<Account>,
    pub dest: String,
    pub compression: Compression,
    pub event: MsgTraceEvent,
}

impl MsgTracer {
    /// Starts the trace of a message from `client` in `account` (`system`: the system
    /// account), on `subject`, `msg_size` bytes with headers.
    pub fn new(
        intent: TraceIntent,
        (account, system): (Arc<Account>, bool),
        client: &ClientHandle,
        subject: &[u8],
        msg_size: usize,
    ) -> Box<Self> {
        let TraceIntent {
            dest,
            only,
            headers,
        } = intent;
        let compression = Compression::from_accept_encoding(headers.first(ACCEPT_ENCODING));
        let ingress = Ingress {
            ts: now_ts(),
            kind: ConnKind::Client,
            cid: client.cid,
            name: client.meta.lock().name.clone(),
            acc: account.name.clone(),
            subj: String::from_utf8_lossy(subject).into_owned(),
            error: String::new(),
        };
        Box::new(Self {
            account,
            dest,
            only,
            system,
            compression,
            event: MsgTraceEvent {
                request: TraceRequest {
                    header: headers.fields,
                    msg_size,
                },
                hops: 0,
                events: vec![TraceStep::Ingress(ingress)],
            },
            export: None,
        })
    }

    /// Whether the message is traced only, not delivered.
    pub fn trace_only(&self) -> bool {
        self.only
    }

    /// Records why the message was refused at the door.
    pub fn set_ingress_error(&mut self, error: String) {
        if let Some(TraceStep::Ingress(ingress)) = self.event.events.first_mut() {
            ingress.error = error;
        }
    }

    /// Records that a subject mapping sent the message on to `subject`.
    pub fn subject_mapped(&mut self, subject: &[u8]) {
        self.event
            .events
            .push(TraceStep::SubjectMapping(SubjectMapping {
                ts: now_ts(),
                to: String::from_utf8_lossy(subject).into_owned(),
            }));
    }

    fn ingress_account(&self) -> &str {
        match self.event.events.first() {
            Some(TraceStep::Ingress(ingress)) => &ingress.acc,
            _ => "",
        }
    }

    /// Records a delivery (or a refused one, with `error`) to `target`'s subscription on
    /// `subject` in queue group `queue`.
    fn egress(
        &mut self,
        target: &ClientHandle,
        subject: String,
        queue: Option<&[u8]>,
        error: &str,
    ) {
        let account = target.account_name();
        let acc = if account == self.ingress_account() {
            String::new()
        } else {
            account
        };
        self.event.events.push(TraceStep::Egress(Egress {
            ts: now_ts(),
            kind: ConnKind::Client,
            cid: target.cid,
            name: target.meta.lock().name.clone(),
            acc,
            sub: subject,
            queue: queue
                .map(|q| String::from_utf8_lossy(q).into_owned())
                .unwrap_or_default(),
            error: error.to_owned(),
        }));
    }

    /// The finished event, for the system services.
    pub fn into_report(self) -> TraceReport {
        TraceReport {
            account: self.account,
            dest: self.dest,
            compression: self.compression,
            event: self.event,
        }
    }
}

/// `Nats-Trace-Dest` and its value turning tracing off, for rewriting a header block.
pub fn disabled_headers(block: Option<&[u8]>) -> Vec<u8> {
    header::with_field(block, TRACE_DEST, header::TRACE_DEST_DISABLED)
}
