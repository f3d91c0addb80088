//! The part Go adds to a client's log prefix after its first CONNECT: the client's own
//! description (`v<version>:<lang>:<name>`, each part only when sent) and who it logged in as
//! (`<account>/<kind>:<id>`), each quoted as Go's `%q` quotes.

use natrium_gofmt::go_quote_bytes as go_quote;

use nats_proto::ConnectOptions;

fn present(field: Option<&String>) -> Option<&str> {
    field.map(String::as_str).filter(|s| !s.is_empty())
}

/// The client's description from CONNECT: `v1.2:python:svc`, `go`, `svc`, or empty.
pub(super) fn description(opts: &ConnectOptions) -> String {
    let parts = [
        (!opts.version.is_empty()).then(|| format!("v{}", opts.version)),
        (!opts.lang.is_empty()).then(|| opts.lang.clone()),
        (!opts.name.is_empty()).then(|| opts.name.clone()),
    ];
    parts.into_iter().flatten().collect::<Vec<_>>().join(":")
}

/// How the client authenticated, in Go's order: `nkey:…`, `user:…` (also the `no_auth_user`
/// or a certificate's mapped user, `admitted`), `jwt:<user key>`, `token`; `None` without
/// credentials.
fn auth_label(opts: &ConnectOptions, admitted: &str, jwt: bool) -> Option<String> {
    if let Some(nkey) = present(opts.nkey.as_ref()) {
        return Some(format!("nkey:{nkey}"));
    }
    if let Some(user) = present(opts.user.as_ref()) {
        return Some(format!("user:{user}"));
    }
    if jwt {
        return Some(format!("jwt:{admitted}"));
    }
    if present(opts.auth_token.as_ref()).is_some() {
        return Some("token".to_owned());
    }
    (!admitted.is_empty()).then(|| format!("user:{admitted}"))
}

/// The tag for a client described as `description` that connected with `opts`, admitted as
/// `admitted` (`authorized_user`) into the account labelled `account`.
pub(super) fn log_tag(
    description: &str,
    opts: &ConnectOptions,
    admitted: &str,
    jwt: bool,
    account: &str,
) -> String {
    let mut tag = String::new();
    if !description.is_empty() {
        tag.push_str(" - ");
        tag.push_str(&go_quote(description.as_bytes()));
    }
    if let Some(label) = auth_label(opts, admitted, jwt) {
        tag.push_str(" - ");
        tag.push_str(&go_quote(format!("{account}/{label}").as_bytes()));
    }
    tag
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(json: &[u8]) -> ConnectOptions {
        ConnectOptions::parse(json).unwrap_or_default()
    }

    fn log_tag(o: &ConnectOptions, admitted: &str, jwt: bool, account: &str) -> String {
        super::log_tag(&description(o), o, admitted, jwt, account)
    }

    #[test]
    fn client_log_tag_like_go() {
        let o = opts(br#"{"user":"u","name":"nm","lang":"python","version":"1.2"}"#);
        assert_eq!(
            log_tag(&o, "u", false, "$G"),
            r#" - "v1.2:python:nm" - "$G/user:u""#
        );
        let o = opts(br#"{"lang":"go"}"#);
        assert_eq!(log_tag(&o, "", false, "$G"), r#" - "go""#);
        let o = opts(br#"{"auth_token":"t"}"#);
        assert_eq!(log_tag(&o, "[REDACTED]", false, "$G"), r#" - "$G/token""#);
        let o = opts(br#"{"name":"a b\"c"}"#);
        assert_eq!(
            log_tag(&o, "pa", false, "A"),
            r#" - "a b\"c" - "A/user:pa""#
        );
        assert_eq!(
            log_tag(&opts(b"{}"), "UKEY", true, "AKEY/A"),
            r#" - "AKEY/A/jwt:UKEY""#
        );
        assert_eq!(
            log_tag(&opts(br#"{"version":"2"}"#), "", false, "$G"),
            r#" - "v2""#
        );
    }
}
