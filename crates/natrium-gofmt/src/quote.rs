//! Go's `%q`: `strconv.Quote` for strings and byte slices, `strconv.QuoteRune` for integers.
//!
//! The rules, checked against Go 1.26 (the vectors in `tests/data/go_quote.txt` are its output):
//! printable characters (`strconv.IsPrint`: letters, marks, numbers, punctuation, symbols and
//! U+0020) stay as they are, except the quote character and `\`, which get a backslash. Other
//! characters are escaped: `\a \b \f \n \r \t \v` for those seven, `\xNN` below U+0020 and for
//! U+007F, `\uNNNN` up to U+FFFF, `\UNNNNNNNN` above. Each byte that is not part of valid UTF-8
//! becomes `\xNN` on its own. Hex digits are lower case.
//!
//! The text between escapes is passed on in runs, so quoting a clean subject is one piece.

use crate::printable_table::PRINTABLE_BOUNDS;

/// Whether Go's `strconv.IsPrint` reports `c` printable (Unicode 15.0.0, as Go 1.26 has it).
#[inline]
pub fn is_go_printable(c: char) -> bool {
    if c.is_ascii() {
        return matches!(c, ' '..='~');
    }
    let code = u32::from(c);
    PRINTABLE_BOUNDS.partition_point(|&bound| bound <= code) % 2 == 1
}

/// `s` quoted as Go's `%q` quotes a string.
pub fn go_quote(s: &str) -> String {
    go_quote_bytes(s.as_bytes())
}

/// `bytes` quoted as Go's `%q` quotes a byte slice (or a string holding invalid UTF-8).
pub fn go_quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    write_go_quoted(bytes, |piece| out.push_str(piece));
    out
}

/// Go's `%q` of an integer: the character it codes for, in single quotes (`'a'`, `'\a'`,
/// `'\u0085'`). A value that is no Unicode scalar value (negative, a surrogate, past U+10FFFF)
/// prints as `'�'`, as Go's `fmt` and `strconv.QuoteRune` replace it.
pub fn go_quote_rune(value: i64) -> String {
    let c = u32::try_from(value)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut utf8 = [0u8; 4];
    let mut out = String::with_capacity(8);
    out.push('\'');
    escape(c.encode_utf8(&mut utf8).as_bytes(), '\'', &mut |piece| {
        out.push_str(piece);
    });
    out.push('\'');
    out
}

/// Writes `bytes` quoted as Go's `%q` does, quotes included, as a sequence of pieces handed to
/// `emit` (no allocation): runs of the input kept as they are, and escapes.
pub fn write_go_quoted(bytes: &[u8], mut emit: impl FnMut(&str)) {
    emit("\"");
    escape(bytes, '"', &mut emit);
    emit("\"");
}

/// The body of a quoted text: `quote` and `\` escaped, and whatever Go escapes.
fn escape(bytes: &[u8], quote: char, emit: &mut impl FnMut(&str)) {
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let mut run_start = 0;
        for (at, c) in valid.char_indices() {
            if c != quote && c != '\\' && is_go_printable(c) {
                continue;
            }
            if let Some(run) = valid.get(run_start..at) {
                if !run.is_empty() {
                    emit(run);
                }
            }
            escape_char(c, emit);
            run_start = at + c.len_utf8();
        }
        if let Some(run) = valid.get(run_start..) {
            if !run.is_empty() {
                emit(run);
            }
        }
        // Go decodes an invalid sequence one byte at a time, each an error of width one.
        for &b in chunk.invalid() {
            emit_hex(emit, "\\x", u32::from(b), 2);
        }
    }
}

/// One character that is escaped: the quote or `\` with a backslash, else Go's escape form.
fn escape_char(c: char, emit: &mut impl FnMut(&str)) {
    let named = match c {
        '\u{7}' => "\\a",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{b}' => "\\v",
        '\\' => "\\\\",
        '"' => "\\\"",
        '\'' => "\\'",
        _ => "",
    };
    if !named.is_empty() {
        emit(named);
        return;
    }
    let code = u32::from(c);
    match code {
        0..=0x1f | 0x7f => emit_hex(emit, "\\x", code, 2),
        0x80..=0xffff => emit_hex(emit, "\\u", code, 4),
        _ => emit_hex(emit, "\\U", code, 8),
    }
}

/// `prefix` and the low `digits` hex digits of `value`, lower case.
fn emit_hex(emit: &mut impl FnMut(&str), prefix: &str, value: u32, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 8];
    let width = digits as usize;
    for (i, slot) in buf.iter_mut().take(width).enumerate() {
        let shift = 4 * (digits - 1 - i as u32);
        *slot = HEX
            .get(((value >> shift) & 0xf) as usize)
            .copied()
            .unwrap_or(b'0');
    }
    emit(prefix);
    if let Some(Ok(text)) = buf.get(..width).map(std::str::from_utf8) {
        emit(text);
    }
}

#[cfg(test)]
mod tests;
