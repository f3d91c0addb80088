//! The mapping functions' outputs, written straight into the transform's output buffer: the
//! cuts of one token (`splitFromLeft`, `sliceFromRight`, `left`, …), `split` on a delimiter,
//! the FNV-1a partition and the random number. Go's edge cases are kept: a size or position
//! out of range leaves the token whole, and `split` drops empty pieces with Go's exact
//! separator rule.

use crate::mapping::Cut;

/// Writes `n` in decimal.
pub(crate) fn write_decimal(out: &mut Vec<u8>, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    loop {
        start -= 1;
        if let Some(d) = digits.get_mut(start) {
            // `n % 10` is below 10.
            *d = b'0' + u8::try_from(n % 10).unwrap_or(0);
        }
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(start..).unwrap_or_default());
}

/// Go's 32-bit FNV-1a over the concatenation of `pieces`.
pub(crate) fn fnv1a_32<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> u32 {
    const OFFSET: u32 = 2_166_136_261;
    const PRIME: u32 = 16_777_619;
    pieces
        .into_iter()
        .flatten()
        .fold(OFFSET, |h, b| (h ^ u32::from(*b)).wrapping_mul(PRIME))
}

/// `partition(buckets, …)` of the hash: Go reads a negative bucket count as its unsigned
/// 32-bit value and answers 0 for none.
pub(crate) fn write_partition(out: &mut Vec<u8>, hash: u32, buckets: i32) {
    match buckets.cast_unsigned() {
        0 => out.push(b'0'),
        n => write_decimal(out, hash % n),
    }
}

/// `random(max)`: Go's non-negative 31-bit random number modulo `max` (0 for none).
pub(crate) fn write_random(out: &mut Vec<u8>, max: i32) {
    let value = match max {
        0 => 0,
        // A non-negative dividend keeps the remainder non-negative, as in Go.
        m => fastrand::i32(0..=i32::MAX) % m,
    };
    write_decimal(out, value.unsigned_abs());
}

/// Writes one of the cutting functions' output for `token`.
pub(crate) fn write_cut(out: &mut Vec<u8>, cut: Cut, token: &[u8], number: i32) {
    let len = token.len();
    let Some(n) = usize::try_from(number).ok().filter(|n| *n > 0 && *n < len) else {
        // Too small to cut at the requested place: the token stays whole.
        out.extend_from_slice(token);
        return;
    };
    let (head, tail) = match cut {
        Cut::SplitFromLeft => token.split_at(n),
        Cut::SplitFromRight => token.split_at(len - n),
        Cut::Left => (token.split_at(n).0, &[][..]),
        Cut::Right => (token.split_at(len - n).1, &[][..]),
        Cut::SliceFromLeft => {
            join(out, token.chunks(n));
            return;
        }
        Cut::SliceFromRight => {
            let (first, rest) = token.split_at(len % n);
            let first = (!first.is_empty()).then_some(first);
            join(out, first.into_iter().chain(rest.chunks(n)));
            return;
        }
    };
    out.extend_from_slice(head);
    if !tail.is_empty() {
        out.push(b'.');
        out.extend_from_slice(tail);
    }
}

fn join<'a>(out: &mut Vec<u8>, pieces: impl Iterator<Item = &'a [u8]>) {
    for (i, piece) in pieces.enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        out.extend_from_slice(piece);
    }
}

/// `split(token, delimiter)`: the pieces of Go's `strings.Split`, each non-empty one written,
/// a separator before a non-empty piece unless the first piece was empty and is the one just
/// passed (so `-a` gives `a`, `a--b` gives `a.b`, and `--a` gives `.a` as in Go).
pub(crate) fn write_split(out: &mut Vec<u8>, token: &[u8], delimiter: &[u8]) {
    if delimiter.is_empty() {
        // Go splits into UTF-8 sequences, each invalid byte on its own; none is empty.
        join(out, utf8_pieces(token));
        return;
    }
    let mut pieces = Pieces {
        rest: Some(token),
        delimiter,
    }
    .peekable();
    let mut j = 0usize;
    while let Some(piece) = pieces.next() {
        out.extend_from_slice(piece);
        let next_non_empty = pieces.peek().is_some_and(|p| !p.is_empty());
        if next_non_empty && !(j == 0 && piece.is_empty()) {
            out.push(b'.');
        }
        j += 1;
    }
}

