//! One API request being answered: the service, the account and the body.

use std::sync::Arc;

use crate::account::JsAccount;
use crate::service::JetStream;

/// One request being answered.
pub struct Request<'a> {
    pub js: &'a JetStream,
    pub jsa: &'a Arc<JsAccount>,
    pub body: &'a [u8],
}
