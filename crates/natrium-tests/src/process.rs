//! Spawning a server binary and reading its log.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// How long a server may take to print "Server is ready".
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Our binary: `NATRIUM_BIN`, else `nats-server` next to the test executable's directory.
pub fn natrium_path() -> PathBuf {
    if let Some(path) = std::env::var("NATRIUM_BIN").ok().filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/nats-server
    let profile_dir = exe.parent().and_then(|p| p.parent()).expect("target dir");
    profile_dir.join("nats-server")
}

/// The Go reference server: `NATS_GO_SERVER`, else `.tools/go/bin/nats-server` in the repo.
pub fn go_server_path() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("NATS_GO_SERVER") {
        let path = PathBuf::from(path);
        return path.exists().then_some(path);
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = repo.join(".tools/go/bin/nats-server");
    path.exists().then_some(path)
}

#[derive(Default)]
struct LogState {
    lines: Vec<String>,
    closed: bool,
}

/// A running server process, killed on drop.
pub struct ServerProcess {
    child: Child,
    log: Arc<(Mutex<LogState>, Condvar)>,
    pub port: u16,
    pub monitor_port: Option<u16>,
    /// The websocket port, when the log announced a websocket listener.
    pub ws_port: Option<u16>,
}

fn port_after(line: &str, marker: &str) -> Option<u16> {
    let rest = line.split(marker).nth(1)?;
    rest.trim().rsplit(':').next()?.parse().ok()
}

impl ServerProcess {
    /// Starts our server with `args` plus `-a 127.0.0.1 -p -1` unless the args set them.
    pub fn start(args: &[&str]) -> Self {
        Self::start_binary(natrium_path(), args)
    }

    /// Starts the Go reference server, if installed.
    pub fn start_go(args: &[&str]) -> Option<Self> {
        go_server_path().map(|p| Self::start_binary(p, args))
    }

    /// Starts Go's server when `go` (`None` if it is not installed), else ours: one side of
    /// a differential test.
    pub fn start_ours_or_go(go: bool, args: &[&str]) -> Option<Self> {
        if go {
            Self::start_go(args)
        } else {
            Some(Self::start(args))
        }
    }

    #[allow(clippy::needless_pass_by_value)]
    pub fn start_binary(binary: PathBuf, args: &[&str]) -> Self {
        Self::try_start(binary, args).unwrap_or_else(|log| panic!("server did not start:\n{log}"))
    }

    /// Starts a server; on failure returns its whole log.
    #[allow(clippy::needless_pass_by_value)]
    pub fn try_start(binary: PathBuf, args: &[&str]) -> Result<Self, String> {
        let mut full: Vec<String> = Vec::new();
        let has = |flags: &[&str]| args.iter().any(|a| flags.contains(a));
        if !has(&["-a", "--addr", "-addr", "--net", "-net"]) && !has(&["-c", "--config", "-config"])
        {
            full.extend(["-a".into(), "127.0.0.1".into()]);
        }
        if !has(&["-p", "--port", "-port"]) && !has(&["-c", "--config", "-config"]) {
            full.extend(["-p".into(), "-1".into()]);
        }
        full.extend(args.iter().map(|a| (*a).to_owned()));
        let mut server = Self::spawn(&binary, &full, None)?;
        server.wait_ready(START_TIMEOUT)?;
        Ok(server)
    }

