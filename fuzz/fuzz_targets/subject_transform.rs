//! Fuzzes subject mappings: the input is cut at its first two newlines into a source, a
//! destination and a subject. Building either kind of transform (an import's, Go's mapping)
//! and validating the mapping must not panic, and applying a built transform must not panic,
//! must agree with itself on a second run (random partitions aside), and must produce nothing
//! when the subject does not match (and match exactly when the pattern does).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nats_subject::{
    is_valid_publish_subject, is_valid_subject, subject_matches, validate_mapping, SubjectTransform,
};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == b'\n');
    let (Some(src), Some(dest), Some(subject)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let (Ok(src), Ok(dest)) = (std::str::from_utf8(src), std::str::from_utf8(dest)) else {
        return;
    };
    let _ = validate_mapping(src, dest);
    let mut out = Vec::new();
    let mut again = Vec::new();
    if let Ok(Some(t)) = SubjectTransform::mapping(src, dest) {
        let matched = t.apply(subject, &mut out);
        if !matched {
            assert!(out.is_empty());
        }
        if matched && !dest.to_ascii_lowercase().contains("random") {
            assert!(t.apply(subject, &mut again));
            assert_eq!(out, again);
        }
        // On a publishable subject and a valid source, applying is matching.
        if is_valid_publish_subject(subject) && is_valid_subject(t.source()) {
            assert_eq!(matched, subject_matches(t.source(), subject));
        }
    }
    if let Ok(t) = SubjectTransform::new(src.as_bytes(), dest.as_bytes()) {
        let _ = t.apply(subject, &mut out);
    }
});
