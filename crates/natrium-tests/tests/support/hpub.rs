//! Publishes with header blocks written byte for byte (`async-nats` keeps headers in a hash
//! map, so their order on the wire varies), each answered by its acknowledgement. Included by
//! JetStream tests with `#[path]`.
#![allow(dead_code)]

use natrium_tests::raw::RawClient;
use natrium_tests::ServerProcess;

const ACKS: &str = "_HPUB_ACKS";

/// A raw connection of one user (password = name) subscribed to its acknowledgements.
pub struct Publisher(RawClient);

impl Publisher {
    pub fn connect(server: &ServerProcess, user: &str) -> Publisher {
        let mut raw = RawClient::connect(&server.addr());
        let connect = format!(
            "CONNECT {{\"verbose\":false,\"headers\":true,\"user\":\"{user}\",\"pass\":\"{user}\"}}\r\n\
             SUB {ACKS} 1\r\n"
        );
        let answer = raw.exchange(connect.as_bytes());
        assert!(!answer.contains("-ERR"), "{answer}");
        Publisher(raw)
    }

    /// Publishes `payload` with `headers` in this order (none: a plain `PUB`); the answer.
    pub fn publish(&mut self, subject: &str, headers: &[(&str, &str)], payload: &str) -> String {
        let mut frame = Vec::new();
        if headers.is_empty() {
            frame.extend_from_slice(
                format!("PUB {subject} {ACKS} {}\r\n{payload}\r\n", payload.len()).as_bytes(),
            );
        } else {
            let mut block = String::from("NATS/1.0\r\n");
            for (name, value) in headers {
                block.push_str(name);
                block.push_str(": ");
                block.push_str(value);
                block.push_str("\r\n");
            }
            block.push_str("\r\n");
            let total = block.len() + payload.len();
            let head = format!("HPUB {subject} {ACKS} {} {total}\r\n", block.len());
            frame.extend_from_slice(head.as_bytes());
            frame.extend_from_slice(block.as_bytes());
            frame.extend_from_slice(payload.as_bytes());
            frame.extend_from_slice(b"\r\n");
        }
        self.0.send(&frame);
        loop {
            let line = self.0.read_line().expect("a line");
            if line == "PING" {
                self.0.send(b"PONG\r\n");
                continue;
            }
            assert!(line.starts_with(&format!("MSG {ACKS} ")), "{line}");
            let size: usize = line.rsplit(' ').next().unwrap().parse().unwrap();
            let body = self.0.read_bytes(size + 2);
            return String::from_utf8_lossy(&body[..size]).into_owned();
        }
    }
}
