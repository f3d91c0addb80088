//! A raw protocol client over a blocking socket, for exact-bytes tests.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Longest any single raw exchange may take before the test fails.
pub const RAW_TIMEOUT: Duration = Duration::from_secs(10);

pub struct RawClient {
    stream: TcpStream,
    buf: Vec<u8>,
    pub info: String,
}

impl RawClient {
    /// Connects and reads the INFO line.
    pub fn connect(addr: &str) -> Self {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        let mut client = Self {
            stream,
            buf: Vec::new(),
            info: String::new(),
        };
        let line = client.read_line().expect("INFO line");
        client.info = line;
        client
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
    }

    /// Fills the buffer until `done(buffer)` or the socket closes; returns whether it closed.
    fn fill_until(&mut self, done: impl Fn(&[u8]) -> bool, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut chunk = vec![0u8; 65536];
        while !done(&self.buf) {
            assert!(
                Instant::now() < deadline,
                "raw read timed out; have {:?}",
                self.text()
            );
            match self.stream.read(&mut chunk) {
                Ok(0) => return true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return true,
            }
        }
        false
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf).into_owned()
    }

    /// Reads one CRLF-terminated line (without the CRLF).
    pub fn read_line(&mut self) -> Option<String> {
        let find = |b: &[u8]| b.windows(2).position(|w| w == b"\r\n");
        self.fill_until(|b| find(b).is_some(), RAW_TIMEOUT);
        let end = find(&self.buf)?;
        let line = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        self.buf.drain(..end + 2);
        Some(line)
    }

    /// Sends PING and returns everything the server sent before the matching PONG.
    pub fn exchange(&mut self, bytes: &[u8]) -> String {
        let mut payload = bytes.to_vec();
        payload.extend_from_slice(b"PING\r\n");
        self.send(&payload);
        let marker = |b: &[u8]| b.windows(6).any(|w| w == b"PONG\r\n");
        let closed = self.fill_until(marker, RAW_TIMEOUT);
        let text = self.text();
        assert!(
            !closed || marker(&self.buf),
            "connection closed early: {text:?}"
        );
        let end = text.rfind("PONG\r\n").unwrap_or(text.len());
        let out = text[..end].to_owned();
        self.buf.clear();
        out
    }

    /// Sends bytes and returns everything until the server closes the connection.
    pub fn until_closed(&mut self, bytes: &[u8]) -> String {
        if !bytes.is_empty() {
            // The server may close before reading everything; a failed write is fine here.
            let _ = self.stream.write_all(bytes);
        }
        let closed = self.fill_until(|_| false, RAW_TIMEOUT);
        assert!(closed);
        let out = self.text();
        self.buf.clear();
        out
    }

    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }
}
