//! Sizes the codec checks before buffering anything a peer sends, with Go's names and defaults.
//!
//! Go names in parentheses are the constants of `server/websocket.go` (or `net/http`) whose
//! behaviour each limit reproduces.

/// Largest HTTP request head (request line, header lines, blank line) accepted before the
/// upgrade, in bytes. Go's websocket listener is a `net/http` server without `MaxHeaderBytes`,
/// so `http.DefaultMaxHeaderBytes` (1 MiB) applies, plus the 4096 bytes of slack `net/http`
/// adds; one byte more is answered with `431 Request Header Fields Too Large` (checked against
/// the Go binary).
pub const HANDSHAKE_HEAD_BYTES_MAX: usize = (1 << 20) + 4096;

/// Time allowed for the handshake when `handshake_timeout` is not set. Go has no default (a
/// plain-text client may hold a socket forever before its request); the server applies this
/// fallback instead so that pre-handshake sockets stay bounded. Clients finishing within it
/// cannot tell the difference.
pub const HANDSHAKE_TIMEOUT_FALLBACK_MS: u64 = 10_000;

/// Longest frame header: 2 fixed bytes, 8 bytes of extended length, 4 bytes of masking key
/// (`wsMaxFrameHeaderSize`).
pub const FRAME_HEADER_BYTES_MAX: usize = 14;

/// Largest control frame payload (`wsMaxControlPayloadSize`, RFC 6455 §5.5).
pub const CONTROL_PAYLOAD_BYTES_MAX: usize = 125;

/// Largest whole control frame: its length always fits the 7-bit form, so 2 header bytes, a
/// masking key and the payload. The decoder only consumes a control frame once all of it is in
/// the input, so a caller's read buffer must be able to hold this much.
pub const CONTROL_FRAME_BYTES_MAX: usize = 2 + 4 + CONTROL_PAYLOAD_BYTES_MAX;

/// Frame size the server uses towards browsers (`wsFrameSizeForBrowsers`): Go splits outbound
/// data into frames of at most this many payload bytes when the client's `User-Agent` starts
/// with `Mozilla/`.
pub const BROWSER_FRAME_BYTES_MAX: usize = 4096;

/// Outbound batches of at most this many bytes are never compressed (`wsCompressThreshold`).
pub const COMPRESS_THRESHOLD_BYTES: usize = 64;

/// A compressed message may carry this many times `max_payload` in compressed bytes
/// (`wsMaxMsgPayloadMultiple`), so that one message can batch several full-size operations.
pub const COMPRESSED_MESSAGE_PAYLOAD_MULTIPLE: u64 = 8;

/// Hard cap on the compressed bytes of one message whatever `max_payload` is
/// (`wsMaxMsgPayloadLimit`, 64 MiB).
pub const COMPRESSED_MESSAGE_BYTES_CAP: u64 = 64 * 1024 * 1024;

/// Go's default `max_payload` (`MAX_PAYLOAD_SIZE`, 1 MiB), used when none is given.
pub const PAYLOAD_BYTES_MAX_DEFAULT: usize =
    natrium_gofmt::defaults::MAX_PAYLOAD_BYTES_DEFAULT as usize;

/// Size of each chunk of inflated bytes handed to the caller (Go reads the decompressor in
/// 32 KiB chunks and hands each to the parser).
pub const INFLATE_CHUNK_BYTES: usize = 32 * 1024;

/// Capacity the compressed-message buffer keeps between messages; a larger buffer left by a big
/// message is shrunk back to this so an idle connection does not pin megabytes.
pub const COMPRESSED_BUFFER_RETAIN_BYTES: usize = 64 * 1024;

/// The trailer a permessage-deflate sender strips (RFC 7692 §7.2.1) followed by an empty final
/// stored block, appended before inflating so the stream ends cleanly. Go appends the same
/// 9 bytes (`compressLastBlock`) and counts them against the compressed limit.
pub const INFLATE_TRAILER: [u8; 9] = [0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff];

/// Largest number of compressed bytes one message may carry for the given `max_payload`
/// (Go's `wsMaxMessageSize`): `max_payload * 8`, at most 64 MiB. A zero `max_payload` means
/// Go's default.
pub fn compressed_message_bytes_max(max_payload: usize) -> u64 {
    let mpay = if max_payload == 0 {
        PAYLOAD_BYTES_MAX_DEFAULT
    } else {
        max_payload
    };
    (mpay as u64)
        .saturating_mul(COMPRESSED_MESSAGE_PAYLOAD_MULTIPLE)
        .min(COMPRESSED_MESSAGE_BYTES_CAP)
}

// With the default max_payload the trailer leaves room for data. (With max_payload 1 even an
// empty compressed message is over the limit, as in Go.)
const _: () = assert!(INFLATE_TRAILER.len() < PAYLOAD_BYTES_MAX_DEFAULT);
const _: () =
    assert!(CONTROL_FRAME_BYTES_MAX <= FRAME_HEADER_BYTES_MAX + CONTROL_PAYLOAD_BYTES_MAX);
const _: () = assert!(COMPRESS_THRESHOLD_BYTES < BROWSER_FRAME_BYTES_MAX);
