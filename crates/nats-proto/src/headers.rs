//! NATS/1.0 message headers: a borrowed, validated view of a header block, and writers that
//! build one.
//!
//! A block is `NATS/1.0[ <status>[ <description>]]\r\n`, then `Name: value\r\n` lines, then an
//! empty line. Names keep their case and may repeat. Reading never panics on garbage: anything
//! that is not of this shape is a [`HeaderError`]. Bytes after the empty line are ignored. Go
//! itself forwards an `HPUB` header block without looking at it (`HPUB foo 5 10` with
//! `abcde` as "headers" is delivered as is), so validation is for the server's own readers.

use bytes::BufMut;

use crate::encode::{write_decimal, CRLF};

/// First bytes of every header block.
pub const VERSION: &[u8] = b"NATS/1.0";
/// Status Go uses for the no-responders message.
pub const NO_RESPONDERS_STATUS: u16 = 503;
/// Header naming the subject that had no responders.
pub const NATS_SUBJECT: &[u8] = b"Nats-Subject";
/// Header describing the requester of a request that crossed into another account.
pub const NATS_REQUEST_INFO: &[u8] = b"Nats-Request-Info";

/// Why a header block could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The block does not start with `NATS/1.0` followed by a blank or the line end.
    #[error("header block does not start with NATS/1.0")]
    BadVersion,
    /// The status is not three ASCII digits.
    #[error("header status is not three digits")]
    BadStatus,
    /// A field line has no colon, an empty name, or blanks in its name.
    #[error("malformed header line")]
    MalformedField,
}

/// A validated header block, borrowing from the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers<'a> {
    status: Option<u16>,
    description: &'a [u8],
    fields: &'a [u8],
}

/// Splits off one line: the line without CR LF (or bare LF), and what follows it.
fn split_line(s: &[u8]) -> (&[u8], &[u8]) {
    let (line, rest) = match memchr::memchr(b'\n', s) {
        Some(lf) => (
            s.get(..lf).unwrap_or_default(),
            s.get(lf + 1..).unwrap_or_default(),
        ),
        None => (s, &[][..]),
    };
    (line.strip_suffix(b"\r").unwrap_or(line), rest)
}

fn trim_blanks(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Reads the status and description that follow `NATS/1.0` on the first line.
fn parse_status(after_version: &[u8]) -> Result<(Option<u16>, &[u8]), HeaderError> {
    match after_version.first() {
        None => return Ok((None, &[])),
        Some(b' ' | b'\t') => {}
        Some(_) => return Err(HeaderError::BadVersion),
    }
    let text = trim_blanks(after_version);
    if text.is_empty() {
        return Ok((None, &[]));
    }
    let code_len = text
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(text.len());
    let (code, description) = text.split_at(code_len);
    let [a, b, c] = code else {
        return Err(HeaderError::BadStatus);
    };
    if !(a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit()) {
        return Err(HeaderError::BadStatus);
    }
    let status = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
    Ok((Some(status), trim_blanks(description)))
}

/// Splits a field line into name and value, or `None` if it is malformed.
fn split_field(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memchr(b':', line)?;
    let name = line.get(..colon)?;
    if name.is_empty() || name.iter().any(|&b| b == b' ' || b == b'\t') {
        return None;
    }
    Some((name, trim_blanks(line.get(colon + 1..)?)))
}

impl<'a> Headers<'a> {
    /// Validates `block` (as carried by `HPUB`/`HMSG`, trailing empty line included).
    pub fn parse(block: &'a [u8]) -> Result<Self, HeaderError> {
        let rest = block.strip_prefix(VERSION).ok_or(HeaderError::BadVersion)?;
        let (first, fields) = split_line(rest);
        let (status, description) = parse_status(first)?;
        let mut remaining = fields;
        while !remaining.is_empty() {
            let (line, rest) = split_line(remaining);
            if line.is_empty() {
                break;
            }
            split_field(line).ok_or(HeaderError::MalformedField)?;
            remaining = rest;
        }
        Ok(Self {
            status,
            description,
            fields,
        })
    }

    /// Status code from the first line (`503` for no responders), if any.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// Text after the status code, possibly empty.
    pub fn description(&self) -> &'a [u8] {
        self.description
    }

    /// All fields in order, names with their original case, repeats included.
    pub fn iter(&self) -> HeaderIter<'a> {
        HeaderIter { rest: self.fields }
    }

    /// First value of the field named exactly `name` (case-sensitive, as Go's server compares).
    pub fn get(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// First value of the field whose name equals `name` ignoring ASCII case.
    pub fn get_ignore_case(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every value of the field named exactly `name`, in order.
    pub fn get_all<'n>(&self, name: &'n [u8]) -> impl Iterator<Item = &'a [u8]> + 'n
    where
        'a: 'n,
    {
        self.iter().filter(move |(n, _)| *n == name).map(|(_, v)| v)
    }
}

