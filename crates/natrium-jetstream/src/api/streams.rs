//! The stream verbs: CREATE, UPDATE, DELETE, PURGE, NAMES, LIST, MSG.DELETE (INFO is in
//! [`super::stream_info`], MSG.GET in [`super::msg_get`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::request::Request;
use super::responses::{
    encode, ClusterJson, Empty, Paged, PurgeResponse, StreamCreateResponse, StreamInfoJson,
    StreamListResponse, StreamNamesResponse, StreamStateJson, Success,
};
use crate::advisory::StreamAction;
use crate::clock::now_ns;
use crate::config::context::CheckContext;
use crate::config::metadata::with_dynamic_metadata;
use crate::config::stream::Storage;
use crate::config::{decode_request, decode_stream_request, StreamConfig};
use crate::errors::{table, ApiError};
use crate::stream::ingest::store_failed;
use crate::stream::Stream;

/// Go's page sizes for NAMES and LIST.
const NAMES_PAGE: usize = 1024;
const LIST_PAGE: usize = 256;

/// The checks' view of this server and account.
pub(crate) fn context(req: &Request<'_>, storage: Storage) -> CheckContext {
    let jsa = Arc::clone(req.jsa);
    let limits = req.jsa.limits();
    let per_stream = match storage {
        Storage::Memory => limits.memory_max_stream_bytes,
        Storage::File => limits.store_max_stream_bytes,
    };
    CheckContext {
        max_msg_size_server: req.js.server.config().max_payload as i64,
        duplicate_window_max: req
            .js
            .server_limits()
            .duplicate_window
            .map(|d| d.as_nanos() as i64),
        max_bytes_required: limits.max_bytes_required,
        account_max_stream_bytes: (per_stream > 0).then_some(per_stream),
        stream_lookup: Some(Arc::new(move |name: &str| {
            jsa.stream(name).map(|s| s.core.lock().config.clone())
        })),
        ..CheckContext::default()
    }
}

/// A stream's info document as of now.
pub fn stream_info(
    req: &Request<'_>,
    stream: &Stream,
    cluster: bool,
    dynamic: bool,
) -> StreamInfoJson {
    stream_info_detailed(req, stream, cluster, dynamic, false)
}

/// A stream's info document, with the list of deleted sequences when `deleted_details`.
pub fn stream_info_detailed(
    req: &Request<'_>,
    stream: &Stream,
    cluster: bool,
    dynamic: bool,
    deleted_details: bool,
) -> StreamInfoJson {
    let core = stream.core.lock();
    let state = core.ingest.store.state();
    let config = if dynamic {
        with_dynamic_metadata(&core.config, &context(req, core.config.storage))
    } else {
        core.config.clone()
    };
    drop(core);
    let rfc = natrium_gofmt::time::rfc3339_nanos;
    let sourcing = req.jsa.sourcing(&stream.name);
    StreamInfoJson {
        mirror: sourcing.as_ref().and_then(|s| s.mirror_info()),
        sources: sourcing
            .as_ref()
            .map(|s| s.sources_info())
            .unwrap_or_default(),
        config,
        created: rfc(stream.created_ns),
        state: StreamStateJson {
            deleted: if deleted_details {
                state.deleted.clone()
            } else {
                Vec::new()
            },
            consumer_count: stream.public_consumer_count(),
            ..StreamStateJson::of(&state)
        },
        cluster: cluster.then(|| ClusterJson {
            leader: req.js.server.name().to_owned(),
        }),
        ts: rfc(now_ns()),
    }
}

pub fn create(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    const KIND: &str = "stream_create_response";
    let request = decode_stream_request(req.body)?;
    let config = request.config;
    if config.name != name {
        return Err(table::STREAM_MISMATCH.err());
    }
    let ctx = CheckContext {
        pedantic: request.pedantic,
        ..context(req, config.storage)
    };
    let config = config.prepared_for_create(&ctx)?;
    // Go checks the account's limits on the config as sent, then again once defaulted.
    req.jsa
        .check_create_limits(req.js, &config, request.storage_sent)?;
    let config = config.checked_after_prepare(&ctx)?;
    if let Some(existing) = req.jsa.stream(name) {
        if existing.core.lock().config != config {
            return Err(table::STREAM_NAME_EXIST.err());
        }
        let info = stream_info(req, &existing, false, true);
        return Ok(encode(
            KIND,
            None,
            StreamCreateResponse {
                info,
                did_create: true,
            },
        ));
    }
    if let Some(answer) = super::offline_gate::create_of_offline(req, name, &config) {
        return answer;
    }
    req.jsa.check_stream_limits(req.js, &config)?;
    check_overlap(req, &config, None)?;
    let stream = req.jsa.create_stream(req.js, config)?;
    req.advise(name, StreamAction::Create);
    let info = stream_info(req, &stream, false, true);
    Ok(encode(
        KIND,
        None,
        StreamCreateResponse {
            info,
            did_create: true,
        },
    ))
}

