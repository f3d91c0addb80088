//! `CONSUMER.CREATE` (with a name and filter in the subject or not) and the legacy
//! `CONSUMER.DURABLE.CREATE`: Go's subject and body checks in Go's order, then create or
//! update. The other consumer verbs are in [`super::consumer_verbs`].

use std::sync::Arc;

use super::consumer_json::{consumer_info, ConsumerInfoJson};
use super::consumer_sourcing;
use super::consumer_verbs;
use super::request::Request;
use super::responses::encode;
use super::router::ConsumerRoute;
use crate::advisory::ConsumerEvent;
use crate::clock::now_ns;
use crate::config::check::is_valid_asset_name;
use crate::config::stream::Retention;
use crate::consumer::check::{check_config, NAME_BYTES_MAX};
use crate::consumer::config::{ConsumerAction, ConsumerConfig};
use crate::consumer::context::ConsumerContext;
use crate::consumer::decode::{decode_create, CreateRequest};
use crate::consumer::defaults::set_defaults;
use crate::consumer::update::{check_update, copy_metadata, set_static_metadata};
use crate::consumer::{lifecycle, Consumer};
use crate::errors::{table, ApiError};
use crate::stream::sourcing::identity;
use crate::stream::Stream;

/// Answers a consumer verb.
///
/// # Errors
/// The verb's refusal.
pub fn answer(req: &Request<'_>, route: &ConsumerRoute<'_>) -> Result<Vec<u8>, ApiError> {
    match route {
        ConsumerRoute::Create(rest) => create(req, &Subject::parse_create(rest)),
        ConsumerRoute::DurableCreate(stream, durable) => create(
            req,
            &Subject {
                stream,
                name: durable,
                filter: "",
                kind: Kind::LegacyDurable,
            },
        ),
        other => consumer_verbs::answer(req, other),
    }
}

/// What Go reads from a request before it looks for JetStream in the account: a create's and
/// a pause's body, an unpin's group.
///
/// # Errors
/// 10025 and the unpin group errors.
pub fn precheck(route: &ConsumerRoute<'_>, body: &[u8]) -> Result<(), ApiError> {
    match route {
        ConsumerRoute::Create(_) | ConsumerRoute::DurableCreate(..) => {
            decode_create(body).map(|_| ())
        }
        ConsumerRoute::Pause(..) => consumer_verbs::decode_pause(body).map(|_| ()),
        ConsumerRoute::Unpin(..) => consumer_verbs::decode_unpin(body).map(|_| ()),
        ConsumerRoute::Info(..) if !consumer_verbs::is_empty_request(body) => {
            Err(table::NOT_EMPTY_REQUEST.err())
        }
        _ => Ok(()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `CONSUMER.CREATE.<stream>`: the name, if any, is the body's.
    LegacyEphemeral,
    LegacyDurable,
    /// `CONSUMER.CREATE.<stream>.<name>[.<filter>]`.
    Named,
}

/// What the subject names.
struct Subject<'a> {
    stream: &'a str,
    name: &'a str,
    filter: &'a str,
    kind: Kind,
}

impl<'a> Subject<'a> {
    fn parse_create(rest: &'a str) -> Self {
        let mut parts = rest.splitn(3, '.');
        let stream = parts.next().unwrap_or_default();
        match parts.next() {
            None => Subject {
                stream,
                name: "",
                filter: "",
                kind: Kind::LegacyEphemeral,
            },
            Some(name) => Subject {
                stream,
                name,
                filter: parts.next().unwrap_or_default(),
                kind: Kind::Named,
            },
        }
    }
}

/// Go's checks of the subject against the body, in Go's order; the config gets the name the
/// subject gives.
fn check_subject(sub: &Subject<'_>, req: &mut CreateRequest) -> Result<(), ApiError> {
    if sub.stream != req.stream_name {
        return Err(table::STREAM_MISMATCH.err());
    }
    let name = match sub.kind {
        Kind::LegacyEphemeral => req.config.name.clone(),
        _ => sub.name.to_owned(),
    };
    if name.contains(['\\', '/']) {
        return Err(table::CONSUMER_NAME_CONTAINS_PATH_SEPARATORS.err());
    }
    let config = &mut req.config;
    match sub.kind {
        Kind::LegacyDurable => {
            if config.durable_name.is_empty() {
                return Err(table::CONSUMER_DURABLE_NAME_NOT_SET.err());
            }
            if config.durable_name != name {
                return Err(table::CONSUMER_DURABLE_NAME_NOT_MATCH_SUBJECT.err());
            }
            config.name = name;
        }
        Kind::Named => {
            if config.is_durable() && config.durable_name != name {
                return Err(table::CONSUMER_DURABLE_NAME_NOT_MATCH_SUBJECT.err());
            }
            config.name = name;
        }
        Kind::LegacyEphemeral => {
            if config.is_durable() {
                return Err(table::CONSUMER_EPHEMERAL_WITH_DURABLE_NAME.err());
            }
        }
    }
    if !sub.filter.is_empty() && !config.filter_subjects.is_empty() {
        return Err(table::CONSUMER_MULTIPLE_FILTERS_NOT_ALLOWED.err());
    }
    if !sub.filter.is_empty() && config.filter_subject != sub.filter {
        return Err(table::CONSUMER_CREATE_FILTER_SUBJECT_MISMATCH.err());
    }
    if config.num_replicas > 1 {
        return Err(table::STREAM_REPLICAS_NOT_SUPPORTED.err());
    }
    Ok(())
}

/// The checks' view of the server, the account and the stream.
pub fn context<'a>(
    req: &'a Request<'_>,
    stream: &'a crate::config::StreamConfig,
    pedantic: bool,
) -> ConsumerContext<'a> {
    let limits = req.js.server_limits();
    ConsumerContext {
        stream,
        server_max_ack_pending: limits.max_ack_pending,
        server_max_request_batch: limits.max_request_batch,
        account: req.jsa.limits(),
        pedantic,
        recovering: false,
    }
}

