//! `--signal CMD[=PID|PIDFILE]`: sends a signal to a running server from a second invocation of
//! this binary, with Go's resolution rules and error texts (scripts compare them):
//!
//! - `=X`: if a file `X` can be read, its contents are the PID; otherwise `X` itself is.
//!   A trailing `*` makes the PID a prefix matched against the running `nats-server`s.
//! - no PID: `pgrep nats-server`, without this process; exactly one must be running.
//! - failures: `invalid pid: X`, `no nats-server processes running`,
//!   `multiple nats-server processes running:\n<pid>…`, and per PID
//!   `\nsignal "quit" 1234: no such process` (Go starts each with a newline).
//!
//! One deliberate difference: Go parses a PID file's contents as they are, so a file ending in a
//! newline (as `echo $$ > file` writes) is refused; we ignore surrounding whitespace.

use std::fmt::Write as _;

use natrium_conf::SignalCommand;
use natrium_core::server::go_os_error;

const PROCESS_NAME: &str = "nats-server";

fn signal_number(command: SignalCommand) -> libc::c_int {
    match command {
        SignalCommand::Stop => libc::SIGKILL,
        SignalCommand::Quit => libc::SIGINT,
        SignalCommand::Reopen => libc::SIGUSR1,
        SignalCommand::Reload => libc::SIGHUP,
        SignalCommand::Ldm => libc::SIGUSR2,
        SignalCommand::Term => libc::SIGTERM,
    }
}

/// `=X`: the contents of file `X` when it can be read, else `X`.
fn pid_expression(target: Option<&str>) -> String {
    match target {
        Some(t) if !t.is_empty() => match std::fs::read_to_string(t) {
            Ok(text) => text.trim().to_owned(),
            Err(_) => t.to_owned(),
        },
        _ => String::new(),
    }
}

/// The `nats-server` processes other than this one, as `pgrep` lists them.
fn running_servers() -> Result<Vec<i32>, String> {
    let unable = || "unable to resolve pid, try providing one".to_owned();
    // pgrep exits 1 when nothing matches: that is an empty list, not an error.
    let output = std::process::Command::new("pgrep")
        .arg(PROCESS_NAME)
        .output()
        .map_err(|_| unable())?;
    let me = std::process::id() as i32;
    let mut pids = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if line.is_empty() {
            continue;
        }
        let pid: i32 = line.parse().map_err(|_| unable())?;
        if pid != me {
            pids.push(pid);
        }
    }
    Ok(pids)
}

/// Sends `command` to the process(es) `target` names.
pub fn send(command: SignalCommand, target: Option<&str>) -> Result<(), String> {
    let expression = pid_expression(target);
    let is_glob = expression.ends_with('*');
    let prefix = expression.trim_end_matches('*');
    let mut pids = Vec::new();
    if !prefix.is_empty() {
        pids.push(
            prefix
                .parse::<i32>()
                .map_err(|_| format!("invalid pid: {prefix}"))?,
        );
    }
    if prefix.is_empty() || is_glob {
        pids = running_servers()?;
    }
    if pids.len() > 1 && !is_glob {
        let list = pids.iter().fold(String::new(), |mut list, p| {
            let _ = write!(list, "\n{p}");
            list
        });
        return Err(format!("multiple {PROCESS_NAME} processes running:{list}"));
    }
    if pids.is_empty() {
        return Err(format!("no {PROCESS_NAME} processes running"));
    }
    let mut errors = String::new();
    for pid in pids {
        let text = pid.to_string();
        if !prefix.is_empty() && text != prefix && !(is_glob && text.starts_with(prefix)) {
            continue;
        }
        if let Err(err) = kill(pid, signal_number(command)) {
            let _ = write!(
                errors,
                "\nsignal {:?} {pid}: {}",
                command.as_str(),
                go_os_error(&err)
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[allow(unsafe_code)]
fn kill(pid: i32, signal: libc::c_int) -> std::io::Result<()> {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
