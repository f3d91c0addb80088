//! Command-line tests; expected texts recorded from `nats-server` v2.15.2.

use super::*;
use crate::options::ServerOptions;

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn run_flags(line: &str) -> Flags {
    match parse_args(&args(line)) {
        Ok(CliCommand::Run(flags)) => flags,
        other => panic!("{line:?}: {other:?}"),
    }
}

fn error(line: &str) -> CliError {
    parse_args(&args(line)).expect_err(line)
}

#[test]
fn cli_flag_syntax_forms() {
    for line in ["-p 5", "--p 5", "-p=5", "--port=5", "-port 5", "--port 5"] {
        assert_eq!(run_flags(line).port, Some(5), "{line}");
    }
    assert_eq!(run_flags("-p 1 -p 2").port, Some(2));
    assert_eq!(run_flags("-p 0x10").port, Some(16));
    assert_eq!(run_flags("-p -1").port, Some(-1));
    assert_eq!(run_flags("").port, None);
}

#[test]
fn cli_aliases_fill_the_same_option() {
    for line in ["-a 1.2.3.4", "--addr 1.2.3.4", "--net=1.2.3.4"] {
        assert_eq!(run_flags(line).host.as_deref(), Some("1.2.3.4"), "{line}");
    }
    for line in ["-n x", "--name x", "--server_name x"] {
        assert_eq!(run_flags(line).server_name.as_deref(), Some("x"), "{line}");
    }
    let f = run_flags(
        "-P p.pid -m 8222 -c n.conf -l n.log -r udp://h:514 --client_advertise h:1 \
         --ports_file_dir /tmp --log_size_limit 100 --max_traced_msg_len 10",
    );
    assert_eq!(f.pidfile.as_deref(), Some("p.pid"));
    assert_eq!(f.http_port, Some(8222));
    assert_eq!(f.config_file.as_deref(), Some("n.conf"));
    assert_eq!(f.logfile.as_deref(), Some("n.log"));
    assert_eq!(f.remote_syslog.as_deref(), Some("udp://h:514"));
    assert_eq!(f.client_advertise.as_deref(), Some("h:1"));
    assert_eq!(f.ports_file_dir.as_deref(), Some("/tmp"));
    assert_eq!(f.log_size_limit, Some(100));
    assert_eq!(f.max_traced_msg_len, Some(10));
}

#[test]
fn cli_booleans() {
    let f = run_flags("-D -V -s --logtime_utc");
    assert_eq!(
        (f.debug, f.trace, f.syslog, f.logtime_utc),
        (Some(true), Some(true), Some(true), Some(true))
    );
    assert_eq!(run_flags("-D=false").debug, Some(false));
    assert_eq!(run_flags("-T=false").logtime, Some(false));
    assert_eq!(run_flags("-D=1").debug, Some(true));
    let f = run_flags("-DV");
    assert_eq!(
        (f.debug, f.trace, f.trace_verbose),
        (Some(true), Some(true), None)
    );
    let f = run_flags("-VV");
    assert_eq!(
        (f.debug, f.trace, f.trace_verbose),
        (None, Some(true), Some(true))
    );
    let f = run_flags("-DVV");
    assert_eq!(
        (f.debug, f.trace, f.trace_verbose),
        (Some(true), Some(true), Some(true))
    );
    // A boolean does not take the next argument: it becomes a stray argument.
    assert_eq!(
        error("-D false").to_string(),
        "unrecognized command: \"false\""
    );
}

#[test]
fn cli_errors_worded_like_go() {
    let cases = [
        ("--foo", "flag provided but not defined: -foo"),
        ("-foo=1", "flag provided but not defined: -foo"),
        ("-p", "flag needs an argument: -p"),
        ("-p abc", "invalid value \"abc\" for flag -p: parse error"),
        (
            "--log_size_limit 1MB",
            "invalid value \"1MB\" for flag -log_size_limit: parse error",
        ),
        (
            "-p 99999999999999999999",
            "invalid value \"99999999999999999999\" for flag -p: value out of range",
        ),
        (
            "-D=maybe",
            "invalid boolean value \"maybe\" for -D: parse error",
        ),
        ("-D=", "invalid boolean value \"\" for -D: parse error"),
        ("---config", "bad flag syntax: ---config"),
        ("extra", "unrecognized command: \"extra\""),
        ("-", "unrecognized command: \"-\""),
        ("-c x.conf -- -p", "unrecognized command: \"-p\""),
        (
            "-t",
            "must specify [-c, --config] option to check configuration file syntax",
        ),
        ("-sl foo=1", "unknown signal \"foo\""),
        ("-sl STOP", "unknown signal \"STOP\""),
        ("-sl stop=abc=def", "invalid signal parameters: [def]"),
        ("--routes nats://h:1", "flag -routes is not supported yet"),
        (
            "--cluster_name c1",
            "flag -cluster_name is not supported yet",
        ),
        ("--profile 6060", "flag -profile is not supported yet"),
    ];
    for (line, want) in cases {
        assert_eq!(error(line).to_string(), want, "{line}");
    }
    assert!(error("--foo").is_usage_error());
    assert_eq!(error("--foo").exit_code(), 0);
    assert_eq!(error("extra").exit_code(), 1);
}

