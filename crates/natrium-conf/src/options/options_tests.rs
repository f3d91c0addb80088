//! Option tests: Go's names, aliases, defaults, value checks and messages.

use std::time::Duration;

use super::*;
use crate::lang::parse_str_with_env;

fn load(src: &str) -> Result<LoadedConfig, ConfError> {
    let map = parse_str_with_env(src, "f.conf", &|_: &str| None)?;
    ServerOptions::from_map(&map, "f.conf")
}

fn opts(src: &str) -> ServerOptions {
    load(src).unwrap_or_else(|e| panic!("{src:?}: {e}")).options
}

fn err(src: &str) -> String {
    match load(src) {
        Ok(l) => panic!("{src:?} loaded: {:?}", l.options),
        Err(e) => e.to_string(),
    }
}

#[test]
fn options_defaults_are_gos() {
    let o = ServerOptions::default();
    assert_eq!(o.host, "0.0.0.0");
    assert_eq!(o.port, 4222);
    assert_eq!(o.max_payload, 1024 * 1024);
    assert_eq!(o.max_control_line, 4096);
    assert_eq!(o.max_connections, 65536);
    assert_eq!(o.max_subscriptions, 0);
    assert_eq!(o.max_pending, 64 * 1024 * 1024);
    assert_eq!(o.ping_interval, Duration::from_secs(120));
    assert_eq!(o.ping_max, 2);
    assert_eq!(o.write_deadline, Duration::from_secs(10));
    assert!((o.auth_timeout - 2.0).abs() < f64::EPSILON);
    assert_eq!(o.lame_duck_duration, Duration::from_secs(120));
    assert_eq!(o.lame_duck_grace_period, Duration::from_secs(10));
    assert_eq!(o.connect_error_reports, 3600);
    assert_eq!(o.reconnect_error_reports, 1);
    assert_eq!(o.max_closed_clients, 10_000);
    assert!(o.logtime);
    assert!(!o.debug && !o.trace && !o.trace_verbose);
}

#[test]
fn options_listen_host_port_aliases() {
    let o = opts("listen: 127.0.0.1:4333");
    assert_eq!((o.host.as_str(), o.port), ("127.0.0.1", 4333));
    let o = opts("listen: 5000");
    assert_eq!((o.host.as_str(), o.port), ("0.0.0.0", 5000));
    assert_eq!(opts("net: 10.0.0.1").host, "10.0.0.1");
    assert_eq!(opts("HOST: 10.0.0.2").host, "10.0.0.2");
    assert_eq!(opts("port: -1").port, -1);
    assert_eq!(
        err("listen: \"127.0.0.1\""),
        "f.conf:1:0: could not parse address string \"127.0.0.1\""
    );
    assert_eq!(
        err("listen: \"h:x\""),
        "f.conf:1:0: could not parse port \"x\""
    );
    assert_eq!(
        err("listen: true"),
        "f.conf:1:0: expected port or host:port, got bool"
    );
}

#[test]
fn options_monitoring() {
    let o = opts("http: \"127.0.0.1:8222\"\nhttp_base_path: /mon");
    assert_eq!((o.http_host.as_str(), o.http_port), ("127.0.0.1", 8222));
    assert_eq!(o.http_base_path, "/mon");
    assert_eq!(opts("monitor_port: 8223").http_port, 8223);
    assert_eq!(opts("http_port: -1").http_port, -1);
    assert_eq!(
        err("http_host: x"),
        "f.conf:1:0: unknown field \"http_host\""
    );
    assert_eq!(opts("https_port: 8443").https_port, 8443);
    let o = opts("https: 127.0.0.1:-1");
    assert_eq!((o.http_host.as_str(), o.https_port), ("127.0.0.1", -1));
}

