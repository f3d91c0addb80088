//! `feature_flags`: Go's switches for JetStream behaviours. JetStream is not implemented, so
//! they change nothing here; they are accepted, kept, and announced in the start-up banner
//! with Go's wording, which names each flag's state against the Go release's default.

use std::collections::BTreeMap;

/// The flags the Go server v2.15.2 knows, with its defaults (as its `/varz` reports them).
pub const FEATURE_FLAG_DEFAULTS: &[(&str, bool)] = &[
    ("js_ack_fc_v2", false),
    ("js_api_reply_v2", false),
    ("js_raft_delete_range", true),
    ("js_snapshot_sources", false),
];

/// The flags in force: Go's defaults, with the configured known flags over them (unknown
/// names are left out, as Go's `/varz` leaves them out).
pub fn feature_flags_in_force(configured: &BTreeMap<String, bool>) -> BTreeMap<String, bool> {
    FEATURE_FLAG_DEFAULTS
        .iter()
        .map(|&(name, default)| {
            let on = configured.get(name).copied().unwrap_or(default);
            (name.to_owned(), on)
        })
        .collect()
}

/// The banner lines Go logs for configured flags (none when the option is absent or empty):
/// known flags with their state (`opt-in`, `opt-out`, `enabled`, `disabled`), then unknown
/// ones, each list in name order.
pub fn feature_flags_banner(flags: &BTreeMap<String, bool>) -> Vec<String> {
    if flags.is_empty() {
        return Vec::new();
    }
    let mut configured = Vec::new();
    let mut unsupported = Vec::new();
    for (name, &on) in flags {
        let Some(&(_, default)) = FEATURE_FLAG_DEFAULTS.iter().find(|(n, _)| n == name) else {
            unsupported.push(name.as_str());
            continue;
        };
        let state = match (default, on) {
            (true, true) => "enabled",
            (true, false) => "opt-out",
            (false, true) => "opt-in",
            (false, false) => "disabled",
        };
        configured.push(format!("{name} ({state})"));
    }
    let mut lines = vec![
        "  Feature flags:".to_owned(),
        format!(
            "    Configured:    {}",
            if configured.is_empty() {
                "none".to_owned()
            } else {
                configured.join(", ")
            }
        ),
    ];
    if !unsupported.is_empty() {
        lines.push(format!("    Unsupported:   {}", unsupported.join(", ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_flags_banner_like_go() {
        let flags: BTreeMap<String, bool> = [
            ("zz", true),
            ("js_raft_delete_range", false),
            ("js_ack_fc_v2", false),
            ("aa", false),
            ("js_api_reply_v2", true),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(
            feature_flags_banner(&flags),
            [
                "  Feature flags:",
                "    Configured:    js_ack_fc_v2 (disabled), js_api_reply_v2 (opt-in), \
                 js_raft_delete_range (opt-out)",
                "    Unsupported:   aa, zz",
            ]
        );
        let only_unknown = BTreeMap::from([("zz".to_owned(), true)]);
        assert_eq!(
            feature_flags_banner(&only_unknown),
            [
                "  Feature flags:",
                "    Configured:    none",
                "    Unsupported:   zz"
            ]
        );
        assert!(feature_flags_banner(&BTreeMap::new()).is_empty());
    }
}
