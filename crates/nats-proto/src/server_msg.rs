//! Reading `MSG`/`HMSG` frames as a client does: the server's own internal clients (the system
//! account's request handlers) receive their deliveries through the same outbound buffer as a
//! socket client, and read them back with this.
//!
//! Only the two message frames are accepted; anything else is an error, because an internal
//! client is never sent `PING`, `INFO` or `-ERR`.

use memchr::memchr;

/// One delivered message, borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsgFrame<'a> {
    pub subject: &'a [u8],
    pub sid: &'a [u8],
    pub reply: Option<&'a [u8]>,
    /// The header block (`NATS/1.0 …\r\n\r\n`) of an `HMSG`.
    pub headers: Option<&'a [u8]>,
    pub payload: &'a [u8],
}

/// The outcome of reading one frame from the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum MsgParsed<'a> {
    Frame {
        frame: MsgFrame<'a>,
        consumed: usize,
    },
    Incomplete,
}

/// A frame that is not a well-formed `MSG` or `HMSG`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed message frame")]
pub struct MsgFrameError;

fn size(field: &[u8]) -> Result<usize, MsgFrameError> {
    if field.is_empty() || field.len() > crate::limits::SIZE_DIGITS_MAX {
        return Err(MsgFrameError);
    }
    field.iter().try_fold(0usize, |n, &b| {
        if b.is_ascii_digit() {
            Ok(n * 10 + usize::from(b - b'0'))
        } else {
            Err(MsgFrameError)
        }
    })
}

