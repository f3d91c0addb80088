//! The consumer verbs other than create: `INFO`, `NAMES`, `LIST`, `DELETE`, `PAUSE`, `UNPIN`
//! and `LEADER.STEPDOWN` (refused as by a single Go server).

use std::sync::Arc;

use serde::Deserialize;

use super::consumer_json::{consumer_info, ListResponse, NamesResponse, PauseResponse, Success};
use super::request::Request;
use super::responses::{encode, Empty, Paged};
use super::router::ConsumerRoute;
use crate::advisory::ConsumerEvent;
use crate::clock::now_ns;
use crate::config::decode::decode_checked_embedded;
use crate::config::gotime::GoTime;
use crate::config::gotype::{GoStruct, GoType};
use crate::config::{decode_checked, decode_request};
use crate::consumer::check::is_valid_group_name;
use crate::consumer::update::set_static_metadata;
use crate::consumer::{lifecycle, Consumer};
use crate::errors::{table, ApiError};
use crate::stream::Stream;

/// How long an info waits for the acks queued before it (see `Engine::settle`).
pub const SETTLE_MAX: std::time::Duration = std::time::Duration::from_millis(50);

/// Go's page sizes of `NAMES` and `LIST`.
pub(super) const NAMES_PAGE: usize = 1024;
pub(super) const LIST_PAGE: usize = 256;

/// Answers the verbs of this module.
///
/// # Errors
/// The verb's refusal.
pub fn answer(req: &Request<'_>, route: &ConsumerRoute<'_>) -> Result<Vec<u8>, ApiError> {
    match route {
        ConsumerRoute::Info(stream, name) => info(req, stream, name),
        ConsumerRoute::Names(stream) => names(req, stream),
        ConsumerRoute::List(stream) => list(req, stream),
        ConsumerRoute::Delete(stream, name) => delete(req, stream, name),
        ConsumerRoute::Pause(stream, name) => pause(req, stream, name),
        ConsumerRoute::Unpin(stream, name) => unpin(req, stream, name),
        ConsumerRoute::LeaderStepdown
        | ConsumerRoute::Reset(..)
        | ConsumerRoute::Create(_)
        | ConsumerRoute::DurableCreate(..) => Err(table::CLUSTER_REQUIRED.err()),
    }
}

/// Go's `isEmptyRequest`: nothing, or an empty JSON object.
pub fn is_empty_request(body: &[u8]) -> bool {
    body.is_empty()
        || serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.as_object().map(serde_json::Map::is_empty))
            .unwrap_or(false)
}

/// Go's `isJSONObjectOrArray`: the first byte after JSON whitespace opens one.
fn is_json_object_or_array(body: &[u8]) -> bool {
    body.iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .is_some_and(|b| matches!(b, b'{' | b'['))
}

fn lookup(
    req: &Request<'_>,
    stream: &str,
    name: &str,
) -> Result<(Arc<Stream>, Arc<Consumer>), ApiError> {
    let stream = req
        .jsa
        .stream(stream)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let consumer = stream
        .consumers
        .lock()
        .get(name)
        .cloned()
        .ok_or_else(|| table::CONSUMER_NOT_FOUND.err())?;
    Ok((stream, consumer))
}

fn info(req: &Request<'_>, stream: &str, name: &str) -> Result<Vec<u8>, ApiError> {
    if !is_empty_request(req.body) {
        return Err(table::NOT_EMPTY_REQUEST.err());
    }
    let (stream, consumer) = lookup(req, stream, name)?;
    if let Some(engine) = req.jsa.engine(&stream.name) {
        engine.settle(SETTLE_MAX);
    }
    let info = consumer_info(&req.jsa.account, &stream, &consumer, true);
    Ok(encode("consumer_info_response", None, info))
}

static PAGED_REQUEST: GoStruct = GoStruct {
    name: "JSApiConsumersRequest",
    fields: &[("offset", GoType::Int("int", 64))],
};

#[derive(Deserialize, Default)]
#[serde(default)]
struct PagedRequest {
    offset: i64,
}

/// A stream, its listed consumers and the page's offset.
type Listed = (Arc<Stream>, Vec<Arc<Consumer>>, usize);

/// The page's offset a `NAMES` or `LIST` request asks for (none is 0).
pub(super) fn page_offset(req: &Request<'_>) -> Result<usize, ApiError> {
    if !is_json_object_or_array(req.body) {
        return Ok(0);
    }
    let paged: PagedRequest = decode_checked_embedded(
        req.body,
        &PAGED_REQUEST,
        "server.JSApiConsumersRequest",
        "ApiPagedRequest",
    )?;
    Ok(usize::try_from(paged.offset.max(0)).unwrap_or(usize::MAX))
}

/// The stream's listed (non-direct) consumers by name, and the page's offset.
fn listed(req: &Request<'_>, stream: &str) -> Result<Listed, ApiError> {
    let offset = page_offset(req)?;
    let stream = req
        .jsa
        .stream(stream)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let consumers: Vec<Arc<Consumer>> = stream
        .consumers
        .lock()
        .values()
        .filter(|c| !c.is_direct())
        .cloned()
        .collect();
    let offset = offset.min(consumers.len());
    Ok((stream, consumers, offset))
}

