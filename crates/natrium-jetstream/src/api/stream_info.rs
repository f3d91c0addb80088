//! `STREAM.INFO` with its options: `deleted_details` lists the deleted sequences,
//! `subjects_filter` adds the per-subject message counts of matching subjects, paged by
//! `offset` in pages of Go's `JSMaxSubjectDetails`.

use std::collections::BTreeMap;

use natrium_store::Filter;
use serde::Deserialize;

use super::request::Request;
use super::responses::{encode, Paged, StreamInfoResponse};
use super::streams::stream_info_detailed;
use crate::config::decode_checked;
use crate::config::gotype::{GoStruct, GoType};
use crate::errors::{table, ApiError};

/// Go's `JSMaxSubjectDetails`: subjects listed in one info answer.
pub const SUBJECT_DETAILS_MAX: usize = 100_000;

/// `JSApiStreamInfoRequest`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct InfoRequest {
    offset: i64,
    deleted_details: bool,
    subjects_filter: String,
}

/// Go's field types of `JSApiStreamInfoRequest` (`offset` comes from the embedded
/// `ApiPagedRequest`, which Go names in the field's path: see [`embedded_path`]).
static INFO_SCHEMA: GoStruct = GoStruct {
    name: "JSApiStreamInfoRequest",
    fields: &[
        ("offset", GoType::Int("int", 64)),
        ("deleted_details", GoType::Bool),
        ("subjects_filter", GoType::Str),
    ],
};

/// Go's `isJSONObjectOrArray`: only such bodies are decoded, anything else is no options.
fn is_object_or_array(body: &[u8]) -> bool {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    matches!(first, Some(b'{' | b'['))
}

/// Go's path of `offset` in a type error names the embedded struct it comes from.
fn embedded_path(mut err: ApiError) -> ApiError {
    err.description = err.description.replace(
        "Go struct field JSApiStreamInfoRequest.offset ",
        "Go struct field JSApiStreamInfoRequest.ApiPagedRequest.offset ",
    );
    err
}

pub fn info(req: &Request<'_>, name: &str) -> Result<Vec<u8>, ApiError> {
    let options: InfoRequest = if is_object_or_array(req.body) {
        decode_checked(req.body, &INFO_SCHEMA, "server.JSApiStreamInfoRequest")
            .map_err(embedded_path)?
    } else {
        InfoRequest::default()
    };
    let stream = req
        .jsa
        .stream(name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let mut info = stream_info_detailed(req, &stream, true, true, options.deleted_details);
    let mut paged = Paged::default();
    if !options.subjects_filter.is_empty() {
        let totals = Filter::new(options.subjects_filter.as_bytes())
            .map(|f| stream.core.lock().ingest.store.subjects_state(&f))
            .unwrap_or_default();
        if !totals.is_empty() {
            let offset = usize::try_from(options.offset.max(0)).unwrap_or(usize::MAX);
            paged = Paged {
                total: totals.len(),
                offset,
                limit: SUBJECT_DETAILS_MAX,
            };
            // Sorted by subject: a page is a slice.
            let page: BTreeMap<String, u64> = totals
                .iter()
                .skip(offset)
                .take(SUBJECT_DETAILS_MAX)
                .map(|(subject, state)| (String::from_utf8_lossy(subject).into_owned(), state.msgs))
                .collect();
            info.state.subjects = (!page.is_empty()).then_some(page);
        }
    }
    Ok(encode(
        "stream_info_response",
        None,
        StreamInfoResponse { paged, info },
    ))
}

#[cfg(test)]
mod tests {
    use super::is_object_or_array;

    #[test]
    fn api_stream_info_options_only_from_objects_and_arrays() {
        assert!(is_object_or_array(b" {\"offset\":1}"));
        assert!(is_object_or_array(b"[1]"));
        assert!(!is_object_or_array(b"null"));
        assert!(!is_object_or_array(b"\"x\""));
        assert!(!is_object_or_array(b""));
    }
}
