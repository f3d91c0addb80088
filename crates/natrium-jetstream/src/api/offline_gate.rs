//! Requests naming an offline stream (`crate::offline`), answered before the verbs' own
//! handlers as Go's single server answers for its stand-in: most refused with 10194 and the
//! reason, a create or restore of its name refused as taken, a delete removing it, `MSG.GET`
//! and the consumer `UNPIN`/`PAUSE` left unanswered.

use super::request::Request;
use super::responses::{encode, Success};
use super::router::{ConsumerRoute, Route};
use crate::errors::{table, ApiError};

/// What the gate made of a request.
pub enum Gate {
    /// Not about an offline stream: the verb's handler answers.
    Pass,
    /// Go lets it time out.
    Silent,
    /// This answer (the response's kind, and its body or refusal).
    Answer(&'static str, Result<Vec<u8>, ApiError>),
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
    let Some(reason) = req.jsa.offline.reason(name) else {
        return Gate::Pass;
    };
    let Some(kind) = route.kind() else {
        return Gate::Silent;
    };
    let refused = |err: ApiError| Gate::Answer(kind, Err(err));
    match route {
        Route::MsgGet(_) | Route::Consumer(ConsumerRoute::Unpin(..) | ConsumerRoute::Pause(..)) => {
            Gate::Silent
        }
        Route::StreamCreate(_) => refused(table::STREAM_NAME_EXIST.err()),
        Route::StreamRestore(_) => refused(table::STREAM_NAME_EXIST_RESTORE_FAILED.err()),
        Route::StreamDelete(_) => Gate::Answer(kind, delete(req, name)),
        _ => refused(table::STREAM_OFFLINE_REASON.with(&[("err", &reason)])),
    }
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
