//! Frames the server writes to clients (and the client ops, for tests and tools), appended to a
//! caller-owned buffer without allocating.
//!
//! Deliveries use [`MsgFrameTemplate`]: built once per publish, it holds `MSG <subject> ` and
//! ` [reply ]<size>\r\n` so each delivery only copies those around its subscription id.
//! Sizes are written as plain decimals; Go echoes the client's digits instead (`PUB foo 005`
//! is delivered as `MSG foo 1 005`), which no client can tell apart.

use bytes::BufMut;

/// `PING\r\n`
pub const PING: &[u8] = b"PING\r\n";
/// `PONG\r\n`
pub const PONG: &[u8] = b"PONG\r\n";
/// `+OK\r\n`, the reply to every op of a `verbose` client.
pub const OK: &[u8] = b"+OK\r\n";
/// Line end of every frame and the terminator after every payload.
pub const CRLF: &[u8] = b"\r\n";

/// Longest decimal form of a `u64`.
const DIGITS_MAX: usize = 20;

/// Decimal digits of `n`, written at the end of `scratch`.
#[inline]
fn decimal(mut n: u64, scratch: &mut [u8; DIGITS_MAX]) -> &[u8] {
    let mut start = DIGITS_MAX;
    for slot in scratch.iter_mut().rev() {
        // `n % 10` is below 10, so the cast keeps the value.
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
        start -= 1;
        if n == 0 {
            break;
        }
    }
    scratch.get(start..).unwrap_or_default()
}

/// Appends `n` in decimal.
#[inline]
pub fn write_decimal<B: BufMut>(out: &mut B, n: u64) {
    let mut scratch = [0u8; DIGITS_MAX];
    out.put_slice(decimal(n, &mut scratch));
}

/// Number of bytes `write_decimal(n)` appends.
#[inline]
pub const fn decimal_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// Appends `INFO <json> \r\n`. Go puts a space between the JSON and the line end.
pub fn write_info<B: BufMut>(out: &mut B, json: &[u8]) {
    out.put_slice(b"INFO ");
    out.put_slice(json);
    out.put_slice(b" \r\n");
}

/// Appends `MSG <subject> <sid> [reply] <len>\r\n`.
pub fn write_msg_header<B: BufMut>(
    out: &mut B,
    subject: &[u8],
    sid: &[u8],
    reply: Option<&[u8]>,
    len: usize,
) {
    out.put_slice(b"MSG ");
    out.put_slice(subject);
    out.put_u8(b' ');
    out.put_slice(sid);
    out.put_u8(b' ');
    if let Some(reply) = reply {
        out.put_slice(reply);
        out.put_u8(b' ');
    }
    write_decimal(out, len as u64);
    out.put_slice(CRLF);
}

/// Appends `HMSG <subject> <sid> [reply] <hdr_len> <total_len>\r\n`.
pub fn write_hmsg_header<B: BufMut>(
    out: &mut B,
    subject: &[u8],
    sid: &[u8],
    reply: Option<&[u8]>,
    hdr_len: usize,
    total_len: usize,
) {
    out.put_slice(b"HMSG ");
    out.put_slice(subject);
    out.put_u8(b' ');
    out.put_slice(sid);
    out.put_u8(b' ');
    if let Some(reply) = reply {
        out.put_slice(reply);
        out.put_u8(b' ');
    }
    write_decimal(out, hdr_len as u64);
    out.put_u8(b' ');
    write_decimal(out, total_len as u64);
    out.put_slice(CRLF);
}

/// The `MSG`/`HMSG` header line of one publish, minus the subscription id.
///
/// Build it once per publish ([`MsgFrameTemplate::msg`], or [`MsgFrameTemplate::set_msg`] to
/// reuse the allocation of a template kept by the connection), then call
/// [`write_to`](Self::write_to) or [`write_frame`](Self::write_frame) per delivery.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MsgFrameTemplate {
    /// Prefix (`MSG <subject> `) followed by suffix (`[reply ]<len>\r\n`).
    bytes: Vec<u8>,
    /// Where the prefix ends.
    split: usize,
}

impl MsgFrameTemplate {
    /// Template for `MSG <subject> <sid> [reply] <payload_len>\r\n`.
    pub fn msg(subject: &[u8], reply: Option<&[u8]>, payload_len: usize) -> Self {
        let mut t = Self::default();
        t.set_msg(subject, reply, payload_len);
        t
    }

