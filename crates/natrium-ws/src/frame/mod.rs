//! WebSocket frames (RFC 6455 §5): opcodes, header encoding, masking; the decoder for client
//! frames and the encoder for server frames live in the submodules.
//!
//! Frame layout, for reference:
//!
//! ```text
//! byte 0:  FIN RSV1 RSV2 RSV3 opcode(4)
//! byte 1:  MASK len7            len7 = 0..=125, or 126 (u16 follows), or 127 (u64 follows)
//! then:    extended length (0, 2 or 8 bytes, big endian; the u64's high bit must be 0)
//! then:    masking key (4 bytes, present iff MASK)
//! then:    payload, each byte XORed with key[i % 4] when masked
//! ```

pub mod decode;
pub mod encode;
mod inflate;

use crate::limits::FRAME_HEADER_BYTES_MAX;

/// FIN bit of byte 0.
pub(crate) const FIN_BIT: u8 = 0x80;
/// RSV1 bit of byte 0: set on the first frame of a compressed message (RFC 7692).
pub(crate) const RSV1_BIT: u8 = 0x40;
/// RSV2 and RSV3 bits of byte 0: no extension we negotiate uses them.
pub(crate) const RSV23_BITS: u8 = 0x30;
/// MASK bit of byte 1.
pub(crate) const MASK_BIT: u8 = 0x80;
/// 7-bit length value announcing a 16-bit length.
pub(crate) const LEN_U16: u8 = 126;
/// 7-bit length value announcing a 64-bit length.
pub(crate) const LEN_U64: u8 = 127;

/// Frame opcodes the server knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpCode {
    /// 0: continues the current data message.
    Continuation,
    /// 1: text data. Go treats it exactly as binary.
    Text,
    /// 2: binary data; everything the server sends is binary.
    Binary,
    /// 8: close.
    Close,
    /// 9: ping.
    Ping,
    /// 10: pong.
    Pong,
}

impl OpCode {
    /// The opcode's 4-bit value.
    pub const fn bits(self) -> u8 {
        match self {
            Self::Continuation => 0,
            Self::Text => 1,
            Self::Binary => 2,
            Self::Close => 8,
            Self::Ping => 9,
            Self::Pong => 10,
        }
    }

    /// The opcode for a 4-bit value, or `None` for the reserved ones.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        match bits {
            0 => Some(Self::Continuation),
            1 => Some(Self::Text),
            2 => Some(Self::Binary),
            8 => Some(Self::Close),
            9 => Some(Self::Ping),
            10 => Some(Self::Pong),
            _ => None,
        }
    }

    /// Close, ping and pong are control frames.
    pub const fn is_control(self) -> bool {
        matches!(self, Self::Close | Self::Ping | Self::Pong)
    }
}

/// The fields of one frame header, for encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Last frame of its message.
    pub fin: bool,
    /// RSV1: the message is compressed (first frame only).
    pub rsv1: bool,
    /// Opcode.
    pub opcode: OpCode,
    /// Payload length in bytes.
    pub len: u64,
    /// Masking key; the server never masks towards clients, tests use it to act as a client.
    pub mask: Option<[u8; 4]>,
}

impl FrameHeader {
    /// A final, unmasked, uncompressed binary frame: what the server sends.
    pub const fn binary(len: u64) -> Self {
        Self {
            fin: true,
            rsv1: false,
            opcode: OpCode::Binary,
            len,
            mask: None,
        }
    }

    /// Encodes the header using the shortest length form, as Go does. Never allocates.
    ///
    /// # Panics
    /// Debug builds assert `len < 2^63`, the largest length RFC 6455 allows.
    pub fn encode(&self) -> HeaderBuf {
        debug_assert!(self.len >> 63 == 0, "frame length {} too large", self.len);
        let mut b = [0u8; FRAME_HEADER_BYTES_MAX];
        let mut b0 = self.opcode.bits();
        if self.fin {
            b0 |= FIN_BIT;
        }
        if self.rsv1 {
            b0 |= RSV1_BIT;
        }
        let mask_bit = if self.mask.is_some() { MASK_BIT } else { 0 };
        b[0] = b0;
        let mut n = 2;
        if self.len <= 125 {
            b[1] = mask_bit | self.len as u8;
        } else if let Ok(mid) = u16::try_from(self.len) {
            b[1] = mask_bit | LEN_U16;
            write_at(&mut b, 2, &mid.to_be_bytes());
            n += 2;
        } else {
            b[1] = mask_bit | LEN_U64;
            write_at(&mut b, 2, &self.len.to_be_bytes());
            n += 8;
        }
        if let Some(key) = self.mask {
            write_at(&mut b, n, &key);
            n += 4;
        }
        HeaderBuf {
            bytes: b,
            len: n as u8,
        }
    }
}