fn names(req: &Request<'_>, stream: &str) -> Result<Vec<u8>, ApiError> {
    let (_, consumers, offset) = listed(req, stream)?;
    let page = consumers
        .iter()
        .skip(offset)
        .take(NAMES_PAGE)
        .map(|c| c.name.clone())
        .collect();
    Ok(encode(
        "consumer_names_response",
        None,
        NamesResponse {
            paged: Paged {
                total: consumers.len(),
                offset,
                limit: NAMES_PAGE,
            },
            consumers: page,
        },
    ))
}

fn list(req: &Request<'_>, stream: &str) -> Result<Vec<u8>, ApiError> {
    let (stream, consumers, offset) = listed(req, stream)?;
    let page = consumers
        .iter()
        .skip(offset)
        .take(LIST_PAGE)
        .map(|c| consumer_info(&req.jsa.account, &stream, c, false))
        .collect();
    Ok(encode(
        "consumer_list_response",
        None,
        ListResponse {
            paged: Paged {
                total: consumers.len(),
                offset,
                limit: LIST_PAGE,
            },
            consumers: page,
            missing: Vec::new(),
            offline: std::collections::BTreeMap::new(),
        },
    ))
}

fn delete(req: &Request<'_>, stream: &str, name: &str) -> Result<Vec<u8>, ApiError> {
    if !is_empty_request(req.body) {
        return Err(table::NOT_EMPTY_REQUEST.err());
    }
    let stream = req
        .jsa
        .stream(stream)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let consumer = lifecycle::delete(&stream, name)?;
    if let Some(engine) = req.jsa.engine(&stream.name) {
        engine.farewell(&consumer);
    }
    req.advise_consumer(ConsumerEvent::Deleted {
        stream: stream.name.clone(),
        consumer: name.to_owned(),
    });
    Ok(encode(
        "consumer_delete_response",
        None,
        Success { success: true },
    ))
}

static PAUSE_REQUEST: GoStruct = GoStruct {
    name: "JSApiConsumerPauseRequest",
    fields: &[("pause_until", GoType::Time)],
};

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct PauseRequest {
    pause_until: Option<GoTime>,
}

/// A pause body: read only when it is a JSON object or array, as Go does.
///
/// # Errors
/// 10025.
pub fn decode_pause(body: &[u8]) -> Result<PauseRequest, ApiError> {
    if !is_json_object_or_array(body) {
        return Ok(PauseRequest::default());
    }
    decode_checked(body, &PAUSE_REQUEST, "server.JSApiConsumerPauseRequest")
}

fn pause(req: &Request<'_>, stream: &str, name: &str) -> Result<Vec<u8>, ApiError> {
    let request = decode_pause(req.body)?;
    let (stream, consumer) = lookup(req, stream, name)?;
    let until = request
        .pause_until
        .map(|t| t.utc())
        .filter(|t| !t.is_zero());
    let mut config = consumer.config();
    let changed = config.pause_until.map(|t| t.unix_nanos()) != until.map(|t| t.unix_nanos());
    config.pause_until = until;
    set_static_metadata(&mut config);
    lifecycle::update(
        &req.js.consumer_files(req.jsa.name(), &consumer.stream),
        &consumer,
        config,
    )
    .map_err(|e| table::CONSUMER_STORE_FAILED.with(&[("err", &e.description)]))?;
    if let Some(engine) = req.jsa.engine(&stream.name) {
        // Paused or resumed: its waiting requests are looked at again.
        engine.look_at(&consumer.name);
    }
    let remaining = until.map_or(0, |t| t.unix_nanos().saturating_sub(now_ns()).max(0));
    let until_text = until.map_or_else(
        || super::consumer_json::ZERO_TIME.to_owned(),
        |t| t.to_go_string(),
    );
    if changed {
        req.advise_consumer(ConsumerEvent::Paused {
            stream: stream.name.clone(),
            consumer: consumer.name.clone(),
            paused: remaining > 0,
            until: until_text.clone(),
        });
    }
    Ok(encode(
        "consumer_pause_response",
        None,
        PauseResponse {
            paused: remaining > 0,
            pause_until: until_text,
            pause_remaining: remaining,
        },
    ))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct UnpinRequest {
    group: String,
}

/// An unpin body: Go's plain decoding, then the group's checks.
///
/// # Errors
/// 10025, 10161.
pub fn decode_unpin(body: &[u8]) -> Result<UnpinRequest, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(table::INVALID_JSON.with(&[("err", &"unexpected end of JSON input")]));
    }
    let request: UnpinRequest = decode_request(body)?;
    if request.group.is_empty() {
        return Err(table::INVALID_JSON.with(&[("err", &"consumer group not specified")]));
    }
    if !is_valid_group_name(&request.group) {
        return Err(table::CONSUMER_INVALID_GROUP_NAME.err());
    }
    Ok(request)
}

fn unpin(req: &Request<'_>, stream: &str, name: &str) -> Result<Vec<u8>, ApiError> {
    let request = decode_unpin(req.body)?;
    let (stream, consumer) = lookup(req, stream, name)?;
    if !consumer.config().priority_groups.contains(&request.group) {
        return Err(table::CONSUMER_INVALID_PRIORITY_GROUP.err());
    }
    consumer.core.lock().delivery.pin.clear();
    if let Some(engine) = req.jsa.engine(&stream.name) {
        // The next message may pin another requester.
        engine.look_at(&consumer.name);
    }
    req.advise_consumer(ConsumerEvent::Unpinned {
        stream: stream.name.clone(),
        consumer: consumer.name.clone(),
        group: request.group,
    });
    Ok(encode("consumer_unpin_response", None, Empty {}))
}
