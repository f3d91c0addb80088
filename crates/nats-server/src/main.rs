//! `nats-server`: reads flags and the configuration file, sets up logging, starts the runtime
//! and monitoring, writes the PID and ports files, and turns signals into reload, lame duck
//! and shutdown. No protocol logic lives here.
// Standard error takes whole lines in one write (`logging::to_stderr`); `eprint!` splits them.
#![deny(clippy::print_stderr)]

mod fdlimit;
mod files;
mod heap;
mod jetstream;
mod logfile;
mod logging;
mod reload;
mod run;
mod settings;
mod signals;
mod syslog;

use std::io::Write as _;
use std::process::ExitCode;

use natrium_conf::cli::{parse_args, CliCommand};

fn main() -> ExitCode {
    heap::cap_arenas();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse_args(&args) {
        Ok(command) => command,
        Err(err) => {
            // Go's flag package prints the error, then the usage, and exits 0; other command
            // line errors are printed as `nats-server: …` with status 1.
            if err.is_usage_error() {
                logging::to_stderr(&format!("{err}\n"));
                print_out(natrium_conf::cli::HELP_TEXT);
            } else {
                logging::to_stderr(&format!("nats-server: {err}\n"));
            }
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(1));
        }
    };
    match command {
        CliCommand::Version => {
            print_out(&format!(
                "nats-server: v{}",
                natrium_core::info::COMPATIBLE_VERSION
            ));
            ExitCode::SUCCESS
        }
        CliCommand::Help => {
            print_out(natrium_conf::cli::HELP_TEXT);
            ExitCode::SUCCESS
        }
        CliCommand::HelpTls => {
            print_out(natrium_conf::cli::TLS_HELP_TEXT);
            ExitCode::SUCCESS
        }
        CliCommand::Signal { command, target } => match signals::send(command, target.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                logging::to_stderr(&format!("nats-server: {err}\n"));
                ExitCode::from(1)
            }
        },
        CliCommand::TestConfig(flags) => match test_config(&flags) {
            Ok(message) => {
                logging::to_stderr(&format!("{message}\n"));
                ExitCode::SUCCESS
            }
            Err(err) => {
                logging::to_stderr(&err.go_report());
                ExitCode::from(1)
            }
        },
        CliCommand::Run(flags) => run::run(&flags),
    }
}

/// Prints a line to standard output, ignoring a closed pipe (`nats-server -h | head`), where
/// `println!` would panic.
fn print_out(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// `-t`: Go fails on warnings too, and reports the file's digest when it is valid.
fn test_config(flags: &natrium_conf::Flags) -> Result<String, natrium_conf::ConfError> {
    let file = flags.config_file.clone().unwrap_or_default();
    let loaded = natrium_conf::ServerOptions::load(&file)?.strict()?;
    // Go loads the certificate, key and CA files while reading the configuration.
    let mut options = loaded.options.clone();
    options.apply_baseline();
    settings::client_tls(&options)?;
    settings::websocket_tls(&options)?;
    Ok(format!(
        "nats-server: configuration file {file} is valid ({})",
        loaded.digest
    ))
}
