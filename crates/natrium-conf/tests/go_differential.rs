//! Differential check against the Go server: every configuration in `data/go_check.jsonl` was
//! checked with `nats-server -t` (see `data/record_go.py`), and we must print the same thing,
//! byte for byte (Go lists several option errors in random order, so those compare as sets of
//! lines). Cases where Natrium refuses an option on purpose carry Natrium's expected output.

use natrium_conf::{LoadedConfig, ServerOptions};

fn check_output(path: &str) -> (i32, String) {
    match ServerOptions::load(path).and_then(LoadedConfig::strict) {
        Ok(loaded) => (
            0,
            format!(
                "nats-server: configuration file {path} is valid ({})\n",
                loaded.digest
            ),
        ),
        Err(e) => (1, e.go_report()),
    }
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .replacen("nats-server: ", "", 1)
        .split('\n')
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// Checks every case of a recorded file; returns how many there were and the differences.
fn check_cases(data: &str) -> (usize, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let dir_text = dir.path().to_str().unwrap().to_owned();
    let path = format!("{dir_text}/t.conf");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in data.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let conf = case["conf"].as_str().unwrap();
        let (status, expected) = match case.get("natrium") {
            Some(n) => (
                case["natrium_status"].as_i64().unwrap(),
                n.as_str().unwrap(),
            ),
            None => (
                case["status"].as_i64().unwrap(),
                case["go"].as_str().unwrap(),
            ),
        };
        std::fs::write(&path, conf).unwrap();
        let (got_status, got) = check_output(&path);
        let got = got.replace(&path, "{FILE}").replace(&dir_text, "{DIR}");
        let same = got == expected || sorted_lines(&got) == sorted_lines(expected);
        if i64::from(got_status) != status || !same {
            failures.push(format!(
                "conf {conf:?}\n  want {expected:?}\n  got  {got:?}"
            ));
        }
        count += 1;
    }
    (count, failures)
}

#[test]
fn differential_go_check_outputs() {
    let (count, failures) = check_cases(include_str!("data/go_check.jsonl"));
    assert!(count > 700, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Permission blocks (`allow_responses`, queue entries, subject checks), recorded separately
/// with the same script's method.
#[test]
fn differential_go_check_permissions() {
    let (count, failures) = check_cases(include_str!("data/go_check_perms.jsonl"));
    assert!(count > 40, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `mappings` at the top level and in accounts (recorded from Go's `-t`; one mapping per
/// block where Go's random map order would change the message).
#[test]
fn differential_go_check_mappings() {
    let (count, failures) = check_cases(include_str!("data/go_check_mappings.jsonl"));
    assert!(count > 25, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `accounts`, `system_account`, `no_system_account`: account blocks, users, limits, exports
/// and imports, and the cross-account errors (recorded from Go's `-t`). Go reads top-level
/// keys in random order; where that changes its message, the record keeps the file-order one.
#[test]
fn differential_go_check_accounts() {
    let (count, failures) = check_cases(include_str!("data/go_check_accounts.jsonl"));
    assert!(count > 70, "only {count} cases");
    assert!(
        failures.is_empty(),
        "{} of {count} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
