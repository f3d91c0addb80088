//! Picks the configured cookies (`jwt_cookie`, `user_cookie`, `pass_cookie`, `token_cookie`)
//! out of the `Cookie` headers, with the parsing rules of Go's `Request.Cookies`:
//! `;`-separated `name=value` pairs, names must be tokens, values may be wrapped in double
//! quotes (removed) and may only hold printable ASCII other than `"`, `;` and `\`; invalid
//! pairs are skipped. More than 3000 pairs in all (Go's `httpcookiemaxnum`) yields no cookies.
//! When a name appears twice the last one wins, and a name configured for two options fills
//! the first in the order jwt, user, pass, token, as Go's loop does.

use std::borrow::Cow;

use super::request::is_token_byte;

/// Most cookie pairs Go parses from one request (`httpcookiemaxnum` default).
pub const COOKIES_MAX: usize = 3000;

/// The cookie names configured for the websocket listener; `None` (or empty) is unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CookieNames {
    /// `jwt_cookie`.
    pub jwt: Option<String>,
    /// `user_cookie`.
    pub user: Option<String>,
    /// `pass_cookie`.
    pub pass: Option<String>,
    /// `token_cookie`.
    pub token: Option<String>,
}

impl CookieNames {
    fn is_empty(&self) -> bool {
        [&self.jwt, &self.user, &self.pass, &self.token]
            .iter()
            .all(|n| n.as_deref().unwrap_or("").is_empty())
    }
}

/// The values found for the configured cookies, to use when CONNECT leaves the matching
/// field empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cookies {
    /// Value of the `jwt_cookie` cookie.
    pub jwt: Option<String>,
    /// Value of the `user_cookie` cookie.
    pub user: Option<String>,
    /// Value of the `pass_cookie` cookie.
    pub pass: Option<String>,
    /// Value of the `token_cookie` cookie.
    pub token: Option<String>,
}

/// Extracts the configured cookies from every `Cookie` header value.
pub(crate) fn extract<'a>(
    lines: impl Iterator<Item = Cow<'a, [u8]>> + Clone,
    names: &CookieNames,
) -> Cookies {
    let mut out = Cookies::default();
    if names.is_empty() {
        return out;
    }
    let count: usize = lines
        .clone()
        .map(|l| memchr::memchr_iter(b';', &l).count() + 1)
        .sum();
    if count > COOKIES_MAX {
        return out;
    }
    let is = |n: &Option<String>, name: &[u8]| n.as_deref().is_some_and(|n| n.as_bytes() == name);
    for line in lines {
        for part in line.split(|&b| b == b';') {
            let Some((name, value)) = parse_pair(part) else {
                continue;
            };
            let value = Some(value);
            if is(&names.jwt, name) {
                out.jwt = value;
            } else if is(&names.user, name) {
                out.user = value;
            } else if is(&names.pass, name) {
                out.pass = value;
            } else if is(&names.token, name) {
                out.token = value;
            }
        }
    }
    out
}

/// One `name=value` pair, or `None` when Go would skip it.
fn parse_pair(part: &[u8]) -> Option<(&[u8], String)> {
    let part = trim_space(part);
    if part.is_empty() {
        return None;
    }
    let (name, raw) = match memchr::memchr(b'=', part) {
        Some(i) => (part.get(..i)?, part.get(i + 1..)?),
        None => (part, &b""[..]),
    };
    let name = trim_space(name);
    if name.is_empty() || !name.iter().all(|&b| is_token_byte(b)) {
        return None;
    }
    let raw = match raw {
        [b'"', inner @ .., b'"'] => inner,
        _ => raw,
    };
    if !raw
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b';' | b'\\'))
    {
        return None;
    }
    Some((name, String::from_utf8_lossy(raw).into_owned()))
}

/// Trims ASCII space, tab, CR and LF, as `textproto.TrimString`.
fn trim_space(s: &[u8]) -> &[u8] {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = s.iter().take_while(|b| is_space(b)).count();
    let s = s.get(start..).unwrap_or_default();
    let end = s.len() - s.iter().rev().take_while(|b| is_space(b)).count();
    s.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> CookieNames {
        CookieNames {
            jwt: Some("jwt".into()),
            user: Some("usr".into()),
            pass: Some("pwd".into()),
            token: Some("tok".into()),
        }
    }

    fn run(lines: &[&str], names: &CookieNames) -> Cookies {
        extract(lines.iter().map(|l| Cow::Borrowed(l.as_bytes())), names)
    }

    #[test]
    fn ws_cookies_picked_like_go() {
        let c = run(
            &["jwt=abc; usr=\"bob\"; other=1", "pwd=s3cret;tok=t"],
            &names(),
        );
        assert_eq!(c.jwt.as_deref(), Some("abc"));
        assert_eq!(c.user.as_deref(), Some("bob"));
        assert_eq!(c.pass.as_deref(), Some("s3cret"));
        assert_eq!(c.token.as_deref(), Some("t"));
    }

    #[test]
    fn ws_cookies_skip_invalid_and_last_wins() {
        let c = run(
            &["jwt=a b\\c; jwt=first; jwt=second; usr; b@d=1; pwd=\"x"],
            &names(),
        );
        assert_eq!(c.jwt.as_deref(), Some("second"));
        assert_eq!(c.user.as_deref(), Some(""), "a bare name is an empty value");
        assert_eq!(c.pass, None, "a lone quote is invalid");
        let none = run(&["jwt=abc"], &CookieNames::default());
        assert_eq!(none, Cookies::default());
    }

    #[test]
    fn ws_cookies_same_name_fills_first_option_only() {
        let n = CookieNames {
            jwt: Some("c".into()),
            token: Some("c".into()),
            ..CookieNames::default()
        };
        let c = run(&["c=v"], &n);
        assert_eq!((c.jwt.as_deref(), c.token.as_deref()), (Some("v"), None));
    }

    #[test]
    fn ws_cookies_over_go_count_limit_are_ignored() {
        let many = format!("jwt=x{}", ";a=b".repeat(COOKIES_MAX));
        assert_eq!(run(&[&many], &names()).jwt, None);
        let ok = format!("jwt=x{}", ";a=b".repeat(COOKIES_MAX - 1));
        assert_eq!(run(&[&ok], &names()).jwt.as_deref(), Some("x"));
    }
}
