//! Accounts a configuration reload adds or changes: the API is subscribed in each new
//! account (so a client there is answered, if only with 10039), and JetStream is turned on,
//! with its streams recovered, for an account whose definition now enables it, as Go does
//! when it configures an account's JetStream on reload. Limits changed on a kept account and
//! accounts removed keep what they had until a restart, `TODO(#15)`. At shutdown's
//! announcement it tells waiting pull requests the server is going.

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
            if let ServerEvent::Account(
                AccountEvent::Created(account) | AccountEvent::Reloaded(account),
            ) = event
            {
                let js = Arc::clone(&js);
                let (inbox, subs) = (Arc::clone(&inbox), Arc::clone(&subs));
                // Recovering an account's streams reads their files: off the runtime.
                let _ =
                    tokio::task::spawn_blocking(move || adopt(&js, &inbox, &subs, &account)).await;
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
    let Some(limits) = account.state().spec.jetstream else {
        return;
    };
    if js.account(&account.name).is_some() {
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
