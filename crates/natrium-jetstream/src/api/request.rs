//! One API request being answered: the service, the account and the body.

use std::cell::RefCell;
use std::sync::Arc;

use natrium_core::endpoint::Delivery;

use crate::account::JsAccount;
use crate::advisory::{ConsumerEvent, StreamAction};
use crate::service::JetStream;

/// One request being answered.
pub struct Request<'a> {
    pub js: &'a Arc<JetStream>,
    pub jsa: &'a Arc<JsAccount>,
    pub body: &'a [u8],
    /// Streams the request created, changed or deleted: advised after the answer.
    pub actions: RefCell<Vec<(String, StreamAction)>>,
    /// The request as delivered (its headers name the requester); none for work the server
    /// answers on its own behalf.
    pub msg: Option<&'a Delivery>,
    /// Work to start once the answer is published (a snapshot streams after its response).
    pub after_reply: RefCell<Vec<Box<dyn FnOnce() + Send>>>,
    /// Consumer advisories, sent after the answer.
    pub consumer_events: RefCell<Vec<ConsumerEvent>>,
    /// A header block the answer carries (a sourcing consumer's `Nats-Stream-Identity`).
    pub reply_headers: RefCell<Option<Vec<u8>>>,
}

impl<'a> Request<'a> {
    /// A request of `jsa` with `body`.
    pub fn new(js: &'a Arc<JetStream>, jsa: &'a Arc<JsAccount>, body: &'a [u8]) -> Self {
        Self {
            js,
            jsa,
            body,
            actions: RefCell::new(Vec::new()),
            msg: None,
            after_reply: RefCell::new(Vec::new()),
            consumer_events: RefCell::new(Vec::new()),
            reply_headers: RefCell::new(None),
        }
    }

    /// The requester as the `Nats-Request-Info` header describes it, verbatim.
    pub fn client_info(&self) -> Option<Box<serde_json::value::RawValue>> {
        let block = self.msg?.headers.as_deref()?;
        let headers = nats_proto::headers::Headers::parse(block).ok()?;
        let text = std::str::from_utf8(headers.get(b"Nats-Request-Info")?).ok()?;
        serde_json::value::RawValue::from_string(text.to_owned()).ok()
    }

    /// Notes a stream action for its advisory.
    pub fn advise(&self, stream: &str, action: StreamAction) {
        self.actions.borrow_mut().push((stream.to_owned(), action));
    }

    /// Notes a consumer advisory.
    pub fn advise_consumer(&self, event: ConsumerEvent) {
        self.consumer_events.borrow_mut().push(event);
    }
}
