//! Distinguished names for `verify_and_map`: a user name written as a DN
//! (`CN=bob,OU=eng,O=Acme`) is compared with a certificate's subject, attribute by attribute,
//! as the Go server compares them (RFC 4517 distinguishedNameMatch: same RDNs in the same
//! order, attributes within an RDN in any order, attribute types case-insensitive, values
//! exact), and failing that with the RDNs in any order.
//!
//! The text form follows RFC 4514 as Go's parser reads it: `,` separates RDNs, `+` attributes
//! of a multi-valued RDN, `\` escapes a special character or introduces two hex digits,
//! unescaped blanks around types and values are dropped, and a `#`-encoded (BER) value is
//! refused. The certificate form keeps only the attribute types Go names (CN, SERIALNUMBER,
//! C, L, ST, STREET, O, OU, POSTALCODE, DC); a subject with any other attribute has no DN,
//! so it can only be matched through its string forms.

/// One `type=value` pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub kind: String,
    pub value: Vec<u8>,
}

/// A distinguished name, RDNs in written order (most specific first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dn {
    pub rdns: Vec<Vec<Attribute>>,
}

/// Attribute type names Go's certificate-to-DN conversion knows, by OID.
const TYPE_NAMES: &[(&str, &str)] = &[
    ("2.5.4.3", "CN"),
    ("2.5.4.5", "SERIALNUMBER"),
    ("2.5.4.6", "C"),
    ("2.5.4.7", "L"),
    ("2.5.4.8", "ST"),
    ("2.5.4.9", "STREET"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.17", "POSTALCODE"),
    ("0.9.2342.19200300.100.1.25", "DC"),
];

/// The OID of domainComponent.
pub const OID_DOMAIN_COMPONENT: &str = "0.9.2342.19200300.100.1.25";

/// Characters that may follow a `\` as themselves.
const ESCAPABLE: &[u8] = b" \"#+,;<=>\\";

/// The text being accumulated for a type or a value.
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    /// Unescaped blanks at the end, dropped when the text is taken.
    trailing_blanks: usize,
}

impl Buffer {
    fn take(&mut self) -> Vec<u8> {
        let keep = self.bytes.len().saturating_sub(self.trailing_blanks);
        self.bytes.truncate(keep);
        self.trailing_blanks = 0;
        std::mem::take(&mut self.bytes)
    }

    fn push_escaped(&mut self, b: u8) {
        self.trailing_blanks = 0;
        self.bytes.push(b);
    }
}

