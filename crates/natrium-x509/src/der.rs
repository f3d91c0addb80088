//! A minimal DER reader: tag, length, value, over a borrowed slice, with every length checked
//! against what is left. Enough for the parts of X.509 the server reads (names, validity,
//! extensions); signatures and chains are rustls' business.

/// Tags used by the X.509 reader.
pub mod tag {
    pub const BOOLEAN: u8 = 0x01;
    pub const INTEGER: u8 = 0x02;
    pub const OCTET_STRING: u8 = 0x04;
    pub const OID: u8 = 0x06;
    pub const UTF8_STRING: u8 = 0x0c;
    pub const NUMERIC_STRING: u8 = 0x12;
    pub const PRINTABLE_STRING: u8 = 0x13;
    pub const T61_STRING: u8 = 0x14;
    pub const IA5_STRING: u8 = 0x16;
    pub const UTC_TIME: u8 = 0x17;
    pub const GENERALIZED_TIME: u8 = 0x18;
    pub const BMP_STRING: u8 = 0x1e;
    pub const SEQUENCE: u8 = 0x30;
    pub const SET: u8 = 0x31;
}

/// Why bytes are not the DER that was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DerError {
    #[error("truncated")]
    Truncated,
    #[error("unexpected tag {found:#04x}, wanted {wanted:#04x}")]
    UnexpectedTag { found: u8, wanted: u8 },
    /// Multi-byte tags, indefinite or over-long lengths: not DER as certificates use it.
    #[error("unsupported encoding")]
    Unsupported,
    #[error("bad value")]
    BadValue,
}

/// One tag-length-value element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub tag: u8,
    pub value: &'a [u8],
    /// The whole element, header included.
    pub raw: &'a [u8],
}

/// Reads elements one after another from a slice.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

/// Lengths beyond this are refused: no certificate field comes near it, and it keeps the
/// arithmetic far from overflow on 32-bit targets.
const LENGTH_BYTES_MAX: usize = 4;

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next element, whatever its tag.
    pub fn any(&mut self) -> Result<Tlv<'a>, DerError> {
        let (&tag, after_tag) = self.rest.split_first().ok_or(DerError::Truncated)?;
        if tag & 0x1f == 0x1f {
            return Err(DerError::Unsupported);
        }
        let (&first, mut after_len) = after_tag.split_first().ok_or(DerError::Truncated)?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > LENGTH_BYTES_MAX {
                return Err(DerError::Unsupported);
            }
            let (digits, rest) = after_len
                .split_at_checked(count)
                .ok_or(DerError::Truncated)?;
            after_len = rest;
            digits
                .iter()
                .fold(0usize, |acc, &b| (acc << 8) | usize::from(b))
        };
        let (value, rest) = after_len.split_at_checked(len).ok_or(DerError::Truncated)?;
        let header = self.rest.len() - after_len.len();
        let raw = self.rest.get(..header + len).ok_or(DerError::Truncated)?;
        self.rest = rest;
        Ok(Tlv { tag, value, raw })
    }

    /// The next element, which must carry `wanted`.
    pub fn expect(&mut self, wanted: u8) -> Result<Tlv<'a>, DerError> {
        let tlv = self.any()?;
        if tlv.tag != wanted {
            return Err(DerError::UnexpectedTag {
                found: tlv.tag,
                wanted,
            });
        }
        Ok(tlv)
    }

    /// The next element if it carries `wanted`; otherwise nothing is consumed.
    pub fn optional(&mut self, wanted: u8) -> Result<Option<Tlv<'a>>, DerError> {
        match self.rest.first() {
            Some(&t) if t == wanted => self.any().map(Some),
            _ => Ok(None),
        }
    }
}

/// An OBJECT IDENTIFIER in dotted form (`2.5.4.3`).
pub fn oid_string(value: &[u8]) -> Result<String, DerError> {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut arc: u64 = 0;
    let mut first = true;
    if value.is_empty() || value.last().is_some_and(|b| b & 0x80 != 0) {
        return Err(DerError::BadValue);
    }
    for &b in value {
        arc = arc
            .checked_mul(128)
            .and_then(|a| a.checked_add(u64::from(b & 0x7f)))
            .ok_or(DerError::BadValue)?;
        if b & 0x80 != 0 {
            continue;
        }
        if first {
            let (a, b) = match arc {
                0..=39 => (0, arc),
                40..=79 => (1, arc - 40),
                _ => (2, arc - 80),
            };
            let _ = write!(out, "{a}.{b}");
            first = false;
        } else {
            let _ = write!(out, ".{arc}");
        }
        arc = 0;
    }
    Ok(out)
}

/// Appends a DER length.
pub fn push_length(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
        return;
    }
    let bytes = len.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    let digits = bytes.get(skip..).unwrap_or_default();
    out.push(0x80 | digits.len() as u8);
    out.extend_from_slice(digits);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn der_reads_short_and_long_lengths() {
        let mut r = Reader::new(&[0x04, 0x02, 0xaa, 0xbb, 0x30, 0x81, 0x01, 0x05]);
        let a = r.expect(tag::OCTET_STRING).unwrap();
        assert_eq!(a.value, &[0xaa, 0xbb]);
        assert_eq!(a.raw.len(), 4);
        let b = r.expect(tag::SEQUENCE).unwrap();
        assert_eq!(b.value, &[0x05]);
        assert!(r.is_empty());
    }

    #[test]
    fn der_refuses_truncation_and_odd_encodings() {
        assert_eq!(
            Reader::new(&[0x04, 0x05, 1]).any(),
            Err(DerError::Truncated)
        );
        assert_eq!(Reader::new(&[0x04]).any(), Err(DerError::Truncated));
        assert_eq!(Reader::new(&[0x04, 0x80]).any(), Err(DerError::Unsupported));
        assert_eq!(
            Reader::new(&[0x04, 0x85, 1, 1, 1, 1, 1]).any(),
            Err(DerError::Unsupported)
        );
        assert_eq!(
            Reader::new(&[0x1f, 0x01, 0x00]).any(),
            Err(DerError::Unsupported)
        );
        assert_eq!(
            Reader::new(&[0x04, 0x84, 0xff, 0xff, 0xff, 0xff]).any(),
            Err(DerError::Truncated)
        );
    }

    #[test]
    fn der_oid_strings() {
        assert_eq!(oid_string(&[0x55, 0x04, 0x03]).unwrap(), "2.5.4.3");
        assert_eq!(
            oid_string(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01]).unwrap(),
            "1.2.840.113549.1.9.1"
        );
        assert_eq!(
            oid_string(&[0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19]).unwrap(),
            "0.9.2342.19200300.100.1.25"
        );
        assert!(oid_string(&[0x86]).is_err());
        assert!(oid_string(&[]).is_err());
    }

    #[test]
    fn der_lengths_encode() {
        let enc = |n| {
            let mut v = Vec::new();
            push_length(&mut v, n);
            v
        };
        assert_eq!(enc(5), vec![5]);
        assert_eq!(enc(0x80), vec![0x81, 0x80]);
        assert_eq!(enc(0x1234), vec![0x82, 0x12, 0x34]);
    }
}
