//! Account JWT expiry: when an account's JWT expires (operator mode), its clients are told
//! `-ERR 'Account Authentication Expired'` and closed, as Go does. New logins into an expired
//! account are refused by the JWT check itself; this task only deals with clients already in.
//!
//! One task for the server: it sleeps until the earliest expiry still ahead, or until the
//! accounts are rebuilt by a reload (which may bring a new JWT with another expiry).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nats_proto::WireError;

use super::Account;
use crate::client::ClosedReason;
use crate::server::Server;

/// Runs until the server shuts down.
pub(crate) async fn watch(server: Server) {
    loop {
        // Armed before the scan, so a rebuild that lands during it is not missed.
        let changed = server.shared.accounts_changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let now = unix_now();
        let accounts: Vec<Arc<Account>> = server.registry().all().to_vec();
        let expired: Vec<&Arc<Account>> = accounts
            .iter()
            .filter(|a| expires(a).is_some_and(|at| at < now))
            .collect();
        if !expired.is_empty() {
            close_clients_of(&server, &expired);
        }
        let next = accounts
            .iter()
            .filter_map(|a| expires(a))
            .filter(|&at| at >= now)
            .min();
        let wait = next.map_or(Duration::MAX, until);
        tokio::select! {
            () = server.shutting_down() => return,
            () = &mut changed => {}
            () = tokio::time::sleep(wait), if next.is_some() => {}
        }
    }
}

fn expires(account: &Account) -> Option<i64> {
    account.state().spec.expires
}

fn close_clients_of(server: &Server, expired: &[&Arc<Account>]) {
    for client in server.clients() {
        let Some(account) = client.account() else {
            continue;
        };
        if client.closed_reason().is_some() || !expired.iter().any(|e| Arc::ptr_eq(e, &account)) {
            continue;
        }
        tracing::debug!("{} - Account Authentication Expired", client.log_prefix());
        client.send_err(&WireError::AccountAuthenticationExpired);
        client.close(ClosedReason::AuthenticationExpired);
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// How long until the account expiring at `at` counts as expired: claims are in whole seconds
/// and one is expired once the clock is past its second, which is also when the login check
/// starts refusing it, so no client can slip in after the watcher has run.
fn until(at: i64) -> Duration {
    let past = u64::try_from(at).unwrap_or(0).saturating_add(1);
    let at = UNIX_EPOCH + Duration::from_secs(past);
    at.duration_since(SystemTime::now())
        .unwrap_or(Duration::ZERO)
}