/// Reads one `MSG subject sid [reply] size` or `HMSG subject sid [reply] hdr_size total_size`
/// frame with its payload and trailing CRLF.
pub fn parse_msg_frame(buf: &[u8]) -> Result<MsgParsed<'_>, MsgFrameError> {
    let Some(nl) = memchr(b'\n', buf) else {
        return Ok(MsgParsed::Incomplete);
    };
    let line = buf.get(..nl).ok_or(MsgFrameError)?;
    let line = line.strip_suffix(b"\r").ok_or(MsgFrameError)?;
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let verb = fields.next().ok_or(MsgFrameError)?;
    let with_headers = match verb {
        b"MSG" => false,
        b"HMSG" => true,
        _ => return Err(MsgFrameError),
    };
    let mut args: [&[u8]; 5] = [&[]; 5];
    let mut count = 0;
    for field in fields {
        let slot = args.get_mut(count).ok_or(MsgFrameError)?;
        *slot = field;
        count += 1;
    }
    let sizes = if with_headers { 2 } else { 1 };
    let [first, second, third, _, _] = args;
    let (subject, sid, reply) = match count.checked_sub(sizes) {
        Some(2) => (first, second, None),
        Some(3) => (first, second, Some(third)),
        _ => return Err(MsgFrameError),
    };
    let total = size(args.get(count - 1).copied().ok_or(MsgFrameError)?)?;
    let header_len = if with_headers {
        let h = size(args.get(count - 2).copied().ok_or(MsgFrameError)?)?;
        if h > total {
            return Err(MsgFrameError);
        }
        Some(h)
    } else {
        None
    };
    let body_start = nl + 1;
    let body_end = body_start.checked_add(total).ok_or(MsgFrameError)?;
    let frame_end = body_end.checked_add(2).ok_or(MsgFrameError)?;
    let Some(body) = buf.get(body_start..body_end) else {
        return Ok(MsgParsed::Incomplete);
    };
    match buf.get(body_end..frame_end) {
        None => return Ok(MsgParsed::Incomplete),
        Some(b"\r\n") => {}
        Some(_) => return Err(MsgFrameError),
    }
    let (headers, payload) = match header_len {
        Some(h) => {
            let (hdr, payload) = body.split_at(h);
            (Some(hdr), payload)
        }
        None => (None, body),
    };
    Ok(MsgParsed::Frame {
        frame: MsgFrame {
            subject,
            sid,
            reply,
            headers,
            payload,
        },
        consumed: frame_end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(buf: &[u8]) -> (MsgFrame<'_>, usize) {
        match parse_msg_frame(buf) {
            Ok(MsgParsed::Frame { frame, consumed }) => (frame, consumed),
            other => panic!("not a frame: {other:?}"),
        }
    }

    #[test]
    fn server_msg_reads_msg_and_hmsg() {
        let (f, n) = frame(b"MSG a.b 7 _INBOX.x 2\r\nhi\r\nMSG");
        assert_eq!(
            (f.subject, f.sid, f.reply, f.payload),
            (&b"a.b"[..], &b"7"[..], Some(&b"_INBOX.x"[..]), &b"hi"[..])
        );
        assert_eq!(n, 26);
        let (f, _) = frame(b"HMSG s 1 12 14\r\nNATS/1.0\r\n\r\nok\r\n");
        assert_eq!(f.headers, Some(&b"NATS/1.0\r\n\r\n"[..]));
        assert_eq!(f.payload, b"ok");
        assert_eq!(f.reply, None);
    }

    #[test]
    fn server_msg_waits_for_whole_frames() {
        for cut in 0..20 {
            let full = b"MSG a 1 r 5\r\nhello\r\n";
            assert_eq!(parse_msg_frame(&full[..cut]), Ok(MsgParsed::Incomplete));
        }
    }

    #[test]
    fn server_msg_refuses_malformed_frames() {
        for bad in [
            &b"PING\r\n"[..],
            b"MSG a\r\n",
            b"MSG a 1 x\r\n",
            b"MSG a 1 2\nhi\r\n",
            b"MSG a 1 2\r\nhiXX",
            b"HMSG a 1 5 2\r\nhello\r\n",
            b"MSG a 1 b c 2\r\nhi\r\n",
            b"MSG a 1 99999999999999999999\r\n",
        ] {
            assert_eq!(parse_msg_frame(bad), Err(MsgFrameError), "{bad:?}");
        }
    }

    proptest::proptest! {
        /// Whatever the encoder writes, in one buffer of several frames, reads back as written,
        /// and every strict prefix of a frame is `Incomplete`.
        #[test]
        fn server_msg_reads_back_what_the_encoder_writes(
            frames in proptest::collection::vec((
                "[a-z]{1,8}(\\.[a-z]{1,8}){0,3}",
                1u32..100_000,
                proptest::option::of("_INBOX\\.[a-z0-9]{1,12}"),
                proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..40)),
                proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            ), 1..6)
        ) {
            let mut buf = Vec::new();
            for (subject, sid, reply, headers, payload) in &frames {
                let sid = sid.to_string();
                let reply = reply.as_deref().map(str::as_bytes);
                match headers {
                    Some(h) => crate::encode::write_hmsg_header(
                        &mut buf, subject.as_bytes(), sid.as_bytes(), reply, h.len(),
                        h.len() + payload.len(),
                    ),
                    None => crate::encode::write_msg_header(
                        &mut buf, subject.as_bytes(), sid.as_bytes(), reply, payload.len(),
                    ),
                }
                if let Some(h) = headers {
                    buf.extend_from_slice(h);
                }
                buf.extend_from_slice(payload);
                buf.extend_from_slice(b"\r\n");
            }
            let mut rest = &buf[..];
            for (subject, sid, reply, headers, payload) in &frames {
                let (frame, consumed) = frame(rest);
                for cut in 0..consumed {
                    proptest::prop_assert_eq!(parse_msg_frame(&rest[..cut]), Ok(MsgParsed::Incomplete));
                }
                proptest::prop_assert_eq!(frame.subject, subject.as_bytes());
                let sid = sid.to_string();
                proptest::prop_assert_eq!(frame.sid, sid.as_bytes());
                proptest::prop_assert_eq!(frame.reply, reply.as_deref().map(str::as_bytes));
                proptest::prop_assert_eq!(frame.headers, headers.as_deref());
                proptest::prop_assert_eq!(frame.payload, &payload[..]);
                rest = &rest[consumed..];
            }
            proptest::prop_assert!(rest.is_empty());
        }
    }
}
