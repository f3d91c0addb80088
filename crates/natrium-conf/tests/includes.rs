//! Includes: resolution relative to the including file, merging into the enclosing block,
//! variable visibility, and error messages recorded from `nats-server -t` (v2.15.2) on the
//! files under `data/include/`.

use std::time::Duration;

use natrium_conf::lang::{parse_file, to_go_json};
use natrium_conf::{ConfError, LoadedConfig, ServerOptions};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/include");

fn report(path: &str) -> String {
    match ServerOptions::load(path).and_then(LoadedConfig::strict) {
        Ok(l) => format!(
            "nats-server: configuration file {path} is valid ({})\n",
            l.digest
        ),
        Err(e) => e.go_report(),
    }
}

#[test]
fn include_nested_relative_to_including_file() {
    let path = format!("{DATA}/main.conf");
    let loaded = ServerOptions::load(&path).unwrap();
    let o = &loaded.options;
    assert_eq!(o.server_name, "included");
    assert_eq!(o.max_control_line, 8 * 1024);
    assert_eq!(o.ping_interval, Duration::from_secs(30));
    assert_eq!(o.max_payload, 2 * 1024 * 1024);
    assert!((o.auth_timeout - 1.5).abs() < f64::EPSILON);
    // Same digest as `nats-server -t -c tests/data/include/main.conf`.
    assert_eq!(
        loaded.digest,
        "sha256:d647c492ed428714b459e959bf3d41a1b67898e4e00293632bb1fef4277bf301"
    );
}

#[test]
fn include_errors_like_go() {
    let cases = [
        (
            "missing",
            "nats-server: error parsing include file 'nothere.conf', open {DIR}/broken/nothere.conf: \
             no such file or directory\n",
        ),
        (
            "syntax",
            "nats-server: error parsing include file 'bad_syntax.inc', Parse error on line 3: \
             'Expected an array value terminator \",\" or an array terminator \"]\", but got '\0' \
             instead.'\n",
        ),
        ("unknown", "nats-server: {DIR}/broken/unknown_field.inc:2:1: unknown field \"bogus\"\n\n"),
        (
            "scope",
            "nats-server: error parsing include file 'uses_var.inc', variable reference for \
             'limit' on line 1 can not be found\n",
        ),
    ];
    for (name, want) in cases {
        let got = report(&format!("{DATA}/broken/{name}.conf"));
        assert_eq!(got, want.replace("{DIR}", DATA), "{name}");
    }
}

#[test]
fn include_variables_flow_from_included_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("vars.conf"), "limit = 77\n").unwrap();
    std::fs::write(
        dir.path().join("main.conf"),
        "include vars.conf\nmax_subs: $limit\n",
    )
    .unwrap();
    let path = dir.path().join("main.conf");
    let o = ServerOptions::from_file(path.to_str().unwrap()).unwrap();
    assert_eq!(o.max_subscriptions, 77);
}

#[test]
fn include_inside_block_merges_into_block() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("auth.conf"), "timeout: 3\n").unwrap();
    std::fs::write(
        dir.path().join("main.conf"),
        "authorization {\n include auth.conf\n}\n",
    )
    .unwrap();
    let map = parse_file(dir.path().join("main.conf").to_str().unwrap()).unwrap();
    assert_eq!(to_go_json(&map), "{\"authorization\":{\"timeout\":3}}\n");
}

#[test]
fn include_absolute_path_is_joined_like_go() {
    // Go joins even an absolute include path to the including file's directory.
    let dir = tempfile::tempdir().unwrap();
    let dir_text = dir.path().to_str().unwrap();
    std::fs::write(dir.path().join("a.conf"), "port: 1\n").unwrap();
    let main = dir.path().join("main.conf");
    std::fs::write(&main, format!("include {dir_text}/a.conf\n")).unwrap();
    let err = parse_file(main.to_str().unwrap()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "error parsing include file '{dir_text}/a.conf', open {dir_text}{dir_text}/a.conf: \
             no such file or directory"
        )
    );
}

#[test]
fn include_cycle_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.conf"), "include b.conf\n").unwrap();
    std::fs::write(dir.path().join("b.conf"), "include a.conf\n").unwrap();
    let err = parse_file(dir.path().join("a.conf").to_str().unwrap()).unwrap_err();
    assert!(matches!(err, ConfError::IncludeTooDeep { .. }), "{err}");
}

#[test]
fn include_of_empty_file_leaves_config_empty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.conf"), "").unwrap();
    let main = dir.path().join("main.conf");
    std::fs::write(&main, "include empty.conf\n").unwrap();
    let path = main.to_str().unwrap();
    assert_eq!(
        report(path),
        format!("nats-server: {path}: config has no values or is empty\n\n")
    );
}
