//! A sink's subscription in an account: the one way JetStream's in-process endpoints (stream
//! capture, the API inbox, direct get, consumer engines, snapshot transfers) subscribe.

use std::sync::Arc;

use natrium_core::account::{Account, SubRef};
use natrium_core::endpoint::{Sink, Subscription};

/// Subscribes `sink` as `sid` on `subject` (in queue group `queue`, if any) in `account`; the
/// subscription, or `None` when the account refuses it (an invalid subject).
pub fn subscribe(
    account: &Account,
    sink: &Arc<dyn Sink>,
    sid: u64,
    subject: &str,
    queue: Option<&[u8]>,
) -> Option<Arc<Subscription>> {
    let sub = Arc::new(Subscription::for_sink(
        Arc::clone(sink),
        sid,
        subject.as_bytes(),
        queue,
    ));
    account.subscribe(SubRef(Arc::clone(&sub))).ok()?;
    Some(sub)
}
