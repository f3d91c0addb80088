//! The bytes the server answers a handshake with: the `101` upgrade (written raw by Go after
//! hijacking, so it has no `Date`) and the `http.Error` replies of the websocket handler
//! (written by `net/http`, so with `Date`, `Content-Length` and keep-alive handling).

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use sha1::{Digest, Sha1};

/// The GUID RFC 6455 appends to the client's key.
const WS_GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
pub fn accept_key(key: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(key);
    h.update(WS_GUID);
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// The extension answer Go sends when compression is negotiated.
pub(crate) const PMCE_RESPONSE: &str =
    "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n";
/// Sent when the client asked for `Nats-No-Masking: true`.
pub(crate) const NO_MASKING_RESPONSE: &str = "Nats-No-Masking: true\r\n";
/// Sent on the `/mqtt` endpoint.
pub(crate) const MQTT_PROTOCOL_RESPONSE: &str = "Sec-Websocket-Protocol: mqtt\r\n";

/// Builds the `101 Switching Protocols` response.
pub(crate) fn upgrade_response(accept: &str, extra: &[&str], raw_headers: &str) -> Vec<u8> {
    let mut s = String::with_capacity(256 + raw_headers.len());
    s.push_str("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n");
    s.push_str("Sec-WebSocket-Accept: ");
    s.push_str(accept);
    s.push_str("\r\n");
    for e in extra {
        s.push_str(e);
    }
    s.push_str(raw_headers);
    s.push_str("\r\n");
    s.into_bytes()
}

/// How the connection continues after an error reply, from the request's version and
/// `Connection` header (Go's `shouldClose` and its keep-alive header rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// HTTP/1.1, connection stays open for another request; no `Connection` header.
    KeepAlive,
    /// HTTP/1.1 with `Connection: close`: reply carries `Connection: close`, then close.
    Close,
    /// HTTP/1.0 with `Connection: keep-alive`: reply carries `Connection: keep-alive`.
    KeepAlive10,
    /// HTTP/1.0 without keep-alive: no `Connection` header, then close.
    Close10,
}

impl Persistence {
    /// Whether the server closes the connection after the reply.
    pub const fn closes(self) -> bool {
        matches!(self, Self::Close | Self::Close10)
    }
}

/// The reply `http.Error(w, StatusText(code), code)` produces in the websocket handler, which
/// also sets `Sec-Websocket-Version: 13`. A `HEAD` request gets the headers without the body.
pub(crate) fn error_response(
    code: u16,
    persistence: Persistence,
    head_only: bool,
    now: SystemTime,
) -> Vec<u8> {
    let text = status_text(code);
    let proto = match persistence {
        Persistence::KeepAlive | Persistence::Close => "HTTP/1.1",
        Persistence::KeepAlive10 | Persistence::Close10 => "HTTP/1.0",
    };
    let mut s = String::with_capacity(256);
    let _ = write!(
        s,
        "{proto} {code} {text}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Sec-Websocket-Version: 13\r\nX-Content-Type-Options: nosniff\r\nDate: {}\r\n\
         Content-Length: {}\r\n",
        http_date(now),
        text.len() + 1
    );
    match persistence {
        Persistence::Close => s.push_str("Connection: close\r\n"),
        Persistence::KeepAlive10 => s.push_str("Connection: keep-alive\r\n"),
        Persistence::KeepAlive | Persistence::Close10 => {}
    }
    s.push_str("\r\n");
    if !head_only {
        s.push_str(text);
        s.push('\n');
    }
    s.into_bytes()
}

/// The reply of Go's `ServeMux` to a request whose target is `*`.
pub(crate) fn star_response(now: SystemTime) -> Vec<u8> {
    format!(
        "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nDate: {}\r\nContent-Length: 0\r\n\r\n",
        http_date(now)
    )
    .into_bytes()
}

/// Go's `http.StatusText` for the codes the handler uses.
pub(crate) const fn status_text(code: u16) -> &'static str {
    match code {
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    }
}

/// Formats `t` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as `net/http` does.
pub fn http_date(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let weekday = DAYS.get((days % 7) as usize).copied().unwrap_or("Thu");
    let month = MONTHS
        .get(month.saturating_sub(1) as usize)
        .copied()
        .unwrap_or("Jan");
    format!(
        "{weekday}, {day:02} {month} {year} {:02}:{:02}:{:02} GMT",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month 1-12, day 1-31), proleptic Gregorian (H. Hinnant's
/// algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn ws_accept_key_rfc_example() {
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn ws_http_date_formats() {
        let at = |s: u64| http_date(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(at(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        // The Go server's Date in a reply captured for the differential tests.
        assert_eq!(at(1_795_348_220), "Sun, 22 Nov 2026 11:50:20 GMT");
        assert_eq!(at(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
    }
}
