//! A stream's own subjects (the default, validity, overlap within the list, the API
//! namespaces), its `subject_transform` and its `republish`.

use natrium_gofmt::go_quote;
use nats_subject::{is_valid_subject, subject_is_subset, subjects_collide};

use super::mapping::{new_subject_transform, validate_mapping};
use super::reject::{invalid, pedantic};
use super::stream::{StreamConfig, SubjectTransform};
use crate::errors::{table, ApiError};

/// Subject spaces a stream may capture only without acknowledgements, since its acks would
/// be taken for API traffic; `$JS.EVENT.>` was allowed before the rule and stays allowed.
const JS_NAMESPACES: [&str; 3] = ["$JS.>", "$JSC.>", "$NRG.>"];

/// Fills the default subject (the stream's name) and checks the list.
pub(crate) fn check_subjects(cfg: &mut StreamConfig) -> Result<(), ApiError> {
    if cfg.subjects.is_empty() {
        if cfg.mirror.is_none() && cfg.sources.is_empty() {
            cfg.subjects.push(cfg.name.clone());
        }
    } else {
        if cfg.mirror.is_some() {
            return Err(table::MIRROR_WITH_SUBJECTS.err());
        }
        for (i, subject) in cfg.subjects.iter().enumerate() {
            check_subject(cfg, subject)?;
            // A later duplicate is reported as an overlap, as Go does.
            if let Some(other) = cfg
                .subjects
                .iter()
                .skip(i + 1)
                .find(|other| subjects_collide(other.as_bytes(), subject.as_bytes()))
            {
                return Err(invalid(format!(
                    "subject {} overlaps with {}",
                    go_quote(subject),
                    go_quote(other)
                )));
            }
        }
    }
    if cfg.subjects.is_empty() && cfg.sources.is_empty() && cfg.mirror.is_none() {
        return Err(invalid(
            "stream needs at least one configured subject or be a source/mirror",
        ));
    }
    Ok(())
}

fn check_subject(cfg: &StreamConfig, subject: &str) -> Result<(), ApiError> {
    let bytes = subject.as_bytes();
    if !is_valid_subject(bytes) {
        return Err(invalid("invalid subject"));
    }
    if subject == ">" {
        if !cfg.no_ack {
            return Err(invalid("capturing all subjects requires no-ack to be true"));
        }
        if cfg.num_replicas != 1 {
            return Err(invalid("capturing all subjects requires replicas of 1"));
        }
    }
    if cfg.no_ack {
        return Ok(());
    }
    let in_js_api = JS_NAMESPACES
        .iter()
        .any(|ns| subjects_collide(bytes, ns.as_bytes()));
    if in_js_api && !subject_is_subset(bytes, b"$JS.EVENT.>") {
        return Err(invalid(
            "subjects that overlap with jetstream api require no-ack to be true",
        ));
    }
    if subjects_collide(bytes, b"$SYS.>") && !subject_is_subset(bytes, b"$SYS.ACCOUNT.>") {
        return Err(invalid(
            "subjects that overlap with system api require no-ack to be true",
        ));
    }
    Ok(())
}

/// The stream's `subject_transform`.
pub(crate) fn check_transform(tr: &SubjectTransform) -> Result<(), ApiError> {
    if !tr.src.is_empty() && !is_valid_subject(tr.src.as_bytes()) {
        let reason = format!("invalid subject {}", tr.src);
        return Err(table::STREAM_TRANSFORM_INVALID_SOURCE.with(&[("err", &reason)]));
    }
    validate_mapping(&tr.src, &tr.dest)
        .map_err(|e| table::STREAM_TRANSFORM_INVALID_DESTINATION.with(&[("err", &e)]))
}

/// The `republish` directive: an empty source means every subject, and the destination may
/// not be captured by the stream itself.
pub(crate) fn check_republish(cfg: &mut StreamConfig, pedantic_mode: bool) -> Result<(), ApiError> {
    let Some(mut rp) = cfg.republish.take() else {
        return Ok(());
    };
    if rp.src.is_empty() {
        if pedantic_mode {
            return Err(pedantic("republish source can not be empty"));
        }
        ">".clone_into(&mut rp.src);
    }
    // `>` to `>` republishes what the transform of the only subject produced.
    if let Some(tr) = &cfg.subject_transform {
        let implicit = rp.dest == ">"
            && rp.src == ">"
            && cfg.subjects.len() == 1
            && cfg.subjects.first() == Some(&tr.src);
        if implicit {
            if pedantic_mode {
                return Err(pedantic("implicit republish based on subject transform"));
            }
            rp.src.clone_from(&tr.dest);
            rp.dest.clone_from(&tr.dest);
        }
    }
    let forms_cycle = cfg
        .subjects
        .iter()
        .any(|s| subjects_collide(rp.dest.as_bytes(), s.as_bytes()));
    if forms_cycle {
        return Err(invalid(
            "stream configuration for republish destination forms a cycle",
        ));
    }
    if new_subject_transform(&rp.src, &rp.dest).is_err() {
        return Err(invalid(format!(
            "stream configuration for republish with transform from '{}' to '{}' not valid",
            rp.src, rp.dest
        )));
    }
    cfg.republish = Some(rp);
    Ok(())
}
