//! A stream's origins: the checks of `mirror` and `sources` that need only the config (and, when
//! the caller can see them, the origin streams' configs), the external prefixes, and source
//! cycles between the account's streams.

use std::collections::{BTreeSet, VecDeque};

use nats_subject::{
    is_literal, is_valid_publish_subject, is_valid_subject, subject_is_subset, subjects_collide,
};

use super::check::is_valid_asset_name;
use super::context::CheckContext;
use super::mapping::validate_mapping;
use super::reject::{invalid, pedantic};
use super::stream::{StreamConfig, StreamSource};
use crate::errors::{table, ApiError, ErrorDef};

/// Go's `JSApiPrefix`: an external API prefix may not be this server's own API.
const API_PREFIX: &str = "$JS.API";
/// Most streams the cycle search visits; an account has far fewer.
const CYCLE_VISITS_MAX: usize = 100_000;

/// What the origins contribute to the later checks.
#[derive(Default)]
struct Prefixes {
    origin_subjects: Vec<String>,
    deliver: Vec<String>,
    api: Vec<String>,
}

/// The mirror, sources, external prefixes and cycle checks, in Go's order.
pub(crate) fn check_origins(cfg: &mut StreamConfig, ctx: &CheckContext) -> Result<(), ApiError> {
    let mut prefixes = Prefixes::default();
    if cfg.mirror.is_some() {
        check_mirror(cfg, ctx, &mut prefixes)?;
    }
    if !cfg.sources.is_empty() && cfg.allow_msg_schedules {
        return Err(table::SOURCE_WITH_MSG_SCHEDULES.err());
    }
    check_sources(cfg, ctx, &mut prefixes)?;
    check_prefixes(&prefixes)?;
    if ctx.stream_lookup.is_some() {
        check_cycles(cfg, ctx)?;
    }
    Ok(())
}

/// A durable origin consumer needs a valid name, a literal deliver subject and no start or
/// filter of its own.
fn consumer_is_valid(src: &StreamSource) -> bool {
    let Some(c) = &src.consumer else {
        return true;
    };
    is_valid_asset_name(&c.name)
        && is_literal(c.deliver_subject.as_bytes())
        && is_valid_subject(c.deliver_subject.as_bytes())
        && src.opt_start_seq == 0
        && src.opt_start_time.is_none()
        && src.filter_subject.is_empty()
}

fn check_mirror(
    cfg: &mut StreamConfig,
    ctx: &CheckContext,
    p: &mut Prefixes,
) -> Result<(), ApiError> {
    let refusals: [(bool, ErrorDef); 7] = [
        (cfg.first_seq > 0, table::MIRROR_WITH_FIRST_SEQ),
        (!cfg.subjects.is_empty(), table::MIRROR_WITH_SUBJECTS),
        (!cfg.sources.is_empty(), table::MIRROR_WITH_SOURCES),
        (cfg.allow_msg_counter, table::MIRROR_WITH_COUNTERS),
        (cfg.allow_atomic, table::MIRROR_WITH_ATOMIC_PUBLISH),
        (cfg.allow_batched, table::MIRROR_WITH_BATCH_PUBLISH),
        (cfg.allow_msg_schedules, table::MIRROR_WITH_MSG_SCHEDULES),
    ];
    if let Some((_, def)) = refusals.iter().find(|(broken, _)| *broken) {
        return Err(def.err());
    }
    let Some(m) = cfg.mirror.clone() else {
        return Ok(());
    };
    if !consumer_is_valid(&m) {
        return Err(table::MIRROR_DURABLE_CONSUMER_CFG_INVALID.err());
    }
    if !m.filter_subject.is_empty() && !m.subject_transforms.is_empty() {
        return Err(table::MIRROR_MULTIPLE_FILTERS_NOT_ALLOWED.err());
    }
    // Markers would take sequence numbers the origin does not have.
    if cfg.subject_delete_marker_ttl > 0 {
        return Err(invalid("subject delete markers forbidden on mirrors"));
    }
    for (i, tr) in m.subject_transforms.iter().enumerate() {
        if !tr.src.is_empty() && !is_valid_subject(tr.src.as_bytes()) {
            let reason = format!("invalid subject {}", tr.src);
            return Err(table::MIRROR_INVALID_SUBJECT_FILTER.with(&[("err", &reason)]));
        }
        if let Err(e) = validate_mapping(&tr.src, &tr.dest) {
            return Err(table::MIRROR_INVALID_TRANSFORM_DESTINATION.with(&[("err", &e)]));
        }
        let overlaps =
            m.subject_transforms.iter().enumerate().any(|(j, other)| {
                i != j && subjects_collide(tr.src.as_bytes(), other.src.as_bytes())
            });
        if overlaps {
            return Err(table::MIRROR_OVERLAPPING_SUBJECT_FILTERS.err());
        }
    }
    if let Some(ext) = &m.external {
        push_external(p, &ext.deliver, &ext.api);
        return Ok(());
    }
    if !is_valid_asset_name(&m.name) {
        return Err(table::MIRROR_INVALID_STREAM_NAME.err());
    }
    if let Some(origin) = ctx.lookup(&m.name) {
        p.origin_subjects.extend(origin.subjects.iter().cloned());
        if too_small(cfg.max_msg_size, origin.max_msg_size) {
            return Err(table::MIRROR_MAX_MESSAGE_SIZE_TOO_BIG.err());
        }
        if ctx.pedantic && cfg.mirror_direct != origin.allow_direct {
            return Err(pedantic(
                "origin stream has direct get set, mirror has it disabled",
            ));
        }
        cfg.mirror_direct = origin.allow_direct;
    }
    Ok(())
}