    /// Template for `HMSG <subject> <sid> [reply] <hdr_len> <total_len>\r\n`.
    pub fn hmsg(subject: &[u8], reply: Option<&[u8]>, hdr_len: usize, total_len: usize) -> Self {
        let mut t = Self::default();
        t.set_hmsg(subject, reply, hdr_len, total_len);
        t
    }

    /// Rebuilds this template as a `MSG` line, reusing its allocation.
    pub fn set_msg(&mut self, subject: &[u8], reply: Option<&[u8]>, payload_len: usize) {
        self.set(b"MSG ", subject, reply);
        write_decimal(&mut self.bytes, payload_len as u64);
        self.bytes.extend_from_slice(CRLF);
    }

    /// Rebuilds this template as an `HMSG` line, reusing its allocation.
    pub fn set_hmsg(
        &mut self,
        subject: &[u8],
        reply: Option<&[u8]>,
        hdr_len: usize,
        total_len: usize,
    ) {
        self.set(b"HMSG ", subject, reply);
        write_decimal(&mut self.bytes, hdr_len as u64);
        self.bytes.push(b' ');
        write_decimal(&mut self.bytes, total_len as u64);
        self.bytes.extend_from_slice(CRLF);
    }

    fn set(&mut self, verb: &[u8], subject: &[u8], reply: Option<&[u8]>) {
        self.bytes.clear();
        self.bytes.extend_from_slice(verb);
        self.bytes.extend_from_slice(subject);
        self.bytes.push(b' ');
        self.split = self.bytes.len();
        self.bytes.push(b' ');
        if let Some(reply) = reply {
            self.bytes.extend_from_slice(reply);
            self.bytes.push(b' ');
        }
    }

    /// `MSG <subject> ` (or `HMSG …`): what comes before the sid.
    pub fn prefix(&self) -> &[u8] {
        self.bytes.get(..self.split).unwrap_or_default()
    }

    /// ` [reply ]<len>\r\n`: what comes after the sid, starting with its separating space.
    pub fn suffix(&self) -> &[u8] {
        self.bytes.get(self.split..).unwrap_or_default()
    }

    /// Length of the header line for a sid of `sid_len` bytes.
    pub fn line_len(&self, sid_len: usize) -> usize {
        self.bytes.len() + sid_len
    }

    /// Appends the header line with `sid` inserted.
    #[inline]
    pub fn write_to<B: BufMut>(&self, sid: &[u8], out: &mut B) {
        out.put_slice(self.prefix());
        out.put_slice(sid);
        out.put_slice(self.suffix());
    }

    /// Appends the whole frame: header line, `headers` (empty for `MSG`), `payload`, CR LF.
    #[inline]
    pub fn write_frame<B: BufMut>(&self, sid: &[u8], headers: &[u8], payload: &[u8], out: &mut B) {
        self.write_to(sid, out);
        out.put_slice(headers);
        out.put_slice(payload);
        out.put_slice(CRLF);
    }
}

/// Appends a client `PUB subject [reply] len\r\n<payload>\r\n`.
pub fn write_pub<B: BufMut>(out: &mut B, subject: &[u8], reply: Option<&[u8]>, payload: &[u8]) {
    out.put_slice(b"PUB ");
    out.put_slice(subject);
    out.put_u8(b' ');
    if let Some(reply) = reply {
        out.put_slice(reply);
        out.put_u8(b' ');
    }
    write_decimal(out, payload.len() as u64);
    out.put_slice(CRLF);
    out.put_slice(payload);
    out.put_slice(CRLF);
}

/// Appends a client `HPUB subject [reply] hdr_len total_len\r\n<headers><payload>\r\n`.
pub fn write_hpub<B: BufMut>(
    out: &mut B,
    subject: &[u8],
    reply: Option<&[u8]>,
    headers: &[u8],
    payload: &[u8],
) {
    out.put_slice(b"HPUB ");
    out.put_slice(subject);
    out.put_u8(b' ');
    if let Some(reply) = reply {
        out.put_slice(reply);
        out.put_u8(b' ');
    }
    write_decimal(out, headers.len() as u64);
    out.put_u8(b' ');
    write_decimal(out, (headers.len() + payload.len()) as u64);
    out.put_slice(CRLF);
    out.put_slice(headers);
    out.put_slice(payload);
    out.put_slice(CRLF);
}

