//! Parses the HTTP/1.x request head of an upgrade, from a caller-owned buffer, with the rules
//! of Go's `net/http` server (whose answers the Go websocket listener sends for malformed
//! requests):
//! - The head may be at most [`HANDSHAKE_HEAD_BYTES_MAX`] bytes; past that, `431`.
//! - Lines end at LF; one CR before it is dropped. The head ends at an empty line.
//! - Request line: `METHOD SP target SP HTTP/x.y`, split at the first two spaces; the method
//!   must be a token; the version `HTTP/d.d`. The target must parse as a request URI.
//!   These are checked as soon as the line is complete.
//! - Header lines: `name: value`; a line starting with a blank continues the previous one
//!   (joined with one space), except right after the request line. Names must be tokens
//!   (a name with a space is answered with `invalid header name`); values may hold visible
//!   ASCII, blanks and bytes >= 0x80. Values are trimmed of blanks.
//! - Then: major version other than 1 is `505`; more than one `Host` is a bad request; HTTP/1.1
//!   without `Host` is `missing required Host header`; bad bytes in `Host` are `malformed Host
//!   header`.
//!
//! Not reproduced: request bodies (`Content-Length`, `Transfer-Encoding`) are not read; the
//! bytes after the head are left to the caller (Go closes an upgrade that has any).

use std::borrow::Cow;

use memchr::{memchr, memmem};

use super::url::{parse_request_uri, Url};
use crate::limits::HANDSHAKE_HEAD_BYTES_MAX;

/// Why `net/http` rejects a request before the websocket handler sees it. Each is answered
/// with [`HttpError::response`] and the connection closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// Malformed request line, method, version, target or header line (`400 Bad Request`).
    #[error("malformed HTTP request: {0}")]
    Malformed(&'static str),
    /// HTTP/1.1 or later without a `Host` header.
    #[error("missing required Host header")]
    MissingHost,
    /// A `Host` header with bytes no host may contain.
    #[error("malformed Host header")]
    MalformedHost,
    /// A header name containing a space.
    #[error("invalid header name")]
    InvalidHeaderName,
    /// A major version other than 1.
    #[error("unsupported protocol version")]
    UnsupportedVersion,
    /// The head is longer than the limit.
    #[error("request header too large")]
    HeadTooLarge,
}

const ERROR_HEADERS: &str =
    "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n";

impl HttpError {
    /// The exact bytes Go's `net/http` writes before closing.
    pub fn response(&self) -> Vec<u8> {
        let status = match self {
            Self::Malformed(_) => "400 Bad Request".to_string(),
            Self::MissingHost | Self::MalformedHost | Self::InvalidHeaderName => {
                format!("400 Bad Request: {self}")
            }
            Self::UnsupportedVersion => format!("505 HTTP Version Not Supported: {self}"),
            Self::HeadTooLarge => "431 Request Header Fields Too Large".to_string(),
        };
        format!("HTTP/1.1 {status}{ERROR_HEADERS}{status}").into_bytes()
    }
}

/// A parsed request head, borrowing from the read buffer.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// Method, case-sensitive as sent.
    pub method: &'a [u8],
    /// Request target as sent.
    pub target: &'a [u8],
    /// `(major, minor)` version.
    pub version: (u8, u8),
    /// The target parsed as a URL (path, and host for an absolute target).
    pub(crate) url: Url,
    /// Header lines: from after the request line's LF to the blank line (exclusive).
    head: &'a [u8],
}

/// What [`RequestParser::parse`] found.
#[derive(Debug, Clone)]
pub enum Parsed<'a> {
    /// The head is not complete yet; read more and call again with the whole buffer.
    Incomplete,
    /// A complete head of `consumed` bytes (blank line included).
    Complete {
        /// The request.
        request: Request<'a>,
        /// Length of the head; anything after it was sent before the handshake completed.
        consumed: usize,
    },
}

/// Finds the end of a request head across calls without rescanning, then parses it.
#[derive(Debug, Clone, Default)]
pub struct RequestParser {
    /// Bytes already searched for the end of the head.
    scanned: usize,
    /// Request line already validated.
    line_checked: bool,
}

