//! Why a connection ended, with Go's names for it.

/// Why a connection ended; the names are Go's (`/connz?state=closed` reports them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedReason {
    ClientClosed,
    WriteError,
    ReadError,
    SlowConsumerPendingBytes,
    SlowConsumerWriteDeadline,
    ProtocolViolation,
    ParseError,
    MaxPayloadExceeded,
    MaxControlLineExceeded,
    MaxConnectionsExceeded,
    MaxAccountConnectionsExceeded,
    MaxSubscriptionsExceeded,
    StaleConnection,
    AuthenticationTimeout,
    AuthenticationViolation,
    AuthenticationExpired,
    ServerShutdown,
    LameDuckMode,
    TlsHandshakeError,
}

impl ClosedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientClosed => "Client Closed",
            Self::WriteError => "Write Error",
            Self::ReadError => "Read Error",
            Self::SlowConsumerPendingBytes => "Slow Consumer (Pending Bytes)",
            Self::SlowConsumerWriteDeadline => "Slow Consumer (Write Deadline)",
            Self::ProtocolViolation => "Protocol Violation",
            Self::ParseError => "Parse Error",
            Self::MaxPayloadExceeded => "Maximum Message Payload Exceeded",
            Self::MaxControlLineExceeded => "Maximum Control Line Exceeded",
            Self::MaxConnectionsExceeded => "Maximum Connections Exceeded",
            Self::MaxAccountConnectionsExceeded => "Maximum Account Connections Exceeded",
            Self::MaxSubscriptionsExceeded => "Maximum Subscriptions Exceeded",
            Self::StaleConnection => "Stale Connection",
            Self::AuthenticationTimeout => "Authentication Timeout",
            Self::AuthenticationViolation => "Authentication Failure",
            Self::AuthenticationExpired => "Authentication Expired",
            Self::ServerShutdown => "Server Shutdown",
            Self::LameDuckMode => "Lame Duck Mode",
            Self::TlsHandshakeError => "TLS Handshake Failure",
        }
    }

    /// Whether what is still queued should be written before the socket closes.
    pub(crate) fn flushes_on_close(self) -> bool {
        !matches!(
            self,
            Self::SlowConsumerPendingBytes
                | Self::SlowConsumerWriteDeadline
                | Self::WriteError
                | Self::TlsHandshakeError
        )
    }
}
