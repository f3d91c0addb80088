//! The opening handshake: parse the HTTP upgrade request ([`request`]), decide as Go's
//! `wsUpgrade` does, and produce the exact bytes to answer with.
//!
//! Go's checks, in its order, each with the reply status (the reason is only logged):
//! 1. A path ending in `/mqtt` while MQTT is disabled: 404. (`/leafnode` selects a leafnode.)
//! 2. Method other than `GET`: 405.
//! 3. Empty host: 400.
//! 4. `Upgrade` without the token `websocket`: 400. 5. `Connection` without `Upgrade`: 400.
//! 6. No `Sec-WebSocket-Key`, or one that is not base64 of 16 bytes: 400.
//! 7. `Sec-WebSocket-Version` without `13`: 400.
//! 8. Origin refused (see [`origin`]): 403.
//!
//! Then: compression when enabled and `permessage-deflate` is offered; no masking when the
//! client sent `Nats-No-Masking: true`; bytes already sent after the head close the connection
//! without a reply. Token matching is case-insensitive over comma-separated lists in every
//! instance of the header.

pub mod cookie;
pub mod origin;
pub mod request;
pub mod response;
mod url;

use std::borrow::Cow;
use std::net::IpAddr;
use std::time::SystemTime;

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

pub use cookie::{CookieNames, Cookies};
pub use origin::AllowedOrigin;
pub use request::{HttpError, Parsed, Request, RequestParser};
pub use response::Persistence;

use crate::frame::decode::DecoderConfig;
use crate::frame::encode::EncoderConfig;

/// The `websocket { }` options the handshake uses, with Go's meaning.
#[derive(Debug, Clone, Default)]
pub struct HandshakeConfig {
    /// `compression`: offer permessage-deflate when the client asks for it.
    pub compression: bool,
    /// `same_origin`: the `Origin` must match the request's host.
    pub same_origin: bool,
    /// `allowed_origins`: the `Origin` must be one of these URLs.
    pub allowed_origins: Vec<String>,
    /// `jwt_cookie`, `user_cookie`, `pass_cookie`, `token_cookie`.
    pub cookies: CookieNames,
    /// `headers`: extra headers for the 101 response, in this order.
    pub headers: Vec<(String, String)>,
    /// MQTT is enabled (else `/mqtt` upgrades get 404).
    pub mqtt_enabled: bool,
    /// The listener is TLS (affects same-origin checks).
    pub tls: bool,
}

/// A configuration Go refuses at startup (`validateWebsocketOptions`), with Go's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// What kind of connection the upgrade opens, from the path's suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A NATS client (any path not below).
    Client,
    /// A leafnode (`…/leafnode`).
    Leaf,
    /// An MQTT client (`…/mqtt`).
    Mqtt,
}

/// Why the handshake failed. [`HandshakeError::status`] is the reply's status, if any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    /// `/mqtt` while MQTT is disabled.
    #[error("mqtt websocket endpoint not enabled")]
    MqttNotEnabled,
    /// Not a GET.
    #[error("request method must be GET")]
    MethodNotGet,
    /// Empty host.
    #[error("'Host' missing in request")]
    HostMissing,
    /// `Upgrade` lacks `websocket`.
    #[error("invalid value for header 'Upgrade'")]
    BadUpgrade,
    /// `Connection` lacks `Upgrade`.
    #[error("invalid value for header 'Connection'")]
    BadConnection,
    /// No key.
    #[error("key missing")]
    KeyMissing,
    /// Key not base64 of 16 bytes.
    #[error("invalid websocket key")]
    BadKey,
    /// Version 13 not offered.
    #[error("invalid version")]
    BadVersion,
    /// Origin refused; the text says why.
    #[error("origin not allowed: {0}")]
    OriginNotAllowed(String),
    /// Bytes followed the head before the upgrade was answered: Go closes without a reply.
    #[error("client sent data before handshake is complete")]
    DataBeforeHandshake,
    /// The target `*`, which Go's request router answers itself.
    #[error("request target '*' not allowed")]
    StarTarget,
    /// Rejected by the HTTP layer before the websocket checks.
    #[error(transparent)]
    Http(#[from] HttpError),
}

