//! Every `-ERR '<text>'` the Go server sends to clients, whether Go closes the connection after
//! it, and what each parser error turns into on the wire.
//!
//! Texts and close decisions were observed on Go `nats-server` v2.15.2 (see
//! `docs/client-protocol.md`), except where a variant says it was only found among the strings
//! of the binary. Parameterised texts quote subjects the way Go's `%q` does.

use std::borrow::Cow;

use bytes::BufMut;

use crate::error::ProtoError;

/// One `-ERR` the server may send to a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError<'a> {
    /// `Unknown Protocol Operation`: unknown verb, or bytes after a payload that are not CR LF.
    UnknownProtocolOperation,
    /// `Maximum Payload Violation`: `PUB`/`HPUB` announced more than `max_payload`.
    MaxPayloadViolation,
    /// `maximum control line exceeded`.
    MaxControlLineExceeded,
    /// `Invalid Subject`: `SUB` with an invalid subject (connection stays open).
    InvalidSubject,
    /// `Invalid Publish Subject`: `PUB` to an invalid subject (connection stays open).
    InvalidPublishSubject,
    /// `Authorization Violation`: bad or missing credentials, or any op before `CONNECT` when
    /// auth is required.
    AuthorizationViolation,
    /// `Authentication Timeout`: no `CONNECT` within the auth timeout.
    AuthenticationTimeout,
    /// `Stale Connection`: too many unanswered server PINGs.
    StaleConnection,
    /// `maximum connections exceeded`: server-wide `max_connections` reached.
    MaxConnectionsExceeded,
    /// `maximum account active connections exceeded`: the account's connection limit reached.
    MaxAccountConnectionsExceeded,
    /// `maximum subscriptions exceeded` (connection stays open).
    MaxSubscriptionsExceeded,
    /// `invalid client protocol`: `CONNECT` with a `protocol` other than 0 or 1.
    InvalidClientProtocol,
    /// `no responders requires headers support`: `no_responders` without `headers`.
    NoRespondersRequiresHeaders,
    /// `Secure Connection - TLS Required`. From the binary's strings; plain TCP to a TLS server
    /// fails the handshake and closes without it.
    TlsRequired,
    /// `User Authentication Expired`. From the binary's strings (JWT expiry), not observed.
    UserAuthenticationExpired,
    /// `Account Authentication Expired`. From the binary's strings, not observed.
    AccountAuthenticationExpired,
    /// `Permissions Violation for Publish to "<subject>"` (connection stays open).
    PublishViolation {
        /// The denied subject.
        subject: &'a [u8],
    },
    /// `Permissions Violation for Publish with Reply of "<reply>"`. From the binary's strings,
    /// not observed.
    PublishReplyViolation {
        /// The denied reply subject.
        reply: &'a [u8],
    },
    /// `Permissions Violation for Subscription to "<subject>"`, plus ` using queue "<queue>"`
    /// for a queue subscription (connection stays open).
    SubscriptionViolation {
        /// The denied subject.
        subject: &'a [u8],
        /// The queue group, if any.
        queue: Option<&'a [u8]>,
    },
    /// `Permissions Violation for Subscription to "<subject>" (sid "<sid>")`, with
    /// ` using queue "<queue>"` before the sid for a queue subscription: a configuration
    /// reload removed the subscription (connection stays open).
    SubscriptionRemoved {
        /// The subject now denied.
        subject: &'a [u8],
        /// The queue group, if any.
        queue: Option<&'a [u8]>,
        /// The subscription's id.
        sid: &'a [u8],
    },
}