impl<'a> IntoIterator for &Headers<'a> {
    type Item = (&'a [u8], &'a [u8]);
    type IntoIter = HeaderIter<'a>;

    fn into_iter(self) -> HeaderIter<'a> {
        self.iter()
    }
}

/// Iterator over `(name, value)` pairs of a [`Headers`].
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = split_line(self.rest);
        self.rest = rest;
        if line.is_empty() {
            self.rest = &[];
            return None;
        }
        // `Headers::parse` validated every line, so this always splits.
        split_field(line)
    }
}

/// Appends the first line: `NATS/1.0`, then ` <status>` and ` <description>` when given.
pub fn write_version_line<B: BufMut>(out: &mut B, status: Option<u16>, description: &[u8]) {
    out.put_slice(VERSION);
    if let Some(status) = status {
        out.put_u8(b' ');
        write_decimal(out, u64::from(status));
        if !description.is_empty() {
            out.put_u8(b' ');
            out.put_slice(description);
        }
    }
    out.put_slice(CRLF);
}

/// Appends `name: value\r\n`.
pub fn write_field<B: BufMut>(out: &mut B, name: &[u8], value: &[u8]) {
    out.put_slice(name);
    out.put_slice(b": ");
    out.put_slice(value);
    out.put_slice(CRLF);
}

/// Appends the empty line that ends a block.
pub fn write_end<B: BufMut>(out: &mut B) {
    out.put_slice(CRLF);
}

/// Appends `block` (or, when there is none, a bare `NATS/1.0` block) with one more field
/// before its end. A block that does not end with an empty line is copied whole, then the field
/// and an end are added, so the result is always a well-formed block.
pub fn write_adding_field<B: BufMut>(out: &mut B, block: Option<&[u8]>, name: &[u8], value: &[u8]) {
    match block {
        None => write_version_line(out, None, b""),
        Some(block) => {
            if let Some(head) = block.strip_suffix(CRLF).filter(|b| b.ends_with(CRLF)) {
                out.put_slice(head);
            } else {
                out.put_slice(block);
                if !block.ends_with(CRLF) {
                    out.put_slice(CRLF);
                }
            }
        }
    }
    write_field(out, name, value);
    write_end(out);
}

/// Appends the block Go sends to a requester when nobody is subscribed to `subject`:
/// `NATS/1.0 503\r\nNats-Subject: <subject>\r\n\r\n` (observed byte for byte on v2.15.2).
pub fn write_no_responders<B: BufMut>(out: &mut B, subject: &[u8]) {
    write_version_line(out, Some(NO_RESPONDERS_STATUS), b"");
    write_field(out, NATS_SUBJECT, subject);
    write_end(out);
}

