//! `--signal` from a second invocation, signals sent directly, and lame duck mode.

use super::support::*;

/// How the second invocation names the target.
#[derive(Clone, Copy, Debug)]
enum Target {
    Pid,
    PidFile,
}

/// What became of a signalled server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    StillRunning,
    Exited(i32),
    Killed,
}

/// One `--signal` case: command, how the target is named, the ending, the log after ready.
type SignalCase = (&'static str, Target, Ending, &'static [&'static str]);

/// Starts a server, sends `command` with our binary, and returns what the server logged after
/// `Server is ready` and what became of it.
fn signal_scenario(binary: &Path, command: &str, target: Target) -> (Vec<String>, Ending) {
    let dir = temp_dir();
    let pid_file = dir.path().join("s.pid");
    let pid_arg = pid_file.display().to_string();
    let mut server = start(binary, &["-a", "127.0.0.1", "-p", "-1", "-P", &pid_arg]);
    let spec = match target {
        Target::Pid => format!("{command}={}", server.pid()),
        Target::PidFile => format!("{command}={pid_arg}"),
    };
    let sent = signal_with_our_binary(&spec);
    assert_eq!(sent.code, Some(0), "--signal {spec}: {}", sent.stderr);
    assert_eq!(sent.stderr, "", "--signal {spec}");
    let ended = match command {
        "quit" | "term" | "stop" | "ldm" => match server.wait_exit(EXIT_TIMEOUT) {
            None => panic!("--signal {spec}: server still running"),
            Some(-1) => Ending::Killed,
            Some(code) => Ending::Exited(code),
        },
        "reload" => {
            assert!(server.wait_for_log("Failed to reload", EXIT_TIMEOUT));
            Ending::StillRunning
        }
        "reopen" => {
            assert!(server.wait_for_log("File log re-open", EXIT_TIMEOUT));
            Ending::StillRunning
        }
        other => panic!("unexpected command {other}"),
    };
    if ended == Ending::StillRunning {
        // Still serving clients.
        let _ = info_from(&server.addr());
    }
    (normalized(&after_ready(&server.log_lines())), ended)
}

#[test]
fn launch_signal_commands_from_second_invocation() {
    let cases: [SignalCase; 7] = [
        (
            "quit",
            Target::Pid,
            Ending::Exited(0),
            &[
                "[INF] Trapped \"interrupt\" signal",
                "[INF] Initiating Shutdown...",
                "[INF] Server Exiting..",
            ],
        ),
        (
            "term",
            Target::PidFile,
            Ending::Exited(0),
            &[
                "[INF] Trapped \"terminated\" signal",
                "[INF] Initiating Shutdown...",
                "[INF] Server Exiting..",
            ],
        ),
        ("stop", Target::Pid, Ending::Killed, &[]),
        (
            "reload",
            Target::Pid,
            Ending::StillRunning,
            &[
                "[INF] Trapped \"hangup\" signal",
                "[ERR] Failed to reload server configuration: can only reload config when a file is provided using -c or --config",
            ],
        ),
        (
            "reopen",
            Target::PidFile,
            Ending::StillRunning,
            &[
                "[INF] Trapped \"user defined signal 1\" signal",
                "[INF] File log re-open ignored, not a file logger",
            ],
        ),
        (
            "ldm",
            Target::Pid,
            Ending::Exited(0),
            &[
                "[INF] Trapped \"user defined signal 2\" signal",
                "[INF] Entering lame duck mode, stop accepting new clients",
                "[INF] Initiating Shutdown...",
                "[INF] Server Exiting..",
            ],
        ),
        (
            "ldm",
            Target::PidFile,
            Ending::Exited(0),
            &[
                "[INF] Trapped \"user defined signal 2\" signal",
                "[INF] Entering lame duck mode, stop accepting new clients",
                "[INF] Initiating Shutdown...",
                "[INF] Server Exiting..",
            ],
        ),
    ];
    for (command, target, ending, expected) in cases {
        for (name, binary) in binaries() {
            let (lines, ended) = signal_scenario(&binary, command, target);
            assert_eq!(ended, ending, "{name} {command} {target:?}: exit");
            assert_eq!(lines, expected, "{name} {command} {target:?}: log");
        }
    }
}

#[test]
fn launch_sigint_sigterm_sighup_directly() {
    for (name, binary) in binaries() {
        for (sig, trapped) in [("INT", "interrupt"), ("TERM", "terminated")] {
            let mut server = start(&binary, &["-a", "127.0.0.1", "-p", "-1"]);
            server.signal(sig);
            assert_eq!(server.wait_exit(EXIT_TIMEOUT), Some(0), "{name} {sig}");
            assert_eq!(
                normalized(&after_ready(&server.log_lines())),
                [
                    format!("[INF] Trapped \"{trapped}\" signal"),
                    "[INF] Initiating Shutdown...".to_owned(),
                    "[INF] Server Exiting..".to_owned(),
                ],
                "{name} {sig}"
            );
        }
        // SIGHUP reloads (tests/reload.rs covers what) and must not stop the server.
        let dir = temp_dir();
        let conf = dir.path().join("s.conf");
        std::fs::write(&conf, "host: 127.0.0.1\nport: -1\n").expect("write");
        let server = start(&binary, &["-c", &conf.display().to_string()]);
        server.signal("HUP");
        assert!(
            server.wait_for_log("[INF] Reloaded server configuration", EXIT_TIMEOUT),
            "{name}"
        );
        let _ = info_from(&server.addr());
    }
}

#[test]
fn launch_signal_errors_like_go() {
    // A process that has exited: its pid is free.
    let mut gone = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let dead = gone.id().to_string();
    gone.wait().expect("wait");
    let dir = temp_dir();
    let junk = dir.path().join("junk.pid");
    std::fs::write(&junk, "not-a-pid").expect("write");
    let junk = junk.display().to_string();
    let missing = dir.path().join("missing.pid").display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--signal".into(), format!("quit={dead}")],
            format!("nats-server: \nsignal \"quit\" {dead}: no such process\n"),
        ),
        (
            vec!["-sl".into(), format!("ldm={dead}")],
            format!("nats-server: \nsignal \"ldm\" {dead}: no such process\n"),
        ),
        (
            vec!["--signal".into(), format!("reload={missing}")],
            format!("nats-server: invalid pid: {missing}\n"),
        ),
        (
            vec!["--signal".into(), format!("term={junk}")],
            "nats-server: invalid pid: not-a-pid\n".to_owned(),
        ),
        (
            vec!["--signal".into(), "quit=1=2".into()],
            "nats-server: invalid signal parameters: [2]\n".to_owned(),
        ),
    ];
    for (args, expected) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for (name, binary) in binaries() {
            let out = run(&binary, &args);
            assert_eq!(out.code, Some(1), "{name} {args:?}");
            assert_eq!(&out.stderr, expected, "{name} {args:?}");
            assert_eq!(out.stdout, "", "{name} {args:?}");
        }
    }
}