pub fn update(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    const KIND: &str = "stream_update_response";
    let request = decode_stream_request(req.body)?;
    let config = request.config;
    let ctx = CheckContext {
        pedantic: request.pedantic,
        ..context(req, config.storage)
    };
    // Go checks the config before it compares the name and looks the stream up.
    let config = crate::config::check_stream_config(config, &ctx)?;
    if config.name != name {
        return Err(table::STREAM_MISMATCH.err());
    }
    let stream = req
        .jsa
        .stream(name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let old = stream.core.lock().config.clone();
    let config = config.checked_for_update(&old, &ctx)?;
    req.jsa.check_update_limits(req.js, &config, &old)?;
    check_overlap(req, &config, Some(name))?;
    req.jsa.update_stream(req.js, &stream, config)?;
    req.advise(name, StreamAction::Modify);
    let info = stream_info(req, &stream, false, true);
    Ok(encode(KIND, None, info))
}

/// Refuses subjects that another stream of the account already captures (Go's 10065).
pub(crate) fn check_overlap(
    req: &Request<'_>,
    config: &StreamConfig,
    this: Option<&str>,
) -> Result<(), ApiError> {
    if req.jsa.subjects_overlap(config, this) {
        return Err(table::STREAM_SUBJECT_OVERLAP.err());
    }
    Ok(())
}

pub fn delete(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    req.jsa.delete_stream(req.js, name)?;
    req.advise(name, StreamAction::Delete);
    req.js.release_heap();
    Ok(encode(
        "stream_delete_response",
        None,
        Success { success: true },
    ))
}

/// `{"filter":…,"seq":…,"keep":…}`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PurgeRequest {
    filter: Option<String>,
    seq: u64,
    keep: u64,
}

pub fn purge(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    let stream = req
        .jsa
        .stream(name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let purge: PurgeRequest = if req.body.is_empty() {
        PurgeRequest::default()
    } else {
        decode_request(req.body)?
    };
    let mut core = stream.core.lock();
    if core.config.sealed {
        return Err(table::STREAM_SEALED.err());
    }
    if core.config.deny_purge {
        return Err(table::STREAM_PURGE_FAILED_F.with(&[("err", &"stream purge not permitted")]));
    }
    let store = &mut core.ingest.store;
    let filter = purge.filter.unwrap_or_default();
    let purged = if filter.is_empty() && purge.seq == 0 && purge.keep == 0 {
        store.purge()
    } else {
        store.purge_ex(filter.as_bytes(), purge.seq, purge.keep)
    }
    .map_err(|e| table::STREAM_PURGE_FAILED_F.with(&[("err", &e)]))?;
    let _ = store.sync();
    drop(core);
    req.js.release_heap();
    Ok(encode(
        "stream_purge_response",
        None,
        PurgeResponse {
            success: true,
            purged,
        },
    ))
}

/// `{"offset":…,"subject":…}` of NAMES and LIST.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ListRequest {
    /// Go takes any integer: below zero means 0, past the end means the end.
    offset: i64,
    subject: Option<String>,
}

/// A stream a listing names: running, or offline with its reason.
enum Listed {
    Running(Arc<Stream>),
    Offline(String, String),
}

impl Listed {
    fn name(&self) -> &str {
        match self {
            Listed::Running(s) => &s.name,
            Listed::Offline(name, _) => name,
        }
    }
}

/// The account's streams, running and offline, by name, matching the request's subject.
fn listed(req: &Request<'_>) -> Result<(Vec<Listed>, usize), ApiError> {
    let list: ListRequest = if req.body.is_empty() {
        ListRequest::default()
    } else {
        decode_request(req.body)?
    };
    let filter = list.subject.filter(|s| !s.is_empty());
    let matches = |subjects: &[String]| {
        filter.as_deref().is_none_or(|f| {
            subjects
                .iter()
                .any(|subj| nats_subject::subjects_collide(subj.as_bytes(), f.as_bytes()))
        })
    };
    let mut streams: Vec<Listed> = req
        .jsa
        .streams()
        .into_iter()
        .filter(|s| matches(&s.core.lock().config.subjects))
        .map(Listed::Running)
        .collect();
    for off in req.jsa.offline.all() {
        if matches(&off.config.subjects) {
            streams.push(Listed::Offline(off.config.name, off.reason));
        }
    }
    streams.sort_by(|a, b| a.name().cmp(b.name()));
    let offset = usize::try_from(list.offset.max(0))
        .unwrap_or(usize::MAX)
        .min(streams.len());
    Ok((streams, offset))
}