    /// Starts a server with exactly `args` (no `-a`/`-p` added), in `cwd` if given, and waits
    /// for `Server is ready`; on failure returns its whole log.
    pub fn try_start_exact(
        binary: &Path,
        args: &[&str],
        cwd: Option<&Path>,
    ) -> Result<Self, String> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let mut server = Self::spawn(binary, &args, cwd)?;
        server.wait_ready(START_TIMEOUT)?;
        Ok(server)
    }

    /// Spawns a server with exactly `args` and starts following its standard error, without
    /// waiting for anything (for a server that logs to a file, or is expected to fail).
    pub fn spawn(binary: &Path, args: &[String], cwd: Option<&Path>) -> Result<Self, String> {
        let mut command = Command::new(binary);
        command
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .stdin(Stdio::null());
        if let Some(dir) = cwd {
            command.current_dir(dir);
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", binary.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let log = Arc::new((Mutex::new(LogState::default()), Condvar::new()));
        let reader_log = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let (state, cv) = &*reader_log;
                state.lock().lines.push(line);
                cv.notify_all();
            }
            let (state, cv) = &*reader_log;
            state.lock().closed = true;
            cv.notify_all();
        });
        Ok(Self {
            child,
            log,
            port: 0,
            monitor_port: None,
            ws_port: None,
        })
    }

    /// Waits for `Server is ready` on standard error, then reads the client and monitoring
    /// ports from the log. On failure kills the process and returns its log.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        if !self.wait_for_log("Server is ready", timeout) {
            let log = self.log_text();
            self.kill();
            return Err(log);
        }
        self.read_ports(&self.log_lines());
        Ok(())
    }

    /// Sets `port` and `monitor_port` from log lines (standard error or a log file's).
    pub fn read_ports(&mut self, lines: &[String]) {
        for line in lines {
            if let Some(port) = port_after(line, "Listening for client connections on") {
                self.port = port;
            }
            if let Some(port) = port_after(line, "Starting http monitor on") {
                self.monitor_port = Some(port);
            }
            if let Some(port) = port_after(line, "Listening for websocket clients on") {
                self.ws_port = Some(port);
            }
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log_lines(&self) -> Vec<String> {
        self.log.0.lock().lines.clone()
    }

    pub fn log_text(&self) -> String {
        self.log_lines().join("\n")
    }

    /// Waits until a log line contains `needle`; false on timeout or process exit.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let (state, cv) = &*self.log;
        let mut guard = state.lock();
        loop {
            if guard.lines.iter().any(|l| l.contains(needle)) {
                return true;
            }
            if guard.closed || cv.wait_until(&mut guard, deadline).timed_out() {
                return guard.lines.iter().any(|l| l.contains(needle));
            }
        }
    }

    /// Waits for the process to exit; returns its status code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        // The log reader sees EOF when the process exits: wait on that event, then reap.
        let (state, cv) = &*self.log;
        let mut guard = state.lock();
        while !guard.closed {
            if cv.wait_until(&mut guard, deadline).timed_out() {
                return None;
            }
        }
        drop(guard);
        self.child.wait().ok().and_then(|s| s.code().or(Some(-1)))
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends a Unix signal by name through the `kill` command.
    pub fn signal(&self, name: &str) {
        let _ = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid().to_string())
            .status();
    }
}

/// What a short-lived invocation (`-v`, `-t`, `--signal`, a failing start) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Exit status; `None` if it was killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `binary args` to completion (in `cwd`, with extra environment), capturing both
/// streams. Panics if it has not exited within `timeout` (it is killed first).
pub fn run_to_exit(
    binary: &Path,
    args: &[&str],
    cwd: Option<&Path>,
    env: &[(&str, &str)],
    timeout: Duration,
) -> Outcome {
    let mut command = Command::new(binary);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("spawn");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    // Both pipes reach end-of-file when the process exits: wait on that event.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send((out.join(), err.join()));
    });
    let Ok((stdout, stderr)) = rx.recv_timeout(timeout) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{} {args:?} did not exit within {timeout:?}",
            binary.display()
        );
    };
    let status = child.wait().expect("wait");
    Outcome {
        code: status.code(),
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
    }
}

/// Waits until the file at `path` exists and `done(contents)` holds; returns the contents.
/// Files give no event to wait on, so this polls with short waits until `timeout`. Use it only
/// where the process offers no log line or exit to wait for (e.g. Go writes its ports file in
/// the background after `Server is ready`).
pub fn wait_for_file(
    path: &Path,
    timeout: Duration,
    done: impl Fn(&str) -> bool,
) -> Option<String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if done(&text) {
                return Some(text);
            }
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
