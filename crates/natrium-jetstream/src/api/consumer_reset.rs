//! `$JS.API.CONSUMER.RESET.<stream>.<consumer>`: in Go the consumer itself listens there, so
//! nothing answers for a stream or consumer that does not exist (nor in an account without
//! JetStream), and the answers are not counted as API requests. The response is the
//! consumer's info and the sequence it starts from (`reset_seq`, present even in a refusal).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::consumer_json::{consumer_info, ConsumerInfoJson};
use super::responses::encode;
use crate::config::decode_checked;
use crate::config::gotype::{GoStruct, GoType};
use crate::config::stream::Retention;
use crate::consumer::reset::reset;
use crate::consumer::retention::release_acked;
use crate::errors::{table, ApiError};
use crate::service::JetStream;
use crate::stream::sourcing::identity;

const KIND: &str = "consumer_reset_response";

static RESET_REQUEST: GoStruct = GoStruct {
    name: "JSApiConsumerResetRequest",
    fields: &[("seq", GoType::Uint64)],
};

#[derive(Deserialize, Default)]
#[serde(default)]
struct ResetRequest {
    seq: u64,
}

#[derive(Serialize)]
struct ResetResponse {
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    info: Option<ConsumerInfoJson>,
    reset_seq: u64,
}

fn refusal(err: &ApiError) -> Vec<u8> {
    encode(
        KIND,
        Some(err),
        ResetResponse {
            info: None,
            reset_seq: 0,
        },
    )
}

/// The answer to a reset request in `account`, or `None` when Go's server would not answer:
/// its header block (the stream's identity, when the request carried a
/// `Nats-Stream-Identity` header and the reset was made, as Go answers) and its body.
pub fn answer(
    js: &Arc<JetStream>,
    account: &str,
    (stream, name): (&str, &str),
    (headers, body): (Option<&[u8]>, &[u8]),
    api_level_met: bool,
) -> Option<(Option<Vec<u8>>, Vec<u8>)> {
    let wants_identity = headers.is_some_and(|h| {
        nats_proto::headers::Headers::parse(h)
            .is_ok_and(|h| h.get(identity::HEADER.as_bytes()).is_some())
    });
    let body = match reset_answer(js, account, (stream, name), body, api_level_met)? {
        Ok(body) => body,
        Err(refused) => return Some((None, refused)),
    };
    let identity_block = wants_identity.then(|| {
        js.account(account)
            .and_then(|jsa| jsa.stream(stream))
            .map(|stream| {
                format!(
                    "NATS/1.0\r\n{}: {}\r\n\r\n",
                    identity::HEADER,
                    identity::of(&stream)
                )
            })
            .unwrap_or_default()
            .into_bytes()
    });
    Some((identity_block.filter(|b| !b.is_empty()), body))
}

/// The reset itself: `Ok` with the answer of a reset made, `Err` with a refusal.
fn reset_answer(
    js: &Arc<JetStream>,
    account: &str,
    (stream, name): (&str, &str),
    body: &[u8],
    api_level_met: bool,
) -> Option<Result<Vec<u8>, Vec<u8>>> {
    let jsa = js.account(account)?;
    let stream = jsa.stream(stream)?;
    let consumer = stream.consumers.lock().get(name).cloned()?;
    if !api_level_met {
        return Some(Err(refusal(&table::REQUIRED_API_LEVEL.err())));
    }
    let request: ResetRequest = if body.is_empty() {
        ResetRequest::default()
    } else {
        match decode_checked(body, &RESET_REQUEST, "server.JSApiConsumerResetRequest") {
            Ok(request) => request,
            Err(err) => return Some(Err(refusal(&err))),
        }
    };
    if let Some(engine) = jsa.engine(&stream.name) {
        engine.settle(super::consumer_verbs::SETTLE_MAX);
    }
    let result = {
        let mut core = consumer.core.lock();
        let stream_core = stream.core.lock();
        reset(&mut core, request.seq, stream_core.ingest.store.as_ref())
    };
    let seq = match result {
        Ok(seq) => seq,
        Err(err) => {
            return Some(Err(refusal(
                &table::CONSUMER_INVALID_RESET.with(&[("err", &err)]),
            )))
        }
    };
    if stream.core.lock().config.retention == Retention::Interest {
        // Go's clean-up after a reset: what the consumer now counts as acknowledged goes when
        // no other consumer needs it.
        release_acked(&stream);
    }
    if let Some(engine) = jsa.engine(&stream.name) {
        // Its waiting requests are served from the new start.
        engine.look_at(&consumer.name);
    }
    let info = consumer_info(&jsa.account, &stream, &consumer, true);
    Some(Ok(encode(
        KIND,
        None,
        ResetResponse {
            info: Some(info),
            reset_seq: seq,
        },
    )))
}