impl WireError<'_> {
    /// The fixed text, or `None` for the parameterised variants.
    pub const fn static_text(&self) -> Option<&'static str> {
        Some(match self {
            Self::UnknownProtocolOperation => "Unknown Protocol Operation",
            Self::MaxPayloadViolation => "Maximum Payload Violation",
            Self::MaxControlLineExceeded => "maximum control line exceeded",
            Self::InvalidSubject => "Invalid Subject",
            Self::InvalidPublishSubject => "Invalid Publish Subject",
            Self::AuthorizationViolation => "Authorization Violation",
            Self::AuthenticationTimeout => "Authentication Timeout",
            Self::StaleConnection => "Stale Connection",
            Self::MaxConnectionsExceeded => "maximum connections exceeded",
            Self::MaxAccountConnectionsExceeded => "maximum account active connections exceeded",
            Self::MaxSubscriptionsExceeded => "maximum subscriptions exceeded",
            Self::InvalidClientProtocol => "invalid client protocol",
            Self::NoRespondersRequiresHeaders => "no responders requires headers support",
            Self::TlsRequired => "Secure Connection - TLS Required",
            Self::UserAuthenticationExpired => "User Authentication Expired",
            Self::AccountAuthenticationExpired => "Account Authentication Expired",
            Self::PublishViolation { .. }
            | Self::PublishReplyViolation { .. }
            | Self::SubscriptionViolation { .. }
            | Self::SubscriptionRemoved { .. } => return None,
        })
    }

    /// The text between the quotes of `-ERR '…'`. Allocates only for parameterised variants.
    pub fn text(&self) -> Cow<'static, str> {
        if let Some(text) = self.static_text() {
            return Cow::Borrowed(text);
        }
        let mut bytes = Vec::with_capacity(64);
        self.write_text(&mut bytes);
        // The only non-fixed bytes come from `write_go_quoted`, which emits valid UTF-8.
        Cow::Owned(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Whether Go closes the connection after sending this error.
    pub const fn closes_connection(&self) -> bool {
        !matches!(
            self,
            Self::InvalidSubject
                | Self::InvalidPublishSubject
                | Self::MaxSubscriptionsExceeded
                | Self::PublishViolation { .. }
                | Self::PublishReplyViolation { .. }
                | Self::SubscriptionViolation { .. }
                | Self::SubscriptionRemoved { .. }
        )
    }

    /// Appends the text without quotes or framing.
    pub fn write_text<B: BufMut>(&self, out: &mut B) {
        if let Some(text) = self.static_text() {
            out.put_slice(text.as_bytes());
            return;
        }
        match self {
            Self::PublishViolation { subject } => {
                out.put_slice(b"Permissions Violation for Publish to ");
                write_go_quoted(out, subject);
            }
            Self::PublishReplyViolation { reply } => {
                out.put_slice(b"Permissions Violation for Publish with Reply of ");
                write_go_quoted(out, reply);
            }
            Self::SubscriptionViolation { subject, queue } => {
                out.put_slice(b"Permissions Violation for Subscription to ");
                write_go_quoted(out, subject);
                if let Some(queue) = queue {
                    out.put_slice(b" using queue ");
                    write_go_quoted(out, queue);
                }
            }
            Self::SubscriptionRemoved {
                subject,
                queue,
                sid,
            } => {
                out.put_slice(b"Permissions Violation for Subscription to ");
                write_go_quoted(out, subject);
                if let Some(queue) = queue {
                    out.put_slice(b" using queue ");
                    write_go_quoted(out, queue);
                }
                out.put_slice(b" (sid ");
                write_go_quoted(out, sid);
                out.put_slice(b")");
            }
            _ => {}
        }
    }

    /// Appends the whole frame: `-ERR '<text>'\r\n`.
    pub fn write_frame<B: BufMut>(&self, out: &mut B) {
        out.put_slice(b"-ERR '");
        self.write_text(out);
        out.put_slice(b"'\r\n");
    }
}

impl ProtoError {
    /// The `-ERR` Go sends before closing for this parse error, or `None` when Go closes
    /// without a word (bad or missing arguments, bad sizes, `HPUB` header size above total).
    pub const fn wire_error(&self) -> Option<WireError<'static>> {
        match self {
            ProtoError::UnknownOp | ProtoError::PayloadNotTerminated => {
                Some(WireError::UnknownProtocolOperation)
            }
            ProtoError::ControlLineTooLong => Some(WireError::MaxControlLineExceeded),
            ProtoError::PayloadTooLarge { .. } => Some(WireError::MaxPayloadViolation),
            ProtoError::BadArgs(_)
            | ProtoError::BadSize(_)
            | ProtoError::HeaderSizeExceedsTotal { .. } => None,
        }
    }
}

/// Appends `s` quoted as Go's `%q` does (see [`natrium_gofmt::write_go_quoted`]): printable
/// UTF-8 kept, `"` and `\` escaped, control and other non-printable characters as `\n`, `\xNN`,
/// `\uNNNN` or `\UNNNNNNNN`, and bytes that are not valid UTF-8 as `\xNN`.
pub fn write_go_quoted<B: BufMut>(out: &mut B, s: &[u8]) {
    natrium_gofmt::write_go_quoted(s, |piece| out.put_slice(piece.as_bytes()));
}

#[cfg(test)]
mod tests;
