//! `natrium-bench`: runs each scenario against the Go reference server and Natrium in turns
//! (A B, B A, … for `--rounds`), fresh servers per run, and writes a Markdown table of medians.
//!
//! Usage: `natrium-bench --go PATH --ours PATH [--rounds 3] [--messages N] [--seconds S]
//! [--frames-per-write N] [--only SUBSTRING[,SUBSTRING…]] [--out FILE] [--smoke]`. `--only`
//! keeps the rows whose name contains the whole argument when some row does (names such as
//! "JetStream KV get (file, 1,000 keys)" hold commas), else those containing any of its
//! comma-separated parts. `--smoke`
//! runs each scenario once, briefly, against Natrium alone (CI uses it so the harness never
//! silently breaks).

mod jetstream;
mod js_consume;
mod js_fetch;
mod js_kv;
mod js_mirror;
mod outcome;
mod report;
mod scenarios;
mod server;
mod wire;
mod ws;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use report::{Measurement, Row};
use scenarios::{Budget, Kind};
use server::{Running, Target};
use wire::Endpoint;

/// Certificates for the TLS rows, generated once per run, and the client configuration
/// trusting them. Both servers get the same `--tls --tlscert --tlskey` flags.
struct TlsSetup {
    certs: natrium_tests::TestCerts,
    client: std::sync::Arc<rustls::ClientConfig>,
}

impl TlsSetup {
    fn new() -> Result<Self> {
        let certs = natrium_tests::TestCerts::generate();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(rustls::pki_types::CertificateDer::from(
            certs.ca_der().to_vec(),
        ))?;
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            certs,
            client: std::sync::Arc::new(client),
        })
    }

    fn server_args(&self) -> Vec<String> {
        vec![
            "--tls".to_owned(),
            "--tlscert".to_owned(),
            self.certs.file("server.pem"),
            "--tlskey".to_owned(),
            self.certs.file("server-key.pem"),
        ]
    }
}

/// A plain websocket listener on a free loopback port.
const WS_CONFIG: &str = "websocket {\n  listen: \"127.0.0.1:-1\"\n  no_tls: true\n}\n";

