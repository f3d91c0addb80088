//! What the server reads out of a certificate: the subject (as Go prints it, and attribute by
//! attribute), the subject alternative names, the validity period and fingerprints.
//!
//! The subject string follows Go's `pkix.Name.String()` to the byte, because operators match
//! on it (logs, `verify_and_map` user names): the well-known attributes first in Go's fixed
//! order (`SERIALNUMBER`, `CN`, `OU`, `O`, `POSTALCODE`, `STREET`, `L`, `ST`, `C`), several
//! values of one attribute joined with `+`, then other attributes as `oid=#<hex DER>`, with
//! RFC 2253 escaping. The parse is pure and bounded by the input.

use std::fmt::Write as _;
use std::net::IpAddr;

use super::der::{self, oid_string, tag, DerError, Reader};

/// One attribute of a distinguished name, as written in the certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameAttribute {
    /// Dotted object identifier (`2.5.4.3`).
    pub oid: String,
    /// Go's short name (`CN`, `O`, …) for the attributes Go names.
    pub short_name: Option<&'static str>,
    /// The value, when it is one of ASN.1's string types (as Go decodes them).
    pub value: Option<String>,
    /// The value's complete DER element.
    pub raw_value: Vec<u8>,
}

/// A certificate presented by a client, decoded once after the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerCert {
    /// The certificate, DER.
    pub der: Vec<u8>,
    /// Go's `Subject.String()`: `CN=alice,OU=dev,O=Acme`.
    pub subject: String,
    /// Go's `Subject.ToRDNSequence().String()`: as [`PeerCert::subject`] without the
    /// attributes Go has no field for (emailAddress, domain components …). Go's
    /// `verify_and_map` matches users against this form.
    pub subject_rdn: String,
    /// The subject's relative distinguished names in certificate order, each a set of
    /// attributes (usually one).
    pub subject_rdns: Vec<Vec<NameAttribute>>,
    /// The subject Name element, DER (Go's `RawSubject`).
    pub raw_subject: Vec<u8>,
    /// Subject alternative names.
    pub dns_names: Vec<String>,
    pub email_addresses: Vec<String>,
    pub uris: Vec<String>,
    pub ip_addresses: Vec<IpAddr>,
    /// Validity, Unix seconds.
    pub not_before: i64,
    pub not_after: i64,
    /// SHA-256 of the SubjectPublicKeyInfo (what `pinned_certs` lists).
    pub spki_sha256: [u8; 32],
    /// SHA-256 of the whole certificate.
    pub cert_sha256: [u8; 32],
}

const OID_SAN: &str = "2.5.29.17";

/// Go's names for attribute types, by the last arc under `2.5.4`.
fn short_name(oid: &str) -> Option<&'static str> {
    Some(match oid {
        "2.5.4.3" => "CN",
        "2.5.4.5" => "SERIALNUMBER",
        "2.5.4.6" => "C",
        "2.5.4.7" => "L",
        "2.5.4.8" => "ST",
        "2.5.4.9" => "STREET",
        "2.5.4.10" => "O",
        "2.5.4.11" => "OU",
        "2.5.4.17" => "POSTALCODE",
        _ => return None,
    })
}

/// The attributes Go keeps in named fields, in the order `ToRDNSequence` emits them.
const GO_FIELD_ORDER: &[&str] = &[
    "2.5.4.6", "2.5.4.8", "2.5.4.7", "2.5.4.9", "2.5.4.17", "2.5.4.10", "2.5.4.11", "2.5.4.3",
    "2.5.4.5",
];

