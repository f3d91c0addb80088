//! The account side of CONNECT: logging the client into its account within the account's
//! limits, and the INFO Go sends after the first PONG naming that account.

use std::sync::Arc;

use nats_proto::WireError;

use super::super::authn::JwtGrant;
use super::{Conn, Next};
use crate::client::ClosedReason;

impl Conn {
    /// Go answers a client's first PING after CONNECT with PONG and then an INFO naming the
    /// account it is bound to, if the client takes asynchronous INFOs (CONNECT `protocol` 1).
    /// Both go out in one piece, so a reader sees them together.
    pub(super) fn send_pong_with_connect_info(&self) {
        let mut frame = b"PONG\r\n".to_vec();
        if self.opts.protocol >= 1 {
            let mut info = self.server.client_info_for(&self.handle);
            info.connect_info = true;
            info.remote_account.clone_from(&self.account.name);
            // The payload limit in force for this client, lowered by its account or JWT.
            info.max_payload = self.limits.max_payload;
            info.acc_is_sys = self.server.has_system_account()
                && Arc::ptr_eq(&self.server.system_account(), &self.account);
            frame.extend_from_slice(&info.to_frame());
        }
        self.handle.send_proto(&frame);
    }

    /// Logs the client into its account (`None`: the global account), within the account's
    /// connection limit, and applies the account's per-client limits.
    ///
    /// A repeated CONNECT runs the whole login again, as Go does: a user of another account
    /// moves the connection there (its subscriptions are already dropped, see `on_connect`), so
    /// one identity's permissions never act in another identity's account.
    pub(super) fn log_into(&mut self, name: Option<&str>) -> Next {
        let account = match name {
            None => Arc::clone(&self.server.shared.global),
            Some(name) => match self.server.account(name) {
                Some(account) => account,
                None => return self.auth_violation(None),
            },
        };
        if let Some(current) = self.handle.account() {
            if Arc::ptr_eq(&current, &account) {
                return Next::Continue;
            }
            current.remove_client();
            self.handle.clear_account();
        }
        if !account.try_add_client() {
            tracing::error!(
                "{} - {}",
                self.handle.log_prefix(),
                WireError::MaxAccountConnectionsExceeded
                    .static_text()
                    .unwrap_or_default()
            );
            self.handle
                .send_err(&WireError::MaxAccountConnectionsExceeded);
            return Next::Close(ClosedReason::MaxAccountConnectionsExceeded);
        }
        self.server.register_account(&account);
        self.handle.set_account(Arc::clone(&account));
        self.publisher
            .set_origin(Arc::clone(&account), Arc::clone(&self.handle));
        self.account = account;
        self.apply_limits();
        Next::Continue
    }

    /// Sets the payload and subscription limits: the server's, lowered by the account's and
    /// then the user JWT's. Done at login and again after a reload, which may change any of
    /// the three.
    pub(super) fn apply_limits(&mut self) {
        self.limits.max_payload = self.config.max_payload;
        self.max_subs =
            (self.config.max_subscriptions > 0).then_some(self.config.max_subscriptions);
        let account = self.account.state().spec.limits;
        self.lower_limits(account.max_payload, account.max_subscriptions);
        let (max_payload, max_subscriptions) = self.user_limits;
        self.lower_limits(max_payload, max_subscriptions);
    }

    /// Lowers the payload and subscription limits to an account's or user's. As in Go, a
    /// negative limit is none and zero is a real limit: no payload bytes, no subscriptions.
    fn lower_limits(&mut self, max_payload: i64, max_subscriptions: i64) {
        if let Ok(max) = usize::try_from(max_payload) {
            self.limits.max_payload = self.limits.max_payload.min(max);
        }
        if let Ok(max) = usize::try_from(max_subscriptions) {
            self.max_subs = Some(self.max_subs.map_or(max, |m| m.min(max)));
        }
    }

    /// Go closes a client whose subscription limit is already reached when it logs in (a
    /// limit of zero), sending `maximum subscriptions exceeded` first.
    pub(super) fn subs_at_limit_on_login(&self) -> bool {
        self.max_subs == Some(0)
    }

    /// A user JWT's own limits (lowering the account's and the server's) and expiry.
    pub(super) fn apply_jwt(&mut self, grant: JwtGrant) {
        self.user_limits = (grant.max_payload, grant.max_subscriptions);
        self.apply_limits();
        if let Some(expires) = grant.expires {
            let left = expires.saturating_sub(chrono::Utc::now().timestamp());
            let left = std::time::Duration::from_secs(u64::try_from(left).unwrap_or(0));
            self.auth_expires = Some(tokio::time::Instant::now() + left);
        }
    }
}
