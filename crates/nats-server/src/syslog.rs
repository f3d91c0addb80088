//! Logging to syslog, as Go's server does through Go's `log/syslog`:
//!
//! - `syslog: true` (`-s`): the local daemon, over the first of `/dev/log`, `/var/run/syslog`,
//!   `/var/run/log` that accepts a datagram (or stream) connection; lines are
//!   `<PRI>Jan _2 15:04:05 nats-server[pid]: message\n` with facility `daemon`.
//! - `remote_syslog: udp://host:port` (`-r`; also `tcp://`, `unix:///path`): lines are
//!   `<PRI>2006-01-02T15:04:05Z07:00 hostname nats-server[pid]: message\n`; Go dials with
//!   priority `LOG_DEBUG`, so the facility is 0 (kern) and PRI is the severity alone.
//!
//! Severities are Go's: info and trace as `notice`, warnings `warning`, errors `err`, fatal
//! `crit`, debug `debug`. The tag is the executable's file name. Messages carry no `[pid]`,
//! time or level prefix: syslog adds its own.

use std::io::Write as _;
use std::net::{TcpStream, UdpSocket};
use std::os::unix::net::{UnixDatagram, UnixStream};

/// Go's `syslog.LOG_DAEMON`.
const FACILITY_DAEMON: u8 = 3 << 3;
/// Where Go looks for the local syslog daemon, in order.
const LOCAL_SOCKETS: &[&str] = &["/dev/log", "/var/run/syslog", "/var/run/log"];

/// Syslog severities (RFC 5424 numbering) Go's logger uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Crit = 2,
    Err = 3,
    Warning = 4,
    Notice = 5,
    Debug = 7,
}

enum Conn {
    UnixDgram(UnixDatagram),
    UnixStream(UnixStream),
    Udp(UdpSocket),
    Tcp(TcpStream),
}

pub struct Syslog {
    conn: Conn,
    /// Local daemon (short time stamp, no host name, facility daemon) or remote.
    local: bool,
    tag: String,
    hostname: String,
}

/// The executable's file name, Go's syslog tag.
fn tag() -> String {
    std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "nats-server".to_owned())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_or_else(|_| "localhost".to_owned(), |h| h.trim().to_owned())
}

impl Syslog {
    /// Connects to the local daemon. The error is Go's text, for
    /// `error connecting to syslog: "…"`.
    pub fn local() -> Result<Self, String> {
        for path in LOCAL_SOCKETS {
            if let Ok(sock) = UnixDatagram::unbound() {
                if sock.connect(path).is_ok() {
                    return Ok(Self::new(Conn::UnixDgram(sock), true));
                }
            }
            if let Ok(stream) = UnixStream::connect(path) {
                return Ok(Self::new(Conn::UnixStream(stream), true));
            }
        }
        Err("Unix syslog delivery error".to_owned())
    }

    /// Connects to `udp://host:port`, `tcp://host:port` or `unix:///path`.
    pub fn remote(url: &str) -> Result<Self, String> {
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let io = |e: std::io::Error| format!("dial {scheme} {rest}: {e}");
        let conn = match scheme {
            "udp" => {
                let sock = UdpSocket::bind(("0.0.0.0", 0)).map_err(io)?;
                sock.connect(rest).map_err(io)?;
                Conn::Udp(sock)
            }
            "tcp" => Conn::Tcp(TcpStream::connect(rest).map_err(io)?),
            "unix" => Conn::UnixStream(UnixStream::connect(rest).map_err(io)?),
            _ => return Err(format!("error invalid network type: {scheme:?}")),
        };
        Ok(Self::new(conn, false))
    }

    fn new(conn: Conn, local: bool) -> Self {
        Self {
            conn,
            local,
            tag: tag(),
            hostname: hostname(),
        }
    }

    /// The whole line for one message, as Go's `log/syslog` frames it.
    fn frame(&self, severity: Severity, message: &str) -> String {
        let message = message.trim_end_matches('\n');
        let pid = std::process::id();
        if self.local {
            let pri = FACILITY_DAEMON | severity as u8;
            let stamp = chrono::Local::now().format("%b %e %H:%M:%S");
            format!("<{pri}>{stamp} {}[{pid}]: {message}\n", self.tag)
        } else {
            let pri = severity as u8;
            let stamp = chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
            format!(
                "<{pri}>{stamp} {} {}[{pid}]: {message}\n",
                self.hostname, self.tag
            )
        }
    }

    /// Sends one message; errors are dropped, as a logger has nowhere to report them.
    pub fn send(&mut self, severity: Severity, message: &str) {
        let line = self.frame(severity, message);
        let bytes = line.as_bytes();
        let _ = match &mut self.conn {
            Conn::UnixDgram(s) => s.send(bytes).map(drop),
            Conn::Udp(s) => s.send(bytes).map(drop),
            Conn::UnixStream(s) => s.write_all(bytes),
            Conn::Tcp(s) => s.write_all(bytes),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syslog_remote_frame_like_go() {
        let sock = UdpSocket::bind("127.0.0.1:0").ok();
        let Some(sock) = sock else { return };
        let port = sock.local_addr().map_or(0, |a| a.port());
        let Ok(log) = Syslog::remote(&format!("udp://127.0.0.1:{port}")) else {
            return;
        };
        let line = log.frame(Severity::Notice, "Server is ready\n");
        assert!(line.starts_with("<5>"), "{line}");
        assert!(line.ends_with(&format!(
            " {}[{}]: Server is ready\n",
            tag(),
            std::process::id()
        )));
        assert!(Syslog::remote("foo://x")
            .err()
            .is_some_and(|e| e == "error invalid network type: \"foo\""));
    }

    #[test]
    fn syslog_each_message_is_one_datagram_of_one_line() {
        let Ok(sock) = UdpSocket::bind("127.0.0.1:0") else {
            return;
        };
        let _ = sock.set_read_timeout(Some(std::time::Duration::from_secs(5)));
        let port = sock.local_addr().map_or(0, |a| a.port());
        let Ok(mut log) = Syslog::remote(&format!("udp://127.0.0.1:{port}")) else {
            return;
        };
        log.send(Severity::Notice, "Starting nats-server\n");
        log.send(Severity::Warning, "Slow Consumer Detected");
        let mut buf = [0u8; 2048];
        for want in ["Starting nats-server", "Slow Consumer Detected"] {
            let n = sock.recv(&mut buf).unwrap_or(0);
            let datagram = String::from_utf8_lossy(buf.get(..n).unwrap_or_default());
            assert!(datagram.ends_with(&format!(": {want}\n")), "{datagram:?}");
            assert_eq!(datagram.matches('\n').count(), 1, "{datagram:?}");
        }
    }
}