#[test]
fn options_limits_and_sizes() {
    let o = opts(
        "max_payload: 2MB\nmax_control_line: 8KB\nmax_conn: 10\nmax_subs: 5\nmax_pending: 128MB",
    );
    assert_eq!(o.max_payload, 2 * 1024 * 1024);
    assert_eq!(o.max_control_line, 8 * 1024);
    assert_eq!(o.max_connections, 10);
    assert_eq!(o.max_subscriptions, 5);
    assert_eq!(o.max_pending, 128 * 1024 * 1024);
    assert_eq!(opts("max_connections: 0").max_connections, -1);
    assert_eq!(
        err("max_payload: 3GB"),
        "f.conf:1:0: max_payload value is too big"
    );
    assert_eq!(
        err("max_control_line: 5GB"),
        "f.conf:1:0: max_control_line value is too big"
    );
    assert_eq!(
        err("max_payload: \"1MB\""),
        "f.conf:1:0: interface conversion: interface {} is string, not int64"
    );
    assert_eq!(
        err("max_payload: 1.5"),
        "f.conf:1:0: interface conversion: interface {} is float64, not int64"
    );
}

#[test]
fn options_durations() {
    let o = opts("ping_interval: \"30s\"\nwrite_deadline: \"1m30s\"\nping_max: 5");
    assert_eq!(o.ping_interval, Duration::from_secs(30));
    assert_eq!(o.write_deadline, Duration::from_secs(90));
    assert_eq!(o.ping_max, 5);
    assert_eq!(
        err("ping_interval: \"abc\""),
        "f.conf:1:0: error parsing ping_interval: time: invalid duration \"abc\""
    );
    assert_eq!(
        err("ping_interval: \"-2m\""),
        "f.conf:1:0: invalid ping_interval of -2m0s, cannot be negative"
    );
    let o = opts("lame_duck_duration: \"1m\"\nlame_duck_grace_period: \"5s\"");
    assert_eq!(o.lame_duck_duration, Duration::from_secs(60));
    assert_eq!(o.lame_duck_grace_period, Duration::from_secs(5));
    assert_eq!(
        err("lame_duck_duration: \"5s\""),
        "f.conf:1:0: invalid lame_duck_duration of 5s, minimum is 30 seconds"
    );
    assert_eq!(
        err("lame_duck_grace_period: \"-1s\""),
        "f.conf:1:0: invalid lame_duck_grace_period, needs to be positive"
    );
    assert_eq!(
        err("lame_duck_duration: 60"),
        "f.conf:1:0: interface conversion: interface {} is int64, not string"
    );
}

#[test]
fn options_integer_durations_are_seconds_with_a_warning() {
    let loaded = load("ping_interval: 5").unwrap();
    assert_eq!(loaded.options.ping_interval, Duration::from_secs(5));
    assert_eq!(loaded.warnings.len(), 1);
    let w = loaded.warnings[0].to_string();
    assert_eq!(
        w,
        "f.conf:1:0: invalid use of field \"ping_interval\": ping_interval should be converted to \
         a duration"
    );
    // `-t` fails on warnings.
    assert_eq!(
        load("ping_interval: 5")
            .unwrap()
            .strict()
            .unwrap_err()
            .to_string(),
        w
    );
    // A float is a warning and an error.
    assert_eq!(
        err("write_deadline: 1.5"),
        "f.conf:1:0: invalid use of field \"write_deadline\": write_deadline should be converted \
         to a duration\nf.conf:1:0: interface conversion: interface {} is float64, not int64"
    );
}

#[test]
fn options_logging() {
    let o = opts(
        "log_file: \"./nats.log\"\nlogfile_size_limit: 1MB\nlogfile_max_num: 3\ndebug: yes\n\
         trace: on\nlogtime: false\nlogtime_utc: true\nsyslog: true\nremote_syslog: \
         \"udp://h:514\"\nmax_traced_msg_len: 100",
    );
    assert_eq!(o.logfile, "./nats.log");
    assert_eq!(o.log_size_limit, 1 << 20);
    assert_eq!(o.log_max_num, 3);
    assert!(o.debug && o.trace && !o.logtime && o.logtime_utc && o.syslog);
    assert_eq!(o.remote_syslog, "udp://h:514");
    assert_eq!(o.max_traced_msg_len, 100);
    let o = opts("trace_verbose: true");
    assert!(o.trace && o.trace_verbose);
    assert_eq!(
        err("debug: 5"),
        "f.conf:1:0: interface conversion: interface {} is int64, not bool"
    );
}

