//! Configuration files (forms, relative paths, `-t`, refusals) and flags (version, help).
//! Options for features Natrium lacks are in `inert.rs`.

use super::support::*;

const VERSION_LINE: &str = "nats-server: v2.15.2\n";

#[test]
fn launch_config_file_forms() {
    let dir = temp_dir();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let p = [free_port(), free_port(), free_port(), free_port()];
    let files = [
        (
            "json.conf",
            format!("{{\"port\": {}, \"host\": \"127.0.0.1\"}}\n", p[0]),
        ),
        ("listen.conf", format!("listen: 127.0.0.1:{}\n", p[1])),
        ("net.conf", format!("net: 127.0.0.1\nport: {}\n", p[2])),
        (
            "include.conf",
            "include ./sub/port.conf\nhost: 127.0.0.1\n".to_owned(),
        ),
    ];
    std::fs::write(sub.join("port.conf"), format!("port: {}\n", p[3])).expect("write");
    for (file, text) in &files {
        std::fs::write(dir.path().join(file), text).expect("write");
    }
    for (i, (file, _)) in files.iter().enumerate() {
        let mut runs = Vec::new();
        for (name, binary) in binaries() {
            // Relative to the working directory, as harnesses often pass it.
            let server = start_in(&binary, &["-c", file], dir.path());
            assert_eq!(server.port, p[i], "{name} {file}");
            let _ = info_from(&server.addr());
            assert!(
                server.wait_for_log(
                    &format!("Using configuration file: {file} (sha256:"),
                    START_TIMEOUT
                ),
                "{name} {file}"
            );
            runs.push(normalized(&server.log_lines()));
            drop(server); // the fixed port is reused by Go next
        }
        if let [ours, go] = runs.as_slice() {
            assert_same_lines(file, ours, Some(go));
        }
    }
}

