//! The API thread: requests taken off the API's inbox, routed, answered through an internal
//! client.

use std::sync::Arc;

use natrium_core::endpoint::Delivery;
use natrium_core::internal::InternalClient;

use super::delayed::Delayed;
use super::inbox::{ApiInbox, ApiSubs};
use super::offline_gate::Gate;
use super::request::Request;
use super::router::{route, ConsumerRoute, Route, API_PREFIX};
use super::{
    account_info, account_purge, consumer_reset, consumers, msg_get, snapshot, stream_info, streams,
};
use crate::advisory::{self, ApiAudit};
use crate::errors::{table, ApiError};
use crate::service::JetStream;
use natrium_conf::options::REQUEST_QUEUE_LIMIT_DEFAULT;

/// Subscribes the API in every enabled account and starts the API thread.
pub fn start(js: &Arc<JetStream>) {
    let (client, _unused) = InternalClient::start(&js.server, js.server.system_account());
    let mut client = client;
    let limit = usize::try_from(js.settings.options.request_queue_limit)
        .ok()
        .filter(|n| *n > 0)
        .unwrap_or(REQUEST_QUEUE_LIMIT_DEFAULT as usize);
    let sink = ApiInbox::new(client.cid(), limit);
    let inbox = Arc::clone(&sink);
    let subs = Arc::new(parking_lot::Mutex::new(ApiSubs::default()));
    // Every account: those without JetStream (the system account among them) are told so
    // (10039). Accounts a reload adds are subscribed as they come.
    for account in js.server.accounts() {
        subs.lock()
            .subscribe_api(&sink, &account, &js.settings.domain);
    }
    super::account_watch::start(js, &sink, &subs);
    close_when_stopped(js, &sink);
    let delayed = Delayed::start(js);
    let js = Arc::clone(js);
    let runtime = tokio::runtime::Handle::current();
    let spawned = std::thread::Builder::new()
        .name("jetstream-api".into())
        .spawn(move || {
            let _entered = runtime.enter();
            while let Some(next) = inbox.next() {
                if next.dropped > 0 {
                    advisory::api_limit_reached(
                        &mut client,
                        &js.server,
                        &js.settings.domain,
                        next.dropped,
                    );
                }
                if let Some(msg) = next.request {
                    let account = subs.lock().account_of(msg.sid).cloned();
                    if let Some(account) = account {
                        answer(&js, (&mut client, &delayed), &account, &msg);
                    }
                }
            }
        });
    if let Err(err) = spawned {
        tracing::error!("JetStream API thread could not start: {err}");
    }
}

fn answer(
    js: &Arc<JetStream>,
    (client, delayed): (&mut InternalClient, &Delayed),
    account: &Arc<natrium_core::account::Account>,
    msg: &Delivery,
) {
    let Some(reply) = msg
        .reply
        .as_deref()
        .and_then(|r| std::str::from_utf8(r).ok())
    else {
        return;
    };
    let Some(verb) = std::str::from_utf8(&msg.subject)
        .ok()
        .and_then(|s| api_verb(s, &js.settings.domain))
    else {
        return;
    };
    if let Route::AccountPurge(name) = route(verb) {
        if account_purge::is_system(js, account) {
            let body = account_purge::purge(js, client, name)
                .unwrap_or_else(|err| streams::error_response("account_purge_response", &err));
            client.publish_in(account, reply, None, &body);
        }
        return;
    }
    if answered_reset(js, client, account, reply, verb, msg) {
        return;
    }
    if refused_before_lookup(js, client, account, reply, verb, &msg.payload) {
        return;
    }
    let Some(jsa) = js.account(&account.name) else {
        let route = route(verb);
        // The system account's refusals are typed as system responses, but for INFO.
        let system = account_purge::is_system(js, account) && route != Route::Info;
        if let Some(kind) = route
            .kind()
            .map(|k| if system { "system_response" } else { k })
        {
            // A cluster-only verb is refused as such before JetStream is looked for.
            let err = if route.cluster_only() && !system {
                table::CLUSTER_REQUIRED.err()
            } else {
                table::NOT_ENABLED_FOR_ACCOUNT.err()
            };
            client.publish_in(account, reply, None, &streams::error_response(kind, &err));
        }
        return;
    };
    let req = Request {
        msg: Some(msg),
        ..Request::new(js, &jsa, &msg.payload)
    };
    let route = route(verb);
    if let (Some(kind), false) = (route.kind(), api_level_met(msg)) {
        let err = table::REQUIRED_API_LEVEL.err();
        js.count_api(true);
        jsa.count_api(true);
        client.publish_in(account, reply, None, &streams::error_response(kind, &err));
        return;
    }
    let (kind, result, held) = match super::offline_gate::gate(&req, &route) {
        Gate::Silent => return,
        Gate::Answer(kind, result) => (kind, result, false),
        Gate::Delayed(kind, err) => (kind, Err(err), true),
        Gate::Pass => match handle(&req, route) {
            Some((kind, result)) => (kind, result, false),
            None => return,
        },
    };
    js.count_api(result.is_err());
    jsa.count_api(result.is_err());
    // Go sends an error without the headers a success would carry.
    let headers = req.reply_headers.take().filter(|_| result.is_ok());
    let body = match result {
        Ok(body) => body,
        Err(err) => streams::error_response(kind, &err),
    };
    let domain = js.settings.domain.as_str();
    let subject = std::str::from_utf8(&msg.subject).unwrap_or_default();
    let audit = || ApiAudit {
        server: js.server.name(),
        client: req.client_info(),
        subject,
        request: std::str::from_utf8(&msg.payload).unwrap_or_default(),
        response: std::str::from_utf8(&body).unwrap_or_default(),
        domain,
    };
    if held {
        // Go audits a held answer when it sends it.
        let audit = advisory::api_audit_body(account, audit);
        delayed.send(client, account, (reply, body), audit);
        return;
    }
    client.publish_request(account, reply, None, headers.as_deref(), &body);
    for start in req.after_reply.take() {
        start();
    }
    send_advisories(client, account, &req, domain);
    advisory::api_audit(client, account, audit);
}

