//! The `nats-server` command line: Go-compatible flag parsing into a [`CliCommand`], and
//! [`merge`] of the flags over the options read from the configuration file.
//!
//! Precedence follows Go: a flag syntax error first; then `-v`, `-h`, `--help_tls`; then stray
//! arguments (`unrecognized command`); then `--signal`; then `-t`. Flags for features Natrium
//! does not implement yet parse (so that their syntax errors match Go) but then refuse with
//! [`CliError::NotSupportedYet`].

mod flagset;
mod help;
mod merge;

pub use help::{HELP_TEXT, TLS_HELP_TEXT};
pub use merge::merge;

use flagset::FlagValue;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum CliCommand {
    /// Start the server.
    Run(Flags),
    /// `-v`: print `nats-server: v<version>` and exit 0.
    Version,
    /// `-h`: print [`HELP_TEXT`] to standard output and exit 0.
    Help,
    /// `--help_tls`: print [`TLS_HELP_TEXT`] and exit 0.
    HelpTls,
    /// `--signal cmd[=pid|pidfile]`: signal a running server.
    Signal {
        /// What to send.
        command: SignalCommand,
        /// The PID or PID file given after `=`; `None` means find the server processes.
        target: Option<String>,
    },
    /// `-t`: check the configuration file (`-c`, always present here) and exit.
    TestConfig(Flags),
}

/// The commands `--signal` accepts (case-sensitive, as in Go).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalCommand {
    /// `stop`: SIGKILL.
    Stop,
    /// `quit`: SIGINT.
    Quit,
    /// `term`: SIGTERM.
    Term,
    /// `reopen`: SIGUSR1, reopen the log file.
    Reopen,
    /// `reload`: SIGHUP, reload the configuration.
    Reload,
    /// `ldm`: SIGUSR2, enter lame-duck mode.
    Ldm,
}

impl SignalCommand {
    /// Parses the command word.
    pub fn parse(word: &str) -> Option<SignalCommand> {
        Some(match word {
            "stop" => Self::Stop,
            "quit" => Self::Quit,
            "term" => Self::Term,
            "reopen" => Self::Reopen,
            "reload" => Self::Reload,
            "ldm" => Self::Ldm,
            _ => return None,
        })
    }

    /// The command word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Quit => "quit",
            Self::Term => "term",
            Self::Reopen => "reopen",
            Self::Reload => "reload",
            Self::Ldm => "ldm",
        }
    }

    /// The Unix signal Go sends for it.
    pub fn unix_signal_name(self) -> &'static str {
        match self {
            Self::Stop => "SIGKILL",
            Self::Quit => "SIGINT",
            Self::Term => "SIGTERM",
            Self::Reopen => "SIGUSR1",
            Self::Reload => "SIGHUP",
            Self::Ldm => "SIGUSR2",
        }
    }
}

/// The options given on the command line. `None` means the flag was not given, so the file (or
/// the default) applies; a given flag overrides the file even when it repeats the default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Flags {
    /// `-c`, `--config`.
    pub config_file: Option<String>,
    /// `-a`, `--addr`, `--net`.
    pub host: Option<String>,
    /// `-p`, `--port`.
    pub port: Option<i64>,
    /// `-n`, `--name`, `--server_name`.
    pub server_name: Option<String>,
    /// `-P`, `--pid`.
    pub pidfile: Option<String>,
    /// `-m`, `--http_port`.
    pub http_port: Option<i64>,
    /// `--ms`, `--https_port`.
    pub https_port: Option<i64>,
    /// `--client_advertise`.
    pub client_advertise: Option<String>,
    /// `--ports_file_dir`.
    pub ports_file_dir: Option<String>,
    /// `--user`.
    pub username: Option<String>,
    /// `--pass`.
    pub password: Option<String>,
    /// `--auth`.
    pub authorization: Option<String>,
    /// `-l`, `--log`.
    pub logfile: Option<String>,
    /// `-T`, `--logtime`.
    pub logtime: Option<bool>,
    /// `--logtime_utc`.
    pub logtime_utc: Option<bool>,
    /// `-s`, `--syslog`.
    pub syslog: Option<bool>,
    /// `-r`, `--remote_syslog`.
    pub remote_syslog: Option<String>,
    /// `-D`, `--debug` (also `-DV`, `-DVV`).
    pub debug: Option<bool>,
    /// `-V`, `--trace` (also `-VV`, `-DV`, `-DVV`).
    pub trace: Option<bool>,
    /// `-VV`, `-DVV`.
    pub trace_verbose: Option<bool>,
    /// `--log_size_limit`.
    pub log_size_limit: Option<i64>,
    /// `--max_traced_msg_len`.
    pub max_traced_msg_len: Option<i64>,
    /// `--tls`: `false` turns TLS off whatever else is given; `true` (like any other `--tls*`
    /// flag) replaces the file's TLS files with the flags'.
    pub tls: Option<bool>,
    /// `--tlscert`.
    pub tls_cert: Option<String>,
    /// `--tlskey`.
    pub tls_key: Option<String>,
    /// `--tlscacert`.
    pub tls_ca_cert: Option<String>,
    /// `--tlsverify`.
    pub tls_verify: Option<bool>,
    /// `-sd`, `--store_dir`: JetStream's directory.
    pub store_dir: Option<String>,
    /// `-js`, `--jetstream`: run JetStream.
    pub jetstream: Option<bool>,
}

