//! Log file and log time, PID file, ports file, and fatal start-up errors.

use super::support::*;

fn is_stamped(line: &str, pid: u32) -> bool {
    let Some(rest) = line.strip_prefix(&format!("[{pid}] ")) else {
        return false;
    };
    let b = rest.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    b.len() > 33
        && digits(0..4)
        && b[4] == b'/'
        && digits(5..7)
        && b[7] == b'/'
        && digits(8..10)
        && b[10] == b' '
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..26)
        && rest[26..].starts_with(" [")
}

#[test]
fn launch_log_file_gets_go_format_lines() {
    let mut startups = Vec::new();
    for (name, binary) in binaries() {
        let dir = temp_dir();
        let log = dir.path().join("server.log");
        let args: Vec<String> = ["-a", "127.0.0.1", "-p", "-1", "-l"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([log.display().to_string()])
            .collect();
        let mut server = ServerProcess::spawn(&binary, &args, None).expect("spawn");
        let text = wait_for_file(&log, START_TIMEOUT, |t| t.contains("Server is ready"))
            .unwrap_or_else(|| panic!("{name}: no ready line in the log file"));
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for line in &lines {
            assert!(is_stamped(line, server.pid()), "{name}: {line:?}");
        }
        assert!(lines[0].ends_with("[INF] Starting nats-server"), "{name}");
        server.read_ports(&lines);
        let _ = info_from(&server.addr());
        server.signal("TERM");
        assert_eq!(server.wait_exit(EXIT_TIMEOUT), Some(0), "{name}");
        assert!(server.log_lines().is_empty(), "{name}: nothing on stderr");
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(text.ends_with("[INF] Server Exiting..\n"), "{name}: {text}");
        startups.push(normalized_text(&text));
    }
    if let [ours, go] = startups.as_slice() {
        assert_same_lines("log file", ours, Some(go));
    }
}

/// Log rotation: move the file away, `--signal reopen`, and logging continues in a new file.
#[test]
fn launch_log_file_reopen_after_rotation() {
    let mut runs = Vec::new();
    for (name, binary) in binaries() {
        let dir = temp_dir();
        let log = dir.path().join("server.log");
        let rotated = dir.path().join("server.log.1");
        let args: Vec<String> = ["-a", "127.0.0.1", "-p", "-1", "-l"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([log.display().to_string()])
            .collect();
        let mut server = ServerProcess::spawn(&binary, &args, None).expect("spawn");
        wait_for_file(&log, START_TIMEOUT, |t| t.contains("Server is ready"))
            .unwrap_or_else(|| panic!("{name}: not ready"));
        std::fs::rename(&log, &rotated).expect("rotate");
        let sent = signal_with_our_binary(&format!("reopen={}", server.pid()));
        assert_eq!(sent.code, Some(0), "{name}: {}", sent.stderr);
        let fresh = wait_for_file(&log, START_TIMEOUT, |t| t.contains("File log re-opened"))
            .unwrap_or_else(|| panic!("{name}: no new log file"));
        let old = std::fs::read_to_string(&rotated).expect("rotated log");
        assert!(
            old.trim_end()
                .ends_with("[INF] Trapped \"user defined signal 1\" signal"),
            "{name}: {old}"
        );
        server.signal("INT");
        assert_eq!(server.wait_exit(EXIT_TIMEOUT), Some(0), "{name}");
        let fresh_all = std::fs::read_to_string(&log).expect("log");
        assert!(fresh_all.starts_with(&fresh), "{name}");
        runs.push(normalized_text(&fresh_all));
    }
    if let [ours, go] = runs.as_slice() {
        assert_same_lines("reopened log file", ours, Some(go));
    }
}

#[test]
fn launch_logtime_off_by_flag_and_config() {
    let dir = temp_dir();
    let conf = dir.path().join("notime.conf");
    std::fs::write(&conf, "logtime: false\nhost: 127.0.0.1\nport: -1\n").expect("write");
    let conf = conf.display().to_string();
    let forms: [&[&str]; 3] = [
        &["-a", "127.0.0.1", "-p", "-1", "-T=false"],
        &["-a", "127.0.0.1", "-p", "-1", "--logtime=false"],
        &["-c", &conf],
    ];
    for args in forms {
        let mut runs = Vec::new();
        for (name, binary) in binaries() {
            let server = start(&binary, args);
            let prefix = format!("[{}] [INF] ", server.pid());
            for line in server.log_lines() {
                assert!(line.starts_with(&prefix), "{name} {args:?}: {line:?}");
            }
            runs.push(normalized(&server.log_lines()));
        }
        if let [ours, go] = runs.as_slice() {
            assert_same_lines(&format!("{args:?}"), ours, Some(go));
        }
    }
}

#[test]
fn launch_pid_and_ports_files_like_go() {
    let mut documents = Vec::new();
    for (name, binary) in binaries() {
        for host in ["127.0.0.1", "0.0.0.0"] {
            let dir = temp_dir();
            let pid_file = dir.path().join("server.pid");
            let pid_arg = pid_file.display().to_string();
            let dir_arg = dir.path().display().to_string();
            let flag_pid = if host == "0.0.0.0" { "--pid" } else { "-P" };
            let mut server = start(
                &binary,
                &[
                    "-a",
                    host,
                    "-p",
                    "-1",
                    "-m",
                    "-1",
                    flag_pid,
                    &pid_arg,
                    "--ports_file_dir",
                    &dir_arg,
                ],
            );
            let pid = server.pid();
            assert_eq!(
                std::fs::read_to_string(&pid_file).expect("pid file"),
                pid.to_string(),
                "{name}"
            );
            let ports = dir.path().join(format!("nats-server_{pid}.ports"));
            // Go writes the ports file in the background after "Server is ready".
            let doc = wait_for_file(&ports, START_TIMEOUT, |t| t.ends_with('}'))
                .unwrap_or_else(|| panic!("{name}: no ports file {}", ports.display()));
            let (port, monitor) = (server.port, server.monitor_port.expect("monitor"));
            if host == "127.0.0.1" {
                assert_eq!(
                    doc,
                    format!(
                        r#"{{"nats":["nats://127.0.0.1:{port}"],"monitoring":["http://127.0.0.1:{monitor}"]}}"#
                    ),
                    "{name}"
                );
            } else {
                let parsed: serde_json::Value = serde_json::from_str(&doc).expect("json");
                let nats = parsed["nats"].as_array().expect("nats list");
                assert!(
                    nats.iter()
                        .any(|u| u == &format!("nats://127.0.0.1:{port}")),
                    "{name}: {doc}"
                );
            }
            documents.push((
                host,
                doc.replace(&port.to_string(), "P")
                    .replace(&monitor.to_string(), "M"),
            ));
            server.signal("TERM");
            assert_eq!(server.wait_exit(EXIT_TIMEOUT), Some(0), "{name}");
            assert!(!ports.exists(), "{name}: ports file removed on shutdown");
            assert!(pid_file.exists(), "{name}: the PID file stays, as in Go");
        }
    }
    if documents.len() == 4 {
        assert_eq!(documents[0], documents[2], "ports file, loopback");
        assert_eq!(documents[1], documents[3], "ports file, wildcard");
    }
}

/// Runs a start that must fail; returns (exit code, normalized stderr).
fn failed_start(binary: &Path, args: &[&str]) -> (Option<i32>, Vec<String>) {
    let out = run(binary, args);
    (out.code, normalized_text(&out.stderr))
}

#[test]
fn launch_fatal_errors_like_go() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let dir = temp_dir();
    let missing = dir.path().join("missing/dir/file");
    let missing = missing.display().to_string();
    let cases: Vec<(&str, Vec<&str>, String)> = vec![
        (
            "client port in use",
            vec!["-a", "127.0.0.1", "-p", &port],
            format!(
                "[FTL] Error listening on port: 127.0.0.1:{port}, \"listen tcp 127.0.0.1:{port}: bind: address already in use\""
            ),
        ),
        (
            "monitor port in use",
            vec!["-a", "127.0.0.1", "-p", "-1", "-m", &port],
            format!(
                "[FTL] Can't start monitoring: can't listen to the monitor port: listen tcp 127.0.0.1:{port}: bind: address already in use"
            ),
        ),
        (
            "bad listen host",
            vec!["-a", "1.2.3.4.5", "-p", "-1"],
            "[FTL] Error listening on port: 1.2.3.4.5:0, \"listen tcp: lookup 1.2.3.4.5: no such host\"".to_owned(),
        ),
        (
            "pid file in a missing directory",
            vec!["-a", "127.0.0.1", "-p", "-1", "-P", &missing],
            format!("[FTL] Could not write pidfile: open {missing}: no such file or directory"),
        ),
    ];
    for (what, args, last) in &cases {
        let mut outputs = Vec::new();
        for (name, binary) in binaries() {
            let out = run(&binary, args);
            assert_eq!(out.code, Some(1), "{name} {what}: {}", out.stderr);
            let tail = out.stderr.lines().last().unwrap_or_default();
            assert!(tail.ends_with(last.as_str()), "{name} {what}: {tail:?}");
            assert!(
                !out.stderr.contains("Server is ready"),
                "{name} {what}: {}",
                out.stderr
            );
            outputs.push(normalized_text(&out.stderr));
        }
        if let [ours, go] = outputs.as_slice() {
            assert_same_lines(what, ours, Some(go));
        }
    }

    // With -l the fatal line goes to the file only.
    let mut files = Vec::new();
    for (name, binary) in binaries() {
        let log = dir.path().join(format!("{name}-fatal.log"));
        let log_arg = log.display().to_string();
        let out = run(&binary, &["-a", "127.0.0.1", "-p", &port, "-l", &log_arg]);
        assert_eq!(out.code, Some(1), "{name}");
        assert_eq!(out.stderr, "", "{name}: nothing on stderr with -l");
        let text = std::fs::read_to_string(&log).expect("log file");
        assert!(
            text.contains("[FTL] Error listening on port"),
            "{name}: {text}"
        );
        files.push(normalized_text(&text));
    }
    if let [ours, go] = files.as_slice() {
        assert_same_lines("fatal into log file", ours, Some(go));
    }

    // The log file itself cannot be opened: Go's standard `log` line, status 1.
    for (name, binary) in binaries() {
        let (code, lines) = failed_start(&binary, &["-a", "127.0.0.1", "-p", "-1", "-l", &missing]);
        assert_eq!(code, Some(1), "{name}");
        assert_eq!(lines.len(), 1, "{name}: {lines:?}");
        assert!(
            lines[0].ends_with(&format!(
                " error opening file: open {missing}: no such file or directory"
            )),
            "{name}: {lines:?}"
        );
    }
    drop(taken);
}