fn create(req: &Request<'_>, sub: &Subject<'_>) -> Result<Vec<u8>, ApiError> {
    let mut request = decode_create(req.body)?;
    check_subject(sub, &mut request)?;
    let stream = req
        .jsa
        .stream(&request.stream_name)
        .ok_or_else(|| table::STREAM_NOT_FOUND.err())?;
    let mut config = request.config;
    if config.direct || config.sourcing {
        answer_with_identity(req, &stream)?;
    }
    if consumer_sourcing::is_sourcing_request(&config)
        && !consumer_sourcing::upgrade(&mut config, stream.core.lock().config.retention)
    {
        // A mirror or source names its consumers stably; on a limits stream each request gets
        // a fresh one (Go's suffix), the old one going once its deliver subject has no
        // interest.
        config.name = format!("{}-{}", config.name, sourcing_suffix());
    }
    let key = if config.is_durable() {
        config.durable_name.clone()
    } else {
        config.name.clone()
    };
    let existing = (!key.is_empty())
        .then(|| stream.consumers.lock().get(&key).cloned())
        .flatten();
    if let Some(existing) = &existing {
        // A create may not change a pause: that is PAUSE's job.
        let core = existing.core.lock();
        config.pause_until = core.config.pause_until;
        consumer_sourcing::keep_start(&mut config, &core.config);
    }
    set_static_metadata(&mut config);
    let stream_config = stream.core.lock().config.clone();
    let ctx = context(req, &stream_config, request.pedantic);
    set_defaults(&mut config, &ctx)?;
    check_config(&config, &ctx)?;
    let consumer = match existing {
        Some(existing) => update_existing(req, &stream, &existing, config, request.action)?,
        None => add_new(req, &stream, config, request.action)?,
    };
    let info = consumer_info(&req.jsa.account, &stream, &consumer, true);
    if info.paused {
        req.advise_consumer(ConsumerEvent::Paused {
            stream: stream.name.clone(),
            consumer: consumer.name.clone(),
            paused: true,
            until: info
                .config
                .as_ref()
                .and_then(|c| c.pause_until)
                .map(|t| t.to_go_string())
                .unwrap_or_default(),
        });
    }
    Ok(encode::<ConsumerInfoJson>(
        "consumer_create_response",
        None,
        info,
    ))
}

