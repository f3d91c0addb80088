//! `nats-server -t -c <file>` look-alike: prints what Go prints when checking a configuration
//! file, for differential testing against the Go binary. With `--parse-only` it prints the
//! digest of the parsed tree without applying options (to compare the language alone).

use std::io::Write;

use natrium_conf::{lang, ServerOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse_only = args.iter().any(|a| a == "--parse-only");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        let _ = writeln!(std::io::stderr(), "usage: conf_check [--parse-only] <file>");
        std::process::exit(2);
    };
    let result = if parse_only {
        lang::parse_file(path).map(|map| lang::config_digest(&map))
    } else {
        ServerOptions::load(path)
            .and_then(natrium_conf::LoadedConfig::strict)
            .map(|l| l.digest)
    };
    let mut err = std::io::stderr();
    match result {
        Ok(digest) => {
            let _ = writeln!(
                err,
                "nats-server: configuration file {path} is valid ({digest})"
            );
        }
        Err(e) => {
            let _ = write!(err, "{}", e.go_report());
            std::process::exit(1);
        }
    }
}