impl HandshakeError {
    /// The reply's HTTP status, `None` when the connection closes without one.
    pub const fn status(&self) -> Option<u16> {
        match self {
            Self::MqttNotEnabled => Some(404),
            Self::MethodNotGet => Some(405),
            Self::OriginNotAllowed(_) => Some(403),
            Self::DataBeforeHandshake => None,
            Self::Http(HttpError::UnsupportedVersion) => Some(505),
            Self::Http(HttpError::HeadTooLarge) => Some(431),
            _ => Some(400),
        }
    }
}

/// A successful upgrade: what to send and how to run the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// Client, leafnode or MQTT.
    pub kind: Kind,
    /// permessage-deflate negotiated.
    pub compression: bool,
    /// The client asked not to mask its frames (`Nats-No-Masking: true`).
    pub no_masking: bool,
    /// `User-Agent` starts with `Mozilla/`: limit outbound frames to 4096 bytes.
    pub browser: bool,
    /// Safari with compression: do not fragment compressed messages.
    pub no_compressed_fragmentation: bool,
    /// The configured cookies found in the request.
    pub cookies: Cookies,
    /// The first `X-Forwarded-For` value when it is a single IP address.
    pub client_ip: Option<IpAddr>,
    /// The exact `101 Switching Protocols` response.
    pub response: Vec<u8>,
}

impl Upgrade {
    /// The cookies, the one part a connection keeps after its upgrade; the rest is freed.
    #[must_use]
    #[allow(clippy::boxed_local)]
    pub fn into_cookies(self: Box<Self>) -> Cookies {
        self.cookies
    }

    /// The frame decoder configuration for this connection.
    pub const fn decoder_config(&self, max_payload: usize) -> DecoderConfig {
        DecoderConfig {
            compression: self.compression,
            masking_required: !self.no_masking,
            max_payload,
        }
    }

    /// The frame encoder configuration for this connection.
    pub const fn encoder_config(&self) -> EncoderConfig {
        EncoderConfig {
            compression: self.compression,
            browser: self.browser,
            no_compressed_fragmentation: self.no_compressed_fragmentation,
        }
    }
}

/// A refused handshake: the reason, and how to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Why (for the log line `<addr> - websocket handshake error: <reason>`).
    pub error: HandshakeError,
    /// How the connection continues after the reply.
    pub persistence: Persistence,
    head_only: bool,
}

impl Rejection {
    fn closing(error: HandshakeError) -> Self {
        Self {
            error,
            persistence: Persistence::Close,
            head_only: false,
        }
    }

    /// The exact reply (`now` fills the `Date` header), or `None` to close silently.
    pub fn response(&self, now: SystemTime) -> Option<Vec<u8>> {
        match &self.error {
            HandshakeError::DataBeforeHandshake => None,
            HandshakeError::Http(e) => Some(e.response()),
            HandshakeError::StarTarget => Some(response::star_response(now)),
            e => e
                .status()
                .map(|s| response::error_response(s, self.persistence, self.head_only, now)),
        }
    }

    /// Whether to close after the reply; otherwise the client may send another request.
    pub const fn closes(&self) -> bool {
        self.persistence.closes()
    }
}

/// The result of [`Handshake::process`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The request head is not complete yet.
    Incomplete,
    /// Upgrade: write `upgrade.response`, then speak WebSocket frames. The head was `consumed`
    /// bytes (nothing followed it).
    Upgrade(Box<Upgrade>),
    /// Refused: write the reply if any, then close or (if the rejection allows) parse another
    /// request from the bytes after `consumed`.
    Reject {
        /// Why and how to answer.
        rejection: Rejection,
        /// Length of the refused request's head (0 when it could not be delimited).
        consumed: usize,
    },
}

/// The handshake rules of one websocket listener, validated once at startup.
#[derive(Debug, Clone)]
pub struct Handshake {
    compression: bool,
    same_origin: bool,
    allowed: Vec<AllowedOrigin>,
    cookies: CookieNames,
    raw_headers: String,
    mqtt_enabled: bool,
    tls: bool,
}

