//! Accounts a configuration reload adds, changes or removes, handled as Go configures an
//! account's JetStream on reload: the API is subscribed in each new account (so a client
//! there is answered, if only with 10039); JetStream is turned on, with its streams
//! recovered, for an account whose definition now enables it; an enabled account takes its
//! new limits when they fit the server (else it keeps its old ones and the error is logged);
//! and JetStream is turned off, its streams stopped with their files kept, in an account
//! whose definition no longer enables it. Go keeps a removed account's streams running
//! where nothing can reach them; ours stops them too. At shutdown's announcement it tells
//! waiting pull requests the server is going.

use std::sync::Arc;

use natrium_core::account::Account;
use natrium_core::events::{AccountEvent, ServerEvent};
use natrium_core::internal::InternalClient;
use parking_lot::Mutex;

use super::inbox::{ApiInbox, ApiSubs};
use crate::service::JetStream;

/// Listens to the server's account events for as long as the server runs.
pub fn start(js: &Arc<JetStream>, inbox: &Arc<ApiInbox>, subs: &Arc<Mutex<ApiSubs>>) {
    let mut events = js.server.events();
    let (js, inbox, subs) = (Arc::clone(js), Arc::clone(inbox), Arc::clone(subs));
    let server = js.server.clone();
    // Shutdown waits for service tasks: this one ends when services must stop.
    js.server.clone().spawn_service(async move {
        loop {
            let event = tokio::select! {
                () = server.shutting_down() => return,
                () = js.stopped.cancelled() => return,
                event = events.recv() => event,
            };
            let Some(event) = event else {
                return;
            };
            if let ServerEvent::ShuttingDown(ack) = event {
                // Before connections close: pull requests hear of it, as from Go.
                let (mut client, _inbox) = InternalClient::start(&server, server.system_account());
                for jsa in js.accounts() {
                    jsa.announce_shutdown(&mut client);
                }
                ack.done();
                continue;
            }
            if let ServerEvent::Account(AccountEvent::Removed(account)) = &event {
                let js = Arc::clone(&js);
                let name = account.name.clone();
                let _ = tokio::task::spawn_blocking(move || js.disable_account(&name)).await;
                continue;
            }
            if let ServerEvent::Account(
                AccountEvent::Created(account) | AccountEvent::Reloaded(account),
            ) = event
            {
                let js = Arc::clone(&js);
                let (inbox, subs) = (Arc::clone(&inbox), Arc::clone(&subs));
                // Recovering an account's streams reads their files: off the runtime.
                let _ = tokio::task::spawn_blocking(move || {
                    adopt(&js, &inbox, &subs, &account);
                    // Imports may have changed: push consumers hear importers added since.
                    for jsa in js.accounts() {
                        for engine in jsa.engines() {
                            engine.refresh_importers();
                        }
                    }
                })
                .await;
            }
        }
    });
}

/// Subscribes the API in `account` if it is not yet, and turns JetStream on when its
/// definition asks for it and it fits beside the accounts already on.
fn adopt(js: &JetStream, inbox: &Arc<ApiInbox>, subs: &Mutex<ApiSubs>, account: &Arc<Account>) {
    {
        let mut subs = subs.lock();
        if !subs.covers(account) {
            subs.subscribe_api(inbox, account, &js.settings.domain);
        }
    }
    let enabled = js.account(&account.name);
    let Some(limits) = crate::service::configured_limits(&js.server, account) else {
        if enabled.is_some() && !Arc::ptr_eq(account, &js.server.system_account()) {
            js.disable_account(&account.name);
        }
        return;
    };
    if let Some(jsa) = enabled {
        if jsa.limits() != limits {
            if let Err(err) = js.update_account_limits(&jsa, limits) {
                tracing::error!(
                    "Error enabling jetstream on configured accounts: {} ({})",
                    err.description,
                    err.err_code
                );
            }
        }
        return;
    }
    if let Err(err) = js.check_account_fits(&limits) {
        tracing::error!(
            "Error configuring jetstream for account [{}]: {}",
            account.name,
            err.description
        );
        return;
    }
    js.enable_account(account, limits);
}
