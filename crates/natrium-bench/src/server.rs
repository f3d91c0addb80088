//! Starting a server under test (ours or Go's) on a free loopback port, and reading its
//! resident memory and CPU time from /proc.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context, Result};

#[derive(Debug, Clone)]
pub struct Target {
    pub name: &'static str,
    pub binary: PathBuf,
}

pub struct Running {
    child: Child,
    pub port: u16,
    /// The websocket port, when the server was started with a websocket listener.
    pub ws_port: Option<u16>,
}

/// The port at the end of a `… on host:port` log line, after `marker`.
fn port_after(line: &str, marker: &str) -> Option<u16> {
    line.split(marker)
        .nth(1)?
        .trim()
        .rsplit(':')
        .next()?
        .parse()
        .ok()
}

impl Running {
    pub fn start(target: &Target, extra: &[&str]) -> Result<Self> {
        let mut child = Command::new(&target.binary)
            .args(["-a", "127.0.0.1", "-p", "-1"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", target.binary.display()))?;
        let stderr = child.stderr.take().context("stderr")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut port, mut ws_port) = (None, None);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(p) = port_after(&line, "Listening for client connections on ") {
                    port = Some(p);
                }
                if let Some(p) = port_after(&line, "Listening for websocket clients on ") {
                    ws_port = Some(p);
                }
                if line.contains("Server is ready") {
                    let _ = tx.send(port.map(|p| (p, ws_port)));
                }
            }
        });
        if let Ok(Some((port, ws_port))) = rx.recv_timeout(Duration::from_secs(20)) {
            return Ok(Self {
                child,
                port,
                ws_port,
            });
        }
        let _ = child.kill();
        bail!("{} did not start", target.name)
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The websocket listener's address, when there is one.
    pub fn ws_addr(&self) -> Option<String> {
        self.ws_port.map(|p| format!("127.0.0.1:{p}"))
    }

    fn status_kb(&self, key: &str) -> u64 {
        let path = format!("/proc/{}/status", self.child.id());
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| {
                s.lines().find(|l| l.starts_with(key)).and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u64>().ok())
                })
            })
            .unwrap_or(0)
    }

    /// Current resident memory in bytes.
    pub fn rss_bytes(&self) -> u64 {
        self.status_kb("VmRSS:") * 1024
    }

    /// Peak resident memory since start, in bytes.
    pub fn peak_rss_bytes(&self) -> u64 {
        self.status_kb("VmHWM:") * 1024
    }

    /// User + system CPU seconds used so far.
    pub fn cpu_seconds(&self) -> f64 {
        natrium_monitor::process::cpu_seconds_of(&self.child.id().to_string())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
