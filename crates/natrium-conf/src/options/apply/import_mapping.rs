//! The check Go makes on a service import whose exported subject has wildcards and whose local
//! subject differs: the local subject, with its `*` tokens numbered in order, must be a strict
//! (reversible) mapping destination for the exported subject. Errors carry Go's wording.

/// Why a service import's mapping was refused, worded as Go words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportMappingError {
    #[error("invalid subject")]
    BadSubject,
    #[error("invalid mapping destination: wildcard index out of range in {token}: [{index}]")]
    IndexOutOfRange { token: String, index: usize },
    #[error("invalid mapping destination: not using all of the token wildcard(s) in {dest}")]
    NotUsingAll { dest: String },
    #[error(
        "invalid mapping destination: the only mapping function allowed for import transforms \
         is {{{{Wildcard()}}}} in {token}"
    )]
    NotSupported { token: String },
}

/// Checks the mapping from `local` (the importer's subject) to `exported`.
///
/// # Errors
/// The first reason Go would give for refusing the import.
pub fn check_service_mapping(local: &str, exported: &str) -> Result<(), ImportMappingError> {
    // The exported side is the source: any `$N` or `{{wildcard(N)}}` in it counts as `*`.
    let source: Vec<&str> = exported
        .split('.')
        .map(|t| if placeholder(t).is_some() { "*" } else { t })
        .collect();
    // The local side is the destination: its `*` tokens become `$1`, `$2`, … in order.
    let mut star = 0;
    let dest: Vec<String> = local
        .split('.')
        .map(|t| {
            if t == "*" {
                star += 1;
                format!("${star}")
            } else {
                t.to_owned()
            }
        })
        .collect();
    let stars = source.iter().filter(|t| **t == "*").count();
    let source_rest = source.last() == Some(&">");
    let dest_rest = dest.last().map(String::as_str) == Some(">");
    let valid = |tokens: &[&str]| {
        tokens.iter().enumerate().all(|(i, t)| {
            !t.is_empty() && (*t != ">" || i + 1 == tokens.len()) && !t.contains([' ', '\t'])
        })
    };
    let dest_refs: Vec<&str> = dest.iter().map(String::as_str).collect();
    if !valid(&source) || !valid(&dest_refs) || source_rest != dest_rest {
        return Err(ImportMappingError::BadSubject);
    }
    let mut placed = 0;
    for token in &dest {
        match placeholder(token) {
            Some(Placeholder::Wildcard(index)) => {
                if index > stars {
                    return Err(ImportMappingError::IndexOutOfRange {
                        token: token.clone(),
                        index,
                    });
                }
                placed += 1;
            }
            Some(Placeholder::Other) => {
                return Err(ImportMappingError::NotSupported {
                    token: token.clone(),
                })
            }
            None => {}
        }
    }
    if placed < stars {
        return Err(ImportMappingError::NotUsingAll {
            dest: dest.join("."),
        });
    }
    Ok(())
}

enum Placeholder {
    Wildcard(usize),
    /// A mapping function other than `wildcard`, which imports cannot use.
    Other,
}

/// `$N`, `{{wildcard(N)}}` (any case, spaces allowed), or another `{{function(…)}}`.
fn placeholder(token: &str) -> Option<Placeholder> {
    if let Some(n) = token.strip_prefix('$') {
        if n.starts_with(|c: char| ('1'..='9').contains(&c)) {
            return n.parse().ok().map(Placeholder::Wildcard);
        }
        return None;
    }
    let inner = token.strip_prefix("{{")?.strip_suffix("}}")?.trim();
    let (name, args) = inner.split_once('(')?;
    let args = args.strip_suffix(')')?.trim();
    if !name.trim().eq_ignore_ascii_case("wildcard") {
        return Some(Placeholder::Other);
    }
    args.parse().ok().map(Placeholder::Wildcard)
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
