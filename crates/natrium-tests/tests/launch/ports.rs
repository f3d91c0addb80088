//! Out-of-range ports (issue 12): every listener refuses a port outside 0..=65535 (other than
//! Go's -1, "any free port") with Go's `[FTL]` line and status 1, from a flag or from the file,
//! instead of quietly listening on a random port nobody can find.

use natrium_tests::TestCerts;

use super::support::*;

/// Runs `args` on every binary in `cwd`; each must fail at start with an `invalid port` fatal
/// line and no listener, and ours must print what Go prints.
fn assert_refused_like_go(what: &str, args: &[&str], cwd: &Path, fatal: &str) {
    let mut outputs = Vec::new();
    for (name, binary) in binaries() {
        let out = run_to_exit(&binary, args, Some(cwd), &[], EXIT_TIMEOUT);
        assert_eq!(out.code, Some(1), "{name} {what}: {}", out.stderr);
        let last = out.stderr.lines().last().unwrap_or_default();
        assert_eq!(strip_prefix(last), fatal, "{name} {what}");
        assert!(!out.stderr.contains("Listening for"), "{name} {what}");
        assert!(!out.stderr.contains("Server is ready"), "{name} {what}");
        outputs.push(normalized_text(&out.stderr));
    }
    if let [ours, go] = outputs.as_slice() {
        assert_same_lines(what, ours, Some(go));
    }
}

#[test]
fn launch_port_flags_out_of_range_refused_like_go() {
    let dir = temp_dir();
    let client = |port: &str| {
        format!(
            "[FTL] Error listening on port: 0.0.0.0:{port}, \"listen tcp: address {port}: \
             invalid port\""
        )
    };
    let monitor = |port: &str| {
        format!(
            "[FTL] Can't start monitoring: can't listen to the monitor port: listen tcp: \
             address {port}: invalid port"
        )
    };
    for port in ["70000", "65536", "-5", "-2", "99999999999"] {
        assert_refused_like_go(
            &format!("-p {port}"),
            &["-p", port],
            dir.path(),
            &client(port),
        );
        let args = ["-a", "127.0.0.1", "-p", "-1", "-m", port];
        assert_refused_like_go(&format!("-m {port}"), &args, dir.path(), &monitor(port));
    }
    let certs = TestCerts::generate();
    let (cert, key) = (certs.file("server.pem"), certs.file("server-key.pem"));
    for port in ["70000", "-5"] {
        let args = [
            "-a",
            "127.0.0.1",
            "-p",
            "-1",
            "--tlscert",
            &cert,
            "--tlskey",
            &key,
            "--https_port",
            port,
        ];
        assert_refused_like_go(
            &format!("--https_port {port}"),
            &args,
            dir.path(),
            &monitor(port),
        );
    }
}

#[test]
fn launch_port_options_out_of_range_refused_like_go() {
    let certs = TestCerts::generate();
    let tls = certs.tls_block("");
    let monitor = |port: &str| {
        format!(
            "[FTL] Can't start monitoring: can't listen to the monitor port: listen tcp: \
             address {port}: invalid port"
        )
    };
    let websocket = |port: &str| {
        format!(
            "[FTL] Unable to listen for websocket connections: listen tcp: address {port}: \
             invalid port"
        )
    };
    let cases: Vec<(String, String)> =
        vec![
        (
            "port: 99999999".to_owned(),
            "[FTL] Error listening on port: 0.0.0.0:99999999, \"listen tcp: address 99999999: \
             invalid port\""
                .to_owned(),
        ),
        (
            "port: -5".to_owned(),
            "[FTL] Error listening on port: 0.0.0.0:-5, \"listen tcp: address -5: invalid port\""
                .to_owned(),
        ),
        (
            "listen: \"127.0.0.1:70000\"".to_owned(),
            "[FTL] Error listening on port: 127.0.0.1:70000, \"listen tcp: address 70000: \
             invalid port\""
                .to_owned(),
        ),
        ("listen: 127.0.0.1:-1\nhttp_port: 70000".to_owned(), monitor("70000")),
        ("listen: 127.0.0.1:-1\nhttp: \"127.0.0.1:-5\"".to_owned(), monitor("-5")),
        (format!("listen: 127.0.0.1:-1\nhttps_port: 70000\n{tls}"), monitor("70000")),
        (
            "listen: 127.0.0.1:-1\nwebsocket { port: 70000, no_tls: true }".to_owned(),
            websocket("70000"),
        ),
        (
            "listen: 127.0.0.1:-1\nwebsocket { port: -5, no_tls: true }".to_owned(),
            websocket("-5"),
        ),
        (
            "listen: 127.0.0.1:-1\nws { listen: \"127.0.0.1:99999999999\", no_tls: true }"
                .to_owned(),
            websocket("99999999999"),
        ),
    ];
    for (i, (body, fatal)) in cases.iter().enumerate() {
        let file = format!("ports{i}.conf");
        std::fs::write(certs.path(&file), format!("{body}\n")).expect("write");
        // `-t` only reads the file: Go finds nothing wrong until it listens.
        for (name, binary) in binaries() {
            let out = run_to_exit(
                &binary,
                &["-t", "-c", &file],
                Some(certs.dir()),
                &[],
                EXIT_TIMEOUT,
            );
            assert_eq!(out.code, Some(0), "{name} -t {body}: {}", out.stderr);
        }
        assert_refused_like_go(body, &["-c", &file], certs.dir(), fatal);
    }
}

/// -1 is Go's "any free port" for every listener; the bound port is in the log.
#[test]
fn launch_port_minus_one_is_a_free_port_everywhere() {
    let certs = TestCerts::generate();
    let conf = certs.config(
        "free.conf",
        "http_port: -1\nwebsocket { port: -1, no_tls: true }",
    );
    for (name, binary) in binaries() {
        let server = start(&binary, &["-c", &conf]);
        assert_ne!(server.port, 0, "{name}");
        for line in [
            "Starting http monitor on",
            "Listening for websocket clients on ws://",
        ] {
            assert!(server.wait_for_log(line, START_TIMEOUT), "{name}: {line}");
        }
        assert!(
            !server.log_text().contains(":-1"),
            "{name}: a bound port is logged, not -1"
        );
    }
}