impl PeerCert {
    /// Decodes a DER certificate.
    pub fn parse(der: &[u8]) -> Result<PeerCert, DerError> {
        let mut outer = Reader::new(der);
        let cert = outer.expect(tag::SEQUENCE)?;
        let mut cert_items = Reader::new(cert.value);
        let tbs = cert_items.expect(tag::SEQUENCE)?;
        let mut tbs = Reader::new(tbs.value);
        // [0] EXPLICIT version
        tbs.optional(0xa0)?;
        tbs.expect(tag::INTEGER)?;
        tbs.expect(tag::SEQUENCE)?; // signature algorithm
        tbs.expect(tag::SEQUENCE)?; // issuer
        let validity = tbs.expect(tag::SEQUENCE)?;
        let subject = tbs.expect(tag::SEQUENCE)?;
        let spki = tbs.expect(tag::SEQUENCE)?;
        let (not_before, not_after) = parse_validity(validity.value)?;
        let subject_rdns = parse_name(subject.value)?;
        let mut out = PeerCert {
            der: der.to_vec(),
            subject: go_name_string(&subject_rdns),
            subject_rdn: go_rdn_sequence_string(&subject_rdns),
            subject_rdns,
            raw_subject: subject.raw.to_vec(),
            dns_names: Vec::new(),
            email_addresses: Vec::new(),
            uris: Vec::new(),
            ip_addresses: Vec::new(),
            not_before,
            not_after,
            spki_sha256: sha256(spki.raw),
            cert_sha256: sha256(der),
        };
        // [1] issuerUniqueID, [2] subjectUniqueID, then [3] EXPLICIT extensions.
        tbs.optional(0x81)?;
        tbs.optional(0x82)?;
        if let Some(exts) = tbs.optional(0xa3)? {
            let mut exts = Reader::new(exts.value);
            let list = exts.expect(tag::SEQUENCE)?;
            let mut list = Reader::new(list.value);
            while !list.is_empty() {
                let ext = list.expect(tag::SEQUENCE)?;
                let mut ext = Reader::new(ext.value);
                let oid = oid_string(ext.expect(tag::OID)?.value)?;
                ext.optional(tag::BOOLEAN)?;
                let value = ext.expect(tag::OCTET_STRING)?;
                if oid == OID_SAN {
                    out.read_san(value.value)?;
                }
            }
        }
        Ok(out)
    }

    fn read_san(&mut self, value: &[u8]) -> Result<(), DerError> {
        let mut outer = Reader::new(value);
        let names = outer.expect(tag::SEQUENCE)?;
        let mut names = Reader::new(names.value);
        while !names.is_empty() {
            let name = names.any()?;
            let text = || String::from_utf8_lossy(name.value).into_owned();
            match name.tag {
                0x81 => self.email_addresses.push(text()),
                0x82 => self.dns_names.push(text()),
                0x86 => self.uris.push(text()),
                0x87 => match name.value.len() {
                    4 => {
                        let b: [u8; 4] = name.value.try_into().map_err(|_| DerError::BadValue)?;
                        self.ip_addresses.push(IpAddr::from(b));
                    }
                    16 => {
                        let b: [u8; 16] = name.value.try_into().map_err(|_| DerError::BadValue)?;
                        self.ip_addresses.push(IpAddr::from(b));
                    }
                    _ => return Err(DerError::BadValue),
                },
                _ => {}
            }
        }
        Ok(())
    }

    /// Hex SHA-256 of the SubjectPublicKeyInfo, as `pinned_certs` lists it.
    pub fn spki_sha256_hex(&self) -> String {
        hex(&self.spki_sha256)
    }

