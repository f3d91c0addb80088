//! Log targets beyond standard error: a log file rotated by size (`logfile_size_limit`,
//! `logfile_max_num`), remote syslog over UDP (compared with the Go server's datagrams), and
//! local syslog refused like Go's when no daemon listens.

use std::net::UdpSocket;
use std::path::Path;
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