/// A copy may not refuse messages its origin accepted.
fn too_small(ours: i32, origin: i32) -> bool {
    ours > 0 && origin > 0 && ours < origin
}

fn push_external(p: &mut Prefixes, deliver: &str, api: &str) {
    if !deliver.is_empty() {
        p.deliver.push(deliver.to_owned());
    }
    if !api.is_empty() {
        p.api.push(api.to_owned());
    }
}

/// Go's index name of a source: two sources with the same one would deliver twice.
fn index_name(src: &StreamSource) -> String {
    let mut name = src.name.clone();
    if let Some(ext) = &src.external {
        name = format!("{name}:{}", ext.api);
    }
    if let Some(c) = &src.consumer {
        name = format!("{name}:C={}", c.name);
    }
    let or_all = |s: &str| {
        if s.is_empty() {
            ">".to_owned()
        } else {
            s.to_owned()
        }
    };
    if src.subject_transforms.is_empty() {
        return format!("{name} {} >", or_all(&src.filter_subject));
    }
    let srcs: Vec<String> = src
        .subject_transforms
        .iter()
        .map(|t| or_all(&t.src))
        .collect();
    let dests: Vec<String> = src
        .subject_transforms
        .iter()
        .map(|t| or_all(&t.dest))
        .collect();
    format!("{name} {} {}", srcs.join("\x0c"), dests.join("\x0c"))
}

fn check_sources(cfg: &StreamConfig, ctx: &CheckContext, p: &mut Prefixes) -> Result<(), ApiError> {
    let mut index_names = BTreeSet::new();
    let mut consumer_names = BTreeSet::new();
    for src in &cfg.sources {
        if !is_valid_asset_name(&src.name) {
            return Err(table::SOURCE_INVALID_STREAM_NAME.err());
        }
        if !index_names.insert(index_name(src)) {
            return Err(table::SOURCE_DUPLICATE_DETECTED.err());
        }
        if !src.filter_subject.is_empty() && !src.subject_transforms.is_empty() {
            return Err(table::SOURCE_MULTIPLE_FILTERS_NOT_ALLOWED.err());
        }
        check_source_transforms(src)?;
        if let Some(c) = &src.consumer {
            if !consumer_is_valid(src) {
                return Err(table::SOURCE_DURABLE_CONSUMER_CFG_INVALID.err());
            }
            let api = src.external.as_ref().map_or("", |e| e.api.as_str());
            if !consumer_names.insert((src.name.clone(), api.to_owned(), c.name.clone())) {
                return Err(table::SOURCE_DURABLE_CONSUMER_DUPLICATE_DETECTED.err());
            }
        }
        if let Some(ext) = &src.external {
            push_external(p, &ext.deliver, &ext.api);
        } else if let Some(origin) = ctx.lookup(&src.name) {
            p.origin_subjects.extend(origin.subjects.iter().cloned());
            if too_small(cfg.max_msg_size, origin.max_msg_size) {
                return Err(table::SOURCE_MAX_MESSAGE_SIZE_TOO_BIG.err());
            }
        }
    }
    Ok(())
}