impl Handshake {
    /// Validates the options as Go does at startup and prepares the response headers.
    pub fn new(cfg: &HandshakeConfig) -> Result<Self, ConfigError> {
        let allowed = cfg
            .allowed_origins
            .iter()
            .map(|o| AllowedOrigin::parse(o).map_err(ConfigError))
            .collect::<Result<Vec<_>, _>>()?;
        let mut raw_headers = String::new();
        for (name, value) in &cfg.headers {
            check_header(name, value)?;
            raw_headers.push_str(name);
            raw_headers.push_str(": ");
            raw_headers.push_str(value);
            raw_headers.push_str("\r\n");
        }
        Ok(Self {
            compression: cfg.compression,
            same_origin: cfg.same_origin,
            allowed,
            cookies: cfg.cookies.clone(),
            raw_headers,
            mqtt_enabled: cfg.mqtt_enabled,
            tls: cfg.tls,
        })
    }

    /// Parses the request at the front of `buf` (all bytes read so far on this request) and
    /// decides. Keep `parser` across calls for one request; use a new one for the next.
    pub fn process(&self, parser: &mut RequestParser, buf: &[u8]) -> Outcome {
        match parser.parse(buf) {
            Ok(Parsed::Incomplete) => Outcome::Incomplete,
            Err(e) => Outcome::Reject {
                rejection: Rejection::closing(e.into()),
                consumed: 0,
            },
            Ok(Parsed::Complete { request, consumed }) => {
                let trailing = buf.len() - consumed;
                match self.upgrade(&request, trailing) {
                    Ok(u) => Outcome::Upgrade(Box::new(u)),
                    Err(rejection) => Outcome::Reject {
                        rejection,
                        consumed,
                    },
                }
            }
        }
    }

    /// Decides on a parsed request; `trailing` is how many bytes followed its head.
    pub fn upgrade(&self, req: &Request<'_>, trailing: usize) -> Result<Upgrade, Rejection> {
        let reject = |error| Rejection {
            error,
            persistence: persistence(req),
            head_only: req.method == b"HEAD",
        };
        if req.path() == "*" {
            return Err(Rejection::closing(HandshakeError::StarTarget));
        }
        let kind = kind_of(req.path());
        self.check(req, kind).map_err(reject)?;
        let compression = self.compression && offers_deflate(req);
        let no_masking = req.first("nats-no-masking").is_some_and(|v| *v == *b"true");
        if trailing > 0 {
            return Err(Rejection::closing(HandshakeError::DataBeforeHandshake));
        }
        Ok(self.accept(req, kind, compression, no_masking))
    }

    /// Go's checks 1-8, in order.
    fn check(&self, req: &Request<'_>, kind: Kind) -> Result<(), HandshakeError> {
        if kind == Kind::Mqtt && !self.mqtt_enabled {
            return Err(HandshakeError::MqttNotEnabled);
        }
        if req.method != b"GET" {
            return Err(HandshakeError::MethodNotGet);
        }
        let host = req.host();
        if host.is_empty() {
            return Err(HandshakeError::HostMissing);
        }
        if !contains_token(req, "upgrade", "websocket") {
            return Err(HandshakeError::BadUpgrade);
        }
        if !contains_token(req, "connection", "upgrade") {
            return Err(HandshakeError::BadConnection);
        }
        let key = req.first("sec-websocket-key").unwrap_or_default();
        if key.is_empty() {
            return Err(HandshakeError::KeyMissing);
        }
        if KEY_ENGINE.decode(&*key).map_or(true, |k| k.len() != 16) {
            return Err(HandshakeError::BadKey);
        }
        if !contains_token(req, "sec-websocket-version", "13") {
            return Err(HandshakeError::BadVersion);
        }
        let origin = req
            .first("origin")
            .filter(|o| !o.is_empty())
            .or_else(|| req.first("sec-websocket-origin"));
        origin::check_origin(
            self.same_origin,
            &self.allowed,
            origin.as_deref(),
            &host,
            self.tls,
        )
        .map_err(HandshakeError::OriginNotAllowed)
    }