fn hex_value(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Parses a DN written as text; `None` when it is not one (a plain user name, usually).
#[must_use]
pub fn parse_dn(text: &str) -> Option<Dn> {
    let input = text.as_bytes();
    let mut dn = Dn::default();
    let mut rdn: Vec<Attribute> = Vec::new();
    let mut kind: Option<String> = None;
    let mut buf = Buffer::default();
    let mut i = 0;
    while let Some(&c) = input.get(i) {
        match c {
            b'\\' => {
                let next = *input.get(i + 1)?;
                if ESCAPABLE.contains(&next) {
                    buf.push_escaped(next);
                    i += 2;
                } else {
                    let hi = hex_value(next)?;
                    let lo = hex_value(*input.get(i + 2)?)?;
                    buf.push_escaped(hi << 4 | lo);
                    i += 3;
                }
                continue;
            }
            b'=' => {
                kind = Some(String::from_utf8_lossy(&buf.take()).into_owned());
                if input.get(i + 1) == Some(&b'#') {
                    return None;
                }
            }
            b',' | b'+' => {
                let kind = kind.take().filter(|k| !k.is_empty())?;
                rdn.push(Attribute {
                    kind,
                    value: buf.take(),
                });
                if c == b',' {
                    dn.rdns.push(std::mem::take(&mut rdn));
                }
            }
            b' ' if buf.bytes.is_empty() => {}
            _ => {
                if c == b' ' {
                    buf.trailing_blanks += 1;
                } else {
                    buf.trailing_blanks = 0;
                }
                buf.bytes.push(c);
            }
        }
        i += 1;
    }
    if !buf.bytes.is_empty() {
        let kind = kind.filter(|k| !k.is_empty())?;
        rdn.push(Attribute {
            kind,
            value: buf.take(),
        });
        dn.rdns.push(rdn);
    }
    Some(dn)
}

/// The DN of a certificate subject given as RDNs in certificate order, each a list of
/// `(OID, string value)`; `None` if an attribute has a type Go does not name or a value that
/// is not a string. Like Go, the result lists RDNs, and attributes within each, in reverse.
#[must_use]
pub fn dn_from_subject(rdns: &[Vec<(&str, Option<&str>)>]) -> Option<Dn> {
    let mut dn = Dn::default();
    for rdn in rdns.iter().rev().filter(|r| !r.is_empty()) {
        let mut out = Vec::with_capacity(rdn.len());
        for (oid, value) in rdn.iter().rev() {
            let kind = TYPE_NAMES.iter().find(|(o, _)| o == oid)?.1;
            out.push(Attribute {
                kind: kind.to_owned(),
                value: value.as_ref()?.as_bytes().to_vec(),
            });
        }
        dn.rdns.push(out);
    }
    Some(dn)
}

fn attribute_eq(a: &Attribute, b: &Attribute) -> bool {
    a.kind.eq_ignore_ascii_case(&b.kind) && a.value == b.value
}

/// Same attributes, in any order.
fn rdn_eq(a: &[Attribute], b: &[Attribute]) -> bool {
    a.len() == b.len()
        && a.iter().all(|x| b.iter().any(|y| attribute_eq(x, y)))
        && b.iter().all(|y| a.iter().any(|x| attribute_eq(x, y)))
}

impl Dn {
    /// distinguishedNameMatch: the same RDNs in the same order.
    #[must_use]
    pub fn matches(&self, other: &Dn) -> bool {
        self.rdns.len() == other.rdns.len()
            && self.rdns.iter().zip(&other.rdns).all(|(a, b)| rdn_eq(a, b))
    }

    /// The same RDNs in any order (each RDN of `other` used once).
    #[must_use]
    pub fn matches_reordered(&self, other: &Dn) -> bool {
        if self.rdns.len() != other.rdns.len() {
            return false;
        }
        let mut used = vec![false; other.rdns.len()];
        self.rdns.iter().all(|mine| {
            let found = other
                .rdns
                .iter()
                .zip(used.iter_mut())
                .find(|(theirs, used)| !**used && rdn_eq(mine, theirs));
            match found {
                Some((_, used)) => {
                    *used = true;
                    true
                }
                None => false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(kind: &str, value: &str) -> Attribute {
        Attribute {
            kind: kind.into(),
            value: value.as_bytes().to_vec(),
        }
    }

    #[test]
    fn auth_dn_parse() {
        let dn = parse_dn("CN=bob, OU=eng ,O=Acme\\, Inc.").expect("dn");
        assert_eq!(
            dn.rdns,
            vec![
                vec![attr("CN", "bob")],
                vec![attr("OU", "eng")],
                vec![attr("O", "Acme, Inc.")]
            ]
        );
        let multi = parse_dn("UID=77+CN=m,O=Acme").expect("dn");
        assert_eq!(multi.rdns[0], vec![attr("UID", "77"), attr("CN", "m")]);
        assert_eq!(
            parse_dn("CN=\\41\\ b\\ ").expect("dn").rdns,
            vec![vec![attr("CN", "A b ")]]
        );
        assert_eq!(parse_dn("").expect("dn").rdns.len(), 0);
        for bad in [
            "alice",
            "alice@example.com",
            "CN=#0405",
            "CN=a\\",
            "CN=\\zz",
            ",CN=a",
        ] {
            assert_eq!(parse_dn(bad), None, "{bad}");
        }
        // Go keeps a trailing empty value out, and a trailing `,` ends the last RDN.
        assert_eq!(parse_dn("CN=a,O=").expect("dn").rdns.len(), 1);
        assert_eq!(parse_dn("CN=a,").expect("dn").rdns.len(), 1);
    }

    /// Any text is parsed or refused, never a panic: strings over the characters that matter.
    #[test]
    fn auth_dn_parse_never_panics() {
        let alphabet = b"CN=,+\\#\" a0fz;<>";
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 12) as usize;
            let text: String = (0..len)
                .map(|i| {
                    let pick = (state >> (i * 5)) as usize % alphabet.len();
                    char::from(alphabet.get(pick).copied().unwrap_or(b'x'))
                })
                .collect();
            if let Some(dn) = parse_dn(&text) {
                assert!(dn.matches(&dn), "{text:?}");
            }
        }
    }

    #[test]
    fn auth_dn_match_and_reordered() {
        let cert = dn_from_subject(&[
            vec![("2.5.4.6", Some("US"))],
            vec![("2.5.4.10", Some("Acme"))],
            vec![("2.5.4.3", Some("carol"))],
        ])
        .expect("dn");
        let exact = parse_dn("cn=carol,O=Acme,C=US").expect("dn");
        assert!(exact.matches(&cert));
        let reordered = parse_dn("O=Acme, CN=carol, C=US").expect("dn");
        assert!(!reordered.matches(&cert));
        assert!(reordered.matches_reordered(&cert));
        // Values are compared exactly.
        assert!(!parse_dn("CN=Carol,O=Acme,C=US")
            .expect("dn")
            .matches_reordered(&cert));
        assert!(!parse_dn("CN=carol,O=Acme")
            .expect("dn")
            .matches_reordered(&cert));
    }

    #[test]
    fn auth_dn_from_subject_unknown_types_and_multi_values() {
        assert_eq!(
            dn_from_subject(&[vec![("0.9.2342.19200300.100.1.1", Some("77"))]]),
            None
        );
        assert_eq!(dn_from_subject(&[vec![("2.5.4.3", None)]]), None);
        let dn = dn_from_subject(&[
            vec![],
            vec![("2.5.4.10", Some("A")), ("2.5.4.11", Some("B"))],
        ])
        .expect("dn");
        assert_eq!(dn.rdns, vec![vec![attr("OU", "B"), attr("O", "A")]]);
        assert!(parse_dn("O=A+OU=B").expect("dn").matches(&dn));
    }
}
