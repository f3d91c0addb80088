//! Deliveries to internal clients (`crate::internal`): the frame carries the publisher's
//! identity in a `Nats-Request-Info` header, as a request crossing into the system account
//! does in Go, so that a handler such as `$SYS.REQ.USER.INFO` knows who asked.
//!
//! A `Nats-Request-Info` the publisher wrote itself is replaced, so that no client can speak
//! for another. Internal clients only receive requests addressed to the server, never the
//! message stream, so this path may allocate.

use nats_proto::headers::{write_end, write_field, write_version_line, Headers, NATS_REQUEST_INFO};
use nats_proto::MsgFrameTemplate;

use super::{Message, Publisher};
use crate::account::SubRef;

impl Publisher {
    /// Queues `msg` to an internal client's subscription with the publisher's identity added;
    /// the subscription's delivery was already counted.
    #[cold]
    pub(super) fn deliver_internal(&mut self, sub: &SubRef, msg: &Message<'_>) -> bool {
        let block = self.internal_headers(msg.headers);
        let total = block.len() + msg.payload.len();
        let template = MsgFrameTemplate::hmsg(msg.subject, msg.reply, block.len(), total);
        let parts: [&[u8]; 6] = [
            template.prefix(),
            &sub.sid,
            template.suffix(),
            &block,
            msg.payload,
            b"\r\n",
        ];
        let queued = sub.client.out.enqueue_msg(&parts, total);
        self.after_enqueue(&sub.client, queued, total, msg.reply)
    }

    /// The message's header block without any `Nats-Request-Info`, plus ours when a client
    /// published it (the server's own publishes carry none).
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
}