/// Length of the block [`write_no_responders`] writes for a subject of `subject_len` bytes.
pub const fn no_responders_len(subject_len: usize) -> usize {
    // "NATS/1.0 503\r\n" + "Nats-Subject: " + subject + "\r\n" + "\r\n"
    14 + 14 + subject_len + 2 + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_no_responders_bytes() {
        let mut v = Vec::new();
        write_no_responders(&mut v, b"foo");
        assert_eq!(v, b"NATS/1.0 503\r\nNats-Subject: foo\r\n\r\n");
        assert_eq!(
            v.len(),
            35,
            "Go announces HMSG inbox 1 35 35 for subject foo"
        );
        assert_eq!(no_responders_len(3), 35);
        let h = Headers::parse(&v).unwrap();
        assert_eq!(h.status(), Some(503));
        assert_eq!(h.description(), b"");
        assert_eq!(h.get(b"Nats-Subject"), Some(&b"foo"[..]));
    }

    #[test]
    fn headers_adding_a_field() {
        let mut v = Vec::new();
        write_adding_field(&mut v, None, b"A", b"1");
        assert_eq!(v, b"NATS/1.0\r\nA: 1\r\n\r\n");
        let mut w = Vec::new();
        write_adding_field(&mut w, Some(&v), b"B", b"2");
        assert_eq!(w, b"NATS/1.0\r\nA: 1\r\nB: 2\r\n\r\n");
        let h = Headers::parse(&w).unwrap();
        assert_eq!(h.get(b"B"), Some(&b"2"[..]));
        let mut x = Vec::new();
        write_adding_field(&mut x, Some(b"NATS/1.0"), b"C", b"3");
        assert_eq!(x, b"NATS/1.0\r\nC: 3\r\n\r\n");
    }

    #[test]
    fn headers_parse_fields_repeats_and_case() {
        let block = b"NATS/1.0\r\nX-Key: value\r\nx-key:  other \r\nX-Key: third\r\n\r\n";
        let h = Headers::parse(block).unwrap();
        assert_eq!(h.status(), None);
        let all: Vec<_> = h.iter().collect();
        assert_eq!(
            all,
            vec![
                (&b"X-Key"[..], &b"value"[..]),
                (&b"x-key"[..], &b"other"[..]),
                (&b"X-Key"[..], &b"third"[..])
            ]
        );
        assert_eq!(h.get(b"X-Key"), Some(&b"value"[..]));
        assert_eq!(h.get(b"x-key"), Some(&b"other"[..]));
        assert_eq!(h.get(b"X-KEY"), None);
        assert_eq!(h.get_ignore_case(b"X-KEY"), Some(&b"value"[..]));
        assert_eq!(
            h.get_all(b"X-Key").collect::<Vec<_>>(),
            vec![&b"value"[..], b"third"]
        );
    }

    #[test]
    fn headers_status_and_description() {
        let h = Headers::parse(b"NATS/1.0 408 Request Timeout\r\n\r\n").unwrap();
        assert_eq!(h.status(), Some(408));
        assert_eq!(h.description(), b"Request Timeout");
        let h = Headers::parse(b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\n\r\n")
            .unwrap();
        assert_eq!(h.get(b"Nats-Last-Consumer"), Some(&b"5"[..]));
        let h = Headers::parse(b"NATS/1.0 \r\n\r\n").unwrap();
        assert_eq!(h.status(), None);
    }

    #[test]
    fn headers_reject_garbage() {
        assert_eq!(Headers::parse(b"abcde"), Err(HeaderError::BadVersion));
        assert_eq!(Headers::parse(b""), Err(HeaderError::BadVersion));
        assert_eq!(
            Headers::parse(b"NATS/1.01\r\n\r\n"),
            Err(HeaderError::BadVersion)
        );
        assert_eq!(
            Headers::parse(b"NATS/1.0 50\r\n\r\n"),
            Err(HeaderError::BadStatus)
        );
        assert_eq!(
            Headers::parse(b"NATS/1.0 5x3\r\n\r\n"),
            Err(HeaderError::BadStatus)
        );
        assert_eq!(
            Headers::parse(b"NATS/1.0\r\nnocolon\r\n\r\n"),
            Err(HeaderError::MalformedField)
        );
        assert_eq!(
            Headers::parse(b"NATS/1.0\r\n: v\r\n\r\n"),
            Err(HeaderError::MalformedField)
        );
        assert_eq!(
            Headers::parse(b"NATS/1.0\r\nA B: v\r\n\r\n"),
            Err(HeaderError::MalformedField)
        );
    }

    #[test]
    fn headers_lenient_endings() {
        let h = Headers::parse(b"NATS/1.0\nA: 1\nB: 2").unwrap();
        assert_eq!(h.iter().count(), 2);
        let h = Headers::parse(b"NATS/1.0\r\nA: 1\r\n\r\nignored").unwrap();
        assert_eq!(h.iter().count(), 1);
        let h = Headers::parse(b"NATS/1.0").unwrap();
        assert_eq!(h.iter().count(), 0);
    }

    #[test]
    fn headers_build_round_trip() {
        let mut v = Vec::new();
        write_version_line(&mut v, Some(404), b"No Messages");
        write_field(&mut v, b"A", b"1");
        write_field(&mut v, b"A", b"2");
        write_end(&mut v);
        assert_eq!(v, b"NATS/1.0 404 No Messages\r\nA: 1\r\nA: 2\r\n\r\n");
        let h = Headers::parse(&v).unwrap();
        assert_eq!(h.status(), Some(404));
        assert_eq!(h.get_all(b"A").count(), 2);
    }
}