/// Copies `src` into `dst` at `at`; the callers' offsets always fit the 14-byte header.
fn write_at(dst: &mut [u8], at: usize, src: &[u8]) {
    if let Some(d) = dst.get_mut(at..at + src.len()) {
        d.copy_from_slice(src);
    } else {
        debug_assert!(false, "header write out of bounds");
    }
}

/// An encoded frame header on the stack (2 to 14 bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HeaderBuf {
    bytes: [u8; FRAME_HEADER_BYTES_MAX],
    len: u8,
}

impl HeaderBuf {
    /// The header bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl std::ops::Deref for HeaderBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl std::fmt::Debug for HeaderBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HeaderBuf({:02x?})", self.as_bytes())
    }
}

/// XORs `buf` with `key`, starting at key position `pos` (0..4), and returns the position
/// after it, so a payload unmasked in several pieces comes out as if unmasked at once.
pub fn apply_mask(key: [u8; 4], pos: usize, buf: &mut [u8]) -> usize {
    let pos = pos & 3;
    // Rotate the key so that word-wise XOR starts at `pos`.
    let rotated = u32::from_be_bytes(key)
        .rotate_left(8 * pos as u32)
        .to_be_bytes();
    let wide = u64::from_ne_bytes([
        rotated[0], rotated[1], rotated[2], rotated[3], rotated[0], rotated[1], rotated[2],
        rotated[3],
    ]);
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(word) ^ wide).to_ne_bytes());
    }
    let tail = chunks.into_remainder();
    for (b, k) in tail.iter_mut().zip(rotated.iter().cycle()) {
        *b ^= k;
    }
    (pos + buf.len()) & 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ws_header_length_forms() {
        assert_eq!(FrameHeader::binary(0).encode().as_bytes(), &[0x82, 0]);
        assert_eq!(FrameHeader::binary(125).encode().as_bytes(), &[0x82, 125]);
        assert_eq!(
            FrameHeader::binary(126).encode().as_bytes(),
            &[0x82, 126, 0, 126]
        );
        assert_eq!(
            FrameHeader::binary(65535).encode().as_bytes(),
            &[0x82, 126, 0xff, 0xff]
        );
        assert_eq!(
            FrameHeader::binary(65536).encode().as_bytes(),
            &[0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0]
        );
    }

    #[test]
    fn ws_header_flags_and_mask() {
        let h = FrameHeader {
            fin: false,
            rsv1: true,
            opcode: OpCode::Text,
            len: 300,
            mask: Some([1, 2, 3, 4]),
        };
        assert_eq!(h.encode().as_bytes(), &[0x41, 0xfe, 1, 44, 1, 2, 3, 4]);
        let c = FrameHeader {
            fin: true,
            rsv1: false,
            opcode: OpCode::Close,
            len: 2,
            mask: None,
        };
        assert_eq!(c.encode().as_bytes(), &[0x88, 2]);
        let big = FrameHeader {
            mask: Some([9, 9, 9, 9]),
            ..FrameHeader::binary(1 << 40)
        };
        assert_eq!(big.encode().len(), 14);
    }

    #[test]
    fn ws_mask_resumes_at_any_split() {
        let key = [0xa1, 0xb2, 0xc3, 0xd4];
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let mut whole = data.clone();
        apply_mask(key, 0, &mut whole);
        for (i, b) in whole.iter().enumerate() {
            assert_eq!(*b, data[i] ^ key[i % 4]);
        }
        for split in [0, 1, 3, 7, 8, 9, 17, 999, 1000] {
            let mut parts = data.clone();
            let (a, b) = parts.split_at_mut(split);
            let pos = apply_mask(key, 0, a);
            apply_mask(key, pos, b);
            assert_eq!(parts, whole, "split {split}");
        }
    }

    #[test]
    fn ws_opcode_bits_round_trip() {
        for bits in 0..16u8 {
            match OpCode::from_bits(bits) {
                Some(op) => assert_eq!(op.bits(), bits),
                None => assert!(matches!(bits, 3..=7 | 11..=15)),
            }
        }
    }
}
