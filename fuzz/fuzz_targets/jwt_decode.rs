//! Fuzzes the JWT decoder with arbitrary text, as a client's CONNECT `jwt` (or a websocket
//! `jwt_cookie`) delivers it: each claim kind, version 1 and 2 layouts. Checks that nothing
//! panics and that a token passing decode names an issuer of an allowed kind.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_auth::jwt::{decode, undecorate, AccountNats, OperatorNats, UserNats};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let token = undecorate(text);
    if let Ok(claims) = decode::<UserNats>(token) {
        assert!(claims.iss.starts_with('A'));
    }
    if let Ok(claims) = decode::<AccountNats>(token) {
        assert!(claims.iss.starts_with('O'));
    }
    let _ = decode::<OperatorNats>(token);
});
