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

impl RawClient {
    /// Reads until the buffered bytes contain `marker`; returns everything up to and including
    /// it (the rest stays buffered). Panics if the connection closes first or after
    /// [`RAW_TIMEOUT`].
    pub fn read_until(&mut self, marker: &[u8]) -> String {
        let find = |b: &[u8]| b.windows(marker.len()).position(|w| w == marker);
        let closed = self.fill_until(|b| find(b).is_some(), RAW_TIMEOUT);
        let Some(at) = find(&self.buf) else {
            panic!(
                "closed={closed} before {:?}; have {:?}",
                String::from_utf8_lossy(marker),
                self.text()
            );
        };
        let end = at + marker.len();
        let out = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        self.buf.drain(..end);
        out
    }

    /// Reads exactly `n` bytes (a binary payload whose size a frame header gave).
    pub fn read_bytes(&mut self, n: usize) -> Vec<u8> {
        let closed = self.fill_until(|b| b.len() >= n, RAW_TIMEOUT);
        assert!(self.buf.len() >= n, "closed={closed} before {n} bytes");
        self.buf.drain(..n).collect()
    }

    /// Waits until the server closes the connection or `timeout` passes, without sending.
    /// Returns what arrived and whether the connection closed.
    pub fn wait_closed(&mut self, timeout: Duration) -> (String, bool) {
        let deadline = Instant::now() + timeout;
        let mut chunk = vec![0u8; 65536];
        let closed = loop {
            if Instant::now() >= deadline {
                break false;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => break true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => break true,
            }
        };
        let out = self.text();
        self.buf.clear();
        (out, closed)
    }
}

/// Polls `done` every few milliseconds until it holds or `timeout` passes; returns whether it
/// held. For state that offers no event to wait on (a counter in `/varz`, a process's RSS).
pub fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `GET path` on a monitoring port, parsed as JSON (HTTP/1.1, `Connection: close`).
pub fn http_get_json(port: u16, path: &str) -> serde_json::Value {
    let (_, body) = http_get(port, path);
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// `GET path` on a monitoring port: the status code and the body (de-chunked).
pub fn http_get(port: u16, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect monitor");
    stream.set_read_timeout(Some(RAW_TIMEOUT)).expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("send request");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("header end");
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status code");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    (code, body)
}

/// The payload of a chunked HTTP body.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The resident set size of process `pid` in KiB (`VmRSS` in `/proc/<pid>/status`).
pub fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}