impl Flags {
    /// Whether any `--tls*` flag was given (Go then rebuilds the TLS configuration from them).
    pub fn has_tls_flags(&self) -> bool {
        self.tls.is_some()
            || self.tls_cert.is_some()
            || self.tls_key.is_some()
            || self.tls_ca_cert.is_some()
            || self.tls_verify.is_some()
    }
}

/// A command line Go's `nats-server` would refuse, with its wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    /// `flag provided but not defined: -foo`.
    #[error("flag provided but not defined: -{0}")]
    Undefined(String),
    /// `flag needs an argument: -p`.
    #[error("flag needs an argument: -{0}")]
    MissingArgument(String),
    /// `invalid value "abc" for flag -p: parse error`.
    #[error("invalid value \"{value}\" for flag -{flag}: {reason}")]
    InvalidValue {
        /// Flag name as written, without dashes.
        flag: String,
        /// The value given.
        value: String,
        /// `parse error` or `value out of range`.
        reason: &'static str,
    },
    /// `invalid boolean value "maybe" for -D: parse error`.
    #[error("invalid boolean value \"{value}\" for -{flag}: parse error")]
    InvalidBool {
        /// Flag name as written, without dashes.
        flag: String,
        /// The value given.
        value: String,
    },
    /// `bad flag syntax: ---config`.
    #[error("bad flag syntax: {0}")]
    BadSyntax(String),
    /// `unrecognized command: "extra"`.
    #[error("unrecognized command: \"{0}\"")]
    UnrecognizedCommand(String),
    /// `-t` without `-c`.
    #[error("must specify [-c, --config] option to check configuration file syntax")]
    TestWithoutConfig,
    /// `unknown signal "foo"`.
    #[error("unknown signal \"{0}\"")]
    UnknownSignal(String),
    /// `invalid signal parameters: [a b]` (more than one `=`).
    #[error("invalid signal parameters: [{}]", .0.join(" "))]
    InvalidSignalParameters(Vec<String>),
    /// A flag for a feature Natrium does not implement yet.
    #[error("flag -{flag} is not supported yet")]
    NotSupportedYet {
        /// Flag name as written, without dashes.
        flag: String,
    },
}

impl CliError {
    /// Errors from Go's `flag` package: Go prints the message alone on standard error, then the
    /// usage text on standard output, and exits with status 0.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            Self::Undefined(_)
                | Self::MissingArgument(_)
                | Self::InvalidValue { .. }
                | Self::InvalidBool { .. }
                | Self::BadSyntax(_)
        )
    }

    /// The exit status Go uses: 0 after a usage error, 1 otherwise (printed as
    /// `nats-server: <message>`).
    pub fn exit_code(&self) -> i32 {
        i32::from(!self.is_usage_error())
    }
}

/// Flags that exist in Go and switch on (or, like `--cluster_name`, show clients) a feature
/// Natrium does not implement yet. Flags that only tune a missing feature are accepted and
/// ignored: `--no_advertise`, `--cluster_advertise`, `--connect_retries` (clustering).
const NOT_SUPPORTED_YET: &[&str] = &[
    "routes",
    "cluster",
    "cluster_name",
    "cluster_listen",
    "profile",
];

#[derive(Default)]
struct Modes {
    version: bool,
    help: bool,
    help_tls: bool,
    test: bool,
    signal: Option<String>,
    unsupported: Option<String>,
}

