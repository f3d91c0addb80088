//! A raw WebSocket client for tests: the upgrade request with a fixed key (so that replies
//! compare byte for byte between servers), masked frames built by hand, and frames read back
//! one at a time, with permessage-deflate done with flate2.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The key every test upgrade sends; its accept value is fixed too.
pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
/// The masking key of every frame the client sends.
pub const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// A frame read from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    pub rsv1: bool,
    pub opcode: u8,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The close status and reason of a close frame.
    pub fn close_status(&self) -> Option<(u16, String)> {
        let (code, reason) = self.payload.split_at_checked(2)?;
        Some((
            u16::from_be_bytes([code[0], code[1]]),
            String::from_utf8_lossy(reason).into_owned(),
        ))
    }
}

/// The upgrade request for `path` with `extra` header lines (each ending in CRLF).
pub fn upgrade_request(path: &str, extra: &str) -> Vec<u8> {
    format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
    .into_bytes()
}

/// One frame as a client sends it: masked with [`MASK`] unless `mask` is false.
pub fn frame(opcode: u8, payload: &[u8], fin: bool, rsv1: bool, mask: bool) -> Vec<u8> {
    let mut out = vec![opcode | if fin { 0x80 } else { 0 } | if rsv1 { 0x40 } else { 0 }];
    let mask_bit = if mask { 0x80 } else { 0 };
    match payload.len() {
        n @ 0..=125 => out.push(mask_bit | n as u8),
        n @ 126..=65535 => {
            out.push(mask_bit | 0x7e);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(mask_bit | 0x7f);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    if mask {
        out.extend_from_slice(&MASK);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    } else {
        out.extend_from_slice(payload);
    }
    out
}

/// A masked, final binary frame.
pub fn binary(payload: &[u8]) -> Vec<u8> {
    frame(2, payload, true, false, true)
}

/// Deflates `data` as permessage-deflate sends it (sync flush, `00 00 ff ff` removed).
pub fn deflate(data: &[u8]) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::default(), false);
    let mut out = Vec::with_capacity(data.len() + 64);
    c.compress_vec(data, &mut out, flate2::FlushCompress::Sync)
        .expect("deflate");
    assert!(out.ends_with(&[0, 0, 0xff, 0xff]), "sync flush tail");
    out.truncate(out.len() - 4);
    out
}

/// Inflates a permessage-deflate message.
pub fn inflate(data: &[u8]) -> Vec<u8> {
    let mut input = data.to_vec();
    input.extend_from_slice(&[0, 0, 0xff, 0xff]);
    let mut d = flate2::Decompress::new(false);
    let mut out = Vec::new();
    loop {
        let (in_before, out_before) = (d.total_in(), d.total_out());
        out.reserve(64 * 1024);
        let at = usize::try_from(d.total_in()).expect("offset");
        d.decompress_vec(&input[at..], &mut out, flate2::FlushDecompress::Sync)
            .expect("inflate");
        let all_in = usize::try_from(d.total_in()).expect("offset") >= input.len();
        if (all_in && out.len() < out.capacity())
            || (d.total_in() == in_before && d.total_out() == out_before)
        {
            break;
        }
    }
    out
}

/// A raw websocket connection.
pub struct WsClient {
    stream: TcpStream,
    buf: Vec<u8>,
    /// The server's reply to the upgrade request (head only).
    pub response: String,
}

impl WsClient {
    /// Connects to `127.0.0.1:port`, sends `request`, and reads the reply head.
    pub fn connect_with(port: u16, request: &[u8]) -> Self {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        stream.write_all(request).expect("send upgrade");
        let mut client = Self {
            stream,
            buf: Vec::new(),
            response: String::new(),
        };
        let end = client
            .fill_until(Duration::from_secs(10), |b| {
                b.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
            })
            .expect("reply head");
        client.response = String::from_utf8_lossy(&client.buf[..end]).into_owned();
        client.buf.drain(..end);
        client
    }

    /// Upgrades on `/` with `extra` header lines; panics unless the reply is a 101.
    pub fn connect(port: u16, extra: &str) -> Self {
        let client = Self::connect_with(port, &upgrade_request("/", extra));
        assert!(
            client.response.starts_with("HTTP/1.1 101 "),
            "{}",
            client.response
        );
        client
    }