    fn accept(
        &self,
        req: &Request<'_>,
        kind: Kind,
        compression: bool,
        no_masking: bool,
    ) -> Upgrade {
        let key = req.first("sec-websocket-key").unwrap_or_default();
        let accept = response::accept_key(&key);
        let mut extra = Vec::with_capacity(3);
        if compression {
            extra.push(response::PMCE_RESPONSE);
        }
        if no_masking {
            extra.push(response::NO_MASKING_RESPONSE);
        }
        if kind == Kind::Mqtt {
            extra.push(response::MQTT_PROTOCOL_RESPONSE);
        }
        let response = response::upgrade_response(&accept, &extra, &self.raw_headers);
        let client_ip = req.first("x-forwarded-for").and_then(|v| {
            std::str::from_utf8(&v)
                .ok()
                .and_then(|s| s.parse::<IpAddr>().ok())
        });
        let mut up = Upgrade {
            kind,
            compression,
            no_masking,
            browser: false,
            no_compressed_fragmentation: false,
            cookies: Cookies::default(),
            client_ip,
            response,
        };
        if kind != Kind::Leaf {
            let ua = req.first("user-agent").unwrap_or_default();
            if ua.starts_with(b"Mozilla/") {
                up.browser = true;
                let has = |needle: &[u8]| memchr::memmem::find(&ua, needle).is_some();
                up.no_compressed_fragmentation = compression && has(b"Version/") && has(b"Safari/");
            }
            let lines: Vec<Cow<'_, [u8]>> = req.values("cookie").collect();
            up.cookies = cookie::extract(lines.into_iter(), &self.cookies);
        }
        up
    }
}

/// Go decodes the key with `base64.StdEncoding`: padding required, stray trailing bits allowed.
const KEY_ENGINE: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

fn kind_of(path: &str) -> Kind {
    if path.ends_with("/leafnode") {
        Kind::Leaf
    } else if path.ends_with("/mqtt") {
        Kind::Mqtt
    } else {
        Kind::Client
    }
}

/// Go's `wsHeaderContains`: some comma-separated element of some value equals `token`,
/// ignoring case and surrounding blanks.
fn contains_token(req: &Request<'_>, name: &str, token: &str) -> bool {
    req.values(name)
        .any(|v| list_has(&v, |t| t.eq_ignore_ascii_case(token.as_bytes())))
}

fn list_has(value: &[u8], mut pred: impl FnMut(&[u8]) -> bool) -> bool {
    value.split(|&b| b == b',').any(|t| pred(trim_blanks(t)))
}

fn trim_blanks(s: &[u8]) -> &[u8] {
    let is_blank = |b: &&u8| **b == b' ' || **b == b'\t';
    let start = s.iter().take_while(is_blank).count();
    let s = s.get(start..).unwrap_or_default();
    s.get(..s.len() - s.iter().rev().take_while(is_blank).count())
        .unwrap_or_default()
}

/// Go's `wsPMCExtensionSupport` with `checkPMCOnly`: `permessage-deflate` appears as any
/// `;`-separated element of any offered extension.
fn offers_deflate(req: &Request<'_>) -> bool {
    req.values("sec-websocket-extensions").any(|v| {
        list_has(&v, |ext| {
            ext.split(|&b| b == b';')
                .any(|p| trim_blanks(p).eq_ignore_ascii_case(b"permessage-deflate"))
        })
    })
}

/// Go's keep-alive decision for the reply (`shouldClose` and the HTTP/1.0 keep-alive header).
fn persistence(req: &Request<'_>) -> Persistence {
    let has = |token: &str| {
        req.values("connection")
            .any(|v: Cow<'_, [u8]>| list_has(&v, |t| t.eq_ignore_ascii_case(token.as_bytes())))
    };
    let close = has("close");
    if req.version == (1, 0) {
        if close || !has("keep-alive") {
            Persistence::Close10
        } else {
            Persistence::KeepAlive10
        }
    } else if close {
        Persistence::Close
    } else {
        Persistence::KeepAlive
    }
}

/// Go's startup check of one `headers` entry, plus a check that the header is well formed (Go
/// does not check, and would write a broken response).
pub fn check_header(name: &str, value: &str) -> Result<(), ConfigError> {
    let lower = name.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "host" | "content-length" | "connection" | "upgrade" | "nats-no-masking"
    ) {
        return Err(ConfigError(format!(
            "websocket: invalid header {name:?} not allowed"
        )));
    }
    if lower.starts_with("sec-websocket-") {
        return Err(ConfigError(format!(
            "websocket: invalid header {name:?}, \"Sec-WebSocket-\" prefix not allowed"
        )));
    }
    if name.is_empty()
        || !name.bytes().all(request::is_token_byte)
        || value.bytes().any(|b| b == b'\r' || b == b'\n')
    {
        return Err(ConfigError(format!(
            "websocket: invalid header {name:?}: malformed name or value"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