/// Parses the arguments after the program name.
pub fn parse_args(args: &[String]) -> Result<CliCommand, CliError> {
    let (set, rest) = flagset::parse(args)?;
    let mut flags = Flags::default();
    let mut modes = Modes::default();
    for (name, value) in set {
        apply_flag(&mut flags, &mut modes, &name, value);
    }
    if modes.version {
        return Ok(CliCommand::Version);
    }
    if modes.help {
        return Ok(CliCommand::Help);
    }
    if modes.help_tls {
        return Ok(CliCommand::HelpTls);
    }
    if let Some(first) = rest.first() {
        return Err(CliError::UnrecognizedCommand(first.clone()));
    }
    if let Some(signal) = modes.signal {
        return parse_signal(&signal);
    }
    if let Some(flag) = modes.unsupported {
        return Err(CliError::NotSupportedYet { flag });
    }
    if modes.test {
        if flags.config_file.as_deref().unwrap_or("").is_empty() {
            return Err(CliError::TestWithoutConfig);
        }
        return Ok(CliCommand::TestConfig(flags));
    }
    Ok(CliCommand::Run(flags))
}

fn parse_signal(text: &str) -> Result<CliCommand, CliError> {
    let mut parts = text.split('=');
    let word = parts.next().unwrap_or("");
    let target = parts.next().filter(|t| !t.is_empty()).map(str::to_owned);
    let extra: Vec<String> = parts.map(str::to_owned).collect();
    if !extra.is_empty() {
        return Err(CliError::InvalidSignalParameters(extra));
    }
    let command = SignalCommand::parse(word).ok_or_else(|| CliError::UnknownSignal(word.into()))?;
    Ok(CliCommand::Signal { command, target })
}

fn apply_flag(flags: &mut Flags, modes: &mut Modes, name: &str, value: FlagValue) {
    let (b, n, s) = match value {
        FlagValue::Bool(b) => (Some(b), None, None),
        FlagValue::Int(n) => (None, Some(n), None),
        FlagValue::Str(s) => (None, None, Some(s)),
    };
    match name {
        "a" | "addr" | "net" => flags.host = s,
        "p" | "port" => flags.port = n,
        "n" | "name" | "server_name" => flags.server_name = s,
        "P" | "pid" => flags.pidfile = s,
        "m" | "http_port" => flags.http_port = n,
        "ms" | "https_port" => flags.https_port = n,
        "c" | "config" => flags.config_file = s,
        "t" => modes.test = b.unwrap_or(false),
        "sl" | "signal" => modes.signal = s.filter(|s| !s.is_empty()),
        "client_advertise" => flags.client_advertise = s,
        "ports_file_dir" => flags.ports_file_dir = s,
        "user" => flags.username = s,
        "pass" => flags.password = s,
        "auth" => flags.authorization = s,
        "l" | "log" => flags.logfile = s,
        "T" | "logtime" => flags.logtime = b,
        "logtime_utc" => flags.logtime_utc = b,
        "s" | "syslog" => flags.syslog = b,
        "r" | "remote_syslog" => flags.remote_syslog = s,
        "D" | "debug" => flags.debug = b,
        "V" | "trace" => flags.trace = b,
        "VV" => (flags.trace, flags.trace_verbose) = (b, b),
        "DV" => (flags.debug, flags.trace) = (b, b),
        "DVV" => (flags.debug, flags.trace, flags.trace_verbose) = (b, b, b),
        "log_size_limit" => flags.log_size_limit = n,
        "max_traced_msg_len" => flags.max_traced_msg_len = n,
        "tls" => flags.tls = b,
        "tlscert" => flags.tls_cert = s,
        "tlskey" => flags.tls_key = s,
        "tlscacert" => flags.tls_ca_cert = s,
        "tlsverify" => flags.tls_verify = b,
        "h" | "help" => modes.help = b.unwrap_or(false),
        "v" | "version" => modes.version = b.unwrap_or(false),
        "help_tls" => modes.help_tls = b.unwrap_or(false),
        "sd" | "store_dir" => flags.store_dir = s,
        "js" | "jetstream" => flags.jetstream = b,
        // `-js=false`, `--profile 0`, `--routes ""` ask for nothing Natrium lacks: only a flag
        // that switches something on counts.
        other
            if NOT_SUPPORTED_YET.contains(&other)
                && b != Some(false)
                && n != Some(0)
                && s.as_deref() != Some("")
                && modes.unsupported.is_none() =>
        {
            modes.unsupported = Some(other.to_owned());
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