impl RequestParser {
    /// A parser for a new request.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses the head at the front of `buf` (everything read so far on the connection).
    pub fn parse<'a>(&mut self, buf: &'a [u8]) -> Result<Parsed<'a>, HttpError> {
        let window = buf.get(..HANDSHAKE_HEAD_BYTES_MAX).unwrap_or(buf);
        let Some(line_end) = memchr(b'\n', window) else {
            return Self::incomplete(buf, window);
        };
        let line = strip_cr(window.get(..line_end).unwrap_or_default());
        if !self.line_checked {
            check_request_line(line)?;
            self.line_checked = true;
        }
        // The head ends at the first empty line after the request line.
        let from = self.scanned.max(line_end);
        let tail = window.get(from..).unwrap_or_default();
        let end = [&b"\n\n"[..], b"\n\r\n"]
            .iter()
            .filter_map(|pat| memmem::find(tail, pat).map(|i| (from + i, pat.len())))
            .min();
        let Some((last_lf, blank_len)) = end else {
            self.scanned = window.len().saturating_sub(2);
            return Self::incomplete(buf, window);
        };
        let consumed = last_lf + blank_len;
        let head = window.get(line_end + 1..last_lf).unwrap_or_default();
        let request = build_request(line, head)?;
        Ok(Parsed::Complete { request, consumed })
    }

    fn incomplete<'a>(buf: &[u8], window: &[u8]) -> Result<Parsed<'a>, HttpError> {
        if buf.len() > window.len() {
            return Err(HttpError::HeadTooLarge);
        }
        Ok(Parsed::Incomplete)
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Splits the request line at its first two spaces.
fn split_request_line(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let sp = memchr(b' ', line)?;
    let (method, rest) = (line.get(..sp)?, line.get(sp + 1..)?);
    let sp = memchr(b' ', rest)?;
    Some((method, rest.get(..sp)?, rest.get(sp + 1..)?))
}

/// The request-line checks Go makes before reading headers.
fn check_request_line(line: &[u8]) -> Result<(), HttpError> {
    let (method, target, proto) =
        split_request_line(line).ok_or(HttpError::Malformed("malformed HTTP request"))?;
    if method.is_empty() || !method.iter().all(|&b| is_token_byte(b)) {
        return Err(HttpError::Malformed("invalid method"));
    }
    parse_version(proto).ok_or(HttpError::Malformed("malformed HTTP version"))?;
    parse_target(method, target)?;
    Ok(())
}

fn parse_target(method: &[u8], target: &[u8]) -> Result<Url, HttpError> {
    // CONNECT's target is an authority; Go parses it as `http://` + target.
    if method == b"CONNECT" && !target.starts_with(b"/") {
        let mut raw = b"http://".to_vec();
        raw.extend_from_slice(target);
        let mut url = parse_request_uri(&raw).map_err(|_| HttpError::Malformed("bad target"))?;
        url.scheme.clear();
        return Ok(url);
    }
    parse_request_uri(target).map_err(|_| HttpError::Malformed("bad target"))
}

/// `HTTP/1.1`, `HTTP/1.0`, or `HTTP/d.d`.
fn parse_version(proto: &[u8]) -> Option<(u8, u8)> {
    match proto {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            Some((major - b'0', minor - b'0'))
        }
        _ => None,
    }
}

