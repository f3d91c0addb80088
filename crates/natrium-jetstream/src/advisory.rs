//! JetStream advisories on `$JS.EVENT.ADVISORY.…`, published in the account they concern and
//! only when someone there listens (Go skips building them otherwise).

use std::sync::Arc;

use natrium_core::account::Account;
use natrium_core::internal::InternalClient;
use serde::Serialize;

use crate::event::{has_interest, typed_json};

/// `io.nats.jetstream.advisory.v1.api_audit`.
#[derive(Serialize)]
pub struct ApiAudit<'a> {
    pub server: &'a str,
    /// The requester as the `Nats-Request-Info` header described it, verbatim.
    pub client: Option<Box<serde_json::value::RawValue>>,
    pub subject: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub request: &'a str,
    pub response: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub domain: &'a str,
}

/// What happened to a stream (`io.nats.jetstream.advisory.v1.stream_action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamAction {
    Create,
    Delete,
    Modify,
}

impl StreamAction {
    fn word(self) -> &'static str {
        match self {
            StreamAction::Create => "create",
            StreamAction::Delete => "delete",
            StreamAction::Modify => "modify",
        }
    }

    fn subject_verb(self) -> &'static str {
        match self {
            StreamAction::Create => "CREATED",
            StreamAction::Delete => "DELETED",
            StreamAction::Modify => "UPDATED",
        }
    }
}

#[derive(Serialize)]
struct StreamActionBody<'a> {
    stream: &'a str,
    action: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

fn publish<T: Serialize>(
    client: &mut InternalClient,
    account: &Arc<Account>,
    subject: &str,
    kind: &str,
    body: T,
) {
    if !has_interest(account, subject) {
        return;
    }
    let json = typed_json(kind, body);
    client.publish_in(account, subject, None, &json);
}

/// Where API audits go.
pub const API_AUDIT_SUBJECT: &str = "$JS.EVENT.ADVISORY.API";

/// The audit of one API request and its answer (`$JS.EVENT.ADVISORY.API`); `audit` is built
/// only when someone listens.
pub fn api_audit<'a>(
    client: &mut InternalClient,
    account: &Arc<Account>,
    audit: impl FnOnce() -> ApiAudit<'a>,
) {
    if let Some(json) = api_audit_body(account, audit) {
        client.publish_in(account, API_AUDIT_SUBJECT, None, &json);
    }
}

/// The body of an API audit, when someone listens (for one sent later).
pub fn api_audit_body<'a>(
    account: &Arc<Account>,
    audit: impl FnOnce() -> ApiAudit<'a>,
) -> Option<Vec<u8>> {
    has_interest(account, API_AUDIT_SUBJECT)
        .then(|| typed_json("io.nats.jetstream.advisory.v1.api_audit", audit()))
}

#[derive(Serialize)]
struct LimitReachedBody<'a> {
    server: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
    dropped: u64,
}

/// The API queue overflowed and `dropped` requests went (`$JS.EVENT.ADVISORY.API.LIMIT_REACHED`,
/// in the system account, as Go sends it).
pub fn api_limit_reached(
    client: &mut InternalClient,
    server: &natrium_core::Server,
    domain: &str,
    dropped: u64,
) {
    let system = server.system_account();
    publish(
        client,
        &system,
        "$JS.EVENT.ADVISORY.API.LIMIT_REACHED",
        "io.nats.jetstream.advisory.v1.api_limit_reached",
        LimitReachedBody {
            server: server.name(),
            domain,
            dropped,
        },
    );
}

/// A stream created, updated or deleted (`$JS.EVENT.ADVISORY.STREAM.<VERB>.<stream>`).
pub fn stream_action(
    client: &mut InternalClient,
    account: &Arc<Account>,
    stream: &str,
    action: StreamAction,
    domain: &str,
) {
    let subject = format!(
        "$JS.EVENT.ADVISORY.STREAM.{}.{stream}",
        action.subject_verb()
    );
    publish(
        client,
        account,
        &subject,
        "io.nats.jetstream.advisory.v1.stream_action",
        StreamActionBody {
            stream,
            action: action.word(),
            domain,
        },
    );
}

/// Who asked, as Go's advisories carry it (`null` when unknown).
pub type ClientInfo = Option<Box<serde_json::value::RawValue>>;

#[derive(Serialize)]
struct SnapshotCreateBody<'a> {
    stream: &'a str,
    state: &'a crate::api::responses::StreamStateJson,
    client: &'a ClientInfo,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

/// A snapshot began (`$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE.<stream>`).
pub fn snapshot_create(
    client: &mut InternalClient,
    account: &Arc<Account>,
    stream: &str,
    state: &crate::api::responses::StreamStateJson,
    who: &ClientInfo,
    domain: &str,
) {
    publish(
        client,
        account,
        &format!("$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_CREATE.{stream}"),
        "io.nats.jetstream.advisory.v1.snapshot_create",
        SnapshotCreateBody {
            stream,
            state,
            client: who,
            domain,
        },
    );
}

/// When a transfer started and ended (Unix nanoseconds).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub start_ns: i64,
    pub end_ns: i64,
}