#[test]
fn options_files_and_misc() {
    let o = opts(
        "pid_file: \"/var/run/n.pid\"\nports_file_dir: /tmp\nserver_name: n1\n\
         client_advertise: \"h:4222\"\nno_header_support: true\nno_sublist_cache: true\n\
         connect_error_reports: 10\nreconnect_error_reports: 5\nmax_closed_clients: 7",
    );
    assert_eq!(o.pidfile, "/var/run/n.pid");
    assert_eq!(o.ports_file_dir, "/tmp");
    assert_eq!(o.server_name, "n1");
    assert_eq!(o.client_advertise, "h:4222");
    assert!(o.no_header_support && o.disable_sublist_cache);
    assert_eq!(
        (o.connect_error_reports, o.reconnect_error_reports),
        (10, 5)
    );
    assert_eq!(o.max_closed_clients, 7);
    assert_eq!(
        err("server_name: \"a b\""),
        "f.conf:1:0: server name cannot contain spaces"
    );
    assert_eq!(opts("pidfile: x.pid").pidfile, "x.pid");
}

#[test]
fn options_authorization_block() {
    assert!((opts("authorization { timeout: 5 }").auth_timeout - 5.0).abs() < f64::EPSILON);
    assert!((opts("authorization { timeout: 0.5 }").auth_timeout - 0.5).abs() < f64::EPSILON);
    assert!((opts("authorization { timeout: \"1500ms\" }").auth_timeout - 1.5).abs() < 1e-9);
    assert_eq!(
        err("authorization { timeout: \"abc\" }"),
        "f.conf:1:16: error parsing authorization config, 'timeout' time: invalid duration \"abc\""
    );
    assert_eq!(
        err("authorization { timeout: true }"),
        "f.conf:1:16: error parsing authorization config, 'timeout' wrong type"
    );
    assert_eq!(
        err("authorization { foo: 1 }"),
        "f.conf:1:16: unknown field \"foo\""
    );
    let o = opts("authorization {\n  user: a\n  password: b\n}");
    assert_eq!((o.username.as_str(), o.password.as_str()), ("a", "b"));
    assert_eq!(opts("authorization { token: t }").authorization, "t");
    let o = opts("authorization { users = [ {user: a, pass: b}, {username: c, password: d} ] }");
    assert_eq!(o.users.len(), 2);
    assert_eq!(
        (o.users[1].username.as_str(), o.users[1].password.as_str()),
        ("c", "d")
    );
    assert_eq!(
        err("authorization {\n  token: t\n  users = [ {user: a, password: b} ]\n}"),
        "f.conf:1:0: Can not have a token and a users array"
    );
    assert_eq!(
        err("authorization {\n  user: u\n  users = [ {user: a, password: b} ]\n}"),
        "f.conf:1:0: Can not have a single user/pass and a users array"
    );
    assert_eq!(
        err("authorization {\n  users = [ {user: a, password: b, permissions: { bar: 1 }} ]\n}"),
        "f.conf:2:51: Unknown field \"bar\" parsing permissions"
    );
    assert_eq!(
        err("authorization {\n  users = [ {user: a, password: b, permissions: { publish: { allow: x, foo: y } }} ]\n}"),
        "f.conf:2:72: Unknown field name \"foo\" parsing subject permissions, only 'allow' or \
         'deny' are permitted"
    );
    let o = opts("authorization {\n  default_permissions: { publish: [a, b], subscribe: c }\n  users = [ {user: a, password: b} ]\n}");
    let d = o.default_permissions.unwrap_or_default();
    assert_eq!(
        d.publish.and_then(|p| p.allow),
        Some(vec!["a".to_owned(), "b".to_owned()])
    );
    assert_eq!(
        d.subscribe.and_then(|s| s.allow),
        Some(vec!["c".to_owned()])
    );
    let o = opts(
        "authorization {\n  users = [ {user: a, password: b, permissions: { publish: { deny: \
         x }, allow_responses: { max: -1, expires: \"1m\" } }} ]\n}",
    );
    let p = o.users[0].permissions.clone().unwrap_or_default();
    // Responses only: an empty allow list is added next to the deny list, as Go does.
    assert_eq!(
        p.publish.as_ref().and_then(|p| p.allow.clone()),
        Some(vec![])
    );
    assert_eq!(
        p.response,
        Some(natrium_auth::ResponsePermission {
            max_msgs: None,
            expires: Some(Duration::from_secs(60)),
        })
    );
    assert_eq!(
        err("authorization {\n  users = [ {user: a, password: b, foo: 1} ]\n}"),
        "f.conf:2:36: unknown field \"foo\""
    );
    assert_eq!(
        err("authorization: 5"),
        "f.conf:1:0: interface conversion: interface {} is int64, not map[string]interface \
         {}\nf.conf:1:0: runtime error: invalid memory address or nil pointer dereference"
    );
}