    /// Connects, reads INFO and sends `connect` (a CONNECT line) followed by PING, and waits
    /// for the PONG.
    pub fn handshake(port: u16, extra: &str, connect: &str) -> Self {
        let mut client = Self::connect(port, extra);
        let info = client.read_data_until("\r\n");
        assert!(info.starts_with("INFO "), "{info}");
        client.send(&binary(format!("{connect}\r\nPING\r\n").as_bytes()));
        let pong = client.read_data_until("PONG\r\n");
        assert!(pong.ends_with("PONG\r\n"), "{pong}");
        client
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// The socket, for tests that write or read it directly.
    pub fn stream_mut(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    /// Reads into the buffer until `done` finds what it wants (returning a length) or the
    /// deadline passes or the connection closes.
    fn fill_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&[u8]) -> Option<usize>,
    ) -> Option<usize> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(n) = done(&self.buf) {
                return Some(n);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            self.stream
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .ok()?;
            let mut chunk = [0u8; 16384];
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return None,
            }
        }
    }

    /// The next frame, or `None` if none arrives within `limit` (or the connection closed).
    pub fn read_frame(&mut self, limit: Duration) -> Option<Frame> {
        let total = self.fill_until(limit, frame_len)?;
        let bytes: Vec<u8> = self.buf.drain(..total).collect();
        let (b0, b1) = (bytes[0], bytes[1]);
        let (len, at) = match b1 & 0x7f {
            126 => (u16::from_be_bytes([bytes[2], bytes[3]]) as usize, 4),
            127 => (
                u64::from_be_bytes(bytes[2..10].try_into().expect("len")) as usize,
                10,
            ),
            n => (n as usize, 2),
        };
        assert_eq!(b1 & 0x80, 0, "server frames are not masked");
        Some(Frame {
            fin: b0 & 0x80 != 0,
            rsv1: b0 & 0x40 != 0,
            opcode: b0 & 0x0f,
            payload: bytes[at..at + len].to_vec(),
        })
    }

    /// Reads data frames (inflating compressed messages) until their text contains `needle`.
    pub fn read_data_until(&mut self, needle: &str) -> String {
        let mut text = String::new();
        let mut compressed: Option<Vec<u8>> = None;
        while !text.contains(needle) {
            let Some(f) = self.read_frame(Duration::from_secs(10)) else {
                panic!("no {needle:?} after {text:?}");
            };
            assert!(
                matches!(f.opcode, 0..=2),
                "unexpected frame {f:?} after {text:?}"
            );
            if f.rsv1 || compressed.is_some() {
                compressed.get_or_insert_with(Vec::new).extend(&f.payload);
                if f.fin {
                    let whole = compressed.take().unwrap_or_default();
                    text.push_str(&String::from_utf8_lossy(&inflate(&whole)));
                }
            } else {
                text.push_str(&String::from_utf8_lossy(&f.payload));
            }
        }
        text
    }

    /// Reads frames until the server closes the connection; returns them.
    pub fn frames_until_closed(&mut self, limit: Duration) -> Vec<Frame> {
        let deadline = Instant::now() + limit;
        let mut frames = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.read_frame(left) {
                Some(f) => frames.push(f),
                None => break,
            }
        }
        frames
    }

    /// Whether the server closed the connection within `limit` (reading and dropping data).
    pub fn closed_within(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut chunk = [0u8; 4096];
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            if self
                .stream
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .is_err()
            {
                return true;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return true,
            }
        }
        false
    }
}

/// The length of the whole frame at the front of `buf`, once it is all there.
fn frame_len(buf: &[u8]) -> Option<usize> {
    let b1 = *buf.get(1)?;
    let (len, at) = match b1 & 0x7f {
        126 => (u16::from_be_bytes([*buf.get(2)?, *buf.get(3)?]) as usize, 4),
        127 => (
            u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let mask = if b1 & 0x80 != 0 { 4 } else { 0 };
    let total = at + mask + len;
    (buf.len() >= total).then_some(total)
}