fn update_existing(
    req: &Request<'_>,
    stream: &Stream,
    existing: &Arc<Consumer>,
    mut config: ConsumerConfig,
    action: ConsumerAction,
) -> Result<Arc<Consumer>, ApiError> {
    let old = existing.config();
    if action == ConsumerAction::Create {
        copy_metadata(&mut config, &old);
        if config != old {
            return Err(table::CONSUMER_ALREADY_EXISTS.err());
        }
    }
    if stream.core.lock().config.retention == Retention::WorkQueue
        && !partition_unique(stream, &existing.name, &config.filters())
    {
        return Err(table::CONSUMER_WQ_CONSUMER_NOT_UNIQUE.err());
    }
    check_update(&old, &config, |subject| {
        super::consumer_json::has_interest(&req.jsa.account, subject)
    })?;
    let files = req.js.consumer_files(req.jsa.name(), &existing.stream);
    let sourcing = config.sourcing;
    lifecycle::update(&files, existing, config)?;
    let engine = req.jsa.engine(&stream.name);
    if sourcing {
        if let Some(engine) = &engine {
            // Acks already queued count before the delivery starts again.
            engine.settle(consumer_verbs::SETTLE_MAX);
        }
        consumer_sourcing::restart(stream, existing);
    }
    if let Some(engine) = engine {
        engine.look_at(&existing.name);
    }
    Ok(Arc::clone(existing))
}

/// Whether `filters` overlap no other (public) consumer's on a work-queue stream.
fn partition_unique(stream: &Stream, name: &str, filters: &[&str]) -> bool {
    let consumers = stream.consumers.lock();
    for filter in filters {
        for (other_name, other) in consumers.iter() {
            if other_name == name {
                continue;
            }
            // Read under the consumer's lock: cloning every config made creates quadratic.
            let core = other.core.lock();
            if core.config.direct || core.config.sourcing {
                continue;
            }
            let theirs = core.config.filters();
            if theirs.is_empty() {
                return false;
            }
            if theirs
                .iter()
                .any(|t| nats_subject::subjects_collide(filter.as_bytes(), t.as_bytes()))
            {
                return false;
            }
        }
    }
    true
}

fn add_new(
    req: &Request<'_>,
    stream: &Stream,
    config: ConsumerConfig,
    action: ConsumerAction,
) -> Result<Arc<Consumer>, ApiError> {
    if action == ConsumerAction::Update {
        return Err(table::CONSUMER_DOES_NOT_EXIST.err());
    }
    let stream_config = stream.core.lock().config.clone();
    if !config.direct && !config.sourcing {
        check_limits(req, stream, &stream_config)?;
    }
    if stream_config.retention == Retention::WorkQueue && !config.direct && !config.sourcing {
        check_work_queue(stream, &config)?;
    }
    let name = if config.is_durable() {
        if config.durable_name.len() > NAME_BYTES_MAX {
            return Err(table::CONSUMER_NAME_TOO_LONG.with(&[("max", &NAME_BYTES_MAX)]));
        }
        config.durable_name.clone()
    } else if !config.name.is_empty() {
        config.name.clone()
    } else {
        // Go names a legacy ephemeral after its config was taken: the config keeps no name.
        generated_name(stream)
    };
    if !is_valid_asset_name(&name) {
        return Err(table::CONSUMER_BAD_DURABLE_NAME.err());
    }
    let files = req.js.consumer_files(req.jsa.name(), &stream.name);
    let consumer = lifecycle::add(&files, stream, &name, config, now_ns())?;
    if let Some(engine) = req.jsa.engine(&stream.name) {
        // Its interest, flow control and inactivity are looked at.
        engine.look_at(&name);
    }
    req.advise_consumer(ConsumerEvent::Created {
        stream: stream.name.clone(),
        consumer: name,
    });
    Ok(consumer)
}

