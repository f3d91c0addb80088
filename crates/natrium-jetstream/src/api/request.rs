//! One API request being answered: the service, the account and the body.

use std::cell::RefCell;
use std::sync::Arc;

use crate::account::JsAccount;
use crate::advisory::StreamAction;
use crate::service::JetStream;

/// One request being answered.
pub struct Request<'a> {
    pub js: &'a JetStream,
    pub jsa: &'a Arc<JsAccount>,
    pub body: &'a [u8],
    /// Streams the request created, changed or deleted: advised after the answer.
    pub actions: RefCell<Vec<(String, StreamAction)>>,
}

impl Request<'_> {
    /// Notes a stream action for its advisory.
    pub fn advise(&self, stream: &str, action: StreamAction) {
        self.actions.borrow_mut().push((stream.to_owned(), action));
    }
}
