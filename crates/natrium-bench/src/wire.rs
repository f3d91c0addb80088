//! A lean NATS client for load generation: blocking sockets, pre-built frames, large batched
//! writes, and a counting reader that skips payloads without copying them. With TLS it reads
//! the plain INFO, then upgrades (rustls), as NATS clients do; over WebSocket it upgrades the
//! HTTP connection first and then speaks the protocol inside frames (`crate::ws`).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use crate::ws::WsStream;

pub const READ_CHUNK_BYTES: usize = 256 * 1024;

/// Where scenarios connect: an address, a TLS configuration when the server requires TLS, and
/// whether the address is a websocket listener.
#[derive(Clone)]
pub struct Endpoint {
    pub addr: String,
    pub tls: Option<Arc<ClientConfig>>,
    pub ws: bool,
    /// User name, sent with the same string as password; `None`: no credentials.
    pub user: Option<&'static str>,
}

/// A plain, TLS or websocket socket.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
    Ws(Box<WsStream>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
            Stream::Ws(s) => &s.tcp,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Ws(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Ws(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
            Stream::Ws(s) => s.flush(),
        }
    }
}

pub struct Conn {
    pub stream: Stream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Conn {
    /// Connects, reads INFO (then upgrades to TLS if the endpoint has it), sends CONNECT
    /// (quiet, headers on) and waits for the PONG.
    pub fn open(ep: &Endpoint) -> Result<Self> {
        let addr = &ep.addr;
        let tcp = TcpStream::connect(addr).with_context(|| format!("connect {addr}"))?;
        tcp.set_nodelay(true)?;
        let stream = if ep.ws {
            Stream::Ws(Box::new(WsStream::upgrade(tcp)?))
        } else {
            Stream::Plain(tcp)
        };
        let mut conn = Self {
            stream,
            buf: vec![0; READ_CHUNK_BYTES],
            start: 0,
            end: 0,
        };
        conn.read_line()?;
        if let Some(config) = &ep.tls {
            let Self {
                stream,
                buf,
                start,
                end,
            } = conn;
            let Stream::Plain(tcp) = stream else {
                bail!("already upgraded");
            };
            let name = ServerName::IpAddress(Ipv4Addr::LOCALHOST.into());
            let session = ClientConnection::new(Arc::clone(config), name)?;
            conn = Self {
                stream: Stream::Tls(Box::new(StreamOwned::new(session, tcp))),
                buf,
                start,
                end,
            };
        }
        let credentials = ep
            .user
            .map(|u| format!(",\"user\":\"{u}\",\"pass\":\"{u}\""))
            .unwrap_or_default();
        let connect = format!(
            "CONNECT {{\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1{credentials}}}\r\nPING\r\n"
        );
        conn.send(connect.as_bytes())?;
        conn.expect_pong()?;
        Ok(conn)
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream.write_all(bytes).context("write")
    }

    pub fn set_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        self.stream
            .tcp()
            .set_read_timeout(timeout)
            .context("timeout")
    }

    fn fill(&mut self) -> Result<()> {
        if self.start > 0 && self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
        }
        let n = self
            .stream
            .read(&mut self.buf[self.end..])
            .context("read")?;
        if n == 0 {
            bail!("connection closed");
        }
        self.end += n;
        Ok(())
    }

    /// Reads one line (without CRLF).
    pub fn read_line(&mut self) -> Result<Vec<u8>> {
        loop {
            if let Some(i) = find_crlf(&self.buf[self.start..self.end]) {
                let line = self.buf[self.start..self.start + i].to_vec();
                self.start += i + 2;
                return Ok(line);
            }
            self.fill()?;
        }
    }

    /// Reads until PONG, skipping everything else.
    pub fn expect_pong(&mut self) -> Result<()> {
        loop {
            let line = self.read_line()?;
            if line == b"PONG" {
                return Ok(());
            }
            if line.starts_with(b"-ERR") {
                bail!("server error: {}", String::from_utf8_lossy(&line));
            }
        }
    }

    /// Counts MSG/HMSG frames until `want` arrived (or PONG if `stop_at_pong`); returns count.
    pub fn count_msgs(&mut self, want: u64) -> Result<u64> {
        let mut got = 0;
        while got < want {
            let Some(i) = find_crlf(&self.buf[self.start..self.end]) else {
                self.fill()?;
                continue;
            };
            let line = &self.buf[self.start..self.start + i];
            if line.starts_with(b"MSG ") || line.starts_with(b"HMSG ") {
                let size = last_number(line).context("bad MSG line")?;
                let total = i + 2 + size + 2;
                while self.end - self.start < total {
                    self.fill()?;
                }
                self.start += total;
                got += 1;
            } else if line == b"PING" {
                self.start += i + 2;
                self.send(b"PONG\r\n")?;
            } else if line.starts_with(b"-ERR") {
                bail!("server error: {}", String::from_utf8_lossy(line));
            } else {
                self.start += i + 2;
            }
        }
        Ok(got)
    }

    /// Reads one MSG or HMSG and returns its payload.
    pub fn next_msg_payload(&mut self) -> Result<Vec<u8>> {
        loop {
            let line = self.read_line()?;
            if line.starts_with(b"MSG ") || line.starts_with(b"HMSG ") {
                let size = last_number(&line).context("bad MSG line")?;
                while self.end - self.start < size + 2 {
                    self.fill()?;
                }
                let payload = self.buf[self.start..self.start + size].to_vec();
                self.start += size + 2;
                return Ok(payload);
            }
            if line == b"PING" {
                self.send(b"PONG\r\n")?;
            }
        }
    }

    /// Reads one MSG and returns its reply subject (for services) — copies only the reply.
    pub fn next_msg_reply(&mut self) -> Result<Option<Vec<u8>>> {
        loop {
            let Some(i) = find_crlf(&self.buf[self.start..self.end]) else {
                self.fill()?;
                continue;
            };
            let line = self.buf[self.start..self.start + i].to_vec();
            if line.starts_with(b"MSG ") {
                let size = last_number(&line).context("bad MSG line")?;
                let total = i + 2 + size + 2;
                while self.end - self.start < total {
                    self.fill()?;
                }
                self.start += total;
                let fields: Vec<&[u8]> = line.split(|b| *b == b' ').collect();
                return Ok((fields.len() == 5).then(|| fields[3].to_vec()));
            }
            self.start += i + 2;
            if line == b"PING" {
                self.send(b"PONG\r\n")?;
            }
        }
    }
}

