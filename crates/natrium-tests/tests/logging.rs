//! Log targets beyond standard error: a log file rotated by size (`logfile_size_limit`,
//! `logfile_max_num`), remote syslog over UDP (compared with the Go server's datagrams), and
//! local syslog refused like Go's when no daemon listens. Also: servers sharing one standard
//! error or one log file never interleave inside a line (each line is one `write`).

use std::fs::File;
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use natrium_tests::process::run_to_exit;
use natrium_tests::raw::wait_until;
use natrium_tests::{go_server_path, natrium_path, RawClient, ServerProcess};

const WAIT: Duration = Duration::from_secs(10);

fn backups(dir: &Path, base: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&format!("{base}.")))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn logging_file_rotates_at_size_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("server.log");
    let conf = dir.path().join("server.conf");
    std::fs::write(
        &conf,
        format!(
            "listen: 127.0.0.1:-1\ndebug: true\nlogfile: \"{}\"\n\
             logfile_size_limit: 2000\nlogfile_max_num: 3\n",
            log.display()
        ),
    )
    .expect("config");
    let args = vec!["-c".to_owned(), conf.display().to_string()];
    let mut server = ServerProcess::spawn(&natrium_path(), &args, None).expect("spawn");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    assert!(wait_until(WAIT, || read(&log).contains("Server is ready")));
    server.read_ports(&read(&log).lines().map(str::to_owned).collect::<Vec<_>>());
    // Every connection writes debug lines; keep connecting until three rotations happened.
    let rotated = wait_until(WAIT, || {
        drop(RawClient::connect(&server.addr()));
        backups(dir.path(), "server.log").len() >= 2 && read(&log).contains("Purged log file")
    });
    assert!(rotated, "backups: {:?}", backups(dir.path(), "server.log"));
    let names = backups(dir.path(), "server.log");
    // logfile_max_num 3: the live file and at most two backups.
    assert!(names.len() <= 2, "{names:?}");
    for name in &names {
        let stamp = name.trim_start_matches("server.log.");
        let widths: Vec<usize> = stamp.split('.').map(str::len).collect();
        assert_eq!(widths, [4, 2, 2, 2, 2, 2, 9], "{name}");
    }
    let live = read(&log);
    let first = live.lines().next().unwrap_or_default();
    assert!(
        first.contains("[INF] Rotated log, backup saved as \"") && first.contains(&names[0][..10]),
        "{first}"
    );
    server.kill();
}

/// Starts `binary` logging to a UDP socket and returns its datagrams up to `Server is ready`.
fn syslog_lines(binary: &Path) -> (u32, Vec<String>) {
    let sock = UdpSocket::bind("127.0.0.1:0").expect("udp");
    sock.set_read_timeout(Some(WAIT)).expect("timeout");
    let url = format!("udp://{}", sock.local_addr().expect("addr"));
    let args: Vec<String> = ["-a", "127.0.0.1", "-p", "-1", "-r", &url]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let mut server = ServerProcess::spawn(binary, &args, None).expect("spawn");
    let mut lines = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = sock.recv(&mut buf) {
        let line = String::from_utf8_lossy(&buf[..n]).into_owned();
        let done = line.contains("Server is ready");
        lines.push(line);
        if done {
            break;
        }
    }
    let pid = server.pid();
    server.kill();
    (pid, lines)
}

/// `<PRI>stamp host tag[pid]: message` with the stamp, host and pid taken out.
fn shape(line: &str, pid: u32) -> String {
    let (pri, rest) = line.split_once('>').unwrap_or(("", line));
    let mut parts = rest.splitn(3, ' ');
    let stamp = parts.next().unwrap_or_default();
    assert!(
        stamp.len() >= 20 && stamp.as_bytes()[10] == b'T',
        "RFC 3339 stamp: {line:?}"
    );
    let _host = parts.next();
    let rest = parts.next().unwrap_or_default();
    format!("{pri}> {}", rest.replace(&format!("[{pid}]"), "[PID]"))
}

