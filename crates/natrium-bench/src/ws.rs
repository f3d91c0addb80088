//! A lean WebSocket transport for the load generator: the upgrade, then each write sent as one
//! masked binary frame and reads that hand back frame payloads with the headers stripped.
//!
//! The masking key is all zeros: the server still reads and applies a key to every byte, as it
//! does for browsers, while the generator spends nothing on XOR. Control frames from the server
//! (none are expected) are skipped.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;

use anyhow::{bail, Context, Result};

/// Raw bytes read per socket read.
const RAW_READ_BYTES: usize = 256 * 1024;

/// A websocket connection carrying the NATS protocol.
pub struct WsStream {
    pub tcp: TcpStream,
    raw: Vec<u8>,
    pos: usize,
    len: usize,
    /// Payload bytes left in the current frame.
    remaining: u64,
    /// The current frame is a control frame whose payload is skipped.
    skipping: bool,
}

impl WsStream {
    /// Sends the upgrade request and reads the 101.
    pub fn upgrade(mut tcp: TcpStream) -> Result<Self> {
        tcp.write_all(
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
              Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .context("send upgrade")?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        // Byte by byte up to the blank line, so that no frame byte is read into `head`.
        while !head.ends_with(b"\r\n\r\n") {
            if tcp.read(&mut byte).context("read upgrade reply")? == 0 {
                bail!("closed during the upgrade");
            }
            head.push(byte[0]);
            if head.len() > 16 * 1024 {
                bail!("upgrade reply too long");
            }
        }
        if !head.starts_with(b"HTTP/1.1 101 ") {
            bail!("upgrade refused: {}", String::from_utf8_lossy(&head));
        }
        Ok(Self {
            tcp,
            raw: vec![0; RAW_READ_BYTES],
            pos: 0,
            len: 0,
            remaining: 0,
            skipping: false,
        })
    }

    /// Parses a frame header at `raw[pos..len]`; false when it is not all there yet.
    fn header(&mut self) -> bool {
        let buf = &self.raw[self.pos..self.len];
        if buf.len() < 2 {
            return false;
        }
        let (len, at) = match buf[1] & 0x7f {
            126 if buf.len() >= 4 => (u64::from(u16::from_be_bytes([buf[2], buf[3]])), 4),
            127 if buf.len() >= 10 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&buf[2..10]);
                (u64::from_be_bytes(b), 10)
            }
            126 | 127 => return false,
            n => (u64::from(n), 2),
        };
        self.skipping = buf[0] & 0x0f >= 8;
        self.remaining = len;
        self.pos += at;
        true
    }
}

impl Read for WsStream {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.remaining > 0 && self.pos < self.len {
                let n = (self.remaining.min((self.len - self.pos) as u64) as usize)
                    .min(if self.skipping { usize::MAX } else { out.len() });
                let at = self.pos;
                self.pos += n;
                self.remaining -= n as u64;
                if !self.skipping {
                    out[..n].copy_from_slice(&self.raw[at..at + n]);
                    return Ok(n);
                }
                continue;
            }
            if self.remaining == 0 && self.header() {
                continue;
            }
            if self.pos == self.len {
                self.pos = 0;
                self.len = 0;
            } else if self.pos > 0 {
                self.raw.copy_within(self.pos..self.len, 0);
                self.len -= self.pos;
                self.pos = 0;
            }
            let n = self.tcp.read(&mut self.raw[self.len..])?;
            if n == 0 {
                return Ok(0);
            }
            self.len += n;
        }
    }
}

impl Write for WsStream {
    /// Sends all of `buf` as one frame.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut header = [0u8; 14];
        header[0] = 0x82;
        let n = buf.len();
        let at = if n <= 125 {
            header[1] = 0x80 | n as u8;
            2
        } else if n <= 65535 {
            header[1] = 0x80 | 0x7e;
            header[2..4].copy_from_slice(&(n as u16).to_be_bytes());
            4
        } else {
            header[1] = 0x80 | 0x7f;
            header[2..10].copy_from_slice(&(n as u64).to_be_bytes());
            10
        };
        // The masking key follows, all zeros.
        let mut parts = [IoSlice::new(&header[..at + 4]), IoSlice::new(buf)];
        let mut slices = &mut parts[..];
        while !slices.is_empty() {
            let written = self.tcp.write_vectored(slices)?;
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            IoSlice::advance_slices(&mut slices, written);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
