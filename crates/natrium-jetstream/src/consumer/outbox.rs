//! What one round of a stream's consumer work sends: messages, status replies, ack replies
//! and advisories, held until the consumer states they depend on are stored (see
//! `docs/jetstream-consumers.md`, "When state is stored"), then published in order.

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use crate::event::typed_json;

/// One message to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Where it goes, when not to `subject`'s subscribers (a delivery goes to the pull
    /// request's reply subject and is seen on the stored message's subject).
    pub route: Option<Arc<str>>,
    /// The stored message's own subject shares its bytes (no copy per delivery).
    pub subject: Bytes,
    pub reply: Option<String>,
    pub headers: Option<Bytes>,
    pub payload: Bytes,
}

/// The messages of a round, and the consumers whose state changed.
#[derive(Debug, Default)]
pub struct Outbox {
    pub msgs: Vec<Outgoing>,
    /// Consumers whose state must be stored before `msgs` go out.
    pub touched: Vec<String>,
    /// Stream sequences a consumer acknowledged, for interest and work-queue retention.
    pub released: Vec<(String, u64)>,
    /// Push consumers with more to deliver on the next round.
    pub again: Vec<String>,
    /// Consumers inactive past their threshold, deleted after the round.
    pub doomed: Vec<String>,
}

impl Outbox {
    pub fn push(
        &mut self,
        subject: &str,
        reply: Option<String>,
        headers: Option<Bytes>,
        payload: Bytes,
    ) {
        self.msgs.push(Outgoing {
            route: None,
            subject: Bytes::copy_from_slice(subject.as_bytes()),
            reply,
            headers,
            payload,
        });
    }

    /// A stored message delivered to `route` (a request's reply subject) with its ack subject.
    pub fn delivery(
        &mut self,
        route: Arc<str>,
        subject: &Bytes,
        ack: String,
        headers: Option<Bytes>,
        payload: Bytes,
    ) {
        self.msgs.push(Outgoing {
            route: Some(route),
            subject: subject.clone(),
            reply: Some(ack),
            headers,
            payload,
        });
    }

    /// A status-only message (`NATS/1.0 408 …`).
    pub fn status(&mut self, subject: &str, headers: Vec<u8>) {
        self.push(subject, None, Some(Bytes::from(headers)), Bytes::new());
    }

    /// The empty answer to a double ack.
    pub fn ack_reply(&mut self, subject: &str) {
        self.push(subject, None, None, Bytes::new());
    }

    pub fn again(&mut self, consumer: &str) {
        self.again.push(consumer.to_owned());
    }

    pub fn touch(&mut self, consumer: &str) {
        if !self.touched.iter().any(|c| c == consumer) {
            self.touched.push(consumer.to_owned());
        }
    }

    pub(crate) fn advisory<T: Serialize>(&mut self, subject: String, kind: &str, body: T) {
        let json = typed_json(kind, body);
        self.msgs.push(Outgoing {
            route: None,
            subject: subject.into(),
            reply: None,
            headers: None,
            payload: Bytes::from(json),
        });
    }
}

/// Go's subject prefixes and types of the delivery advisories.
const NAK_PRE: &str = "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED";
const TERM_PRE: &str = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED";
const MAX_DELIVER_PRE: &str = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES";

/// Which delivery advisory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    Nak,
    Terminated,
    MaxDeliver,
}

impl Advice {
    /// The subject for a consumer's advisory of this kind.
    pub fn subject(self, stream: &str, consumer: &str) -> String {
        let pre = match self {
            Advice::Nak => NAK_PRE,
            Advice::Terminated => TERM_PRE,
            Advice::MaxDeliver => MAX_DELIVER_PRE,
        };
        format!("{pre}.{stream}.{consumer}")
    }

    fn kind(self) -> &'static str {
        match self {
            Advice::Nak => "io.nats.jetstream.advisory.v1.nak",
            Advice::Terminated => "io.nats.jetstream.advisory.v1.terminated",
            Advice::MaxDeliver => "io.nats.jetstream.advisory.v1.max_deliver",
        }
    }
}

/// The facts of one delivery advisory.
#[derive(Debug, Clone, Copy)]
pub struct Delivered<'a> {
    pub stream: &'a str,
    pub consumer: &'a str,
    pub consumer_seq: u64,
    pub stream_seq: u64,
    pub deliveries: u64,
    pub reason: &'a str,
    pub domain: &'a str,
}

#[derive(Serialize)]
struct NakBody<'a> {
    stream: &'a str,
    consumer: &'a str,
    consumer_seq: u64,
    stream_seq: u64,
    deliveries: u64,
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

/// Go's `JSConsumerAckMetric` body (after the typed event's fields).
#[derive(Serialize)]
pub struct AckMetric<'a> {
    pub stream: &'a str,
    pub consumer: &'a str,
    pub consumer_seq: u64,
    pub stream_seq: u64,
    pub ack_time: i64,
    pub deliveries: u64,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub domain: &'a str,
}

#[derive(Serialize)]
struct MaxDeliverBody<'a> {
    stream: &'a str,
    consumer: &'a str,
    stream_seq: u64,
    deliveries: u64,
    #[serde(skip_serializing_if = "str::is_empty")]
    domain: &'a str,
}

impl Outbox {
    /// Queues a delivery advisory; `listened` says whether anyone subscribes to `subject`
    /// (the document is built only then).
    pub fn advise(
        &mut self,
        advice: Advice,
        facts: &Delivered<'_>,
        listened: impl Fn(&str) -> bool,
    ) {
        let subject = advice.subject(facts.stream, facts.consumer);
        if !listened(&subject) {
            return;
        }
        if advice == Advice::MaxDeliver {
            let body = MaxDeliverBody {
                stream: facts.stream,
                consumer: facts.consumer,
                stream_seq: facts.stream_seq,
                deliveries: facts.deliveries,
                domain: facts.domain,
            };
            self.advisory(subject, advice.kind(), body);
            return;
        }
        let body = NakBody {
            stream: facts.stream,
            consumer: facts.consumer,
            consumer_seq: facts.consumer_seq,
            stream_seq: facts.stream_seq,
            deliveries: facts.deliveries,
            reason: if advice == Advice::Terminated {
                facts.reason
            } else {
                ""
            },
            domain: facts.domain,
        };
        self.advisory(subject, advice.kind(), body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consumer_advisory_documents_in_go_order() {
        let mut out = Outbox::default();
        let facts = Delivered {
            stream: "S",
            consumer: "C",
            consumer_seq: 2,
            stream_seq: 5,
            deliveries: 3,
            reason: "bad",
            domain: "",
        };
        out.advise(Advice::Terminated, &facts, |_| true);
        out.advise(Advice::MaxDeliver, &facts, |_| true);
        out.advise(Advice::Nak, &facts, |_| false);
        assert_eq!(out.msgs.len(), 2);
        assert_eq!(
            out.msgs[0].subject,
            "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.S.C"
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.msgs[0].payload).unwrap();
        assert_eq!(doc["type"], "io.nats.jetstream.advisory.v1.terminated");
        assert_eq!(doc["reason"], "bad");
        let text = String::from_utf8(out.msgs[1].payload.to_vec()).unwrap();
        assert!(text.contains(r#""stream":"S","consumer":"C","stream_seq":5,"deliveries":3"#));
    }
}
