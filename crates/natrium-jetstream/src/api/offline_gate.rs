//! Requests naming an offline stream (`crate::offline`), answered before the verbs' own
//! handlers as Go's single server answers for its stand-in:
//! - `STREAM.INFO`, `UPDATE` and a consumer create: 10194 with the stream's reason, held back
//!   as Go holds it (`super::delayed`);
//! - a create of its name: answered with its info when the config is the stored one, else
//!   refused as taken (`create_of_offline`); a restore: refused as taken; a delete: removes
//!   it and its files; a purge, message delete or snapshot: fails as on a closed stream;
//! - `MSG.GET` (once its request passes Go's checks) and the consumer `UNPIN`/`PAUSE`/`RESET`:
//!   left unanswered;
//! - its unsupported consumers: `CONSUMER.INFO` 10195 with the consumer's reason (held
//!   back), `NAMES` and `LIST` name them (the list under `missing` and `offline`), and a
//!   `DELETE` succeeds but leaves the consumer and the stream as they are (Go's stand-in is
//!   already stopped, so its delete does nothing); its other consumers are not found.

use super::consumer_json::{ListResponse, NamesResponse};
use super::consumer_verbs::{is_empty_request, page_offset, LIST_PAGE, NAMES_PAGE};
use super::request::Request;
use super::responses::{
    encode, Paged, StreamCreateResponse, StreamInfoJson, StreamStateJson, Success,
};
use super::router::{ConsumerRoute, Route};
use crate::config::metadata::with_dynamic_metadata;
use crate::config::StreamConfig;
use crate::errors::{table, ApiError};
use crate::offline::OfflineStream;

/// What the gate made of a request.
pub enum Gate {
    /// Not about an offline stream: the verb's handler answers.
    Pass,
    /// Go lets it time out.
    Silent,
    /// This answer (the response's kind, and its body or refusal).
    Answer(&'static str, Result<Vec<u8>, ApiError>),
    /// This refusal, sent once Go's delay has passed (the response's kind).
    Delayed(&'static str, ApiError),
}

/// The stream a request names, if any.
fn stream_of<'a>(route: &Route<'a>) -> Option<&'a str> {
    match route {
        Route::StreamCreate(n)
        | Route::StreamUpdate(n)
        | Route::StreamInfo(n)
        | Route::StreamDelete(n)
        | Route::StreamPurge(n)
        | Route::MsgGet(n)
        | Route::MsgDelete(n)
        | Route::StreamSnapshot(n)
        | Route::StreamRestore(n) => Some(n),
        Route::Consumer(c) => match c {
            ConsumerRoute::Create(rest) => rest.split('.').next(),
            ConsumerRoute::DurableCreate(s, _)
            | ConsumerRoute::Info(s, _)
            | ConsumerRoute::Delete(s, _)
            | ConsumerRoute::Pause(s, _)
            | ConsumerRoute::Unpin(s, _)
            | ConsumerRoute::Reset(s, _)
            | ConsumerRoute::Names(s)
            | ConsumerRoute::List(s) => Some(s),
            ConsumerRoute::LeaderStepdown => None,
        },
        _ => None,
    }
}

pub fn gate(req: &Request<'_>, route: &Route<'_>) -> Gate {
    if req.jsa.offline.is_empty() {
        return Gate::Pass;
    }
    let Some(name) = stream_of(route) else {
        return Gate::Pass;
    };
    let Some(stream) = req.jsa.offline.get(name) else {
        return Gate::Pass;
    };
    let Some(kind) = route.kind() else {
        return Gate::Silent;
    };
    let refused = |err: ApiError| Gate::Answer(kind, Err(err));
    let offline = || table::STREAM_OFFLINE_REASON.with(&[("err", &stream.reason)]);
    match route {
        // Go checks the request before it finds the stream offline.
        Route::MsgGet(_) => match super::msg_get::checked(req.body) {
            Ok(_) => Gate::Silent,
            Err(err) => refused(err),
        },
        Route::Consumer(
            ConsumerRoute::Unpin(..) | ConsumerRoute::Pause(..) | ConsumerRoute::Reset(..),
        ) => Gate::Silent,
        // A create is checked first (`create_of_offline`).
        Route::StreamCreate(_) => Gate::Pass,
        // Go's stand-in has no running store: the verb fails as on a closed stream.
        Route::StreamPurge(_) => refused(table::STREAM_GENERAL_ERROR_F.with(CLOSED)),
        Route::MsgDelete(_) | Route::StreamSnapshot(_) if is_empty_request(req.body) => {
            refused(table::BAD_REQUEST.err())
        }
        Route::MsgDelete(_) => refused(table::STREAM_MSG_DELETE_FAILED_F.with(CLOSED)),
        Route::StreamSnapshot(_) => refused(table::STREAM_SNAPSHOT.with(CLOSED)),
        Route::StreamRestore(_) => refused(table::STREAM_NAME_EXIST_RESTORE_FAILED.err()),
        Route::StreamDelete(_) => Gate::Answer(kind, delete(req, name)),
        Route::StreamInfo(_)
        | Route::StreamUpdate(_)
        | Route::Consumer(ConsumerRoute::Create(_) | ConsumerRoute::DurableCreate(..)) => {
            Gate::Delayed(kind, offline())
        }
        Route::Consumer(ConsumerRoute::Info(_, consumer)) => {
            match stream.consumers.get(*consumer) {
                Some(reason) => Gate::Delayed(
                    kind,
                    table::CONSUMER_OFFLINE_REASON.with(&[("err", reason)]),
                ),
                None => refused(table::CONSUMER_NOT_FOUND.err()),
            }
        }
        Route::Consumer(ConsumerRoute::Delete(_, consumer)) => {
            Gate::Answer(kind, delete_consumer(req, &stream, consumer))
        }
        Route::Consumer(ConsumerRoute::Names(_)) => Gate::Answer(kind, names(req, &stream)),
        Route::Consumer(ConsumerRoute::List(_)) => Gate::Answer(kind, list(req, &stream)),
        _ => refused(offline()),
    }
}

