//! Process signals: trapping them in the running server, and `--signal CMD[=PID|PIDFILE]`,
//! which sends one to a running server from a second invocation of this binary.

use std::path::Path;

use natrium_conf::SignalCommand;

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

/// Resolves the target: a PID, a PID file, or (none given) the one running nats-server.
fn resolve_pid(target: Option<&str>) -> Result<i32, String> {
    match target {
        Some(t) if !t.is_empty() => {
            if let Ok(pid) = t.parse::<i32>() {
                return Ok(pid);
            }
            let text = std::fs::read_to_string(Path::new(t))
                .map_err(|e| format!("unable to read pid file {t}: {e}"))?;
            text.trim()
                .parse::<i32>()
                .map_err(|_| format!("invalid pid file {t}: {:?}", text.trim()))
        }
        _ => find_single_server(),
    }
}

fn find_single_server() -> Result<i32, String> {
    let output = std::process::Command::new("pgrep")
        .arg("-x")
        .arg("nats-server")
        .output()
        .map_err(|e| format!("unable to resolve pid, try providing one: {e}"))?;
    let me = std::process::id() as i32;
    let pids: Vec<i32> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .filter(|p| *p != me)
        .collect();
    match pids.as_slice() {
        [] => Err("no nats-server processes running".to_owned()),
        [pid] => Ok(*pid),
        many => {
            let list: Vec<String> = many.iter().map(ToString::to_string).collect();
            Err(format!(
                "multiple nats-server processes running:\n{}",
                list.join("\n")
            ))
        }
    }
}

/// Sends `command` to the target process.
pub fn send(command: SignalCommand, target: Option<&str>) -> Result<(), String> {
    let pid = resolve_pid(target)?;
    if kill(pid, signal_number(command)) {
        Ok(())
    } else {
        let err = std::io::Error::last_os_error();
        let reason = if err.raw_os_error() == Some(libc::ESRCH) {
            "no such process".to_owned()
        } else {
            err.to_string()
        };
        Err(format!("signal {:?} {pid}: {reason}", command.as_str()))
    }
}

#[allow(unsafe_code)]
fn kill(pid: i32, signal: libc::c_int) -> bool {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe { libc::kill(pid, signal) == 0 }
}
