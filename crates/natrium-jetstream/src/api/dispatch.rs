//! The API thread: requests taken off the API's inbox, routed, answered through an internal
//! client.

use std::sync::Arc;

use natrium_core::endpoint::Delivery;
use natrium_core::internal::InternalClient;

use super::inbox::{ApiInbox, ApiSubs};
use super::request::Request;
use super::router::{route, Route, API_PREFIX};
use super::{account_info, msg_get, stream_info, streams};
use crate::errors::ApiError;
use crate::service::JetStream;

/// Subscribes the API in every enabled account and starts the API thread.
pub fn start(js: &Arc<JetStream>) {
    let (mut client, _unused) = InternalClient::start(&js.server, js.server.system_account());
    let (sink, mut inbox) = ApiInbox::new(client.cid());
    let mut subs = ApiSubs::default();
    for jsa in js.accounts() {
        subs.subscribe(&sink, &jsa.account);
    }
    let js = Arc::clone(js);
    let runtime = tokio::runtime::Handle::current();
    let spawned = std::thread::Builder::new()
        .name("jetstream-api".into())
        .spawn(move || {
            let _entered = runtime.enter();
            while let Some(msg) = inbox.blocking_recv() {
                answer(&js, &mut client, &subs, &msg);
            }
        });
    if let Err(err) = spawned {
        tracing::error!("JetStream API thread could not start: {err}");
    }
}

fn answer(js: &JetStream, client: &mut InternalClient, subs: &ApiSubs, msg: &Delivery) {
    let Some(account) = subs.account_of(msg.sid).cloned() else {
        return;
    };
    let Some(reply) = msg
        .reply
        .as_deref()
        .and_then(|r| std::str::from_utf8(r).ok())
    else {
        return;
    };
    let Some(jsa) = js.account(&account.name) else {
        return;
    };
    let Some(verb) = std::str::from_utf8(&msg.subject)
        .ok()
        .and_then(|s| s.strip_prefix(API_PREFIX))
    else {
        return;
    };
    let req = Request {
        js,
        jsa: &jsa,
        body: &msg.payload,
    };
    let (kind, result): (&str, Result<Vec<u8>, ApiError>) = match route(verb) {
        Route::Info => ("account_info_response", Ok(account_info::info(&req))),
        Route::StreamCreate(name) => ("stream_create_response", streams::create(&req, name)),
        Route::StreamUpdate(name) => ("stream_update_response", streams::update(&req, name)),
        Route::StreamInfo(name) => ("stream_info_response", stream_info::info(&req, name)),
        Route::StreamDelete(name) => ("stream_delete_response", streams::delete(&req, name)),
        Route::StreamPurge(name) => ("stream_purge_response", streams::purge(&req, name)),
        Route::StreamNames => ("stream_names_response", streams::names(&req)),
        Route::StreamList => ("stream_list_response", streams::list(&req)),
        Route::MsgGet(name) => ("stream_msg_get_response", msg_get::msg_get(&req, name)),
        Route::MsgDelete(name) => (
            "stream_msg_delete_response",
            streams::msg_delete(&req, name),
        ),
        Route::Unknown => return,
    };
    js.count_api(result.is_err());
    let body = match result {
        Ok(body) => body,
        Err(err) => streams::error_response(kind, &err),
    };
    client.publish_in(&account, reply, None, &body);
}
