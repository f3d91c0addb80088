//! Live reconfiguration: the pieces of a configuration reload the runtime carries out. The
//! binary decides what may change (Go's rules), builds the new [`CoreConfig`] from the parsed
//! options and calls these in Go's order: [`Server::install_config`], then, when the limit
//! changed, [`Server::enforce_max_connections`], then [`Server::reload_authorization`].
//!
//! Nothing here compares options: authorization is always rebuilt whole from the new settings
//! and every connected client is checked against it, so any new authentication feature is
//! reloaded by building it into [`CoreConfig`] and [`client::reauth`].
//!
//! Accounts, when their settings changed, are rebuilt as Go rebuilds them: an account still
//! configured is the same account (its clients and subscriptions stay) with its new exports,
//! imports and limits; new accounts can be logged into at once; clients whose user now belongs
//! to another account, or to none, are closed by the client check.
//!
//! [`client::reauth`]: crate::client::reauth

use std::collections::HashMap;
use std::sync::Arc;

use nats_proto::WireError;

use crate::account::Account;
use crate::client::{reauth, ClosedReason};
use crate::config::CoreConfig;
use crate::events::{AccountEvent, ServerEvent};
use crate::server::{Server, StartError};

impl Server {
    /// Replaces the settings in force. New connections use them from now on; existing ones
    /// take the limits, PING timing and trace flag at their next read or PING tick (Go also
    /// applies max_payload, max_control_line, ping_interval and ping_max to existing clients).
    /// Listener, identity and sizes fixed at start (server name, host, port, max_pending) are
    /// the caller's to keep unchanged; Go refuses a reload that changes them.
    pub fn install_config(&self, config: CoreConfig) -> Result<Arc<CoreConfig>, StartError> {
        if config.max_payload > config.max_pending {
            return Err(StartError::Config(format!(
                "max_payload ({}) cannot be higher than max_pending ({})",
                config.max_payload, config.max_pending
            )));
        }
        let old = self.config();
        let accounts_changed = old.accounts != config.accounts
            || old.system_account != config.system_account
            || old.no_system_account != config.no_system_account;
        if accounts_changed {
            self.rebuild_accounts(&config)?;
        }
        Ok(self.swap_config(config))
    }

    /// Swaps in the accounts `config` describes (before the settings naming them, so that a
    /// client logging in meanwhile finds its account).
    fn rebuild_accounts(&self, config: &CoreConfig) -> Result<(), StartError> {
        let old = self.registry();
        let (accounts, removed) = old
            .rebuild(config)
            .map_err(|e| StartError::Config(e.to_string()))?;
        let events = &self.shared.events;
        let listened = events.is_listened();
        let changes: Vec<AccountEvent> = if listened {
            accounts
                .all()
                .iter()
                .map(|a| match old.get(&a.name) {
                    Some(before) if Arc::ptr_eq(before, a) => AccountEvent::Reloaded(Arc::clone(a)),
                    _ => AccountEvent::Created(Arc::clone(a)),
                })
                .collect()
        } else {
            Vec::new()
        };
        self.set_registry(accounts);
        for change in changes {
            events.emit(ServerEvent::Account(change));
        }
        for account in removed {
            if config.accounts_on_demand {
                tracing::info!("Reloaded: deleting account [removed]: {:?}", account.name);
            }
            if listened {
                events.emit(ServerEvent::Account(AccountEvent::Removed(account)));
            }
        }
        Ok(())
    }

    /// Closes connections until at most `max_connections` remain, newest first (Go closes
    /// random ones), each with Go's `-ERR 'maximum connections exceeded'`. Returns how many
    /// were closed.
    pub fn enforce_max_connections(&self) -> usize {
        let max = self.config().max_connections;
        let clients = self.clients();
        let excess = clients.len().saturating_sub(max);
        let mut closed = 0;
        for client in clients.iter().rev().take(excess) {
            if client.closed_reason().is_some() {
                continue;
            }
            tracing::error!("{} - maximum connections exceeded", client.log_prefix());
            client.send_err(&WireError::MaxConnectionsExceeded);
            client.close(ClosedReason::MaxConnectionsExceeded);
            closed += 1;
        }
        closed
    }

    /// Checks every connected client against the authorization in force: clients whose user
    /// is gone or now belongs to another account are closed, clients whose credentials no
    /// longer pass are told
    /// `Authorization Violation` and closed, the others get their new permissions and lose
    /// the subscriptions those forbid.
    pub fn reload_authorization(&self) {
        let config = self.config();
        for client in self.clients() {
            if client.closed_reason().is_none() {
                reauth::apply(&client, &config);
            }
        }
        self.enforce_account_connections();
    }

    /// Closes the newest clients of each account above its (possibly lowered)
    /// `max_connections`, with Go's `-ERR 'maximum account active connections exceeded'`, as
    /// Go does when an account's claims change (Go leaves config accounts alone; Natrium
    /// applies a reloaded limit the same way whatever its source). Returns how many.
    pub fn enforce_account_connections(&self) -> usize {
        let mut kept: HashMap<*const Account, i64> = HashMap::new();
        let mut closed = 0;
        for client in self.clients() {
            let Some(account) = client.account() else {
                continue;
            };
            if client.closed_reason().is_some() {
                continue;
            }
            let max = account.state().spec.limits.max_connections;
            let count = kept.entry(Arc::as_ptr(&account)).or_insert(0);
            if max >= 0 && *count >= max {
                tracing::error!(
                    "{} - {}",
                    client.log_prefix(),
                    WireError::MaxAccountConnectionsExceeded
                        .static_text()
                        .unwrap_or_default()
                );
                client.send_err(&WireError::MaxAccountConnectionsExceeded);
                client.close(ClosedReason::MaxAccountConnectionsExceeded);
                closed += 1;
            } else {
                *count += 1;
            }
        }
        closed
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use natrium_auth::account::AccountSpec;

    use super::*;

    fn with_accounts(names: &[&str]) -> CoreConfig {
        CoreConfig {
            accounts: names
                .iter()
                .map(|n| AccountSpec {
                    name: (*n).to_owned(),
                    ..AccountSpec::default()
                })
                .collect(),
            ..CoreConfig::default()
        }
    }

    fn drain(rx: &mut tokio::sync::mpsc::Receiver<ServerEvent>) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let ServerEvent::Account(change) = event {
                seen.push(match change {
                    AccountEvent::Created(a) => format!("created {}", a.name),
                    AccountEvent::Reloaded(a) => format!("reloaded {}", a.name),
                    AccountEvent::Removed(a) => format!("removed {}", a.name),
                });
            }
        }
        seen.sort();
        seen
    }

    #[tokio::test]
    async fn reload_reports_accounts_created_kept_and_removed() {
        let server = Server::new(with_accounts(&["A"])).unwrap();
        let mut events = server.events();
        server.install_config(with_accounts(&["A", "B"])).unwrap();
        assert_eq!(
            drain(&mut events),
            ["created B", "reloaded $G", "reloaded $SYS", "reloaded A"]
        );
        server.install_config(with_accounts(&["B"])).unwrap();
        assert_eq!(
            drain(&mut events),
            ["reloaded $G", "reloaded $SYS", "reloaded B", "removed A"]
        );
    }
}