#[test]
fn cli_precedence_like_go() {
    assert_eq!(parse_args(&args("-v -h")), Ok(CliCommand::Version));
    assert_eq!(parse_args(&args("-h -v")), Ok(CliCommand::Version));
    assert_eq!(parse_args(&args("-t -v")), Ok(CliCommand::Version));
    assert_eq!(parse_args(&args("--help_tls -h")), Ok(CliCommand::Help));
    assert_eq!(parse_args(&args("--help_tls")), Ok(CliCommand::HelpTls));
    assert_eq!(parse_args(&args("-v extra")), Ok(CliCommand::Version));
    assert_eq!(parse_args(&args("-h extra")), Ok(CliCommand::Help));
    assert_eq!(parse_args(&args("--user x -v")), Ok(CliCommand::Version));
    assert_eq!(parse_args(&args("-v=false -h")), Ok(CliCommand::Help));
    // Flag errors come first, even before -v.
    assert!(parse_args(&args("-v -p abc")).is_err());
    // Stray arguments come before signals, signals before -t.
    assert_eq!(
        error("-sl stop extra").to_string(),
        "unrecognized command: \"extra\""
    );
    assert_eq!(
        parse_args(&args("-sl reload -t -c x.conf")),
        Ok(CliCommand::Signal {
            command: SignalCommand::Reload,
            target: None
        })
    );
    assert_eq!(run_flags("-js=false").config_file, None);
}

#[test]
fn cli_signal_targets() {
    let sig = |line: &str| parse_args(&args(line));
    assert_eq!(
        sig("--signal stop"),
        Ok(CliCommand::Signal {
            command: SignalCommand::Stop,
            target: None
        })
    );
    assert_eq!(
        sig("-sl reload=/var/run/nats.pid"),
        Ok(CliCommand::Signal {
            command: SignalCommand::Reload,
            target: Some("/var/run/nats.pid".into())
        })
    );
    assert_eq!(
        sig("-sl ldm=123"),
        Ok(CliCommand::Signal {
            command: SignalCommand::Ldm,
            target: Some("123".into())
        })
    );
    assert_eq!(
        sig("-sl quit="),
        Ok(CliCommand::Signal {
            command: SignalCommand::Quit,
            target: None
        })
    );
    for (word, unix) in [
        ("stop", "SIGKILL"),
        ("quit", "SIGINT"),
        ("term", "SIGTERM"),
        ("reopen", "SIGUSR1"),
        ("reload", "SIGHUP"),
        ("ldm", "SIGUSR2"),
    ] {
        let c = SignalCommand::parse(word).unwrap();
        assert_eq!((c.as_str(), c.unix_signal_name()), (word, unix));
    }
}

#[test]
fn cli_test_config_mode() {
    match parse_args(&args("-t -c n.conf -D")) {
        Ok(CliCommand::TestConfig(f)) => {
            assert_eq!(f.config_file.as_deref(), Some("n.conf"));
            assert_eq!(f.debug, Some(true));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse_args(&args("-c n.conf -t=true")),
        Ok(CliCommand::TestConfig(_))
    ));
    assert!(matches!(
        parse_args(&args("-c n.conf -t=false")),
        Ok(CliCommand::Run(_))
    ));
}