/// The error text of a verb on a closed stream.
const CLOSED: &[(&str, &dyn std::fmt::Display)] = &[("err", &"stream closed")];

/// A create of offline stream `name` with `config` (checked and defaulted): as Go, one whose
/// config is the stored one (metadata aside) is answered with the offline stream's info and
/// changes nothing; any other is refused as the name taken. `None` if `name` is not offline.
pub fn create_of_offline(
    req: &Request<'_>,
    name: &str,
    config: &StreamConfig,
) -> Option<Result<Vec<u8>, ApiError>> {
    let stream = req.jsa.offline.get(name)?;
    let mut stored = stream.config.clone();
    stored.metadata.clone_from(&config.metadata);
    if stored != *config {
        return Some(Err(table::STREAM_NAME_EXIST.err()));
    }
    let rfc = natrium_gofmt::time::rfc3339_nanos;
    let context = super::streams::context(req, stream.config.storage);
    let info = StreamInfoJson {
        config: with_dynamic_metadata(&stream.config, &context),
        created: rfc(stream.created_ns),
        state: StreamStateJson::of(&stream.state),
        cluster: None,
        mirror: None,
        sources: Vec::new(),
        ts: rfc(crate::clock::now_ns()),
    };
    let body = StreamCreateResponse {
        info,
        did_create: true,
    };
    Some(Ok(encode("stream_create_response", None, body)))
}

/// Removes the offline stream `name` and its files.
fn delete(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    let Some(stream) = req.jsa.offline.remove(name) else {
        return Err(table::STREAM_NOT_FOUND.err());
    };
    if let Err(err) = std::fs::remove_dir_all(&stream.dir) {
        tracing::warn!(
            "JetStream could not remove offline stream '{} > {name}': {err}",
            req.jsa.name()
        );
    }
    Ok(encode(
        "stream_delete_response",
        None,
        Success { success: true },
    ))
}

/// A delete of an offline stream's consumer: Go's stand-in for an unsupported one is already
/// stopped, so its delete succeeds and changes nothing; any other is not found.
fn delete_consumer(
    req: &Request<'_>,
    stream: &OfflineStream,
    consumer: &str,
) -> Result<Vec<u8>, ApiError> {
    if !is_empty_request(req.body) {
        return Err(table::NOT_EMPTY_REQUEST.err());
    }
    if !stream.consumers.contains_key(consumer) {
        return Err(table::CONSUMER_NOT_FOUND.err());
    }
    Ok(encode(
        "consumer_delete_response",
        None,
        Success { success: true },
    ))
}

/// The page of an offline stream's consumers (its unsupported ones) a request asks for, with
/// their number and the page's offset.
fn page<'s>(
    req: &Request<'_>,
    stream: &'s OfflineStream,
) -> Result<(impl Iterator<Item = (&'s String, &'s String)>, Paged), ApiError> {
    let total = stream.consumers.len();
    let offset = page_offset(req)?.min(total);
    let paged = Paged {
        total,
        offset,
        limit: 0,
    };
    Ok((stream.consumers.iter().skip(offset), paged))
}

fn names(req: &Request<'_>, stream: &OfflineStream) -> Result<Vec<u8>, ApiError> {
    let (consumers, paged) = page(req, stream)?;
    let consumers = consumers
        .take(NAMES_PAGE)
        .map(|(name, _)| name.clone())
        .collect();
    let paged = Paged {
        limit: NAMES_PAGE,
        ..paged
    };
    let body = NamesResponse { paged, consumers };
    Ok(encode("consumer_names_response", None, body))
}

/// As Go: every offline consumer past the offset is named, none counting towards the page.
fn list(req: &Request<'_>, stream: &OfflineStream) -> Result<Vec<u8>, ApiError> {
    let (consumers, paged) = page(req, stream)?;
    let (missing, offline) = consumers
        .map(|(name, reason)| (name.clone(), (name.clone(), reason.clone())))
        .unzip();
    let body = ListResponse {
        paged: Paged {
            limit: LIST_PAGE,
            ..paged
        },
        consumers: Vec::new(),
        missing,
        offline,
    };
    Ok(encode("consumer_list_response", None, body))
}
