//! The integer encodings of the state file bodies (`docs/store-format.md`): unsigned LEB128
//! (`uvarint`, at most 10 bytes) and zig-zag for signed values. Decoding reads from a cursor
//! over disk bytes and never panics: a value that runs off the end, or past 64 bits, is
//! `None`, which callers report as corruption.

/// The longest `uvarint`: 64 bits in 7-bit groups.
pub const UVARINT_BYTES_MAX: usize = 10;

/// Appends `value` as a `uvarint`.
pub fn put_uvarint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // The low 7 bits with the continuation bit; the cast keeps exactly those bits.
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Maps a signed value to an unsigned one with small magnitudes staying small.
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Appends `value` zig-zag encoded as a `uvarint`.
pub fn put_varint(out: &mut Vec<u8>, value: i64) {
    put_uvarint(out, zigzag(value));
}

/// A read position in a body read from disk.
#[derive(Debug)]
pub struct Cursor<'a> {
    buf: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// Reads a `uvarint`; `None` if it is cut short, longer than 10 bytes, or past 64 bits.
    pub fn uvarint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..UVARINT_BYTES_MAX {
            let byte = *self.buf.get(i)?;
            let bits = u64::from(byte & 0x7f);
            // The tenth byte holds bit 63 only.
            if i == UVARINT_BYTES_MAX - 1 && byte > 1 {
                return None;
            }
            value |= bits << (7 * i);
            if byte < 0x80 {
                self.buf = self.buf.get(i + 1..)?;
                return Some(value);
            }
        }
        None
    }

    /// Takes the next `len` bytes; `None` if fewer are left.
    pub fn bytes(&mut self, len: usize) -> Option<&'a [u8]> {
        let taken = self.buf.get(..len)?;
        self.buf = self.buf.get(len..)?;
        Some(taken)
    }

    /// Reads a zig-zag `uvarint`.
    pub fn varint(&mut self) -> Option<i64> {
        self.uvarint().map(unzigzag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_varint_round_trips_edges() {
        for value in [
            0,
            1,
            127,
            128,
            300,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_uvarint(&mut out, value);
            assert!(out.len() <= UVARINT_BYTES_MAX);
            let mut cur = Cursor::new(&out);
            assert_eq!(cur.uvarint(), Some(value));
            assert_eq!(cur.remaining(), 0);
        }
        for value in [0, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(Cursor::new(&out).varint(), Some(value));
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn store_varint_rejects_damage() {
        assert_eq!(Cursor::new(&[]).uvarint(), None);
        assert_eq!(Cursor::new(&[0x80]).uvarint(), None);
        assert_eq!(Cursor::new(&[0xff; 10]).uvarint(), None);
        let mut past_64_bits = vec![0xff; 9];
        past_64_bits.push(0x02);
        assert_eq!(Cursor::new(&past_64_bits).uvarint(), None);
        assert_eq!(Cursor::new(&[0x80; 11]).uvarint(), None);
    }
}