#[test]
fn options_authorization_timeout_warning_above_a_minute() {
    let loaded = load("authorization { timeout: \"2m\" }").unwrap();
    assert!((loaded.options.auth_timeout - 120.0).abs() < 1e-9);
    assert_eq!(
        loaded.warnings[0].to_string(),
        "f.conf:1:16: invalid use of field \"timeout\": timeout of 2m (120.000000 seconds) is \
         high, consider keeping it under 60 seconds. possibly caused by unquoted duration; use \
         '1m' instead of 1m, for example"
    );
    assert!(load("authorization { timeout: 60 }")
        .unwrap()
        .warnings
        .is_empty());
}

#[test]
fn options_unknown_and_unsupported() {
    assert_eq!(err("foo: 1"), "f.conf:1:0: unknown field \"foo\"");
    assert_eq!(err("\n  FOO: 1"), "f.conf:2:3: unknown field \"FOO\"");
    for option in ["cluster", "gateway", "leafnodes", "mqtt"] {
        let e = load(&format!("{option}: x")).unwrap_err();
        assert!(
            matches!(e, ConfError::NotSupportedYet { ref option, .. } if !option.is_empty()),
            "{option}: {e}"
        );
        assert!(e.go_report().ends_with("is not supported yet\n\n"));
    }
    // An unknown key used as a variable is fine, as in Go.
    assert_eq!(
        opts("size = 2MB\nmax_payload: $size").max_payload,
        2 * 1024 * 1024
    );
    assert_eq!(
        err("size = 2MB\nmax_payload: 1"),
        "f.conf:1:0: unknown field \"size\""
    );
}

#[test]
fn options_errors_collect_warnings_first() {
    let e = load("foo: 1\nping_interval: 5\nport: x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.conf:2:1: invalid use of field \"ping_interval\": ping_interval should be converted to \
         a duration\nf.conf:1:0: unknown field \"foo\"\nf.conf:3:1: interface conversion: \
         interface {} is string, not int64"
    );
    assert!(e.go_report().ends_with("\n\n"));
}

#[test]
fn options_empty_file() {
    assert_eq!(
        err("# nothing\n"),
        "f.conf: config has no values or is empty"
    );
}

#[test]
fn options_baseline_and_validate() {
    let mut o = opts("port: 0\nmax_payload: 0\nping_interval: \"0s\"\nlisten: \":4333\"");
    o.apply_baseline();
    assert_eq!(o.port, 4333);
    assert_eq!(o.host, "0.0.0.0");
    assert_eq!(o.http_host, "0.0.0.0");
    assert_eq!(o.max_payload, 1024 * 1024);
    assert_eq!(o.ping_interval, Duration::from_secs(120));
    let mut o = opts("port: 0");
    o.apply_baseline();
    assert_eq!(o.port, 4222);
    let mut o = opts("max_payload: 65MB");
    o.apply_baseline();
    assert_eq!(
        o.validate().unwrap_err().to_string(),
        "max_payload (68157440) cannot be higher than max_pending (67108864)"
    );
}

#[test]
fn options_digest_matches_go() {
    // `nats-server -t` on `port: 4222`.
    assert_eq!(
        load("port: 4222").unwrap().digest,
        "sha256:797533ebd0dfba7d34a0f9337ecf147e442871f48ddfd07ed751575a5737267e"
    );
}
