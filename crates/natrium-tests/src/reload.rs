//! Configuration reload tests' common steps: a configuration file to rewrite, ours and Go
//! started on it, SIGHUP with a wait for the reload's outcome in the log, and raw clients.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::raw::wait_until;
use crate::{RawClient, ServerProcess};

pub const VIOLATION: &str = "-ERR 'Authorization Violation'\r\n";
pub const WAIT: Duration = Duration::from_secs(10);
pub const RELOADED: &str = "Reloaded server configuration";
pub const FAILED: &str = "Failed to reload server configuration: ";

pub struct Conf {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Conf {
    pub fn new(text: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("server.conf");
        std::fs::write(&path, text).expect("write config");
        Self { _dir: dir, path }
    }

    pub fn write(&self, text: &str) {
        std::fs::write(&self.path, text).expect("rewrite config");
    }

    pub fn arg(&self) -> &str {
        self.path.to_str().expect("utf-8 path")
    }

    pub fn dir(&self) -> &Path {
        self.path.parent().expect("config dir")
    }
}

/// Ours and, if installed, Go, each with its own copy of the configuration file.
pub fn both(text: &str) -> Vec<(&'static str, Conf, ServerProcess)> {
    let conf = Conf::new(text);
    let ours = ServerProcess::start(&["-c", conf.arg()]);
    let mut out = vec![("ours", conf, ours)];
    let conf = Conf::new(text);
    if let Some(go) = ServerProcess::start_go(&["-c", conf.arg()]) {
        out.push(("go", conf, go));
    }
    out
}

/// Counts the log lines holding `needle`.
pub fn count(server: &ServerProcess, needle: &str) -> usize {
    server
        .log_lines()
        .iter()
        .filter(|l| l.contains(needle))
        .count()
}

/// Sends SIGHUP and waits for the `n`th outcome (success or failure) of a reload.
pub fn sighup(server: &ServerProcess, n: usize) {
    server.signal("HUP");
    let done = wait_until(WAIT, || {
        count(server, RELOADED) + count(server, FAILED) >= n
    });
    assert!(done, "no reload outcome:\n{}", server.log_text());
}

/// The text of the last log line holding `needle`, from `needle` on.
pub fn last_line_from(server: &ServerProcess, needle: &str) -> String {
    let lines = server.log_lines();
    let line = lines
        .iter()
        .rev()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{}", lines.join("\n")));
    line[line.find(needle).unwrap_or(0)..].to_owned()
}

pub fn connect(addr: &str, fields: &str) -> RawClient {
    let mut c = RawClient::connect(addr);
    let line = format!("CONNECT {{\"verbose\":false,\"pedantic\":false{fields}}}\r\n");
    assert_eq!(c.exchange(line.as_bytes()), "", "CONNECT {fields}");
    c
}

pub fn user(name: &str, pass: &str) -> String {
    format!(",\"user\":\"{name}\",\"pass\":\"{pass}\"")
}
