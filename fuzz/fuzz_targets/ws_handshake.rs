//! Fuzzes the WebSocket handshake: arbitrary bytes (read in pieces) through the request parser
//! and Go's upgrade checks. Checks that nothing panics, that the outcome does not depend on how
//! the bytes arrived, that `consumed` stays within the buffer, and that every reply is built.
#![no_main]

use std::time::{Duration, UNIX_EPOCH};

use libfuzzer_sys::fuzz_target;
use natrium_ws::handshake::{CookieNames, HandshakeConfig, Outcome};
use natrium_ws::{Handshake, RequestParser};

/// Feeds growing prefixes of `data`, `step` bytes more each time, until an outcome; returns it
/// with the prefix length it came at.
fn run(h: &Handshake, data: &[u8], step: usize) -> (Outcome, usize) {
    let mut parser = RequestParser::new();
    let mut end = 0;
    loop {
        end = (end + step.max(1)).min(data.len());
        let out = h.process(&mut parser, &data[..end]);
        match &out {
            Outcome::Incomplete if end < data.len() => continue,
            Outcome::Reject { rejection, consumed } => {
                assert!(*consumed <= end);
                let _ = rejection.response(UNIX_EPOCH + Duration::from_secs(1_700_000_000));
            }
            Outcome::Upgrade(u) => assert!(u.response.ends_with(b"\r\n\r\n")),
            Outcome::Incomplete => {}
        }
        return (out, end);
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, data)) = input.split_first() else { return };
    let cfg = HandshakeConfig {
        compression: mode & 1 != 0,
        same_origin: mode & 2 != 0,
        allowed_origins: if mode & 4 != 0 { vec!["https://example.com:8443".into()] } else { vec![] },
        cookies: CookieNames { jwt: Some("jwt".into()), token: Some("tok".into()), ..CookieNames::default() },
        headers: vec![("X-Test".into(), "v".into())],
        mqtt_enabled: mode & 8 != 0,
        tls: mode & 16 != 0,
    };
    let Ok(h) = Handshake::new(&cfg) else { return };
    // Reading in pieces may stop at an earlier prefix (a complete head that, read whole, has
    // bytes after it); the outcome must then equal reading that prefix at once.
    let (pieces, end) = run(&h, data, usize::from(mode >> 5) + 1);
    let (whole, _) = run(&h, &data[..end], end);
    assert_eq!(whole, pieces, "outcome depends on read boundaries");
});