    /// Hex SHA-256 of the certificate, as Go's handshake errors and `/connz` show it.
    pub fn cert_sha256_hex(&self) -> String {
        hex(&self.cert_sha256)
    }
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// Lower-case hex, as Go prints fingerprints.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

pub fn parse_validity(value: &[u8]) -> Result<(i64, i64), DerError> {
    let mut r = Reader::new(value);
    let from = parse_time(r.any()?)?;
    let until = parse_time(r.any()?)?;
    Ok((from, until))
}

/// UTCTime (`YYMMDDHHMMSSZ`, years 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`).
fn parse_time(t: der::Tlv<'_>) -> Result<i64, DerError> {
    let digits = |s: &[u8]| -> Result<i64, DerError> {
        s.iter().try_fold(0i64, |acc, &b| {
            if b.is_ascii_digit() {
                Ok(acc * 10 + i64::from(b - b'0'))
            } else {
                Err(DerError::BadValue)
            }
        })
    };
    let (year, rest) = match (t.tag, t.value.len()) {
        (tag::UTC_TIME, 13) => {
            let yy = digits(t.value.get(..2).ok_or(DerError::BadValue)?)?;
            let rest = t.value.get(2..).ok_or(DerError::BadValue)?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, rest)
        }
        (tag::GENERALIZED_TIME, 15) => (
            digits(t.value.get(..4).ok_or(DerError::BadValue)?)?,
            t.value.get(4..).ok_or(DerError::BadValue)?,
        ),
        _ => return Err(DerError::BadValue),
    };
    if rest.last() != Some(&b'Z') {
        return Err(DerError::BadValue);
    }
    let field = |i: usize| digits(rest.get(i..i + 2).ok_or(DerError::BadValue)?);
    let (month, day, hour, min, sec) = (field(0)?, field(2)?, field(4)?, field(6)?, field(8)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return Err(DerError::BadValue);
    }
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn parse_name(value: &[u8]) -> Result<Vec<Vec<NameAttribute>>, DerError> {
    let mut rdns = Vec::new();
    let mut r = Reader::new(value);
    while !r.is_empty() {
        let set = r.expect(tag::SET)?;
        let mut set = Reader::new(set.value);
        let mut rdn = Vec::new();
        while !set.is_empty() {
            let atv = set.expect(tag::SEQUENCE)?;
            let mut atv = Reader::new(atv.value);
            let oid = oid_string(atv.expect(tag::OID)?.value)?;
            let value = atv.any()?;
            rdn.push(NameAttribute {
                short_name: short_name(&oid),
                oid,
                value: decode_string(value.tag, value.value),
                raw_value: value.raw.to_vec(),
            });
        }
        rdns.push(rdn);
    }
    Ok(rdns)
}

/// The ASN.1 string types Go's `encoding/asn1` turns into a Go string.
fn decode_string(t: u8, bytes: &[u8]) -> Option<String> {
    match t {
        tag::UTF8_STRING => String::from_utf8(bytes.to_vec()).ok(),
        tag::PRINTABLE_STRING | tag::IA5_STRING | tag::NUMERIC_STRING => bytes
            .is_ascii()
            .then(|| String::from_utf8_lossy(bytes).into_owned()),
        // Go keeps T61 bytes as they are; read them as Latin-1.
        tag::T61_STRING => Some(bytes.iter().map(|&b| char::from(b)).collect()),
        tag::BMP_STRING => {
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| match c {
                    [hi, lo] => u16::from_be_bytes([*hi, *lo]),
                    _ => 0,
                })
                .collect();
            bytes
                .len()
                .is_multiple_of(2)
                .then(|| String::from_utf16(&units).ok())
                .flatten()
        }
        _ => None,
    }
}

/// Go's `ToRDNSequence()`: one RDN per named field, in Go's field order, holding every value
/// of that attribute.
fn go_rdn_sequence(rdns: &[Vec<NameAttribute>]) -> Vec<Vec<&NameAttribute>> {
    let mut out = Vec::new();
    for oid in GO_FIELD_ORDER {
        let values: Vec<&NameAttribute> = rdns
            .iter()
            .flatten()
            .filter(|a| a.oid == *oid && a.value.is_some())
            .collect();
        // Go keeps a single CommonName and SerialNumber: the last one written.
        let values = match (*oid, values.last()) {
            ("2.5.4.3" | "2.5.4.5", Some(last)) => vec![*last],
            _ => values,
        };
        if !values.is_empty() {
            out.push(values);
        }
    }
    out
}

fn go_rdn_sequence_string(rdns: &[Vec<NameAttribute>]) -> String {
    rdn_string(&go_rdn_sequence(rdns))
}

/// Go's `Name.String()`: attributes without a named field (each its own RDN, in certificate
/// order) followed by the named fields; printed last RDN first.
fn go_name_string(rdns: &[Vec<NameAttribute>]) -> String {
    let mut seq: Vec<Vec<&NameAttribute>> = rdns
        .iter()
        .flatten()
        .filter(|a| a.short_name.is_none())
        .map(|a| vec![a])
        .collect();
    seq.extend(go_rdn_sequence(rdns));
    rdn_string(&seq)
}

/// Go's `RDNSequence.String()`.
fn rdn_string(seq: &[Vec<&NameAttribute>]) -> String {
    let mut out = String::new();
    for (i, rdn) in seq.iter().rev().enumerate() {
        if i > 0 {
            out.push(',');
        }
        for (j, atv) in rdn.iter().enumerate() {
            if j > 0 {
                out.push('+');
            }
            if let (Some(name), Some(value)) = (atv.short_name, &atv.value) {
                out.push_str(name);
                out.push('=');
                escape_value(&mut out, value);
            } else {
                out.push_str(&atv.oid);
                out.push_str("=#");
                out.push_str(&hex(&go_remarshal(atv)));
            }
        }
    }
    out
}