#[test]
fn cli_merge_flags_override_file() {
    let mut file = ServerOptions {
        debug: true,
        logtime: false,
        port: -1,
        ..ServerOptions::default()
    };
    file.host = "10.0.0.1".into();
    file.server_name = "from-file".into();
    let merged = merge(file.clone(), &run_flags("-D=false -T -p 0 -n from-flag"));
    assert!(!merged.debug);
    assert!(merged.logtime);
    // `-p 0` is given, so it wins, and the baseline turns 0 into Go's default port.
    assert_eq!(merged.port, 4222);
    assert_eq!(merged.server_name, "from-flag");
    assert_eq!(merged.host, "10.0.0.1");
    assert_eq!(merged.http_host, "10.0.0.1");
    // Nothing given: the file stays.
    let merged = merge(file, &Flags::default());
    assert!(merged.debug && !merged.logtime);
    assert_eq!(merged.port, -1);
    assert_eq!(merged.server_name, "from-file");
}

#[test]
fn cli_help_lists_every_flag() {
    for (name, _) in flagset::FLAGS {
        let dashed = format!("-{name}");
        assert!(HELP_TEXT.contains(&dashed), "help text lacks {dashed}");
    }
    assert!(HELP_TEXT.starts_with("\nUsage: nats-server [options]\n"));
}

#[test]
fn cli_tls_flags_parse() {
    let f = run_flags("--tls --tlscert c.pem --tlskey k.pem --tlscacert ca.pem --tlsverify");
    assert_eq!(f.tls, Some(true));
    assert_eq!(f.tls_cert.as_deref(), Some("c.pem"));
    assert_eq!(f.tls_key.as_deref(), Some("k.pem"));
    assert_eq!(f.tls_ca_cert.as_deref(), Some("ca.pem"));
    assert_eq!(f.tls_verify, Some(true));
    assert!(f.has_tls_flags());
    assert!(!run_flags("-p 1").has_tls_flags());
}

#[test]
fn cli_tls_flags_merge_like_go() {
    let file = crate::lang::parse_str(
        "tls { cert_file: \"f.pem\", key_file: \"fk.pem\", handshake_first: true, \
         cipher_suites: [\"TLS_AES_128_GCM_SHA256\"] }",
        "f.conf",
    )
    .unwrap();
    let file = ServerOptions::from_map(&file, "f.conf").unwrap().options;
    // Any --tls* flag rebuilds the files from the flags; the rest of the block stays.
    let o = merge(
        file.clone(),
        &run_flags("--tlscert c.pem --tlskey k.pem --tlsverify"),
    );
    let tls = o.tls.clone().unwrap();
    assert_eq!(
        (tls.cert_file.as_str(), tls.key_file.as_str()),
        ("c.pem", "k.pem")
    );
    assert!(tls.verify && tls.handshake_first && tls.pos.is_none());
    assert_eq!(tls.cipher_suites, None);
    assert!(o.validate().is_ok());
    // --tls=false wins over everything, whatever the order.
    assert!(
        merge(file.clone(), &run_flags("--tlscert c.pem --tls=false"))
            .tls
            .is_none()
    );
    assert!(merge(file.clone(), &run_flags("-p 5")).tls.is_some());
    let no_key = merge(
        ServerOptions::default(),
        &run_flags("--tls --tlscert c.pem"),
    );
    assert_eq!(
        no_key.validate().unwrap_err().to_string(),
        "TLS Server private key must be present and valid"
    );
    let nothing = merge(ServerOptions::default(), &run_flags("--tlsverify"));
    assert_eq!(
        nothing.validate().unwrap_err().go_report(),
        "nats-server: TLS Server certificate must be present and valid\n"
    );
}

#[test]
fn cli_tls_help_lists_what_is_supported() {
    for name in crate::options::supported_cipher_suites().chain(crate::options::supported_curves())
    {
        assert!(TLS_HELP_TEXT.contains(&format!("\n    {name}\n")), "{name}");
    }
}

/// Flags that only tune a missing feature, or give a switch its "off" value, start the server.
#[test]
fn cli_inert_flags_accepted() {
    for line in [
        "-sd /tmp/js",
        "--store_dir=/tmp/js",
        "-js=false -sd /tmp/js",
        "--no_advertise",
        "--cluster_advertise h:4248",
        "--connect_retries 5",
        "--profile 0",
        "--routes=",
    ] {
        assert!(
            matches!(parse_args(&args(line)), Ok(CliCommand::Run(_))),
            "{line}"
        );
    }
    assert_eq!(
        run_flags("-sd /tmp/js").store_dir.as_deref(),
        Some("/tmp/js")
    );
    let merged = merge(ServerOptions::default(), &run_flags("--store_dir x"));
    assert_eq!(merged.store_dir, "x");
}