/// `--signal CMD` without a pid asks `pgrep nats-server`. Other servers may run on this machine
/// (other tests, other people), so a stand-in `pgrep` first on `PATH` answers with exactly the
/// processes each case needs — including the signalling process itself, which must be skipped.
#[test]
fn launch_signal_without_pid_finds_the_one_server() {
    let dir = temp_dir();
    let fake = dir.path().join("pgrep");
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let write_fake = |pids: &str| {
        let script = format!("#!/bin/sh\n[ \"$1\" = nats-server ] || exit 3\necho $PPID\n{pids}\n");
        std::fs::write(&fake, script).expect("write pgrep");
        let status = std::process::Command::new("chmod")
            .args(["+x", &fake.display().to_string()])
            .status()
            .expect("chmod");
        assert!(status.success());
    };
    for (name, binary) in binaries() {
        let mut server = start(&binary, &["-a", "127.0.0.1", "-p", "-1"]);
        let pid = server.pid();

        write_fake(":");
        let out = run_to_exit(
            &natrium_path(),
            &["--signal", "reload"],
            None,
            &[("PATH", &path)],
            EXIT_TIMEOUT,
        );
        assert_eq!(out.code, Some(1), "{name}");
        assert_eq!(
            out.stderr,
            "nats-server: no nats-server processes running\n"
        );
        if let Some(go) = go_server_path() {
            let go_out = run_to_exit(
                &go,
                &["--signal", "reload"],
                None,
                &[("PATH", &path)],
                EXIT_TIMEOUT,
            );
            assert_eq!(go_out, out, "Go, no server");
        }

        write_fake(&format!("echo {pid}\necho 999999"));
        let out = run_to_exit(
            &natrium_path(),
            &["--signal", "quit"],
            None,
            &[("PATH", &path)],
            EXIT_TIMEOUT,
        );
        assert_eq!(out.code, Some(1));
        assert_eq!(
            out.stderr,
            format!("nats-server: multiple nats-server processes running:\n{pid}\n999999\n")
        );
        if let Some(go) = go_server_path() {
            let go_out = run_to_exit(
                &go,
                &["--signal", "quit"],
                None,
                &[("PATH", &path)],
                EXIT_TIMEOUT,
            );
            assert_eq!(go_out, out, "Go, two servers");
        }

        write_fake(&format!("echo {pid}"));
        let out = run_to_exit(
            &natrium_path(),
            &["--signal", "quit"],
            None,
            &[("PATH", &path)],
            EXIT_TIMEOUT,
        );
        assert_eq!((out.code, out.stderr.as_str()), (Some(0), ""), "{name}");
        assert_eq!(server.wait_exit(EXIT_TIMEOUT), Some(0), "{name}");
        assert!(server.wait_for_log("Trapped \"interrupt\" signal", EXIT_TIMEOUT));
    }
}