/// Account A exports `bench.>`, B imports it; clients without credentials land in A.
const IMPORT_CONFIG: &str = "accounts {
  A { users [{user: a, password: a}], exports [{stream: \"bench.>\"}] }
  B { users [{user: b, password: b}], imports [{stream: {account: A, subject: \"bench.>\"}}] }
}
no_auth_user: a
";

/// A configuration file both servers read, removed with its directory.
struct ConfigFile {
    dir: tempfile::TempDir,
}

impl ConfigFile {
    fn new(text: &str) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("bench.conf"), text)?;
        Ok(Self { dir })
    }

    fn path(&self) -> String {
        self.dir.path().join("bench.conf").display().to_string()
    }
}

/// JetStream on, storing under `store`, with `sync_interval` when given.
fn jetstream_config(store: &tempfile::TempDir, sync_interval: Option<&str>) -> String {
    let sync = sync_interval
        .map(|s| format!("\n  sync_interval: \"{s}\""))
        .unwrap_or_default();
    format!(
        "jetstream {{\n  store_dir: \"{}\"{sync}\n}}\n",
        store.path().display()
    )
}

struct Args {
    go: Option<PathBuf>,
    ours: PathBuf,
    rounds: usize,
    budget: Budget,
    only: Option<String>,
    out: Option<PathBuf>,
    smoke: bool,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        go: None,
        ours: PathBuf::from("target/release/nats-server"),
        rounds: 3,
        budget: Budget {
            messages: 2_000_000,
            duration: Duration::from_secs(3),
            frames_per_write: scenarios::FRAMES_PER_WRITE_DEFAULT,
        },
        only: None,
        out: None,
        smoke: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--go" => args.go = Some(PathBuf::from(value()?)),
            "--ours" => args.ours = PathBuf::from(value()?),
            "--rounds" => args.rounds = value()?.parse()?,
            "--messages" => args.budget.messages = value()?.parse()?,
            "--seconds" => args.budget.duration = Duration::from_secs_f64(value()?.parse()?),
            "--frames-per-write" => args.budget.frames_per_write = value()?.parse()?,
            "--only" => args.only = Some(value()?),
            "--out" => args.out = Some(PathBuf::from(value()?)),
            "--smoke" => args.smoke = true,
            other => bail!("unknown argument {other}"),
        }
    }
    if args.smoke {
        args.rounds = 1;
        args.go = None;
        args.budget = Budget {
            messages: 20_000,
            duration: Duration::from_millis(200),
            ..args.budget
        };
    }
    Ok(args)
}

/// Scales the message budget so big payloads do not take minutes.
fn messages_for(kind: Kind, budget: Budget) -> Budget {
    match kind {
        Kind::PubSub { payload, .. } if payload >= 1024 => Budget {
            messages: (budget.messages / 16).max(1000),
            ..budget
        },
        Kind::PubSub { publishers, .. } if publishers > 1 => Budget {
            messages: budget.messages / publishers as u64,
            ..budget
        },
        Kind::Tls(inner) | Kind::Ws(inner) => messages_for(inner.plain(), budget),
        Kind::JsAsyncPublish { .. }
        | Kind::JsOrderedConsume { .. }
        | Kind::JsDurableFetch { .. } => Budget {
            messages: (budget.messages / 4).max(1000),
            ..budget
        },
        // 1 M messages at the default budget.
        Kind::JsMirrorCatchUp { .. } => Budget {
            messages: (budget.messages / 2).max(1000),
            ..budget
        },
        _ => budget,
    }
}

fn measure(
    target: &Target,
    kind: Kind,
    budget: Budget,
    tls: Option<&TlsSetup>,
) -> Result<Measurement> {
    let tls = tls.filter(|_| matches!(kind, Kind::Tls(_)));
    let mut args = tls.map(TlsSetup::server_args).unwrap_or_default();
    // The same websocket or accounts block for both servers, from a file both read.
    // A fresh store directory per run for the JetStream rows.
    let store = tempfile::tempdir()?;
    let config = match kind {
        Kind::Ws(_) => Some(ConfigFile::new(WS_CONFIG)?),
        Kind::Import { .. } => Some(ConfigFile::new(IMPORT_CONFIG)?),
        Kind::JsSyncPublish { .. }
        | Kind::JsIdleConsumers { .. }
        | Kind::JsKvWatch { .. }
        | Kind::JsOrderedConsume { .. }
        | Kind::JsDurableFetch { .. }
        | Kind::JsKvGet { .. }
        | Kind::JsMirrorCatchUp { .. } => Some(ConfigFile::new(&jetstream_config(&store, None))?),
        Kind::JsAsyncPublish { sync_interval, .. } | Kind::JsKvPut { sync_interval, .. } => {
            Some(ConfigFile::new(&jetstream_config(&store, sync_interval))?)
        }
        _ => None,
    };
    if let Some(file) = &config {
        args.extend(["-c".to_owned(), file.path()]);
    }
    let ws = matches!(kind, Kind::Ws(_));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Running::start(target, &args)?;
    let addr = Endpoint {
        addr: if ws {
            server.ws_addr().context("no websocket listener")?
        } else {
            server.addr()
        },
        tls: tls.map(|t| std::sync::Arc::clone(&t.client)),
        ws,
        user: None,
    };
    let cpu0 = server.cpu_seconds();
    let gen_cpu0 = generator_cpu_seconds();
    let mut m = Measurement::default();
    match kind {
        Kind::IdleMemory { connections } => {
            let base = server.rss_bytes();
            let conns = scenarios::open_idle(&addr, connections)?;
            let after = server.rss_bytes();
            m.rss_after = after;
            m.per_conn_bytes = Some(after.saturating_sub(base) as f64 / connections as f64);
            drop(conns);
        }
        Kind::LeakCheck {
            cycles,
            connections,
        } => {
            let mut first = 0;
            let mut last = 0;
            for cycle in 0..cycles {
                scenarios::churn_cycle(&addr, connections)?;
                last = server.rss_bytes();
                if cycle == 0 {
                    first = last;
                }
            }
            m.rss_after = last;
            m.leak = Some((first, last));
        }
        Kind::JsIdleConsumers { consumers } => {
            let n = js_consume::idle_consumer_count(budget, consumers);
            let conn = js_consume::setup_idle_consumers(&addr, n)?;
            let (per_second, settled_after) =
                js_consume::idle_cpu_per_second(&server, budget.duration * 3);
            eprintln!("  settled {settled_after} s after the setup");
            m.idle_cpu_per_sec = Some(per_second);
            m.rss_after = server.rss_bytes();
            drop(conn);
        }
        _ => {
            let outcome = scenarios::run(kind, &addr, messages_for(kind, budget))?;
            m.set_outcome(&outcome);
        }
    }
    m.peak_rss = server.peak_rss_bytes();
    m.cpu_seconds = server.cpu_seconds() - cpu0;
    m.gen_cpu_seconds = generator_cpu_seconds() - gen_cpu0;
    Ok(m)
}

/// CPU seconds this process (the load generator) has used so far.
fn generator_cpu_seconds() -> f64 {
    natrium_monitor::process::cpu_seconds_of("self")
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let ours = Target {
        name: "natrium",
        binary: args.ours.clone(),
    };
    let go = args.go.clone().map(|binary| Target { name: "go", binary });
    let mut rows = Vec::new();
    let mut tls_setup = None;
    let all = scenarios::all();
    let whole = args
        .only
        .as_deref()
        .is_some_and(|only| all.iter().any(|s| s.name.contains(only)));
    for scenario in all {
        if let Some(only) = &args.only {
            let wanted = if whole {
                scenario.name.contains(only.as_str())
            } else {
                only.split(',').any(|part| scenario.name.contains(part))
            };
            if !wanted {
                continue;
            }
        }
        let mut row = Row::new(&scenario);
        if matches!(scenario.kind, Kind::Unsupported) {
            eprintln!(
                "{} {}: not supported yet",
                scenario.name, scenario.payload_label
            );
            rows.push(row);
            continue;
        }
        if matches!(scenario.kind, Kind::Tls(_)) && tls_setup.is_none() {
            tls_setup = Some(TlsSetup::new()?);
        }
        for round in 0..args.rounds {
            // Alternate which server goes first, so warm caches favour neither.
            let order: Vec<&Target> = match &go {
                Some(go) if round % 2 == 0 => vec![go, &ours],
                Some(go) => vec![&ours, go],
                None => vec![&ours],
            };
            for target in order {
                let m = measure(target, scenario.kind, args.budget, tls_setup.as_ref())
                    .with_context(|| {
                        format!(
                            "{} {} on {}",
                            scenario.name, scenario.payload_label, target.name
                        )
                    })?;
                eprintln!(
                    "{} {} round {} {}: {}",
                    scenario.name,
                    scenario.payload_label,
                    round + 1,
                    target.name,
                    m.summary()
                );
                row.push(target.name, m);
            }
        }
        rows.push(row);
    }
    let table = report::markdown(&rows, go.is_some());
    println!("{table}");
    if let Some(out) = &args.out {
        std::fs::write(out, &table).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}
