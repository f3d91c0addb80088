//! Interest hooks: an account tells registered listeners when interest in an exact subject
//! (and queue group) appears — its first subscription, or a queue group's first member — or
//! goes with the last. This is what push consumers, routes, gateways and leafnodes act on.
//!
//! Every subscription change of an account goes through `Account::subscribe` and
//! `Account::unsubscribe`, under the account's interest lock (a short mutex around the index
//! change and the calls to the listeners), so listeners see the changes in the order they were
//! made and a listener registered between two changes misses neither's effect on what it
//! reads from the index afterwards. Subscription changes are not the publish path: the lock
//! costs a subscribe or unsubscribe one uncontended mutex. Listeners are called on the
//! changing task: they must not block (a listener that has work to do queues it).

use std::sync::Arc;

use nats_subject::InterestChange;
use parking_lot::{Mutex, MutexGuard};

/// Told when interest in a subject appears in or leaves an account.
pub trait InterestListener: Send + Sync {
    /// `change` is `Appeared` or `Gone` for `subject` in `queue` (plain when `None`), in the
    /// account named `account`.
    fn interest_changed(
        &self,
        account: &str,
        subject: &[u8],
        queue: Option<&[u8]>,
        change: InterestChange,
    );
}

/// An account's listeners, and the lock that orders its subscription changes.
#[derive(Default)]
pub struct InterestHooks {
    listeners: Mutex<Vec<Arc<dyn InterestListener>>>,
}

/// The account's listeners, held while one subscription change is made and told.
pub struct HeldHooks<'a>(MutexGuard<'a, Vec<Arc<dyn InterestListener>>>);

impl InterestHooks {
    /// Takes the lock for one subscription change (see the module doc).
    pub fn hold(&self) -> HeldHooks<'_> {
        HeldHooks(self.listeners.lock())
    }

    pub fn add(&self, listener: Arc<dyn InterestListener>) {
        self.listeners.lock().push(listener);
    }

    pub fn remove(&self, listener: &Arc<dyn InterestListener>) {
        self.listeners.lock().retain(|l| !Arc::ptr_eq(l, listener));
    }
}

impl HeldHooks<'_> {
    /// Tells every listener of a change that moved interest.
    pub fn tell(
        &self,
        account: &str,
        subject: &[u8],
        queue: Option<&[u8]>,
        change: InterestChange,
    ) {
        if change == InterestChange::Unchanged {
            return;
        }
        for listener in self.0.iter() {
            listener.interest_changed(account, subject, queue, change);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::SocketAddr;

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::account::{Account, SubRef};
    use crate::client::ClientHandle;
    use crate::endpoint::Endpoint;
    use crate::endpoint::Subscription;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl InterestListener for Recorder {
        fn interest_changed(
            &self,
            account: &str,
            subject: &[u8],
            queue: Option<&[u8]>,
            change: InterestChange,
        ) {
            let queue = queue.map(|q| String::from_utf8_lossy(q).into_owned());
            self.0.lock().push(format!(
                "{account} {change:?} {} {}",
                String::from_utf8_lossy(subject),
                queue.unwrap_or_default()
            ));
        }
    }

    fn sub(client: &Arc<ClientHandle>, subject: &str, queue: Option<&str>) -> SubRef {
        SubRef(Arc::new(Subscription {
            endpoint: Endpoint::Client(Arc::clone(client)),
            subject: subject.as_bytes().into(),
            queue: queue.map(|q| q.as_bytes().into()),
            sid: b"1".as_slice().into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
            deny_filter: None,
        }))
    }

    #[test]
    fn account_interest_first_and_last_with_queue_groups() {
        let account = Account::new("A", true);
        let recorder = Arc::new(Recorder::default());
        account.add_interest_listener(Arc::clone(&recorder) as Arc<dyn InterestListener>);
        let addr = SocketAddr::from(([127, 0, 0, 1], 4222));
        let client = Arc::new(ClientHandle::new(1, addr, 1024, CancellationToken::new()));
        let a = sub(&client, "orders.*", None);
        let b = sub(&client, "orders.*", None);
        let q1 = sub(&client, "orders.*", Some("workers"));
        let q2 = sub(&client, "orders.*", Some("workers"));
        for s in [&a, &b, &q1, &q2] {
            account.subscribe(s.clone()).unwrap();
        }
        // Subscribing the same one twice changes nothing.
        account.subscribe(a.clone()).unwrap();
        for s in [&a, &q1, &b, &q2] {
            account.unsubscribe(s).unwrap();
        }
        assert!(account.unsubscribe(&a).is_err());
        assert_eq!(
            *recorder.0.lock(),
            [
                "A Appeared orders.* ",
                "A Appeared orders.* workers",
                "A Gone orders.* ",
                "A Gone orders.* workers",
            ]
        );
        let listener: Arc<dyn InterestListener> = recorder.clone();
        account.remove_interest_listener(&listener);
        account.subscribe(a).unwrap();
        assert_eq!(recorder.0.lock().len(), 4);
    }
}