/// Go's smallest accepted `lame_duck_duration` is 30s; the grace period may be short. With the
/// last client closed the server exits without waiting for the rest of the duration.
const LDM_CONF: &str = "host: 127.0.0.1\nport: -1\nhttp_port: -1\nlame_duck_duration: \"30s\"\nlame_duck_grace_period: \"1s\"\n";

struct LdmRun {
    lines: Vec<String>,
    code: Option<i32>,
}

fn lame_duck_run(binary: &Path) -> LdmRun {
    let dir = temp_dir();
    let conf = dir.path().join("ldm.conf");
    std::fs::write(&conf, LDM_CONF).expect("write");
    let mut server = start(binary, &["-c", &conf.display().to_string()]);
    let monitor = server.monitor_port.expect("monitor");
    let mut clients: Vec<RawClient> = (0..2)
        .map(|_| {
            let mut c = RawClient::connect(&server.addr());
            // protocol 1: the client understands asynchronous INFO (Go only tells those).
            assert_eq!(
                c.exchange(b"CONNECT {\"verbose\":false,\"protocol\":1}\r\n"),
                ""
            );
            c
        })
        .collect();
    let ids: Vec<u64> = clients
        .iter()
        .map(|c| {
            let info: serde_json::Value =
                serde_json::from_str(c.info.trim_start_matches("INFO ").trim()).expect("info");
            info["client_id"].as_u64().expect("client_id")
        })
        .collect();

    let signalled = Instant::now();
    let sent = signal_with_our_binary(&format!("ldm={}", server.pid()));
    assert_eq!(sent.code, Some(0), "{}", sent.stderr);

    // Every client is told, with its own id.
    for (client, id) in clients.iter_mut().zip(&ids) {
        // The INFO answering the first PING after CONNECT (`connect_info`) may come first.
        let line = std::iter::from_fn(|| client.read_line())
            .find(|l| !l.contains("\"connect_info\":true"))
            .expect("ldm INFO");
        let info: serde_json::Value =
            serde_json::from_str(line.trim_start_matches("INFO ").trim()).expect("json");
        assert_eq!(info["ldm"], true, "{line}");
        assert_eq!(info["client_id"], *id, "{line}");
    }
    // The listener is closed before clients are told: new connections are refused.
    let refused = TcpStream::connect(server.addr());
    assert!(
        refused.is_err(),
        "new client accepted during lame duck mode"
    );
    // Not ready any more.
    let health = http_get(monitor, "/healthz");
    assert_eq!(health.status, 500);
    assert_eq!(
        health.body,
        r#"{"status":"error","error":"failed to be ready for connections after 1ms: server"}"#
    );
    // SIGTERM during lame duck mode is ignored, as in Go.
    server.signal("TERM");
    assert!(server.wait_for_log("Trapped \"terminated\" signal", EXIT_TIMEOUT));

    // Closed after the grace period.
    for client in &mut clients {
        // Whatever is still sent (a PING, perhaps), the server ends with closing.
        let _ = client.until_closed(b"");
    }
    let closed_after = signalled.elapsed();
    assert!(
        closed_after >= Duration::from_millis(900),
        "closed {closed_after:?} after the signal, before the 1s grace period"
    );
    let code = server.wait_exit(EXIT_TIMEOUT);
    LdmRun {
        lines: normalized(&after_ready(&server.log_lines())),
        code,
    }
}

#[test]
fn launch_lame_duck_like_go() {
    // Run both servers at once: each takes about two seconds.
    let handles: Vec<_> = binaries()
        .into_iter()
        .map(|(name, binary)| (name, std::thread::spawn(move || lame_duck_run(&binary))))
        .collect();
    let mut runs = Vec::new();
    for (name, handle) in handles {
        let run = handle
            .join()
            .unwrap_or_else(|_| panic!("{name} lame duck run failed"));
        assert_eq!(run.code, Some(0), "{name}");
        assert_eq!(
            run.lines,
            [
                "[INF] Trapped \"user defined signal 2\" signal",
                "[INF] Entering lame duck mode, stop accepting new clients",
                "[WRN] Healthcheck failed: \"failed to be ready for connections after 1ms: server\"",
                "[INF] Trapped \"terminated\" signal",
                "[INF] Closing existing clients",
                "[INF] Initiating Shutdown...",
                "[INF] Server Exiting..",
            ],
            "{name}"
        );
        runs.push(run.lines);
    }
    if let [ours, go] = runs.as_slice() {
        assert_same_lines("lame duck", ours, Some(go));
    }
}