/// The pieces of `strings.Split` with a non-empty delimiter.
struct Pieces<'a> {
    rest: Option<&'a [u8]>,
    delimiter: &'a [u8],
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        let at = rest
            .windows(self.delimiter.len())
            .position(|w| w == self.delimiter);
        if let Some(i) = at {
            self.rest = rest.get(i + self.delimiter.len()..);
            rest.get(..i)
        } else {
            self.rest = None;
            Some(rest)
        }
    }
}

/// Go's `strings.Split(s, "")`: one piece per UTF-8 character, one per invalid byte.
fn utf8_pieces(token: &[u8]) -> impl Iterator<Item = &[u8]> {
    token.utf8_chunks().flat_map(|chunk| {
        let valid = chunk.valid();
        let chars = valid.char_indices().map(move |(i, c)| {
            valid
                .as_bytes()
                .get(i..i + c.len_utf8())
                .unwrap_or_default()
        });
        chars.chain(chunk.invalid().chunks(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(cut_kind: Cut, token: &str, n: i32) -> String {
        let mut out = Vec::new();
        write_cut(&mut out, cut_kind, token.as_bytes(), n);
        String::from_utf8(out).unwrap()
    }

    fn split(token: &[u8], delimiter: &str) -> Vec<u8> {
        let mut out = Vec::new();
        write_split(&mut out, token, delimiter.as_bytes());
        out
    }

    #[test]
    fn transform_function_cuts() {
        assert_eq!(cut(Cut::SplitFromLeft, "12345", 2), "12.345");
        assert_eq!(cut(Cut::SplitFromRight, "12345", 2), "123.45");
        assert_eq!(cut(Cut::SliceFromLeft, "1234567", 2), "12.34.56.7");
        assert_eq!(cut(Cut::SliceFromLeft, "123456", 2), "12.34.56");
        assert_eq!(cut(Cut::SliceFromRight, "1234567", 2), "1.23.45.67");
        assert_eq!(cut(Cut::SliceFromRight, "123456", 3), "123.456");
        assert_eq!(cut(Cut::Left, "abcdef", 3), "abc");
        assert_eq!(cut(Cut::Right, "abcdef", 3), "def");
        for kind in [
            Cut::SplitFromLeft,
            Cut::SliceFromRight,
            Cut::Left,
            Cut::Right,
        ] {
            assert_eq!(cut(kind, "abc", 3), "abc");
            assert_eq!(cut(kind, "abc", 0), "abc");
            assert_eq!(cut(kind, "abc", -1), "abc");
        }
    }

    #[test]
    fn transform_function_split() {
        assert_eq!(split(b"a-b-c", "-"), b"a.b.c");
        assert_eq!(split(b"-a", "-"), b"a");
        assert_eq!(split(b"a-", "-"), b"a");
        assert_eq!(split(b"a--b", "-"), b"a.b");
        assert_eq!(split(b"--a", "-"), b".a");
        assert_eq!(split(b"abc", "-"), b"abc");
        assert_eq!(split(b"axxbxxc", "xx"), b"a.b.c");
        assert_eq!(split("aé\u{ff}b".as_bytes(), ""), "a.é.\u{ff}.b".as_bytes());
        assert_eq!(split(b"a\xffb", ""), b"a.\xff.b");
        assert_eq!(split(b"", ""), b"");
    }

    #[test]
    fn transform_function_numbers() {
        let mut out = Vec::new();
        write_decimal(&mut out, 0);
        out.push(b' ');
        write_decimal(&mut out, u32::MAX);
        assert_eq!(out, b"0 4294967295");
        // FNV-1a 32 reference values.
        assert_eq!(fnv1a_32([&b""[..]]), 0x811c_9dc5);
        assert_eq!(fnv1a_32([&b"a"[..]]), 0xe40c_292c);
        assert_eq!(fnv1a_32([&b"fo"[..], b"obar"]), 0xbf9c_f968);
        for max in [1, 7, -7, i32::MIN] {
            out.clear();
            write_random(&mut out, max);
            let n: i64 = std::str::from_utf8(&out).unwrap().parse().unwrap();
            assert!(n >= 0 && n < i64::from(max).abs());
        }
    }
}