#[test]
fn logging_remote_syslog_udp_like_go() {
    let (pid, ours) = syslog_lines(&natrium_path());
    let ready = ours.last().cloned().unwrap_or_default();
    assert_eq!(
        shape(&ready, pid),
        "<5> nats-server[PID]: Server is ready\n",
        "{ours:?}"
    );
    assert!(ours.iter().any(|l| l.contains(": Starting nats-server\n")));
    if let Some(go) = go_server_path() {
        let (go_pid, theirs) = syslog_lines(&go);
        let go_ready = theirs.last().cloned().unwrap_or_default();
        assert_eq!(shape(&go_ready, go_pid), shape(&ready, pid));
    }
}

#[test]
fn logging_local_syslog_without_daemon_like_go() {
    if Path::new("/dev/log").exists()
        || Path::new("/var/run/syslog").exists()
        || Path::new("/var/run/log").exists()
    {
        return;
    }
    let strip = |text: &str| text.get(20..).unwrap_or_default().to_owned();
    let ours = run_to_exit(&natrium_path(), &["-p", "-1", "-s"], None, &[], WAIT);
    assert_eq!(ours.code, Some(1), "{ours:?}");
    assert_eq!(
        strip(&ours.stderr),
        "error connecting to syslog: \"Unix syslog delivery error\"\n"
    );
    if let Some(go) = go_server_path() {
        let theirs = run_to_exit(&go, &["-p", "-1", "-s"], None, &[], WAIT);
        assert_eq!(theirs.code, ours.code);
        assert_eq!(strip(&theirs.stderr), strip(&ours.stderr));
    }
}

/// Children killed on drop.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `[pid] 2006/01/02 15:04:05.000000 [LVL] ` followed by text.
fn well_formed(line: &str) -> bool {
    let Some((pid, rest)) = line.strip_prefix('[').and_then(|l| l.split_once("] ")) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let shape = |s: &str, pattern: &str| {
        s.len() == pattern.len()
            && s.bytes().zip(pattern.bytes()).all(|(c, p)| {
                if p == b'9' {
                    c.is_ascii_digit()
                } else {
                    c == p
                }
            })
    };
    let (stamp, rest) = rest.split_at_checked(26).unwrap_or(("", ""));
    let levels = ["[INF] ", "[DBG] ", "[TRC] ", "[WRN] ", "[ERR] "];
    digits(pid)
        && shape(stamp, "9999/99/99 99:99:99.999999")
        && levels
            .iter()
            .any(|l| rest.strip_prefix(' ').is_some_and(|r| r.starts_with(l)))
}

/// The client ports the servers announced in `text`, one per server.
fn client_ports(text: &str) -> Vec<u16> {
    text.lines()
        .filter_map(|l| l.split("Listening for client connections on ").nth(1))
        .filter_map(|a| a.trim().rsplit(':').next()?.parse().ok())
        .collect()
}

/// Messages each [`chatter`] publishes, each traced as one line.
const PUBS: usize = 400;

/// Publishes and subscribes so that `-DV` writes trace lines quickly.
fn chatter(port: u16) {
    let mut client = RawClient::connect(&format!("127.0.0.1:{port}"));
    client.send(b"CONNECT {\"verbose\":false}\r\nSUB foo 1\r\n");
    for _ in 0..PUBS / 2 {
        client.send(b"PUB foo 5\r\nhello\r\nPUB bar 5\r\nworld\r\n");
    }
    client.send(b"PING\r\n");
    client.read_until(b"PONG\r\n");
}