/// RFC 2253 escaping as Go applies it.
fn escape_value(out: &mut String, value: &str) {
    let last = value.len().saturating_sub(1);
    for (k, c) in value.char_indices() {
        let escape = match c {
            ',' | '+' | '"' | '\\' | '<' | '>' | ';' => true,
            ' ' => k == 0 || k == last,
            '#' => k == 0,
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
}

/// What Go's `asn1.Marshal` writes for a value it decoded: a string becomes a PrintableString
/// when its characters allow, a UTF8String otherwise; anything else keeps its encoding.
fn go_remarshal(atv: &NameAttribute) -> Vec<u8> {
    let Some(text) = &atv.value else {
        return atv.raw_value.clone();
    };
    let printable = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(&b));
    let mut out = Vec::with_capacity(text.len() + 4);
    out.push(if printable {
        tag::PRINTABLE_STRING
    } else {
        tag::UTF8_STRING
    });
    der::push_length(&mut out, text.len());
    out.extend_from_slice(text.as_bytes());
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn attr(oid: &str, value: &str) -> NameAttribute {
        NameAttribute {
            short_name: short_name(oid),
            oid: oid.to_owned(),
            value: Some(value.to_owned()),
            raw_value: Vec::new(),
        }
    }

    #[test]
    fn x509_subject_string_in_go_order() {
        // Written as C, O, CN (the usual order): Go prints CN first.
        let rdns = vec![
            vec![attr("2.5.4.6", "US")],
            vec![attr("2.5.4.10", "Acme")],
            vec![attr("2.5.4.11", "a"), attr("2.5.4.11", "b")],
            vec![attr("2.5.4.3", "alice")],
        ];
        assert_eq!(go_name_string(&rdns), "CN=alice,OU=a+OU=b,O=Acme,C=US");
        assert_eq!(
            go_rdn_sequence_string(&rdns),
            "CN=alice,OU=a+OU=b,O=Acme,C=US"
        );
    }

    #[test]
    fn x509_unknown_attributes_as_hex_after_named_ones() {
        let rdns = vec![
            vec![attr("0.9.2342.19200300.100.1.25", "org")],
            vec![attr("2.5.4.3", "bob")],
            vec![attr("1.2.840.113549.1.9.1", "bob@example.com")],
        ];
        // emailAddress has an '@': re-marshalled as a UTF8String (0x0c).
        assert_eq!(
            go_name_string(&rdns),
            "CN=bob,1.2.840.113549.1.9.1=#0c0f626f62406578616d706c652e636f6d,\
             0.9.2342.19200300.100.1.25=#13036f7267"
        );
        assert_eq!(go_rdn_sequence_string(&rdns), "CN=bob");
    }

    #[test]
    fn x509_escaping_like_go() {
        let mut s = String::new();
        escape_value(&mut s, " a,b+c\"d\\e<f>g;h#i ");
        assert_eq!(s, "\\ a\\,b\\+c\\\"d\\\\e\\<f\\>g\\;h#i\\ ");
        let mut s = String::new();
        escape_value(&mut s, "#x");
        assert_eq!(s, "\\#x");
    }

    #[test]
    fn x509_times() {
        let utc = |s: &str| {
            parse_time(der::Tlv {
                tag: tag::UTC_TIME,
                value: s.as_bytes(),
                raw: &[],
            })
        };
        assert_eq!(utc("700101000000Z"), Ok(0));
        assert_eq!(utc("491231235959Z"), Ok(2_524_607_999));
        let gen = der::Tlv {
            tag: tag::GENERALIZED_TIME,
            value: b"20260101000000Z",
            raw: &[],
        };
        assert_eq!(parse_time(gen), Ok(1_767_225_600));
        assert!(utc("7001010000Z").is_err());
        assert!(utc("701301000000Z").is_err());
    }

    #[test]
    fn x509_garbage_is_an_error_not_a_panic() {
        for bytes in [
            &b""[..],
            &[0x30],
            &[0x30, 0x03, 0x30, 0x01, 0x02],
            &[0x30, 0x00],
        ] {
            assert!(PeerCert::parse(bytes).is_err());
        }
    }
}
