//! The check Go makes on a service import whose exported subject has wildcards and whose local
//! subject differs: the local subject, with its `*` tokens numbered in order, must be a strict
//! (reversible) mapping destination for the exported subject, whose wildcard references count
//! as `*`. Errors carry Go's wording (`nats_subject`'s mapping errors).

use nats_subject::{is_wildcard_reference, SubjectTransform, TransformError};

/// Checks the mapping from `local` (the importer's subject) to `exported`.
///
/// # Errors
/// The first reason Go would give for refusing the import.
pub fn check_service_mapping(local: &str, exported: &str) -> Result<(), TransformError> {
    // The exported side is the source: any `$N` or `{{wildcard(N)}}` in it counts as `*`.
    let source: Vec<&str> = exported
        .split('.')
        .map(|t| if is_wildcard_reference(t) { "*" } else { t })
        .collect();
    // The local side is the destination: its `*` tokens become `$1`, `$2`, … in order.
    let dest = nats_subject::stars_numbered(local);
    SubjectTransform::strict(&source.join("."), &dest).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(local: &str, exported: &str) -> String {
        check_service_mapping(local, exported)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn import_mapping_errors_worded_like_go() {
        assert_eq!(
            err("y.*.*", "s.*"),
            "invalid mapping destination: wildcard index out of range in $2: [2]"
        );
        assert_eq!(
            err("y.*", "s.*.*"),
            "invalid mapping destination: not using all of the token wildcard(s) in y.$1"
        );
        assert_eq!(err("y.>", "s.*"), "invalid subject");
        assert_eq!(err("y.*", "s.>"), "invalid subject");
        assert_eq!(
            err("y.{{wildcard(2)}}", "s.*"),
            "invalid mapping destination: wildcard index out of range in {{wildcard(2)}}: [2]"
        );
        assert_eq!(err("y.*.$1", "s.*.*"), "");
        assert_eq!(err("y.$2.$1", "s.*.*"), "");
        assert_eq!(err("y.*.>", "s.*.>"), "");
    }
}
