//! Property tests: a mapping built from a random source pattern and a random destination of
//! mapping functions rewrites a random matching subject exactly as a naive reference written
//! from Go's definitions (token vectors and strings) does; a partition is always below its
//! bucket count; a subject the source does not match is refused. Case counts stay modest;
//! `PROPTEST_CASES` raises them.

use nats_subject::SubjectTransform;
use proptest::prelude::*;

/// One destination token: its text and what the reference computes for it.
#[derive(Debug, Clone)]
enum Dest {
    Literal(String),
    /// `$n` or `{{wildcard(n)}}`.
    Wildcard(usize),
    Left(usize, i32),
    Right(usize, i32),
    SplitFromLeft(usize, i32),
    SplitFromRight(usize, i32),
    SliceFromLeft(usize, i32),
    SliceFromRight(usize, i32),
    Split(usize, &'static str),
    Partition(i32, Vec<usize>),
}

impl Dest {
    /// The token as written in a destination, in one of the spellings Go accepts.
    fn text(&self, style: u8) -> String {
        let call = |name: &str, args: String| match style % 3 {
            0 => format!("{{{{{name}({args})}}}}"),
            1 => format!("{{{{ {name} ( {args} ) }}}}"),
            _ => {
                let mut lower = name.to_owned();
                lower.replace_range(..1, &name[..1].to_ascii_lowercase());
                format!("{{{{{lower}({args})}}}}")
            }
        };
        match self {
            Dest::Literal(t) => t.clone(),
            Dest::Wildcard(i) if style.is_multiple_of(2) => format!("${i}"),
            Dest::Wildcard(i) => call("Wildcard", i.to_string()),
            Dest::Left(i, n) => call("Left", format!("{i},{n}")),
            Dest::Right(i, n) => call("Right", format!("{i}, {n}")),
            Dest::SplitFromLeft(i, n) => call("SplitFromLeft", format!("{i},{n}")),
            Dest::SplitFromRight(i, n) => call("SplitFromRight", format!("{i},{n}")),
            Dest::SliceFromLeft(i, n) => call("SliceFromLeft", format!("{i},{n}")),
            Dest::SliceFromRight(i, n) => call("SliceFromRight", format!("{i},{n}")),
            // Go keeps the spaces before `)` in the delimiter, which then is refused.
            Dest::Split(i, d) if style % 3 == 1 => format!("{{{{ Split({i},{d}) }}}}"),
            Dest::Split(i, d) => call("Split", format!("{i},{d}")),
            Dest::Partition(n, idx) => {
                let args: Vec<String> = std::iter::once(n.to_string())
                    .chain(idx.iter().map(ToString::to_string))
                    .collect();
                call("Partition", args.join(","))
            }
        }
    }
}

fn fnv1a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// `n` as a usable size for `s`: Go leaves the token whole otherwise.
fn size(s: &str, n: i32) -> Option<usize> {
    usize::try_from(n).ok().filter(|n| *n > 0 && *n < s.len())
}

/// Go's definitions, on strings.
fn reference(d: &Dest, value: &dyn Fn(usize) -> String, subject: &str) -> String {
    match d {
        Dest::Literal(t) => t.clone(),
        Dest::Wildcard(i) => value(*i),
        Dest::Left(i, n) => {
            let s = value(*i);
            size(&s, *n).map_or(s.clone(), |n| s[..n].to_owned())
        }
        Dest::Right(i, n) => {
            let s = value(*i);
            size(&s, *n).map_or(s.clone(), |n| s[s.len() - n..].to_owned())
        }
        Dest::SplitFromLeft(i, n) => {
            let s = value(*i);
            size(&s, *n).map_or(s.clone(), |n| format!("{}.{}", &s[..n], &s[n..]))
        }
        Dest::SplitFromRight(i, n) => {
            let s = value(*i);
            size(&s, *n).map_or(s.clone(), |n| {
                format!("{}.{}", &s[..s.len() - n], &s[s.len() - n..])
            })
        }
        Dest::SliceFromLeft(i, n) => {
            let s = value(*i);
            let Some(n) = size(&s, *n) else { return s };
            let chars: Vec<char> = s.chars().collect();
            let pieces: Vec<String> = chars.chunks(n).map(|c| c.iter().collect()).collect();
            pieces.join(".")
        }
        Dest::SliceFromRight(i, n) => {
            let s = value(*i);
            let Some(n) = size(&s, *n) else { return s };
            let mut pieces = Vec::new();
            let mut end = s.len();
            while end > 0 {
                let start = end.saturating_sub(n);
                pieces.push(&s[start..end]);
                end = start;
            }
            pieces.reverse();
            pieces.join(".")
        }
        Dest::Split(i, delim) => {
            let s = value(*i);
            let splits: Vec<&str> = s.split(delim).collect();
            let mut out = String::new();
            for (j, piece) in splits.iter().enumerate() {
                out.push_str(piece);
                let next = splits.get(j + 1).is_some_and(|p| !p.is_empty());
                if next && !(j == 0 && piece.is_empty()) {
                    out.push('.');
                }
            }
            out
        }
        Dest::Partition(n, idx) => {
            let key = if idx.is_empty() {
                subject.to_owned()
            } else {
                idx.iter().map(|i| value(*i)).collect::<String>()
            };
            if *n == 0 {
                "0".to_owned()
            } else {
                (fnv1a(key.as_bytes()) % *n as u32).to_string()
            }
        }
    }
}

/// A destination token reading source wildcards among `1..=stars`.
fn dest_token(stars: usize) -> BoxedStrategy<Dest> {
    let literal = prop_oneof![Just("x"), Just("y"), Just("$v")]
        .prop_map(|t| Dest::Literal(t.to_owned()))
        .boxed();
    if stars == 0 {
        return prop_oneof![
            literal,
            (0..5i32).prop_map(|n| Dest::Partition(n, Vec::new()))
        ]
        .boxed();
    }
    let i = 1..=stars;
    let n = -1..8i32;
    prop_oneof![
        literal,
        i.clone().prop_map(Dest::Wildcard),
        (i.clone(), n.clone()).prop_map(|(i, n)| Dest::Left(i, n)),
        (i.clone(), n.clone()).prop_map(|(i, n)| Dest::Right(i, n)),
        (i.clone(), n.clone()).prop_map(|(i, n)| Dest::SplitFromLeft(i, n)),
        (i.clone(), n.clone()).prop_map(|(i, n)| Dest::SplitFromRight(i, n)),
        (i.clone(), n.clone()).prop_map(|(i, n)| Dest::SliceFromLeft(i, n)),
        (i.clone(), n).prop_map(|(i, n)| Dest::SliceFromRight(i, n)),
        (i.clone(), prop_oneof![Just("-"), Just("--"), Just("ab")])
            .prop_map(|(i, d)| Dest::Split(i, d)),
        (0..6i32, prop::collection::vec(i, 0..3)).prop_map(|(n, idx)| Dest::Partition(n, idx)),
    ]
    .boxed()
}

/// A source pattern (tokens, `*` marked as `None`) with or without a trailing `>`, a
/// destination for it, and the spelling style.
fn case() -> impl Strategy<Value = (Vec<Option<&'static str>>, bool, Vec<Dest>, u8)> {
    let token = prop_oneof![Just(Some("a")), Just(Some("b")), Just(None)];
    (prop::collection::vec(token, 1..=4), any::<bool>()).prop_flat_map(|(src, fwc)| {
        let stars = src.iter().filter(|t| t.is_none()).count();
        let dest = prop::collection::vec(dest_token(stars), 1..=4);
        (Just(src), Just(fwc), dest, any::<u8>())
    })
}

/// A value for a source wildcard.
fn value_token() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,7}"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn transform_mapping_agrees_with_reference(
        (src, fwc, dest, style) in case(),
        values in prop::collection::vec(value_token(), 8),
        tail in prop::collection::vec(value_token(), 1..=3),
    ) {
        let mut pattern: Vec<&str> = src.iter().map(|t| t.unwrap_or("*")).collect();
        if fwc {
            pattern.push(">");
        }
        let mut dest_text: Vec<String> = dest.iter().map(|d| d.text(style)).collect();
        if fwc {
            dest_text.push(">".to_owned());
        }
        let pattern = pattern.join(".");
        let dest_text = dest_text.join(".");
        let t = SubjectTransform::mapping(&pattern, &dest_text)
            .unwrap_or_else(|e| panic!("{pattern} -> {dest_text}: {e}"))
            .expect("a destination");
        // A subject matching the pattern, and the value of each wildcard.
        let mut tokens = Vec::new();
        let mut captured = Vec::new();
        for (t, v) in src.iter().zip(&values) {
            if let Some(lit) = t {
                tokens.push((*lit).to_owned());
            } else {
                tokens.push(v.clone());
                captured.push(v.clone());
            }
        }
        if fwc {
            tokens.extend(tail.iter().cloned());
        }
        let subject = tokens.join(".");
        let value = |i: usize| captured[i - 1].clone();
        let mut expected: Vec<String> = dest.iter().map(|d| reference(d, &value, &subject)).collect();
        if fwc {
            expected.push(tail.join("."));
        }
        let mut out = Vec::new();
        prop_assert!(t.apply(subject.as_bytes(), &mut out));
        prop_assert_eq!(String::from_utf8(out).unwrap(), expected.join("."));
        // One more token than the pattern takes (without `>`) is not a match.
        if !fwc {
            let longer = format!("{subject}.extra");
            let mut out = Vec::new();
            prop_assert!(!t.apply(longer.as_bytes(), &mut out));
            prop_assert!(out.is_empty());
        }
    }
}