fn build_request<'a>(line: &'a [u8], head: &'a [u8]) -> Result<Request<'a>, HttpError> {
    let (method, target, proto) =
        split_request_line(line).ok_or(HttpError::Malformed("malformed HTTP request"))?;
    let version = parse_version(proto).ok_or(HttpError::Malformed("malformed HTTP version"))?;
    let url = parse_target(method, target)?;
    if head.first().is_some_and(|&b| b == b' ' || b == b'\t') {
        return Err(HttpError::Malformed("malformed MIME header initial line"));
    }
    let mut hosts = 0usize;
    let mut host_value: Option<Cow<'_, [u8]>> = None;
    let mut spaced_name = false;
    for field in Fields::new(head) {
        let (name, value) = field?;
        if !value.iter().all(|&b| is_value_byte(b)) {
            return Err(HttpError::Malformed("malformed MIME header line"));
        }
        spaced_name |= name.contains(&b' ');
        if name.eq_ignore_ascii_case(b"host") {
            hosts += 1;
            host_value = Some(value);
        }
    }
    if hosts > 1 {
        return Err(HttpError::Malformed("too many Host headers"));
    }
    if version.0 != 1 {
        return Err(HttpError::UnsupportedVersion);
    }
    if version >= (1, 1) && hosts == 0 && method != b"CONNECT" {
        return Err(HttpError::MissingHost);
    }
    if host_value.is_some_and(|h| !h.iter().all(|&b| is_host_byte(b))) {
        return Err(HttpError::MalformedHost);
    }
    if spaced_name {
        return Err(HttpError::InvalidHeaderName);
    }
    Ok(Request {
        method,
        target,
        version,
        url,
        head,
    })
}

impl<'a> Request<'a> {
    /// Header fields in order, names as sent, values trimmed (and continuation lines joined).
    pub fn headers(&self) -> impl Iterator<Item = (&'a [u8], Cow<'a, [u8]>)> {
        Fields::new(self.head).filter_map(Result::ok)
    }

    /// Every value of the header `name` (case-insensitive), in order.
    pub fn values<'n>(&self, name: &'n str) -> impl Iterator<Item = Cow<'a, [u8]>> + 'n
    where
        'a: 'n,
    {
        self.headers()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// The first value of the header `name`, as Go's `Header.Get`.
    pub fn first(&self, name: &str) -> Option<Cow<'a, [u8]>> {
        self.values(name).next()
    }

    /// The request's host: from an absolute target, else the `Host` header (Go's `r.Host`);
    /// empty when neither is present.
    pub fn host(&self) -> Cow<'a, [u8]> {
        if self.url.host.is_empty() {
            self.first("host").unwrap_or_default()
        } else {
            Cow::Owned(self.url.host.clone().into_bytes())
        }
    }

    /// The target's path, still escaped, without the query.
    pub fn path(&self) -> &str {
        &self.url.path
    }
}

/// Iterates over the header fields of a head, joining continuation lines.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn new(head: &'a [u8]) -> Self {
        Self { rest: head }
    }

    fn next_line(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = match memchr(b'\n', self.rest) {
            Some(i) => (self.rest.get(..i)?, self.rest.get(i + 1..)?),
            None => (self.rest, &b""[..]),
        };
        self.rest = rest;
        Some(strip_cr(line))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(&'a [u8], Cow<'a, [u8]>), HttpError>;

    fn next(&mut self) -> Option<Self::Item> {
        let first = trim(self.next_line()?);
        let Some(colon) = memchr(b':', first) else {
            return Some(Err(HttpError::Malformed(
                "malformed MIME header: missing colon",
            )));
        };
        let name = first.get(..colon).unwrap_or_default();
        if name.is_empty() || !name.iter().all(|&b| is_token_byte(b) || b == b' ') {
            return Some(Err(HttpError::Malformed("malformed MIME header line")));
        }
        let mut value = Cow::Borrowed(trim_start(first.get(colon + 1..).unwrap_or_default()));
        while self.rest.first().is_some_and(|&b| b == b' ' || b == b'\t') {
            let cont = trim(self.next_line().unwrap_or_default());
            let joined = value.to_mut();
            joined.push(b' ');
            joined.extend_from_slice(cont);
        }
        if let Cow::Owned(v) = &mut value {
            let lead = v.len() - trim_start(v).len();
            v.drain(..lead);
        }
        Some(Ok((name, value)))
    }
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    s.get(n..).unwrap_or_default()
}

fn trim(s: &[u8]) -> &[u8] {
    let s = trim_start(s);
    let n = s
        .iter()
        .rev()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    s.get(..s.len() - n).unwrap_or_default()
}

/// RFC 7230 token characters.
pub(crate) fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Bytes `net/textproto` accepts in a header value.
fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (0x20..0x7f).contains(&b) || b >= 0x80
}

/// Bytes `httpguts.ValidHostHeader` accepts.
fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!$%&()*+,-.:;=[]'_~".contains(&b)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