pub fn names(req: &Request<'_>) -> Result<Vec<u8>, ApiError> {
    let (streams, offset) = listed(req)?;
    let total = streams.len();
    let page: Vec<String> = streams
        .iter()
        .skip(offset)
        .take(NAMES_PAGE)
        .map(|s| s.name().to_owned())
        .collect();
    Ok(encode(
        "stream_names_response",
        None,
        StreamNamesResponse {
            paged: Paged {
                total,
                offset,
                limit: NAMES_PAGE,
            },
            streams: (!page.is_empty()).then_some(page),
        },
    ))
}

pub fn list(req: &Request<'_>) -> Result<Vec<u8>, ApiError> {
    let (streams, offset) = listed(req)?;
    let total = streams.len();
    let (mut page, mut missing, mut offline) = (Vec::new(), Vec::new(), BTreeMap::new());
    // As Go: an offline stream takes a place in the page, named under `missing`.
    for listed in streams.iter().skip(offset).take(LIST_PAGE) {
        match listed {
            Listed::Running(s) => page.push(stream_info(req, s, false, false)),
            Listed::Offline(name, reason) => {
                missing.push(name.clone());
                offline.insert(name.clone(), reason.clone());
            }
        }
    }
    Ok(encode(
        "stream_list_response",
        None,
        StreamListResponse {
            paged: Paged {
                total,
                offset,
                limit: LIST_PAGE,
            },
            streams: page,
            missing,
            offline,
        },
    ))
}

/// `{"seq":…,"no_erase":…}`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct MsgDeleteRequest {
    seq: u64,
    no_erase: bool,
}

pub fn msg_delete(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    let stream = req
        .jsa
        .stream(name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let del: MsgDeleteRequest = decode_request(req.body)?;
    let mut core = stream.core.lock();
    if core.config.sealed {
        return Err(table::STREAM_SEALED.err());
    }
    if core.config.deny_delete {
        return Err(
            table::STREAM_MSG_DELETE_FAILED_F.with(&[("err", &"message delete not permitted")])
        );
    }
    let store = &mut core.ingest.store;
    let removed = if del.no_erase {
        store.remove_msg(del.seq)
    } else {
        store.erase_msg(del.seq)
    };
    match removed {
        Ok(true) => {
            let _ = store.sync();
            Ok(encode(
                "stream_msg_delete_response",
                None,
                Success { success: true },
            ))
        }
        Ok(false) | Err(natrium_store::StoreError::NotFound) => {
            Err(table::STREAM_MSG_DELETE_FAILED_F.with(&[("err", &"no message found")]))
        }
        Err(err) => Err(store_failed(&err)),
    }
}

/// The error document for `kind`: stream info carries the paging fields even then.
pub fn error_response(kind: &str, err: &ApiError) -> Vec<u8> {
    // Go's refusals carry the zero values of each response's own fields.
    match kind {
        "stream_info_response" => encode(kind, Some(err), Paged::default()),
        "stream_names_response" => encode(
            kind,
            Some(err),
            StreamNamesResponse {
                paged: Paged::default(),
                streams: None,
            },
        ),
        "stream_list_response" => encode(
            kind,
            Some(err),
            StreamListResponse {
                paged: Paged::default(),
                streams: Vec::new(),
                missing: Vec::new(),
                offline: BTreeMap::new(),
            },
        ),
        "stream_purge_response" => {
            #[derive(serde::Serialize)]
            struct Purged {
                purged: u64,
            }
            encode(kind, Some(err), Purged { purged: 0 })
        }
        // Go's restore response always carries its deliver subject, empty on an error.
        "stream_restore_response" => encode(
            kind,
            Some(err),
            super::responses::RestoreResponse::default(),
        ),
        k if k.starts_with("consumer_") => super::consumer_json::error_response(k, err),
        _ => encode(kind, Some(err), Empty {}),
    }
}
