//! Parser tests: every verb, every error (each case mirrors an observation of Go v2.15.2 listed
//! in `docs/client-protocol.md`), frames split at every byte, pipelined frames.

use super::*;

fn limits() -> ParserLimits {
    ParserLimits::default()
}

fn parse(buf: &[u8]) -> Result<Parsed<'_>, ProtoError> {
    parse_client_op(buf, &limits())
}

/// Parses exactly one complete op that fills `buf`.
fn one(buf: &[u8]) -> ClientOp<'_> {
    match parse(buf) {
        Ok(Parsed::Op { op, consumed }) => {
            assert_eq!(
                consumed,
                buf.len(),
                "consumed for {:?}",
                String::from_utf8_lossy(buf)
            );
            op
        }
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

fn err(buf: &[u8]) -> ProtoError {
    match parse(buf) {
        Err(e) => e,
        other => panic!(
            "{:?}: expected error, got {other:?}",
            String::from_utf8_lossy(buf)
        ),
    }
}

fn is_incomplete(buf: &[u8]) -> bool {
    matches!(parse(buf), Ok(Parsed::Incomplete { .. }))
}

fn publish<'a>(
    subject: &'a [u8],
    reply: Option<&'a [u8]>,
    headers: Option<&'a [u8]>,
    payload: &'a [u8],
) -> ClientOp<'a> {
    ClientOp::Pub(Publish {
        subject,
        reply,
        headers,
        payload,
    })
}

/// Runs the parser the way the runtime does over `chunks` arriving one after another:
/// returns the ops (as Debug text) and the error that stopped it, if any.
pub(crate) fn drive(chunks: &[&[u8]], limits: &ParserLimits) -> (Vec<String>, Option<ProtoError>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut ops = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        loop {
            match parse_client_op(&buf, limits) {
                Ok(Parsed::Op { op, consumed }) => {
                    assert!(consumed > 0 && consumed <= buf.len());
                    ops.push(format!("{op:?}"));
                    buf.drain(..consumed);
                }
                Ok(Parsed::Incomplete { min_total }) => {
                    assert!(min_total > buf.len());
                    break;
                }
                Err(e) => return (ops, Some(e)),
            }
        }
    }
    (ops, None)
}

// ---- verbs -------------------------------------------------------------------------------

#[test]
fn parser_ping_pong_forms() {
    for buf in [
        &b"PING\r\n"[..],
        b"ping\r\n",
        b"PiNg\r\n",
        b"PING\n",
        b"PING   \r\n",
        b"PING\t\r\n",
    ] {
        assert_eq!(one(buf), ClientOp::Ping);
    }
    // Go ignores anything between PING/PONG and LF.
    assert_eq!(one(b"PINGX\r\n"), ClientOp::Ping);
    assert_eq!(one(b"PING foo\r\n"), ClientOp::Ping);
    assert_eq!(one(b"PONG\r\n"), ClientOp::Pong);
    assert_eq!(one(b"pong  \r\n"), ClientOp::Pong);
    assert_eq!(one(b"PONGX\r\n"), ClientOp::Pong);
}

#[test]
fn parser_ok_info_err_from_peer() {
    assert_eq!(one(b"+OK\r\n"), ClientOp::Ok);
    assert_eq!(one(b"+ok\r\n"), ClientOp::Ok);
    assert_eq!(one(b"+OKX\r\n"), ClientOp::Ok);
    assert_eq!(one(b"INFO {}\r\n"), ClientOp::Info(b"{}"));
    assert_eq!(one(b"info\t{}\r\n"), ClientOp::Info(b"{}"));
    assert_eq!(one(b"INFO\r\n"), ClientOp::Info(b""));
    assert_eq!(one(b"INFOX {}\r\n"), ClientOp::Info(b"X {}"));
    assert_eq!(one(b"-ERR 'boom'\r\n"), ClientOp::Err(b"'boom'"));
    assert_eq!(one(b"-err\t'x'\r\n"), ClientOp::Err(b"'x'"));
}

