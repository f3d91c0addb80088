//! The read loop's one closing deadline: before CONNECT the authentication timeout (when
//! authentication is required, as in Go), after it the earlier of the user's JWT expiry and
//! the close of a client admitted at its subscription limit. One timer serves all three because
//! each timer is memory every idle connection holds.

use nats_proto::WireError;
use tokio::time::Instant;

use super::Conn;
use crate::client::ClosedReason;

impl Conn {
    /// Whether the deadline timer stands for anything: the authentication timeout before
    /// CONNECT (when authentication is required), a deadline set by CONNECT after it.
    pub(super) fn deadline_armed(&self) -> bool {
        (!self.connected && self.auth_timer) || self.after_connect_deadline().is_some()
    }

    /// The earlier of the deadlines CONNECT set (the JWT's expiry, the close at the
    /// subscription limit), if any.
    pub(super) fn after_connect_deadline(&self) -> Option<Instant> {
        match (self.auth_expires, self.close_at_sub_limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The deadline timer fired at `at`: says why the connection closes and tells the client.
    /// When the expiry and the subscription-limit close fall due together, the expiry wins.
    pub(super) fn deadline_passed(&self, at: Instant) -> ClosedReason {
        if !self.connected {
            // Go logs this at debug level (the client is told with the -ERR).
            tracing::debug!("{} - Authentication Timeout", self.handle.log_prefix());
            self.handle.send_err(&WireError::AuthenticationTimeout);
            return ClosedReason::AuthenticationTimeout;
        }
        if self.auth_expires.is_some_and(|expires| expires <= at) {
            tracing::debug!("{} - User Authentication Expired", self.handle.log_prefix());
            self.handle.send_err(&WireError::UserAuthenticationExpired);
            return ClosedReason::AuthenticationExpired;
        }
        self.max_subs_exceeded();
        ClosedReason::MaxSubscriptionsExceeded
    }
}