/// The stream's `max_consumers`, or the account's when lower or the stream sets none, or the
/// server's `default_max_consumers` (1,000 unless set) when neither does.
fn check_limits(
    req: &Request<'_>,
    stream: &Stream,
    config: &crate::config::StreamConfig,
) -> Result<(), ApiError> {
    let account = req.jsa.limits().max_consumers;
    let mut max = config.max_consumers;
    if max <= 0 || (account > 0 && account < max) {
        max = account;
    }
    // Neither the stream nor the account sets one (-1 counts as unset): the server's default.
    if max <= 0 {
        if let Some(default) = req.js.server_limits().default_max_consumers() {
            max = default;
        }
    }
    let counted = stream
        .consumers
        .lock()
        .values()
        .filter(|c| !c.is_sourcing())
        .count();
    if max > 0 && i64::try_from(counted).unwrap_or(i64::MAX) >= max {
        return Err(table::MAXIMUM_CONSUMERS_LIMIT.err());
    }
    Ok(())
}

/// A work queue's consumers: explicit acks, all messages, and filters no other consumer has.
fn check_work_queue(stream: &Stream, config: &ConsumerConfig) -> Result<(), ApiError> {
    use crate::consumer::config::{AckPolicy, DeliverPolicy};
    if !matches!(
        config.ack_policy,
        AckPolicy::Explicit | AckPolicy::FlowControl
    ) {
        return Err(table::CONSUMER_WQ_REQUIRES_EXPLICIT_ACK.err());
    }
    if config.deliver_policy != DeliverPolicy::All {
        return Err(table::CONSUMER_WQ_CONSUMER_NOT_DELIVER_ALL.err());
    }
    let others = stream
        .consumers
        .lock()
        .values()
        .filter(|c| !c.is_sourcing())
        .count();
    if others > 0 {
        let filters = config.filters();
        if filters.is_empty() {
            return Err(table::CONSUMER_WQ_MULTIPLE_UNFILTERED.err());
        }
        let name = if config.is_durable() {
            &config.durable_name
        } else {
            &config.name
        };
        if !partition_unique(stream, name, &filters) {
            return Err(table::CONSUMER_WQ_CONSUMER_NOT_UNIQUE.err());
        }
    }
    Ok(())
}

/// Go's ephemeral names: 8 base-62 characters, not already taken.
/// A sourcing consumer's create: refused when the request expects another identity (Go's
/// 10223), else the answer will carry the stream's.
///
/// # Errors
/// The mismatch.
fn answer_with_identity(req: &Request<'_>, stream: &Stream) -> Result<(), ApiError> {
    let identity = identity::of(stream);
    let expected = req
        .msg
        .and_then(|m| m.headers.as_deref())
        .and_then(identity::parse_identity);
    if let Some(expected) = expected.filter(|e| !e.is_empty()) {
        if expected != identity {
            return Err(table::CONSUMER_STREAM_IDENTITY_MISMATCH_F.with(&[("msg", &identity)]));
        }
    }
    let block = format!("NATS/1.0\r\n{}: {identity}\r\n\r\n", identity::HEADER);
    *req.reply_headers.borrow_mut() = Some(block.into_bytes());
    Ok(())
}

/// Go's `createConsumerName`: 8 characters of a hash of a fresh id.
fn sourcing_suffix() -> String {
    crate::stream::sourcing::names::go_hash(&natrium_core::events::event_id())
}

fn generated_name(stream: &Stream) -> String {
    loop {
        let name: String = natrium_core::events::event_id().chars().take(8).collect();
        if !stream.consumers.lock().contains_key(&name) {
            return name;
        }
    }
}
