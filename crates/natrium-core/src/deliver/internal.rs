//! Deliveries to in-process subscribers (`crate::endpoint::Sink`): the message is handed
//! over typed, its parts copied once per publish into shared bytes whichever number of sinks
//! take it. A sink that asks for it (the system services) gets the publisher's identity in a
//! `Nats-Request-Info` header, as a request crossing into the system account carries it in
//! Go, so that a handler such as `$SYS.REQ.USER.INFO` knows who asked.
//!
//! A `Nats-Request-Info` the publisher wrote itself is replaced, so that no client can speak
//! for another. Only the server's own services ask for it, and they receive requests
//! addressed to the server, never the message stream, so that path may allocate.

use std::sync::Arc;

use bytes::Bytes;
use nats_proto::headers::{write_end, write_field, write_version_line, Headers, NATS_REQUEST_INFO};

use super::{Message, Publisher, SinkParts};
use crate::endpoint::{Delivery, Sink, SinkAccept};

impl Publisher {
    /// Hands `msg` to `sink` for its subscription `sid`; the delivery was already counted.
    pub(super) fn deliver_to_sink(
        &mut self,
        sink: &Arc<dyn Sink>,
        sid: u64,
        msg: &Message<'_>,
    ) -> bool {
        let parts = self.sink_parts.get_or_insert_with(|| SinkParts::of(msg));
        let mut delivery = Delivery {
            subject: parts.subject.clone(),
            reply: parts.reply.clone(),
            headers: parts.headers.clone(),
            payload: parts.payload.clone(),
            sid,
            origin: self.origin.clone(),
        };
        // The identity goes in when there is one; a header block is rebuilt anyway when the
        // publisher wrote one, so that a forged identity never reaches the sink.
        let identified = self.origin.is_some() || self.own_info.is_some();
        if sink.wants_request_info() && (identified || msg.headers.is_some()) {
            delivery.headers = Some(Bytes::from(self.internal_headers(msg.headers)));
        }
        let len = delivery.headers.as_ref().map_or(0, Bytes::len) + delivery.payload.len();
        match sink.deliver(delivery) {
            SinkAccept::Accepted => {}
            SinkAccept::AcceptedStall => {
                if !self.stalled_sinks.iter().any(|s| Arc::ptr_eq(s, sink)) {
                    self.stalled_sinks.push(Arc::clone(sink));
                }
            }
            SinkAccept::Dropped => return false,
        }
        self.batch.out_msgs += 1;
        self.batch.out_bytes += len as u64;
        true
    }

    /// The message's header block without any `Nats-Request-Info`, plus ours when a client
    /// published it, or the one an internal publisher gave itself (the server's other
    /// publishes carry none).
    fn internal_headers(&self, headers: Option<&[u8]>) -> Vec<u8> {
        let parsed = headers.and_then(|h| Headers::parse(h).ok());
        let mut out = Vec::with_capacity(headers.map_or(0, <[u8]>::len) + 256);
        match &parsed {
            Some(h) => write_version_line(&mut out, h.status(), h.description()),
            None => write_version_line(&mut out, None, b""),
        }
        for (name, value) in parsed.iter().flat_map(Headers::iter) {
            if !name.eq_ignore_ascii_case(NATS_REQUEST_INFO) {
                write_field(&mut out, name, value);
            }
        }
        if let Some(origin) = &self.origin {
            let info = self.request_info(&origin.account, true);
            let json = serde_json::to_vec(&info).unwrap_or_default();
            write_field(&mut out, NATS_REQUEST_INFO, &json);
        } else if let Some(own) = &self.own_info {
            write_field(&mut out, NATS_REQUEST_INFO, own);
        }
        write_end(&mut out);
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::account::Account;
    use crate::client::ClientHandle;
    use crate::stats::ServerStats;

    #[test]
    fn deliver_internal_headers_replace_a_forged_request_info() {
        let mut p = Publisher::new(7, Arc::new(ServerStats::default()));
        let forged = b"NATS/1.0\r\nX: 1\r\nNats-Request-Info: {\"acc\":\"SYS\"}\r\n\r\n";
        // The server's own publishes carry no identity.
        let block = p.internal_headers(Some(forged));
        let h = Headers::parse(&block).unwrap();
        assert_eq!(h.get(b"X"), Some(&b"1"[..]));
        assert_eq!(h.get(NATS_REQUEST_INFO), None);
        let addr = SocketAddr::from(([127, 0, 0, 1], 4222));
        let client = Arc::new(ClientHandle::new(7, addr, 1024, CancellationToken::new()));
        p.set_origin(Arc::new(Account::new("A", false)), client);
        let block = p.internal_headers(Some(forged));
        let h = Headers::parse(&block).unwrap();
        let info: serde_json::Value =
            serde_json::from_slice(h.get(NATS_REQUEST_INFO).unwrap()).unwrap();
        assert_eq!(
            (info["acc"].as_str(), info["id"].as_u64()),
            (Some("A"), Some(7))
        );
        assert_eq!(h.get_all(NATS_REQUEST_INFO).count(), 1);
        assert!(Headers::parse(&p.internal_headers(None)).is_ok());
    }

    #[test]
    fn deliver_internal_headers_carry_an_internal_publishers_own_identity() {
        let mut p = Publisher::new(9, Arc::new(ServerStats::default()));
        p.set_own_info(Some(bytes::Bytes::from_static(
            b"{\"id\":9,\"kind\":\"JetStream\"}",
        )));
        let forged = b"NATS/1.0\r\nNats-Request-Info: {\"acc\":\"SYS\"}\r\n\r\n";
        for published in [None, Some(&forged[..])] {
            let block = p.internal_headers(published);
            let h = Headers::parse(&block).unwrap();
            assert_eq!(
                h.get_all(NATS_REQUEST_INFO).collect::<Vec<_>>(),
                [&b"{\"id\":9,\"kind\":\"JetStream\"}"[..]]
            );
        }
    }
}
