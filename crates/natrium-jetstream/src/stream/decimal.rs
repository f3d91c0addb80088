//! Signed integers of any size for counters (ADR-49): read from and written as decimal text
//! the way Go's `big.Int` does (`SetString(s, 10)` and `String()`), and added. Nothing else
//! is needed, so this is a few limbs of nine digits rather than a big-number crate.

use std::cmp::Ordering;
use std::fmt;

/// One limb holds nine decimal digits.
const LIMB_BASE: u32 = 1_000_000_000;
const LIMB_DIGITS: usize = 9;

/// A signed integer of any size. Zero is never negative.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BigInt {
    negative: bool,
    /// Magnitude in base 10^9, least significant limb first, no trailing zero limbs.
    limbs: Vec<u32>,
}

impl BigInt {
    /// Parses Go's base-10 form: an optional `+` or `-`, then one or more ASCII digits and
    /// nothing else (no spaces, no underscores, no prefix). `None` when it does not parse.
    pub fn parse(text: &[u8]) -> Option<BigInt> {
        let (negative, digits) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut limbs = Vec::with_capacity(digits.len() / LIMB_DIGITS + 1);
        for chunk in digits.rchunks(LIMB_DIGITS) {
            let limb = chunk
                .iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
            limbs.push(limb);
        }
        Some(BigInt { negative, limbs }.normalized())
    }

    /// `self + other`.
    #[must_use]
    pub fn add(&self, other: &BigInt) -> BigInt {
        if self.negative == other.negative {
            return BigInt {
                negative: self.negative,
                limbs: add_magnitudes(&self.limbs, &other.limbs),
            }
            .normalized();
        }
        match cmp_magnitudes(&self.limbs, &other.limbs) {
            Ordering::Equal => BigInt::default(),
            Ordering::Greater => BigInt {
                negative: self.negative,
                limbs: sub_magnitudes(&self.limbs, &other.limbs),
            }
            .normalized(),
            Ordering::Less => BigInt {
                negative: other.negative,
                limbs: sub_magnitudes(&other.limbs, &self.limbs),
            }
            .normalized(),
        }
    }

    /// `self - other`.
    #[must_use]
    pub fn sub(&self, other: &BigInt) -> BigInt {
        let negated = BigInt {
            negative: !other.negative,
            limbs: other.limbs.clone(),
        }
        .normalized();
        self.add(&negated)
    }

    fn normalized(mut self) -> BigInt {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
        if self.limbs.is_empty() {
            self.negative = false;
        }
        self
    }
}

fn add_magnitudes(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0u32;
    for (i, &x) in long.iter().enumerate() {
        let sum = x + short.get(i).copied().unwrap_or(0) + carry;
        carry = u32::from(sum >= LIMB_BASE);
        out.push(sum - carry * LIMB_BASE);
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// `a - b` for `|a| >= |b|`.
fn sub_magnitudes(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0u32;
    for (i, &x) in a.iter().enumerate() {
        let y = b.get(i).copied().unwrap_or(0) + borrow;
        if x >= y {
            out.push(x - y);
            borrow = 0;
        } else {
            out.push(x + LIMB_BASE - y);
            borrow = 1;
        }
    }
    debug_assert_eq!(borrow, 0, "the larger magnitude comes first");
    out
}

fn cmp_magnitudes(a: &[u32], b: &[u32]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((top, rest)) = self.limbs.split_last() else {
            return f.write_str("0");
        };
        if self.negative {
            f.write_str("-")?;
        }
        write!(f, "{top}")?;
        for limb in rest.iter().rev() {
            write!(f, "{limb:09}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> BigInt {
        BigInt::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn stream_counter_decimal_parses_as_go() {
        for (text, shown) in [
            ("0", "0"),
            ("-0", "0"),
            ("+7", "7"),
            ("007", "7"),
            ("-1000000000", "-1000000000"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
        ] {
            assert_eq!(n(text).to_string(), shown, "{text}");
        }
        for bad in [
            "", "+", "-", "1_000", " 1", "1 ", "0x10", "1.5", "--1", "abc",
        ] {
            assert_eq!(BigInt::parse(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn stream_counter_decimal_adds_across_limbs_and_signs() {
        let cases = [
            ("999999999", "1", "1000000000"),
            ("1000000000", "-1", "999999999"),
            ("-5", "3", "-2"),
            ("5", "-5", "0"),
            ("-999999999999999999", "-1", "-1000000000000000000"),
            (
                "18446744073709551615",
                "18446744073709551615",
                "36893488147419103230",
            ),
            ("1", "-1000000000000000000000", "-999999999999999999999"),
        ];
        for (a, b, sum) in cases {
            assert_eq!(n(a).add(&n(b)).to_string(), sum, "{a} + {b}");
            assert_eq!(n(b).add(&n(a)).to_string(), sum, "{b} + {a}");
            assert_eq!(
                n(sum).sub(&n(b)).to_string(),
                n(a).to_string(),
                "{sum} - {b}"
            );
        }
    }

    #[test]
    fn stream_counter_decimal_matches_i128() {
        let values: [i128; 9] = [
            0,
            1,
            -1,
            999_999_999,
            -1_000_000_000,
            i128::from(i64::MAX),
            i128::from(i64::MIN),
            123_456_789_123_456_789,
            -987_654_321_987_654_321_987,
        ];
        for a in values {
            for b in values {
                let sum = n(&a.to_string()).add(&n(&b.to_string()));
                assert_eq!(sum.to_string(), (a + b).to_string(), "{a} + {b}");
            }
        }
    }
}