/// Three servers tracing to one shared standard error and three to one shared log file, all
/// at once: every line in both files must be a whole log line.
#[test]
fn logging_lines_from_servers_sharing_output_never_interleave() {
    const SERVERS: usize = 3;
    let dir = tempfile::tempdir().expect("tempdir");
    let shared_stderr = dir.path().join("stderr.txt");
    let shared_log = dir.path().join("shared.log");
    let stderr_file = File::create(&shared_stderr).expect("stderr file");
    let log_arg = shared_log.display().to_string();
    let mut children = Children(Vec::new());
    for i in 0..2 * SERVERS {
        let mut command = Command::new(natrium_path());
        command
            .args(["-a", "127.0.0.1", "-p", "-1", "-DV"])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        if i < SERVERS {
            command.stderr(stderr_file.try_clone().expect("clone"));
        } else {
            command.args(["-l", &log_arg]).stderr(Stdio::null());
        }
        children.0.push(command.spawn().expect("spawn"));
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let ready = |p: &Path| read(p).matches("Server is ready").count() == SERVERS;
    assert!(wait_until(WAIT, || ready(&shared_stderr) && ready(&shared_log)));
    let mut ports = client_ports(&read(&shared_stderr));
    ports.extend(client_ports(&read(&shared_log)));
    assert_eq!(ports.len(), 2 * SERVERS, "{ports:?}");
    std::thread::scope(|scope| {
        for port in ports {
            scope.spawn(move || chatter(port));
        }
    });
    drop(children);
    for path in [&shared_stderr, &shared_log] {
        let text = read(path);
        assert!(text.ends_with('\n'));
        let traced = text.matches("<<- [PUB ").count();
        assert!(
            traced >= SERVERS * PUBS,
            "{}: {traced} PUB traces",
            path.display()
        );
        let bad: Vec<&str> = text.lines().filter(|l| !well_formed(l)).take(3).collect();
        assert!(bad.is_empty(), "{}: broken lines {bad:?}", path.display());
    }
}

/// Processes failing together on the command line leave whole lines on a shared standard
/// error. (Starts are too staggered to catch a split write reliably; the binary denies
/// `eprint!` and its unit tests count the writes.)
#[test]
fn logging_command_line_errors_are_whole_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stderr.txt");
    let shared = File::create(&path).expect("stderr file");
    let mut children = Vec::new();
    for _ in 0..8 {
        let child = Command::new(natrium_path())
            .arg("--bogus")
            .stdout(Stdio::null())
            .stderr(shared.try_clone().expect("clone"))
            .spawn()
            .expect("spawn");
        children.push(child);
    }
    for mut child in children {
        let _ = child.wait();
    }
    let text = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert!(
        lines
            .iter()
            .all(|l| *l == "flag provided but not defined: -bogus"),
        "{text}"
    );
}

/// Go's start-up warning for plain-text passwords, on both servers: users (top level or in an
/// account) and `--user/--pass` with plain passwords warn; bcrypt hashes and tokens do not.
#[test]
fn logging_plaintext_password_warning_like_go() {
    const WARNING: &str = "[WRN] Plaintext passwords detected, use nkeys or bcrypt";
    let bcrypt = "$2a$11$qbtrnb0mSG2eV55xoyPqHOZx/lLBlryHRhU3LK2oOPFRwGF/5rtGK";
    let cases: [(&str, bool); 4] = [
        ("authorization { users [ {user: a, password: a} ] }", true),
        ("accounts { A { users [ {user: a, password: a} ] } }", true),
        ("authorization { token: plain }", false),
        (
            "authorization { users [ {user: a, password: \"BCRYPT\"} ] }",
            false,
        ),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, (config, warns)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("c{i}.conf"));
        std::fs::write(&path, config.replace("BCRYPT", bcrypt)).expect("write");
        let path = path.to_str().expect("path").to_owned();
        let args = ["-c", &path, "-a", "127.0.0.1", "-p", "-1"];
        let mut servers = vec![("ours", ServerProcess::start(&args))];
        servers.extend(ServerProcess::start_go(&args).map(|go| ("go", go)));
        for (name, server) in &servers {
            let logged = server.log_text().contains(WARNING);
            assert_eq!(logged, *warns, "{name}: {config}");
        }
    }
    let flags = ["--user", "u", "--pass", "p", "-a", "127.0.0.1", "-p", "-1"];
    let mut servers = vec![("ours", ServerProcess::start(&flags))];
    servers.extend(ServerProcess::start_go(&flags).map(|go| ("go", go)));
    for (name, server) in &servers {
        assert!(server.log_text().contains(WARNING), "{name}: --user/--pass");
    }
}