#[test]
fn parser_connect_forms() {
    let json = br#"{"verbose":false}"#;
    assert_eq!(one(br#"CONNECT {"verbose":false}"#.iter().chain(b"\r\n").copied().collect::<Vec<_>>().as_slice()), ClientOp::Connect(json));
    assert_eq!(one(b"connect {}\r\n"), ClientOp::Connect(b"{}"));
    assert_eq!(one(b"CONNECT\t\t{}\n"), ClientOp::Connect(b"{}"));
    assert_eq!(one(b"CONNECT{}\r\n"), ClientOp::Connect(b"{}"));
    assert_eq!(one(b"CONNECT {}   \r\n"), ClientOp::Connect(b"{}   "));
    assert_eq!(one(b"CONNECT\r\n"), ClientOp::Connect(b""));
    assert_eq!(one(b"CONNECT \r\n"), ClientOp::Connect(b""));
    // Go hands "ED" to the JSON decoder (which then fails): not an unknown op.
    assert_eq!(one(b"CONNECTED\r\n"), ClientOp::Connect(b"ED"));
    assert_eq!(one(b"CONNECT {}\r\r\n"), ClientOp::Connect(b"{}\r"));
}

#[test]
fn parser_pub_forms() {
    assert_eq!(
        one(b"PUB foo 5\r\nhello\r\n"),
        publish(b"foo", None, None, b"hello")
    );
    assert_eq!(
        one(b"PUB foo bar 5\r\nhello\r\n"),
        publish(b"foo", Some(b"bar"), None, b"hello")
    );
    assert_eq!(
        one(b"pub foo 5\r\nhello\r\n"),
        publish(b"foo", None, None, b"hello")
    );
    assert_eq!(
        one(b"PUB\tfoo\t\tbar \t 5\r\nhello\r\n"),
        publish(b"foo", Some(b"bar"), None, b"hello")
    );
    assert_eq!(
        one(b"PUB   foo   5 \r\nhello\r\n"),
        publish(b"foo", None, None, b"hello")
    );
    assert_eq!(
        one(b"PUB foo 5\nhello\r\n"),
        publish(b"foo", None, None, b"hello")
    );
    assert_eq!(one(b"PUB foo 0\r\n\r\n"), publish(b"foo", None, None, b""));
    assert_eq!(
        one(b"PUB foo 005\r\nhello\r\n"),
        publish(b"foo", None, None, b"hello")
    );
    assert_eq!(
        one(b"PUB foo 000000005\r\nhello\r\n"),
        publish(b"foo", None, None, b"hello")
    );
    // Payload bytes are opaque, CR LF inside included.
    assert_eq!(
        one(b"PUB foo 4\r\n\r\n\r\n\r\n"),
        publish(b"foo", None, None, b"\r\n\r\n")
    );
    // Go splits PUB arguments on blanks only: the CR belongs to the subject.
    assert_eq!(
        one(b"PUB foo\r 5\r\nhello\r\n"),
        publish(b"foo\r", None, None, b"hello")
    );
    // Subject validity is the runtime's business.
    assert_eq!(
        one(b"PUB foo.* 1\r\nx\r\n"),
        publish(b"foo.*", None, None, b"x")
    );
}

#[test]
fn parser_hpub_forms() {
    let hdr = b"NATS/1.0\r\nX-Key: value\r\n\r\n";
    let mut frame = b"HPUB foo 26 31\r\n".to_vec();
    frame.extend_from_slice(hdr);
    frame.extend_from_slice(b"hello\r\n");
    assert_eq!(one(&frame), publish(b"foo", None, Some(hdr), b"hello"));

    let mut frame = b"hpub\tfoo bar\t26  31 \n".to_vec();
    frame.extend_from_slice(hdr);
    frame.extend_from_slice(b"hello\r\n");
    assert_eq!(
        one(&frame),
        publish(b"foo", Some(b"bar"), Some(hdr), b"hello")
    );

    // Header size 0: still an HPUB (Go then delivers a plain MSG).
    assert_eq!(
        one(b"HPUB foo 0 5\r\nhello\r\n"),
        publish(b"foo", None, Some(b""), b"hello")
    );
    assert_eq!(
        one(b"HPUB foo 0 0\r\n\r\n"),
        publish(b"foo", None, Some(b""), b"")
    );
    // Header size == total: empty body.
    assert_eq!(
        one(b"HPUB foo 5 5\r\nabcde\r\n"),
        publish(b"foo", None, Some(b"abcde"), b"")
    );
    // Garbage headers are forwarded as is.
    assert_eq!(
        one(b"HPUB foo 5 10\r\nabcdehello\r\n"),
        publish(b"foo", None, Some(b"abcde"), b"hello")
    );
}

#[test]
fn parser_sub_unsub_forms() {
    let sub = |subject, queue, sid| ClientOp::Sub {
        subject,
        queue,
        sid,
    };
    assert_eq!(one(b"SUB foo 1\r\n"), sub(&b"foo"[..], None, &b"1"[..]));
    assert_eq!(one(b"SUB foo q 1\r\n"), sub(b"foo", Some(b"q"), b"1"));
    assert_eq!(one(b"sub\tfoo\t\t1 \r\n"), sub(b"foo", None, b"1"));
    assert_eq!(one(b"SUB foo 1\n"), sub(b"foo", None, b"1"));
    assert_eq!(one(b"SUB foo abc\r\n"), sub(b"foo", None, b"abc"));
    // SUB splits on CR too.
    assert_eq!(one(b"SUB foo\r1\r\n"), sub(b"foo", None, b"1"));
    assert_eq!(one(b"SUB foo q\r1\r\n"), sub(b"foo", Some(b"q"), b"1"));
    assert_eq!(one(b"SUB foo 1\r\r\n"), sub(b"foo", None, b"1"));

    let unsub = |sid, max_msgs| ClientOp::Unsub { sid, max_msgs };
    assert_eq!(one(b"UNSUB 1\r\n"), unsub(&b"1"[..], None));
    assert_eq!(one(b"UNSUB 1 5\r\n"), unsub(b"1", Some(5)));
    assert_eq!(one(b"unsub\t1\t\t5 \r\n"), unsub(b"1", Some(5)));
    assert_eq!(one(b"UNSUB 1\r1\r\n"), unsub(b"1", Some(1)));
    assert_eq!(one(b"UNSUB 1\n"), unsub(b"1", None));
    // Go removes at once for these maxes instead of failing.
    for max in [
        &b"0"[..],
        b"x",
        b"-1",
        b"99999999999999999999",
        b"1000000000",
    ] {
        let mut line = b"UNSUB 1 ".to_vec();
        line.extend_from_slice(max);
        line.extend_from_slice(b"\r\n");
        assert_eq!(one(&line), unsub(b"1", None), "{max:?}");
    }
}

// ---- errors ------------------------------------------------------------------------------

#[test]
fn parser_unknown_ops() {
    for buf in [
        &b"FOO bar\r\n"[..],
        b"\r\n",
        b"\n",
        b"  \r\n",
        b" PING\r\n",
        b"\x00PING\r\n",
        b"MSG foo 1 1\r\n",
        b"MSGX\r\n",
        b"PUBX foo 5\r\n",
        b"PUBfoo 5\r\n",
        b"PUB\r\n",
        b"HPUB\r\n",
        b"HPUBX foo 1 1\r\n",
        b"HELLO\r\n",
        b"SUB\r\n",
        b"SUBX foo 1\r\n",
        b"UNSUB\r\n",
        b"UNSUBX 1\r\n",
        b"U\r\n",
        b"UNX\r\n",
        b"PIN\r\n",
        b"P\r\n",
        b"PO\r\n",
        b"PI\rNG\r\n",
        b"-ERR\r\n",
        b"-ERRX\r\n",
        b"-ER\r\n",
        b"+O\r\n",
        b"+\r\n",
        b"CONNEC\r\n",
        b"C\r\n",
    ] {
        assert_eq!(
            err(buf),
            ProtoError::UnknownOp,
            "{:?}",
            String::from_utf8_lossy(buf)
        );
    }
}

#[test]
fn parser_unknown_op_detected_at_first_bad_byte() {
    // No line end needed: Go fails on the first byte that cannot continue a verb.
    assert_eq!(err(b"X"), ProtoError::UnknownOp);
    assert_eq!(err(b"PUX"), ProtoError::UnknownOp);
    assert_eq!(err(b"PUBX"), ProtoError::UnknownOp);
    assert!(is_incomplete(b"PU"));
    assert!(is_incomplete(b"PUB"));
    assert!(is_incomplete(b"CONNEC"));
    assert!(is_incomplete(b""));
}

#[test]
fn parser_bad_args_close_silently() {
    use ProtoError::{BadArgs, BadSize};
    let cases: &[(&[u8], ProtoError)] = &[
        (b"PUB foo\r\n", BadArgs(Verb::Pub)),
        (b"PUB \r\n", BadArgs(Verb::Pub)),
        (b"PUB \t\r\n", BadArgs(Verb::Pub)),
        (b"PUB foo bar baz 5\r\n", BadArgs(Verb::Pub)),
        (b"PUB foo abc\r\n", BadSize(Verb::Pub)),
        (b"PUB foo bar abc\r\n", BadSize(Verb::Pub)),
        (b"PUB foo -1\r\n", BadSize(Verb::Pub)),
        (b"PUB foo +5\r\n", BadSize(Verb::Pub)),
        (b"PUB foo 5a\r\n", BadSize(Verb::Pub)),
        (b"PUB foo 99999999999999999999999\r\n", BadSize(Verb::Pub)),
        (b"PUB foo 9223372036854775807\r\n", BadSize(Verb::Pub)),
        (b"PUB foo 1000000000\r\n", BadSize(Verb::Pub)),
        (b"PUB foo 0000000005\r\n", BadSize(Verb::Pub)),
        (b"PUB foo\r5\r\n", BadArgs(Verb::Pub)),
        (b"PUB foo 5\r\r\n", BadSize(Verb::Pub)),
        (b"PUB foo 5\r \r\n", BadSize(Verb::Pub)),
        (b"HPUB foo 31\r\n", BadArgs(Verb::Hpub)),
        (b"HPUB foo\r\n", BadArgs(Verb::Hpub)),
        (b"HPUB \r\n", BadArgs(Verb::Hpub)),
        (b"HPUB foo a b 26 31\r\n", BadArgs(Verb::Hpub)),
        (b"HPUB foo x 31\r\n", BadSize(Verb::Hpub)),
        (b"HPUB foo 26 y\r\n", BadSize(Verb::Hpub)),
        (b"HPUB foo -1 31\r\n", BadSize(Verb::Hpub)),
        (b"HPUB foo 26 99999999999999999999\r\n", BadSize(Verb::Hpub)),
        (b"HPUB foo 26 1000000000\r\n", BadSize(Verb::Hpub)),
        (b"HPUB foo\r26 31\r\n", BadArgs(Verb::Hpub)),
        (b"SUB foo\r\n", BadArgs(Verb::Sub)),
        (b"SUB \r\n", BadArgs(Verb::Sub)),
        (b"SUB foo q 1 2\r\n", BadArgs(Verb::Sub)),
        (b"UNSUB \r\n", BadArgs(Verb::Unsub)),
        (b"UNSUB 1 2 3\r\n", BadArgs(Verb::Unsub)),
    ];
    for (buf, want) in cases {
        assert_eq!(err(buf), *want, "{:?}", String::from_utf8_lossy(buf));
        assert_eq!(want.wire_error(), None);
    }
}

#[test]
fn parser_hpub_header_size_above_total() {
    assert_eq!(
        err(b"HPUB foo 31 26\r\n"),
        ProtoError::HeaderSizeExceedsTotal { hdr: 31, total: 26 }
    );
    // Checked before the payload limit, as in Go.
    assert_eq!(
        err(b"HPUB foo 2000001 2000000\r\n"),
        ProtoError::HeaderSizeExceedsTotal {
            hdr: 2_000_001,
            total: 2_000_000
        }
    );
}

#[test]
fn parser_payload_too_large_before_payload_arrives() {
    let max = ParserLimits::default().max_payload;
    assert_eq!(
        err(b"PUB foo 1048577\r\n"),
        ProtoError::PayloadTooLarge {
            size: 1_048_577,
            max
        }
    );
    assert_eq!(
        err(b"PUB foo 999999999\r\n"),
        ProtoError::PayloadTooLarge {
            size: 999_999_999,
            max
        }
    );
    assert_eq!(
        err(b"HPUB foo 26 1048577\r\n"),
        ProtoError::PayloadTooLarge {
            size: 1_048_577,
            max
        }
    );
    assert_eq!(
        err(b"HPUB foo 1048577 1048578\r\n"),
        ProtoError::PayloadTooLarge {
            size: 1_048_578,
            max
        }
    );
    // Exactly max_payload is fine: it only waits for the bytes.
    assert_eq!(
        parse(b"PUB foo 1048576\r\n"),
        Ok(Parsed::Incomplete {
            min_total: 17 + 1_048_578
        })
    );
}

#[test]
fn parser_payload_must_be_followed_by_crlf() {
    for buf in [
        &b"PUB foo 5\r\nhello\nPING\r\n"[..],
        b"PUB foo 5\r\nhelloXXPING\r\n",
        b"PUB foo 5\r\nhello\rXPING\r\n",
        b"PUB foo 5\r\nhel\r\nPING\r\n",
        b"PUB foo 3\r\nhello\r\n",
        b"PUB foo 0\r\nPING\r\n",
        b"PUB foo 1\r\nxy",
        b"HPUB foo 5 5\r\nabcdeXX",
    ] {
        assert_eq!(
            err(buf),
            ProtoError::PayloadNotTerminated,
            "{:?}",
            String::from_utf8_lossy(buf)
        );
    }
    assert!(is_incomplete(b"PUB foo 5\r\nhello\r"));
    assert!(is_incomplete(b"PUB foo 5\r\nhello"));
}

// ---- control line limit ------------------------------------------------------------------

fn pub_line_with_args_len(n: usize, line_end: &[u8]) -> Vec<u8> {
    let mut v = b"PUB ".to_vec();
    v.extend(std::iter::repeat_n(b'a', n - 2));
    v.extend_from_slice(b" 1");
    v.extend_from_slice(line_end);
    v.extend_from_slice(b"x\r\n");
    v
}

#[test]
fn parser_control_line_limit_counts_args_only() {
    for end in [&b"\r\n"[..], b"\n"] {
        assert!(matches!(
            parse(&pub_line_with_args_len(4096, end)),
            Ok(Parsed::Op { .. })
        ));
        assert_eq!(
            err(&pub_line_with_args_len(4097, end)),
            ProtoError::ControlLineTooLong
        );
    }
    // Blanks between the verb and the arguments do not count (Go: 200 blanks + 4096 is fine).
    let mut v = b"PUB".to_vec();
    v.extend(std::iter::repeat_n(b' ', 200));
    v.extend(pub_line_with_args_len(4096, b"\r\n").get(4..).unwrap());
    assert!(matches!(parse(&v), Ok(Parsed::Op { .. })));

    let with_args = |verb: &[u8], args: Vec<u8>| {
        let mut v = verb.to_vec();
        v.extend(args);
        v.extend_from_slice(b"\r\n");
        v
    };
    let sub_args = |n: usize| {
        let mut a = vec![b'b'; n - 2];
        a.extend_from_slice(b" 1");
        a
    };
    assert!(matches!(
        parse(&with_args(b"SUB ", sub_args(4096))),
        Ok(Parsed::Op { .. })
    ));
    assert_eq!(
        err(&with_args(b"SUB ", sub_args(4097))),
        ProtoError::ControlLineTooLong
    );
    assert!(matches!(
        parse(&with_args(b"CONNECT ", vec![b'x'; 4096])),
        Ok(Parsed::Op { .. })
    ));
    assert_eq!(
        err(&with_args(b"CONNECT ", vec![b'x'; 4097])),
        ProtoError::ControlLineTooLong
    );
    // Trailing blanks are part of the argument text.
    let mut unsub = vec![b'1'];
    unsub.extend(vec![b' '; 4095]);
    assert!(matches!(
        parse(&with_args(b"UNSUB ", unsub.clone())),
        Ok(Parsed::Op { .. })
    ));
    unsub.push(b' ');
    assert_eq!(
        err(&with_args(b"UNSUB ", unsub)),
        ProtoError::ControlLineTooLong
    );
}

#[test]
fn parser_control_line_limit_without_line_end() {
    let mut v = b"PUB ".to_vec();
    v.extend(vec![b'a'; 4096]);
    assert!(is_incomplete(&v));
    v.push(b'\r');
    assert!(is_incomplete(&v), "a trailing CR may be the line end");
    v.pop();
    v.push(b'a');
    assert_eq!(err(&v), ProtoError::ControlLineTooLong);
    for verb in [
        &b"CONNECT "[..],
        b"SUB ",
        b"INFO ",
        b"-ERR ",
        b"UNSUB ",
        b"HPUB ",
    ] {
        let mut v = verb.to_vec();
        v.extend(vec![b'x'; 4097]);
        assert_eq!(err(&v), ProtoError::ControlLineTooLong, "{verb:?}");
    }
}

#[test]
fn parser_unbounded_go_runs_are_bounded_here() {
    // Go accepts these forever; buffering them is our cost, so the same limit applies.
    let mut ping = b"PING".to_vec();
    ping.extend(vec![b' '; 4096]);
    assert!(is_incomplete(&ping));
    ping.push(b' ');
    assert_eq!(err(&ping), ProtoError::ControlLineTooLong);
    ping.extend_from_slice(b"\r\n");
    assert_eq!(
        err(&ping),
        ProtoError::ControlLineTooLong,
        "same outcome once the LF is there"
    );
    let mut blanks = b"PUB".to_vec();
    blanks.extend(vec![b' '; 4097]);
    assert_eq!(err(&blanks), ProtoError::ControlLineTooLong);
    // Within the limit they parse as Go does.
    let mut ping = b"PING".to_vec();
    ping.extend(vec![b' '; 4000]);
    ping.extend_from_slice(b"\r\n");
    assert_eq!(one(&ping), ClientOp::Ping);
}

#[test]
fn parser_custom_limits() {
    let small = ParserLimits {
        max_control_line: 8,
        max_payload: 4,
    };
    assert!(matches!(
        parse_client_op(b"SUB foo 12\r\n", &small),
        Ok(Parsed::Op { .. })
    ));
    assert_eq!(
        parse_client_op(b"SUB foo 12345\r\n", &small),
        Err(ProtoError::ControlLineTooLong)
    );
    assert_eq!(
        parse_client_op(b"PUB a 5\r\n", &small),
        Err(ProtoError::PayloadTooLarge { size: 5, max: 4 })
    );
}

// ---- splitting and pipelining ------------------------------------------------------------

const PIPELINE: &[u8] =
    b"CONNECT {\"verbose\":false}\r\nPING\r\nSUB foo q 1\r\nPUB foo bar 5\r\nhello\r\n\
HPUB foo 12 17\r\nNATS/1.0\r\n\r\nhello\r\nUNSUB 1 2\r\npong\n+OK\r\nINFO {}\r\nPUB foo 0\r\n\r\n\
sub\tfoo\t2\r\n-ERR 'bye'\r\n";

#[test]
fn parser_pipeline_parses_in_order() {
    let (ops, error) = drive(&[PIPELINE], &limits());
    assert_eq!(error, None);
    assert_eq!(ops.len(), 12);
    assert!(ops[0].starts_with("Connect"));
    assert_eq!(ops[1], "Ping");
    assert!(ops[11].starts_with("Err"));
}

/// Splitting the input anywhere into two or three reads gives the same ops and error.
fn assert_split_invariant(input: &[u8]) {
    let l = limits();
    let whole = drive(&[input], &l);
    for i in 0..=input.len() {
        let (a, b) = input.split_at(i);
        assert_eq!(
            drive(&[a, b], &l),
            whole,
            "split at {i} of {:?}",
            String::from_utf8_lossy(input)
        );
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(drive(&bytes, &l), whole, "byte by byte");
    // Three-way splits on a grid, coarser for long inputs to keep debug runs short.
    let step = (input.len() / 40).max(1);
    for i in (0..input.len()).step_by(step) {
        for j in (i..input.len()).step_by(step + 2) {
            let parts = [&input[..i], &input[i..j], &input[j..]];
            assert_eq!(drive(&parts, &l), whole, "split at {i},{j}");
        }
    }
}

#[test]
fn parser_split_anywhere_valid_pipeline() {
    assert_split_invariant(PIPELINE);
}

#[test]
fn parser_split_anywhere_with_errors() {
    for input in [
        &b"PING\r\nPUB foo 5\r\nhelloXX"[..],
        b"SUB foo 1\r\nPUB foo 1048577\r\n",
        b"PING\r\nHPUB foo 31 26\r\n",
        b"PONG\r\nFOO\r\n",
        b"PUB foo\r\n",
        b"UNSUB 1 2 3\r\n",
    ] {
        assert_split_invariant(input);
    }
    let mut long = b"PING\r\nPUB ".to_vec();
    long.extend(vec![b'a'; 5000]);
    assert_split_invariant(&long);
}

#[test]
fn parser_min_total_is_exact_once_size_known() {
    let frame = b"PUB foo.bar 16\r\n0123456789abcdef\r\n";
    let line_end = 16;
    for k in 0..frame.len() {
        match parse(&frame[..k]) {
            Ok(Parsed::Incomplete { min_total }) if k >= line_end => {
                assert_eq!(min_total, frame.len());
            }
            Ok(Parsed::Incomplete { min_total }) => assert_eq!(min_total, k + 1),
            other => panic!("prefix {k}: {other:?}"),
        }
    }
    let mut two = frame.to_vec();
    two.extend_from_slice(frame);
    assert!(matches!(parse(&two), Ok(Parsed::Op { consumed, .. }) if consumed == frame.len()));
}

#[test]
fn parser_hundred_pipelined_pubs() {
    let mut buf = Vec::new();
    for _ in 0..100 {
        buf.extend_from_slice(b"PUB foo.bar 16\r\n0123456789abcdef\r\n");
    }
    let (ops, error) = drive(&[&buf], &limits());
    assert_eq!((ops.len(), error), (100, None));
}

#[test]
fn parser_find_lf_agrees_with_naive_search() {
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    for len in 0..200 {
        for _ in 0..20 {
            let mut v = Vec::with_capacity(len);
            for _ in 0..len {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Mostly bytes near LF, so false-positive patterns of the word trick show up.
                v.push(
                    [b'\n', b'\x0b', b'\x09', b'\x8a', b'a', b'\x0a' ^ 0x80][(rng % 6) as usize],
                );
            }
            assert_eq!(find_lf(&v), v.iter().position(|&b| b == b'\n'), "{v:?}");
            if let Some(p) = v.iter().position(|&b| b == b'\n') {
                v[p] = b'x';
                assert_eq!(find_lf(&v), v.iter().position(|&b| b == b'\n'));
            }
        }
    }
}