/// Appends a client `SUB subject [queue] sid\r\n`.
pub fn write_sub<B: BufMut>(out: &mut B, subject: &[u8], queue: Option<&[u8]>, sid: &[u8]) {
    out.put_slice(b"SUB ");
    out.put_slice(subject);
    out.put_u8(b' ');
    if let Some(queue) = queue {
        out.put_slice(queue);
        out.put_u8(b' ');
    }
    out.put_slice(sid);
    out.put_slice(CRLF);
}

/// Appends a client `UNSUB sid [max]\r\n`.
pub fn write_unsub<B: BufMut>(out: &mut B, sid: &[u8], max_msgs: Option<u64>) {
    out.put_slice(b"UNSUB ");
    out.put_slice(sid);
    if let Some(max) = max_msgs {
        out.put_u8(b' ');
        write_decimal(out, max);
    }
    out.put_slice(CRLF);
}

/// Appends a client `CONNECT <json>\r\n`.
pub fn write_connect<B: BufMut>(out: &mut B, json: &[u8]) {
    out.put_slice(b"CONNECT ");
    out.put_slice(json);
    out.put_slice(CRLF);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decimal_edges() {
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            12345,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut v = Vec::new();
            write_decimal(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
            assert_eq!(decimal_len(n), v.len());
        }
    }

    #[test]
    fn encode_msg_and_hmsg_lines() {
        let mut v = Vec::new();
        write_msg_header(&mut v, b"foo", b"1", None, 5);
        write_msg_header(&mut v, b"foo", b"22", Some(b"bar"), 0);
        write_hmsg_header(&mut v, b"foo", b"1", None, 26, 31);
        write_hmsg_header(&mut v, b"foo", b"1", Some(b"bar"), 26, 31);
        assert_eq!(
            v,
            b"MSG foo 1 5\r\nMSG foo 22 bar 0\r\nHMSG foo 1 26 31\r\nHMSG foo 1 bar 26 31\r\n"
        );
    }

    #[test]
    fn encode_template_matches_direct_formatting() {
        for reply in [None, Some(&b"_INBOX.x"[..])] {
            let t = MsgFrameTemplate::msg(b"a.b", reply, 16);
            let mut direct = Vec::new();
            write_msg_header(&mut direct, b"a.b", b"42", reply, 16);
            let mut via = Vec::new();
            t.write_to(b"42", &mut via);
            assert_eq!(via, direct);
            assert_eq!(t.line_len(2), direct.len());

            let t = MsgFrameTemplate::hmsg(b"a.b", reply, 12, 20);
            let mut direct = Vec::new();
            write_hmsg_header(&mut direct, b"a.b", b"7", reply, 12, 20);
            let mut via = Vec::new();
            t.write_to(b"7", &mut via);
            assert_eq!(via, direct);
        }
    }

    #[test]
    fn encode_template_reuse_and_frame() {
        let mut t = MsgFrameTemplate::hmsg(b"long.subject.name", Some(b"r"), 1, 2);
        t.set_msg(b"foo", None, 5);
        assert_eq!(t.prefix(), b"MSG foo ");
        assert_eq!(t.suffix(), b" 5\r\n");
        let mut out = Vec::new();
        t.write_frame(b"1", b"", b"hello", &mut out);
        assert_eq!(out, b"MSG foo 1 5\r\nhello\r\n");
    }

    #[test]
    fn encode_info_and_client_ops() {
        let mut v = Vec::new();
        write_info(&mut v, b"{}");
        write_connect(&mut v, b"{}");
        write_pub(&mut v, b"foo", Some(b"r"), b"hi");
        write_hpub(&mut v, b"foo", None, b"NATS/1.0\r\n\r\n", b"hi");
        write_sub(&mut v, b"foo", Some(b"q"), b"1");
        write_unsub(&mut v, b"1", Some(5));
        write_unsub(&mut v, b"1", None);
        assert_eq!(
            v,
            &b"INFO {} \r\nCONNECT {}\r\nPUB foo r 2\r\nhi\r\nHPUB foo 12 14\r\nNATS/1.0\r\n\r\nhi\r\n\
               SUB foo q 1\r\nUNSUB 1 5\r\nUNSUB 1\r\n"[..]
        );
    }
}
