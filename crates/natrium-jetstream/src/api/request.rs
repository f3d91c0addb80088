//! One API request being answered: the service, the account and the body.

use std::cell::RefCell;
use std::sync::Arc;

use crate::account::JsAccount;
use crate::advisory::{ConsumerEvent, StreamAction};
use crate::service::JetStream;

/// One request being answered.
pub struct Request<'a> {
    pub js: &'a JetStream,
    pub jsa: &'a Arc<JsAccount>,
    pub body: &'a [u8],
    /// Streams the request created, changed or deleted: advised after the answer.
    pub actions: RefCell<Vec<(String, StreamAction)>>,
    /// Consumer advisories, sent after the answer.
    pub consumer_events: RefCell<Vec<ConsumerEvent>>,
}

impl Request<'_> {
    /// Notes a stream action for its advisory.
    pub fn advise(&self, stream: &str, action: StreamAction) {
        self.actions.borrow_mut().push((stream.to_owned(), action));
    }

    /// Notes a consumer advisory.
    pub fn advise_consumer(&self, event: ConsumerEvent) {
        self.consumer_events.borrow_mut().push(event);
    }
}
