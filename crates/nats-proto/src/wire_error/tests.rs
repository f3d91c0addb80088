//! Tests of the `-ERR` table against the texts observed from Go v2.15.2.

use super::*;
use crate::error::Verb;

fn frame(e: &WireError<'_>) -> Vec<u8> {
    let mut v = Vec::new();
    e.write_frame(&mut v);
    v
}

#[test]
fn wire_error_fixed_frames_match_go() {
    let cases: &[(WireError<'_>, &[u8], bool)] = &[
        (
            WireError::UnknownProtocolOperation,
            b"-ERR 'Unknown Protocol Operation'\r\n",
            true,
        ),
        (
            WireError::MaxPayloadViolation,
            b"-ERR 'Maximum Payload Violation'\r\n",
            true,
        ),
        (
            WireError::MaxControlLineExceeded,
            b"-ERR 'maximum control line exceeded'\r\n",
            true,
        ),
        (
            WireError::InvalidSubject,
            b"-ERR 'Invalid Subject'\r\n",
            false,
        ),
        (
            WireError::InvalidPublishSubject,
            b"-ERR 'Invalid Publish Subject'\r\n",
            false,
        ),
        (
            WireError::AuthorizationViolation,
            b"-ERR 'Authorization Violation'\r\n",
            true,
        ),
        (
            WireError::AuthenticationTimeout,
            b"-ERR 'Authentication Timeout'\r\n",
            true,
        ),
        (
            WireError::StaleConnection,
            b"-ERR 'Stale Connection'\r\n",
            true,
        ),
        (
            WireError::MaxConnectionsExceeded,
            b"-ERR 'maximum connections exceeded'\r\n",
            true,
        ),
        (
            WireError::MaxAccountConnectionsExceeded,
            b"-ERR 'maximum account active connections exceeded'\r\n",
            true,
        ),
        (
            WireError::MaxSubscriptionsExceeded,
            b"-ERR 'maximum subscriptions exceeded'\r\n",
            false,
        ),
        (
            WireError::InvalidClientProtocol,
            b"-ERR 'invalid client protocol'\r\n",
            true,
        ),
        (
            WireError::NoRespondersRequiresHeaders,
            b"-ERR 'no responders requires headers support'\r\n",
            true,
        ),
        (
            WireError::TlsRequired,
            b"-ERR 'Secure Connection - TLS Required'\r\n",
            true,
        ),
        (
            WireError::UserAuthenticationExpired,
            b"-ERR 'User Authentication Expired'\r\n",
            true,
        ),
        (
            WireError::AccountAuthenticationExpired,
            b"-ERR 'Account Authentication Expired'\r\n",
            true,
        ),
    ];
    for (e, want, closes) in cases {
        assert_eq!(frame(e), *want, "{e:?}");
        assert_eq!(e.closes_connection(), *closes, "{e:?}");
        let text = e.text();
        assert_eq!(format!("-ERR '{text}'\r\n").as_bytes(), *want);
    }
}

#[test]
fn wire_error_permission_texts_match_go() {
    assert_eq!(
        frame(&WireError::PublishViolation { subject: b"foo" }),
        b"-ERR 'Permissions Violation for Publish to \"foo\"'\r\n"
    );
    assert_eq!(
        frame(&WireError::SubscriptionViolation {
            subject: b"foo",
            queue: None
        }),
        b"-ERR 'Permissions Violation for Subscription to \"foo\"'\r\n"
    );
    assert_eq!(
        frame(&WireError::SubscriptionViolation {
            subject: b"foo",
            queue: Some(b"grp")
        }),
        b"-ERR 'Permissions Violation for Subscription to \"foo\" using queue \"grp\"'\r\n"
    );
    assert_eq!(
        WireError::PublishReplyViolation { reply: b"r" }.text(),
        "Permissions Violation for Publish with Reply of \"r\""
    );
    assert!(!WireError::PublishViolation { subject: b"x" }.closes_connection());
}

#[test]
fn wire_error_reload_removed_subscription_texts_match_go() {
    // Observed from Go v2.15 after a reload took `foo` and `bar.x` away from a user.
    assert_eq!(
        frame(&WireError::SubscriptionRemoved {
            subject: b"foo",
            queue: None,
            sid: b"1"
        }),
        b"-ERR 'Permissions Violation for Subscription to \"foo\" (sid \"1\")'\r\n"
    );
    assert_eq!(
        frame(&WireError::SubscriptionRemoved {
            subject: b"bar.x",
            queue: Some(b"q"),
            sid: b"2"
        }),
        b"-ERR 'Permissions Violation for Subscription to \"bar.x\" using queue \"q\" (sid \"2\")'\r\n"
    );
    assert!(!WireError::SubscriptionRemoved {
        subject: b"x",
        queue: None,
        sid: b"1"
    }
    .closes_connection());
}

#[test]
fn wire_error_go_quoting() {
    // Observed: PUB q"x -> "q\"x"; PUB f\x01é\xff -> "f\x01é\xff".
    let quoted = |s: &[u8]| {
        let mut v = Vec::new();
        write_go_quoted(&mut v, s);
        v
    };
    assert_eq!(quoted(b"q\"x"), b"\"q\\\"x\"");
    assert_eq!(quoted(b"f\x01\xc3\xa9\xff"), b"\"f\\x01\xc3\xa9\\xff\"");
    assert_eq!(quoted(b"a\\b\tc\r\n"), b"\"a\\\\b\\tc\\r\\n\"");
    assert_eq!(quoted(b"\x7f"), b"\"\\x7f\"");
    assert_eq!(quoted("\u{a0}".as_bytes()), b"\"\\u00a0\"");
    assert_eq!(quoted(b""), b"\"\"");
    assert_eq!(quoted("\u{e0001}".as_bytes()), b"\"\\U000e0001\"");
}

#[test]
fn wire_error_proto_error_mapping_matches_go() {
    let unknown = Some(WireError::UnknownProtocolOperation);
    assert_eq!(ProtoError::UnknownOp.wire_error(), unknown);
    assert_eq!(ProtoError::PayloadNotTerminated.wire_error(), unknown);
    assert_eq!(
        ProtoError::ControlLineTooLong.wire_error(),
        Some(WireError::MaxControlLineExceeded)
    );
    assert_eq!(
        ProtoError::PayloadTooLarge { size: 2, max: 1 }.wire_error(),
        Some(WireError::MaxPayloadViolation)
    );
    for v in [Verb::Pub, Verb::Hpub, Verb::Sub, Verb::Unsub] {
        assert_eq!(ProtoError::BadArgs(v).wire_error(), None);
        assert_eq!(ProtoError::BadSize(v).wire_error(), None);
        assert!(ProtoError::BadArgs(v).closes_connection());
    }
    assert_eq!(
        ProtoError::HeaderSizeExceedsTotal { hdr: 2, total: 1 }.wire_error(),
        None
    );
}
