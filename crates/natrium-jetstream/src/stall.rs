//! A stalled publisher's wait: a queue that never drops takes a message past its mark and
//! then holds the publisher until the queue's consumer has made room (`Sink::until_ready`).

use tokio::sync::Notify;

/// Returns once `is_full` says no, checking again each time `ready` is notified (registered
/// before each check, so a notification between the check and the wait is not missed).
pub async fn until_not_full(ready: &Notify, is_full: impl Fn() -> bool) {
    loop {
        let notified = ready.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !is_full() {
            return;
        }
        notified.await;
    }
}