#[derive(Serialize)]
struct CompleteBody<'a> {
    stream: &'a str,
    start: String,
    end: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<i64>,
    client: &'a ClientInfo,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    error: &'a str,
}

/// A snapshot ended, with its error if it failed
/// (`$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE.<stream>`).
pub fn snapshot_complete(
    client: &mut InternalClient,
    account: &Arc<Account>,
    stream: &str,
    span: Span,
    who: &ClientInfo,
    (domain, error): (&str, &str),
) {
    let rfc = natrium_gofmt::time::rfc3339_nanos;
    publish(
        client,
        account,
        &format!("$JS.EVENT.ADVISORY.STREAM.SNAPSHOT_COMPLETE.{stream}"),
        "io.nats.jetstream.advisory.v1.snapshot_complete",
        CompleteBody {
            stream,
            start: rfc(span.start_ns),
            end: rfc(span.end_ns),
            bytes: None,
            client: who,
            domain,
            error,
        },
    );
}

#[derive(Serialize)]
struct RestoreCreateBody<'a> {
    stream: &'a str,
    client: &'a ClientInfo,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

/// A restore began (`$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE.<stream>`).
pub fn restore_create(
    client: &mut InternalClient,
    account: &Arc<Account>,
    stream: &str,
    who: &ClientInfo,
    domain: &str,
) {
    publish(
        client,
        account,
        &format!("$JS.EVENT.ADVISORY.STREAM.RESTORE_CREATE.{stream}"),
        "io.nats.jetstream.advisory.v1.restore_create",
        RestoreCreateBody {
            stream,
            client: who,
            domain,
        },
    );
}

/// A restore ended after receiving `bytes` (`$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE.<stream>`).
pub fn restore_complete(
    client: &mut InternalClient,
    account: &Arc<Account>,
    (stream, bytes): (&str, u64),
    span: Span,
    who: &ClientInfo,
    domain: &str,
) {
    let rfc = natrium_gofmt::time::rfc3339_nanos;
    publish(
        client,
        account,
        &format!("$JS.EVENT.ADVISORY.STREAM.RESTORE_COMPLETE.{stream}"),
        "io.nats.jetstream.advisory.v1.restore_complete",
        CompleteBody {
            stream,
            start: rfc(span.start_ns),
            end: rfc(span.end_ns),
            bytes: Some(i64::try_from(bytes).unwrap_or(i64::MAX)),
            client: who,
            domain,
            error: "",
        },
    );
}

/// A consumer advisory to send once the request is answered.
#[derive(Debug, Clone)]
pub enum ConsumerEvent {
    Created {
        stream: String,
        consumer: String,
    },
    Deleted {
        stream: String,
        consumer: String,
    },
    /// `until` in Go's JSON time text; `paused` whether it is still ahead.
    Paused {
        stream: String,
        consumer: String,
        paused: bool,
        until: String,
    },
    Unpinned {
        stream: String,
        consumer: String,
        group: String,
    },
}

#[derive(Serialize)]
struct ConsumerActionBody<'a> {
    stream: &'a str,
    consumer: &'a str,
    action: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

#[derive(Serialize)]
struct ConsumerPauseBody<'a> {
    stream: &'a str,
    consumer: &'a str,
    paused: bool,
    pause_until: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

#[derive(Serialize)]
struct ConsumerUnpinnedBody<'a> {
    account: &'a str,
    stream: &'a str,
    consumer: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
    group: &'a str,
    reason: &'a str,
}

/// A consumer created, deleted, paused or unpinned (`$JS.EVENT.ADVISORY.CONSUMER.…`).
pub fn consumer_event(
    client: &mut InternalClient,
    account: &Arc<Account>,
    event: &ConsumerEvent,
    domain: &str,
) {
    const ACTION: &str = "io.nats.jetstream.advisory.v1.consumer_action";
    match event {
        ConsumerEvent::Created { stream, consumer }
        | ConsumerEvent::Deleted { stream, consumer } => {
            let (verb, action) = match event {
                ConsumerEvent::Created { .. } => ("CREATED", "create"),
                _ => ("DELETED", "delete"),
            };
            let subject = format!("$JS.EVENT.ADVISORY.CONSUMER.{verb}.{stream}.{consumer}");
            let body = ConsumerActionBody {
                stream,
                consumer,
                action,
                domain,
            };
            publish(client, account, &subject, ACTION, body);
        }
        ConsumerEvent::Paused {
            stream,
            consumer,
            paused,
            until,
        } => {
            let subject = format!("$JS.EVENT.ADVISORY.CONSUMER.PAUSE.{stream}.{consumer}");
            let body = ConsumerPauseBody {
                stream,
                consumer,
                paused: *paused,
                pause_until: until,
                domain,
            };
            let kind = "io.nats.jetstream.advisory.v1.consumer_pause";
            publish(client, account, &subject, kind, body);
        }
        ConsumerEvent::Unpinned {
            stream,
            consumer,
            group,
        } => {
            let subject = format!("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.{stream}.{consumer}");
            let body = ConsumerUnpinnedBody {
                account: &account.name,
                stream,
                consumer,
                domain,
                group,
                reason: "admin",
            };
            let kind = "io.nats.jetstream.advisory.v1.consumer_group_unpinned";
            publish(client, account, &subject, kind, body);
        }
    }
}
