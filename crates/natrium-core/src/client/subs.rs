//! The subscription side of a client connection: SUB and UNSUB within the permissions and
//! the subscription limit, the errors and log lines Go gives for refusals, and the removal of
//! every subscription when the connection ends.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use natrium_gofmt::go_quote_bytes as go_quote;
use nats_proto::WireError;

use super::Conn;
use crate::account::SubRef;
use crate::endpoint::Endpoint;
use crate::endpoint::Subscription;
use crate::limits::MAX_SUBS_LOG_INTERVAL;

impl Conn {
    /// Tells the client (and, rate-limited, the log) that it may not subscribe any more.
    pub(super) fn max_subs_exceeded(&self) {
        if should_log_max_subs() {
            tracing::error!(
                "{} - maximum subscriptions exceeded",
                self.handle.log_prefix()
            );
        }
        self.handle.send_err(&WireError::MaxSubscriptionsExceeded);
    }

    fn sub_violation(&self, subject: &[u8], queue: Option<&[u8]>, sid: &[u8]) {
        let prefix = self.handle.log_prefix();
        let sid = String::from_utf8_lossy(sid);
        if let Some(q) = queue {
            tracing::error!(
                "{prefix} - Subscription Violation - Subject {}, Queue: {}, SID {sid}",
                go_quote(subject),
                go_quote(q)
            );
        } else {
            tracing::error!(
                "{prefix} - Subscription Violation - Subject {}, SID {sid}",
                go_quote(subject)
            );
        }
        self.handle
            .send_err(&WireError::SubscriptionViolation { subject, queue });
    }

    pub(super) fn on_sub(&mut self, subject: &[u8], queue: Option<&[u8]>, sid: &[u8]) {
        if !nats_subject::is_valid_subject(subject) {
            self.handle.send_err(&WireError::InvalidSubject);
            return;
        }
        if !self.perms.can_subscribe(subject, queue) {
            self.sub_violation(subject, queue, sid);
            return;
        }
        let max_subs = self.max_subs;
        let mut subs = self.handle.subs.lock();
        if subs.contains_key(sid) {
            drop(subs);
            self.ok();
            return;
        }
        if max_subs.is_some_and(|max| subs.len() >= max) {
            drop(subs);
            self.max_subs_exceeded();
            return;
        }
        let sub = Arc::new(Subscription {
            endpoint: Endpoint::Client(Arc::clone(&self.handle)),
            subject: subject.into(),
            queue: queue.map(Into::into),
            sid: sid.into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
            deny_filter: self.perms.delivery_filter(subject, queue),
        });
        if self.account.subscribe(SubRef(Arc::clone(&sub))).is_err() {
            drop(subs);
            self.handle.send_err(&WireError::InvalidSubject);
            return;
        }
        subs.insert(sid.into(), sub);
        drop(subs);
        self.ok();
    }

    pub(super) fn on_unsub(&mut self, sid: &[u8], max_msgs: Option<u64>) {
        let mut subs = self.handle.subs.lock();
        if let Some(sub) = subs.get(sid) {
            let keep = match max_msgs {
                Some(max) if max > 0 && sub.delivered.load(Ordering::Relaxed) < max => {
                    sub.max_msgs.store(max, Ordering::Relaxed);
                    true
                }
                _ => false,
            };
            if !keep {
                if let Some(sub) = subs.remove(sid) {
                    let _ = self.account.unsubscribe(&SubRef(sub));
                }
            }
        }
        drop(subs);
        self.ok();
    }

    pub(super) fn remove_all_subscriptions(&mut self) {
        let subs = std::mem::take(&mut *self.handle.subs.lock());
        for sub in subs.into_values() {
            let _ = self.account.unsubscribe(&SubRef(sub));
        }
    }
}

/// Whether "maximum subscriptions exceeded" may be logged now. Go rate-limits it per account;
/// one process-wide slot is stricter (one line per interval in all) and bounds the log as well.
fn should_log_max_subs() -> bool {
    static LAST: parking_lot::Mutex<Option<std::time::Instant>> = parking_lot::const_mutex(None);
    let now = std::time::Instant::now();
    let mut last = LAST.lock();
    if last.is_some_and(|at| now.duration_since(at) < MAX_SUBS_LOG_INTERVAL) {
        return false;
    }
    *last = Some(now);
    true
}