fn check_source_transforms(src: &StreamSource) -> Result<(), ApiError> {
    for tr in &src.subject_transforms {
        if !tr.src.is_empty() && !is_valid_subject(tr.src.as_bytes()) {
            let reason = format!("invalid subject {}", tr.src);
            return Err(table::SOURCE_INVALID_SUBJECT_FILTER.with(&[("err", &reason)]));
        }
        if let Err(e) = validate_mapping(&tr.src, &tr.dest) {
            return Err(table::SOURCE_INVALID_TRANSFORM_DESTINATION.with(&[("err", &e)]));
        }
    }
    for (i, tr) in src.subject_transforms.iter().enumerate() {
        let overlaps =
            src.subject_transforms.iter().enumerate().any(|(j, other)| {
                i != j && subject_is_subset(tr.src.as_bytes(), other.src.as_bytes())
            });
        if overlaps {
            return Err(table::SOURCE_OVERLAPPING_SUBJECT_FILTERS.err());
        }
    }
    Ok(())
}

fn check_prefixes(p: &Prefixes) -> Result<(), ApiError> {
    for prefix in &p.deliver {
        if !is_valid_publish_subject(prefix.as_bytes()) {
            return Err(table::STREAM_INVALID_EXTERNAL_DELIVERY_SUBJ.with(&[("prefix", prefix)]));
        }
        for subject in &p.origin_subjects {
            let delivered = format!("{prefix}.{subject}");
            if subjects_collide(subject.as_bytes(), delivered.as_bytes()) {
                return Err(table::STREAM_EXTERNAL_DEL_PREFIX_OVERLAPS
                    .with(&[("prefix", prefix), ("subject", subject)]));
            }
        }
    }
    for prefix in &p.api {
        if !is_valid_publish_subject(prefix.as_bytes()) {
            return Err(invalid(format!(
                "stream external api prefix {} must be a valid subject without wildcards",
                natrium_gofmt::go_quote(prefix)
            )));
        }
        if subjects_collide(prefix.as_bytes(), API_PREFIX.as_bytes()) {
            return Err(table::STREAM_EXTERNAL_API_OVERLAP
                .with(&[("prefix", prefix), ("subject", &API_PREFIX)]));
        }
    }
    Ok(())
}

/// A source whose own origins lead back to a visited stream with overlapping subjects (or a
/// mirror leading back at all) would copy messages in a loop.
fn check_cycles(cfg: &StreamConfig, ctx: &CheckContext) -> Result<(), ApiError> {
    let mut to_visit = VecDeque::from([cfg.clone()]);
    let mut visited = BTreeSet::new();
    let mut visits = 0;
    while let Some(cur) = to_visit.pop_front() {
        visits += 1;
        if visits > CYCLE_VISITS_MAX {
            break;
        }
        visited.insert(cur.name.clone());
        for src in cur.sources.iter().filter(|s| s.external.is_none()) {
            if visited.contains(&src.name) {
                let overlaps = src.filter_subject.is_empty()
                    || cur
                        .subjects
                        .iter()
                        .any(|s| subjects_collide(s.as_bytes(), src.filter_subject.as_bytes()));
                if overlaps {
                    return Err(invalid("detected cycle"));
                }
            } else if let Some(next) = ctx.lookup(&src.name) {
                to_visit.push_back(next);
            }
        }
        if let Some(m) = cur.mirror.as_ref().filter(|m| m.external.is_none()) {
            if visited.contains(&m.name) {
                return Err(invalid("detected cycle"));
            }
            if let Some(next) = ctx.lookup(&m.name) {
                to_visit.push_back(next);
            }
        }
    }
    Ok(())
}