/// Paths in a configuration file are relative to the working directory, not to the file.
#[test]
fn launch_config_relative_paths_use_working_directory() {
    for (name, binary) in binaries() {
        let dir = temp_dir();
        let conf_dir = dir.path().join("conf");
        let work = dir.path().join("work");
        std::fs::create_dir(&conf_dir).expect("mkdir");
        std::fs::create_dir(&work).expect("mkdir");
        std::fs::write(
            conf_dir.join("rel.conf"),
            "host: 127.0.0.1\nport: -1\npid_file: \"rel.pid\"\nports_file_dir: \".\"\n",
        )
        .expect("write");
        let mut server = start_in(&binary, &["-c", "../conf/rel.conf"], &work);
        let pid = server.pid();
        assert_eq!(
            std::fs::read_to_string(work.join("rel.pid")).expect("pid in cwd"),
            pid.to_string(),
            "{name}"
        );
        assert!(!conf_dir.join("rel.pid").exists(), "{name}");
        let ports = work.join(format!("nats-server_{pid}.ports"));
        let doc = wait_for_file(&ports, START_TIMEOUT, |t| t.ends_with('}'));
        assert_eq!(
            doc.as_deref(),
            Some(format!(r#"{{"nats":["nats://127.0.0.1:{}"]}}"#, server.port).as_str()),
            "{name}"
        );
        server.signal("INT");
        assert_eq!(server.wait_exit(EXIT_TIMEOUT), Some(0), "{name}");
    }
}

#[test]
fn launch_config_check_and_refusals_like_go() {
    let dir = temp_dir();
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).expect("write");
    };
    write("good.conf", "host: 127.0.0.1\nport: -1\n");
    write("good.json", "{\"port\": -1, \"host\": \"127.0.0.1\"}\n");
    write("unknown.conf", "host: 127.0.0.1\nport: -1\nfoo_bar: 1\n");
    write("badvalue.conf", "host: 127.0.0.1\nport: \"x\"\n");
    write("syntax.conf", "port: 4222\nhost: [\n");
    write("short_ldm.conf", "lame_duck_duration: \"1s\"\n");
    write(
        "grace.conf",
        "host: 127.0.0.1\nport: -1\nlame_duck_duration: \"30s\"\nlame_duck_grace_period: \"30s\"\n",
    );
    let cwd = Some(dir.path());
    let go_or_ours = |args: &[&str]| -> Vec<Outcome> {
        binaries()
            .into_iter()
            .map(|(_, b)| run_to_exit(&b, args, cwd, &[], EXIT_TIMEOUT))
            .collect()
    };
    let expect = [
        ("good.conf", 0, "is valid (sha256:"),
        ("good.json", 0, "is valid (sha256:"),
        (
            "unknown.conf",
            1,
            "nats-server: unknown.conf:3:1: unknown field \"foo_bar\"\n\n",
        ),
        (
            "badvalue.conf",
            1,
            "nats-server: badvalue.conf:2:1: interface conversion",
        ),
        ("syntax.conf", 1, "nats-server: Parse error on line 3:"),
        (
            "missing.conf",
            1,
            "nats-server: open missing.conf: no such file or directory\n",
        ),
        (
            "short_ldm.conf",
            1,
            "invalid lame_duck_duration of 1s, minimum is 30 seconds",
        ),
    ];
    for (file, code, text) in expect {
        // -t: byte-identical output and status.
        let outs = go_or_ours(&["-t", "-c", file]);
        assert_eq!(outs[0].code, Some(code), "-t {file}: {}", outs[0].stderr);
        assert!(
            outs[0].stderr.contains(text),
            "-t {file}: {:?}",
            outs[0].stderr
        );
        if let [ours, go] = outs.as_slice() {
            assert_eq!(ours, go, "-t -c {file}");
        }
        // Starting with a bad file fails the same way, before logging starts.
        if code == 1 {
            let outs = go_or_ours(&["-c", file]);
            assert_eq!(outs[0].code, Some(1), "{file}");
            assert!(!outs[0].stderr.contains("Starting nats-server"), "{file}");
            if let [ours, go] = outs.as_slice() {
                assert_eq!(ours, go, "-c {file}");
            }
        }
    }
    // Valid for -t, refused at start (Go checks it when creating the server).
    let outs = go_or_ours(&["-t", "-c", "grace.conf"]);
    assert_eq!(outs[0].code, Some(0));
    let outs = go_or_ours(&["-c", "grace.conf"]);
    assert_eq!(outs[0].code, Some(1));
    assert_eq!(
        outs[0].stderr,
        "nats-server: lame duck grace period (30s) should be strictly lower than lame duck duration (30s)\n"
    );
    if let [ours, go] = outs.as_slice() {
        assert_eq!(ours, go, "grace >= duration");
    }
}

#[test]
fn launch_version_and_help() {
    let mut helps = Vec::new();
    for (name, binary) in binaries() {
        for flag in ["-v", "--version", "-version"] {
            let out = run(&binary, &[flag]);
            assert_eq!(out.code, Some(0), "{name} {flag}");
            assert_eq!(out.stdout, VERSION_LINE, "{name} {flag}");
        }
        for flag in ["-h", "--help"] {
            let out = run(&binary, &[flag]);
            assert_eq!(out.code, Some(0), "{name} {flag}");
            assert!(
                out.stdout.starts_with("\nUsage: nats-server [options]\n"),
                "{name}"
            );
            assert!(out.stdout.contains("--signal <signal>[=<pid>]"), "{name}");
            helps.push(
                out.stdout
                    .lines()
                    .filter(|l| l.trim_start().starts_with('-'))
                    .map(|l| l.split("  ").next().unwrap_or_default().trim().to_owned())
                    .collect::<Vec<_>>(),
            );
        }
        // Standard output closed (`nats-server -v >&-`): no panic, status 0, as Go.
        let out = run_to_exit(
            Path::new("/bin/sh"),
            &[
                "-c",
                "\"$0\" -v >&- && \"$0\" -h >&-",
                &binary.display().to_string(),
            ],
            None,
            &[],
            EXIT_TIMEOUT,
        );
        assert_eq!(out.code, Some(0), "{name}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{name}: {}", out.stderr);
    }
    if helps.len() == 4 {
        assert_eq!(helps[0], helps[2], "help lists the same flags as Go's");
    }
}