/// The verb's handler's answer: the response's kind and its body or refusal (`None` for a
/// subject Go does not answer here).
fn handle(
    req: &Request<'_>,
    route: Route<'_>,
) -> Option<(&'static str, Result<Vec<u8>, ApiError>)> {
    Some(match route {
        Route::Info => ("account_info_response", Ok(account_info::info(req))),
        Route::StreamCreate(name) => ("stream_create_response", streams::create(req, name)),
        Route::StreamUpdate(name) => ("stream_update_response", streams::update(req, name)),
        Route::StreamInfo(name) => ("stream_info_response", stream_info::info(req, name)),
        Route::StreamDelete(name) => ("stream_delete_response", streams::delete(req, name)),
        Route::StreamPurge(name) => ("stream_purge_response", streams::purge(req, name)),
        Route::StreamNames => ("stream_names_response", streams::names(req)),
        Route::StreamList => ("stream_list_response", streams::list(req)),
        Route::MsgGet(name) => ("stream_msg_get_response", msg_get::msg_get(req, name)),
        Route::MsgDelete(name) => ("stream_msg_delete_response", streams::msg_delete(req, name)),
        Route::StreamSnapshot(name) => ("stream_snapshot_response", snapshot::snapshot(req, name)),
        Route::StreamRestore(name) => ("stream_restore_response", snapshot::restore(req, name)),
        route @ (Route::StreamLeaderStepdown | Route::StreamPeerRemove) => (
            route.kind().unwrap_or_default(),
            Err(table::CLUSTER_REQUIRED.err()),
        ),
        Route::Consumer(c) => (c.kind(), consumers::answer(req, &c)),
        Route::AccountPurge(_) | Route::Unknown => return None,
    })
}

/// The stream and consumer advisories a request noted, after its answer.
fn send_advisories(
    client: &mut InternalClient,
    account: &Arc<natrium_core::account::Account>,
    req: &Request<'_>,
    domain: &str,
) {
    for (stream, action) in req.actions.take() {
        advisory::stream_action(client, account, &stream, action, domain);
    }
    for event in req.consumer_events.take() {
        advisory::consumer_event(client, account, &event, domain);
    }
}

/// `CONSUMER.RESET` is answered (if at all) by the consumer, outside the API's counts.
fn answered_reset(
    js: &Arc<JetStream>,
    client: &mut InternalClient,
    account: &Arc<natrium_core::account::Account>,
    reply: &str,
    verb: &str,
    msg: &Delivery,
) -> bool {
    let Route::Consumer(ConsumerRoute::Reset(stream, name)) = route(verb) else {
        return false;
    };
    let level = api_level_met(msg);
    let request = (msg.headers.as_deref(), &msg.payload[..]);
    if let Some((headers, body)) =
        consumer_reset::answer(js, &account.name, (stream, name), request, level)
    {
        client.publish_request(account, reply, None, headers.as_deref(), &body);
    }
    true
}

/// Go reads some consumer requests' bodies before it looks for JetStream in the account:
/// answers their refusal, if any.
fn refused_before_lookup(
    js: &JetStream,
    client: &mut InternalClient,
    account: &Arc<natrium_core::account::Account>,
    reply: &str,
    verb: &str,
    body: &[u8],
) -> bool {
    let Route::Consumer(c) = route(verb) else {
        return false;
    };
    if account_purge::is_system(js, account) {
        return false;
    }
    let Err(err) = consumers::precheck(&c, body) else {
        return false;
    };
    if let Some(jsa) = js.account(&account.name) {
        js.count_api(true);
        jsa.count_api(true);
    }
    client.publish_in(
        account,
        reply,
        None,
        &streams::error_response(c.kind(), &err),
    );
    true
}

/// The part of a request subject after `$JS.API.` or `$JS.<domain>.API.`.
fn api_verb<'s>(subject: &'s str, domain: &str) -> Option<&'s str> {
    if let Some(verb) = subject.strip_prefix(API_PREFIX) {
        return Some(verb);
    }
    if domain.is_empty() {
        return None;
    }
    subject
        .strip_prefix("$JS.")?
        .strip_prefix(domain)?
        .strip_prefix(".API.")
}

/// Whether the request's `Nats-Required-Api-Level` (if any, and not empty) is a level this
/// server has; a value that is not a number is not met, as in Go.
fn api_level_met(msg: &Delivery) -> bool {
    let Some(block) = msg.headers.as_deref() else {
        return true;
    };
    let Ok(headers) = nats_proto::headers::Headers::parse(block) else {
        return true;
    };
    match headers.get(b"Nats-Required-Api-Level") {
        None | Some(b"") => true,
        Some(value) => std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .is_some_and(|level| level <= crate::service::API_LEVEL),
    }
}

/// Closes the API's inbox when JetStream is turned off (its thread then ends, and with it the
/// API's subscriptions).
fn close_when_stopped(js: &Arc<JetStream>, inbox: &Arc<ApiInbox>) {
    let (stopped, inbox) = (js.stopped.clone(), Arc::clone(inbox));
    let server = js.server.clone();
    // Shutdown waits for service tasks: this one ends when services must stop.
    js.server.clone().spawn_service(async move {
        tokio::select! {
            () = stopped.cancelled() => inbox.close(),
            () = server.shutting_down() => {}
        }
    });
}
