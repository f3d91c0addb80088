//! PEM blocks as Go's `encoding/pem` finds them: every `-----BEGIN X-----` … `-----END X-----`
//! pair in the input, with its label, in order, skipping text around and between blocks. The
//! labels of skipped blocks are what Go's certificate-loading errors list, so the reader keeps
//! them all rather than only the ones it understands.

/// One PEM block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub label: String,
    pub der: Vec<u8>,
    /// RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`) were present.
    pub has_headers: bool,
}

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;

const BEGIN: &str = "-----BEGIN ";
const END: &str = "-----END ";
const DASHES: &str = "-----";

/// All well-formed blocks in `input`; malformed ones are skipped, as Go skips them.
pub fn blocks(input: &[u8]) -> Vec<Block> {
    let text = String::from_utf8_lossy(input);
    let mut out = Vec::new();
    let mut rest: &str = &text;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let Some(label_end) = after.find(DASHES) else {
            break;
        };
        let label = &after[..label_end];
        let body_start = &after[label_end + DASHES.len()..];
        let end_marker = format!("{END}{label}{DASHES}");
        if label.contains('\n') {
            rest = after;
            continue;
        }
        let Some(body_len) = body_start.find(&end_marker) else {
            rest = after;
            continue;
        };
        let body = &body_start[..body_len];
        rest = &body_start[body_len + end_marker.len()..];
        let (has_headers, base64_text) = split_headers(body);
        if let Some(der) = decode_base64(base64_text) {
            out.push(Block {
                label: label.to_owned(),
                der,
                has_headers,
            });
        }
    }
    out
}

/// Separates RFC 1421 headers (lines with a colon, ended by an empty line) from the body.
fn split_headers(body: &str) -> (bool, &str) {
    let trimmed = body.trim_start_matches(['\r', '\n']);
    let first_line = trimmed.lines().next().unwrap_or("");
    if !first_line.contains(':') {
        return (false, body);
    }
    match trimmed.find("\n\n").or_else(|| trimmed.find("\r\n\r\n")) {
        Some(at) => (true, &trimmed[at..]),
        None => (true, ""),
    }
}

/// Standard base64 with padding, as Go's `StdEncoding`: unused bits of the last character may
/// be set (the `base64` crate refuses that by default).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
);

/// The body's bytes, whitespace ignored; `None` when it is not valid base64.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let chars: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    BASE64.decode(chars).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pem_finds_blocks_and_labels() {
        let input = b"junk\n-----BEGIN CERTIFICATE-----\nAQID\n-----END CERTIFICATE-----\n\
                      text\n-----BEGIN EC PRIVATE KEY-----\nBAU=\n-----END EC PRIVATE KEY-----\n";
        let b = blocks(input);
        assert_eq!(b.len(), 2);
        assert_eq!(
            (b[0].label.as_str(), b[0].der.as_slice()),
            ("CERTIFICATE", &[1, 2, 3][..])
        );
        assert_eq!(
            (b[1].label.as_str(), b[1].der.as_slice()),
            ("EC PRIVATE KEY", &[4, 5][..])
        );
    }

    #[test]
    fn pem_skips_malformed_and_notes_headers() {
        assert!(blocks(b"-----BEGIN X-----\n!!!!\n-----END X-----\n").is_empty());
        assert!(blocks(b"-----BEGIN X-----\nAQID\n").is_empty());
        assert!(blocks(b"nothing here").is_empty());
        let b = blocks(
            b"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAQID\n\
              -----END RSA PRIVATE KEY-----\n",
        );
        assert!(b[0].has_headers);
        assert_eq!(b[0].der, vec![1, 2, 3]);
    }

    #[test]
    fn pem_base64() {
        assert_eq!(decode_base64("TWFu").unwrap(), b"Man");
        assert_eq!(decode_base64("TWE=").unwrap(), b"Ma");
        assert_eq!(decode_base64("TQ==").unwrap(), b"M");
        assert_eq!(decode_base64("TQ==TWFu"), None);
        assert_eq!(decode_base64("TQ"), None);
        assert_eq!(decode_base64("T==="), None);
        // Unused low bits set, as Go's decoder allows.
        assert_eq!(decode_base64("TR==").unwrap(), b"M");
        assert_eq!(decode_base64("TW\r\nFu ").unwrap(), b"Man");
        assert_eq!(decode_base64("TQ="), None);
        assert_eq!(decode_base64("T@=="), None);
        assert_eq!(decode_base64("").unwrap(), b"");
    }
}