/// One frame read by `Conn::next_frame`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A MSG or HMSG on subscription `sid`; `status` is the code of a status message
    /// (`NATS/1.0 100 …`), `None` for data.
    Msg { sid: u64, status: Option<u16> },
    /// Anything else (PING answered, +OK, INFO …).
    Other,
}

impl Conn {
    /// Reads the next frame; a message's reply subject, if it has one, is left in `reply`
    /// (cleared otherwise), so acknowledging costs the caller no allocation.
    pub fn next_frame(&mut self, reply: &mut Vec<u8>) -> Result<Frame> {
        reply.clear();
        let i = loop {
            if let Some(i) = find_crlf(&self.buf[self.start..self.end]) {
                break i;
            }
            self.fill()?;
        };
        let line_end = self.start + i;
        let line = &self.buf[self.start..line_end];
        let headers = line.starts_with(b"HMSG ");
        if !headers && !line.starts_with(b"MSG ") {
            let ping = line == b"PING";
            if line.starts_with(b"-ERR") {
                bail!("server error: {}", String::from_utf8_lossy(line));
            }
            self.start = line_end + 2;
            if ping {
                self.send(b"PONG\r\n")?;
            }
            return Ok(Frame::Other);
        }
        // MSG <subject> <sid> [reply] <size>; HMSG has one more size.
        let mut fields: [&[u8]; 6] = [&[]; 6];
        let mut count = 0;
        for field in line.split(|b| *b == b' ').take(6) {
            fields[count] = field;
            count += 1;
        }
        let sizes = if headers { 2 } else { 1 };
        let sid = std::str::from_utf8(fields[2])
            .ok()
            .and_then(|f| f.parse().ok())
            .context("bad MSG line")?;
        if count == 4 + sizes {
            reply.extend_from_slice(fields[3]);
        }
        let size = last_number(line).context("bad MSG line")?;
        let total = i + 2 + size + 2;
        while self.end - self.start < total {
            self.fill()?;
        }
        // Filling may have moved the frame to the front of the buffer.
        let body_at = self.start + i + 2;
        let body = &self.buf[body_at..body_at + size];
        let status = if headers && body.starts_with(b"NATS/1.0 ") {
            body.get(9..12)
                .and_then(|code| std::str::from_utf8(code).ok()?.parse().ok())
        } else {
            None
        };
        self.start += total;
        Ok(Frame::Msg { sid, status })
    }
}

fn find_crlf(bytes: &[u8]) -> Option<usize> {
    memchr_crlf(bytes)
}

fn memchr_crlf(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(pos) = bytes[from..].iter().position(|b| *b == b'\n') {
        let at = from + pos;
        if at > 0 && bytes[at - 1] == b'\r' {
            return Some(at - 1);
        }
        from = at + 1;
    }
    None
}

fn last_number(line: &[u8]) -> Option<usize> {
    let field = line.rsplit(|b| *b == b' ').next()?;
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// `count` copies of `PUB subject <len>\r\n<payload>\r\n`, as one buffer to write in chunks.
pub fn pub_batch(subject: &str, payload_len: usize, count: usize) -> Vec<u8> {
    let mut frame = format!("PUB {subject} {payload_len}\r\n").into_bytes();
    frame.extend(std::iter::repeat_n(b'x', payload_len));
    frame.extend_from_slice(b"\r\n");
    let mut out = Vec::with_capacity(frame.len() * count);
    for _ in 0..count {
        out.extend_from_slice(&frame);
    }
    out
}
