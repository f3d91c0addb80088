//! Running the server: start-up in Go's order and with Go's log lines, then the signal loop.
//!
//! Go's order, which harnesses rely on: banner, `Using configuration file`, PID file, HTTP
//! monitor, websocket listener, client listener (`Listening for client connections on …`),
//! ports file,
//! `Server is ready`. Any failure up to the client listener is a `[FTL]` line and exit status
//! 1; a ports file that cannot be written is only an `[ERR]`, as in Go. Unlike Go, which writes
//! the ports file in the background, ours exists by the time `Server is ready` is logged.

use std::path::PathBuf;
use std::process::ExitCode;

use natrium_conf::cli::Flags;
use natrium_core::Server;
use tokio::signal::unix::{signal, SignalKind};

use crate::files;
use crate::logging::{self, LogSink};
use crate::reload::Running;
use crate::settings::{self, Settings};

pub fn run(flags: &Flags) -> ExitCode {
    crate::fdlimit::raise_open_files_limit();
    let settings = match settings::load(flags) {
        Ok(settings) => settings,
        Err(err) => {
            // Go reports configuration problems as `nats-server: …`, before logging starts.
            logging::to_stderr(&err.go_report());
            return ExitCode::from(1);
        }
    };
    let sink = match logging::init(&settings.log) {
        Ok(sink) => sink,
        Err(err) => {
            err.report();
            return ExitCode::from(1);
        }
    };
    let (timestamps, utc) = (settings.log.timestamps, settings.log.utc);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let message = format!("unable to start the runtime: {err}");
            logging::fatal(&message, Some(&sink), timestamps, utc);
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(serve(flags.clone(), settings, sink.clone())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            logging::fatal(&message, Some(&sink), timestamps, utc);
            ExitCode::from(1)
        }
    }
}

fn banner(server: &Server, settings: &Settings) {
    tracing::info!("Starting nats-server");
    tracing::info!("  Version:  {}", natrium_core::info::COMPATIBLE_VERSION);
    tracing::info!("  Git:      [not set]");
    tracing::info!("  Natrium:  {}", env!("CARGO_PKG_VERSION"));
    tracing::info!("  Name:     {}", server.name());
    if settings.options.jetstream.enabled {
        tracing::info!("  Node:     {}", crate::jetstream::node_hash(server.name()));
    }
    tracing::info!("  ID:       {}", server.id());
    for line in natrium_conf::options::feature_flags_banner(&settings.options.feature_flags) {
        tracing::info!("{line}");
    }
    let core = &settings.core;
    let maps = core.tls.as_ref().is_some_and(|t| t.map)
        || core
            .websocket
            .as_ref()
            .and_then(|w| w.tls.as_ref())
            .is_some_and(|t| t.map);
    if core.auth.has_plaintext_password(maps) {
        tracing::warn!("Plaintext passwords detected, use nkeys or bcrypt");
    }
    if settings.options.prof_block_rate > 0 {
        crate::reload::warn_block_profiling(settings.options.prof_block_rate);
    }
    if let Some(file) = &settings.config_file {
        let digest = settings
            .config_digest
            .as_ref()
            .map(|d| format!("({d})"))
            .unwrap_or_default();
        tracing::info!("Using configuration file: {file} {digest}");
    }
    trusted_operators(settings);
}

/// Go's start-up summary of operator mode, and its warnings about preloaded accounts.
fn trusted_operators(settings: &Settings) {
    let natrium_auth::AuthConfig::Jwt(jwt) = &settings.core.auth else {
        return;
    };
    let when = |secs: i64| {
        chrono::DateTime::from_timestamp(secs, 0)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S +0000 UTC").to_string())
            .unwrap_or_default()
    };
    tracing::info!("Trusted Operators");
    for op in jwt.operators() {
        tracing::info!("  System  : {:?}", op.aud);
        tracing::info!("  Operator: {:?}", op.name);
        tracing::info!("  Issued  : {}", when(op.iat));
        if op.exp == 0 {
            tracing::info!("  Expires : Never");
        } else {
            tracing::info!("  Expires : {}", when(op.exp));
        }
    }
    if settings.core.system_account.is_empty() {
        tracing::warn!("Trusted Operators should utilize a System Account");
    }
    let now = chrono::Utc::now().timestamp();
    for spec in &settings.core.accounts {
        let Some(account) = jwt.account(&spec.name) else {
            continue;
        };
        let mut issues = account.claims.validation_issues();
        issues.extend(account.claims.time_problem(now));
        if !issues.is_empty() {
            tracing::warn!("Account [{}] has validation issues:", spec.name);
            for issue in issues {
                tracing::warn!("  - {issue}");
            }
        }
    }
}

/// What start-up opened: the listeners' addresses and the ports file.
struct Started {
    listeners: files::Listeners,
    ports_file: Option<PathBuf>,
    jetstream: Option<std::sync::Arc<natrium_jetstream::service::JetStream>>,
}

/// Starts everything in Go's order.
async fn start(server: &Server, settings: &Settings) -> Result<Started, String> {
    if let Some(path) = &settings.pid_file {
        files::write_pid_file(path).map_err(|e| format!("Could not write pidfile: {e}"))?;
    }
    if let Some(err) = &settings.monitor_error {
        return Err(format!("Can't start monitoring: {err}"));
    }
    let monitor = match &settings.http {
        Some(http) => Some(files::Monitor {
            addr: natrium_monitor::start_monitor(server.clone(), http.clone())
                .await
                .map_err(|e| format!("Can't start monitoring: {e}"))?,
            https: http.tls,
        }),
        None => None,
    };
    natrium_monitor::start_system_services(server, settings.http.clone());
    let jetstream = if settings.options.jetstream.enabled {
        Some(
            crate::jetstream::start(server, &settings.options)
                .map_err(|e| format!("{}{e}", crate::jetstream::CANT_START))?,
        )
    } else {
        None
    };
    let websocket = server.listen_websocket().await.map_err(|e| e.to_string())?;
    let client_addr = server.listen().await.map_err(|e| e.to_string())?;
    let ws_scheme = match server.config().websocket.as_ref() {
        Some(ws) if ws.tls.is_some() => "wss",
        _ => "ws",
    };
    let mut started = Started {
        listeners: files::Listeners {
            client: client_addr,
            monitor,
            websocket: websocket.map(|addr| (ws_scheme, addr)),
        },
        ports_file: None,
        jetstream,
    };
    let Some(dir) = &settings.ports_file_dir else {
        tracing::info!("Server is ready");
        return Ok(started);
    };
    let path = files::ports_file_path(dir);
    let written = files::write_ports_file(&path, &started.listeners);
    tracing::info!("Server is ready");
    if let Err(err) = written {
        tracing::error!("Error writing ports file ({}): {err}", path.display());
    }
    started.ports_file = Some(path);
    Ok(started)
}

async fn serve(flags: Flags, settings: Settings, sink: LogSink) -> Result<(), String> {
    // Trap signals before anything is started: a harness may send SIGTERM the moment it reads
    // `Server is ready`, and an untrapped one would kill the process without a clean shutdown.
    let signals = Signals::install();
    let server = Server::new(settings.core.clone()).map_err(|e| e.to_string())?;
    server.set_config_digest(settings.config_digest.as_deref().unwrap_or_default());
    banner(&server, &settings);
    let started = start(&server, &settings).await?;
    crate::heap::spawn_trimmer(server.clone());
    let mut running = Running {
        flags,
        options: settings.options,
        server: server.clone(),
        sink,
        listeners: started.listeners,
        ports_file: started.ports_file,
        jetstream: started.jetstream,
    };
    signals.handle(&mut running).await;
    tracing::info!("Initiating Shutdown...");
    server.shutdown().await;
    if let Some(path) = running.ports_file {
        if let Err(err) = std::fs::remove_file(&path) {
            tracing::error!(
                "Error cleaning up ports file {}: {}",
                path.display(),
                files::path_error("remove", &path, &err)
            );
        }
    }
    tracing::info!("Server Exiting..");
    Ok(())
}

/// Resolves on the next delivery of `sig`; never, if it could not be installed.
async fn recv(sig: &mut Option<tokio::signal::unix::Signal>) {
    match sig {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

fn reopen_log(sink: &LogSink) {
    if !sink.is_file() {
        tracing::info!("File log re-open ignored, not a file logger");
    } else if let Err(err) = sink.reopen() {
        tracing::error!("Failed to reopen log file: {err}");
    } else {
        tracing::info!("File log re-opened");
    }
}

/// The signals the server traps (Go's set).
struct Signals {
    int: Option<tokio::signal::unix::Signal>,
    term: Option<tokio::signal::unix::Signal>,
    hup: Option<tokio::signal::unix::Signal>,
    usr1: Option<tokio::signal::unix::Signal>,
    usr2: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn install() -> Self {
        let make = |kind: SignalKind| signal(kind).ok();
        Self {
            int: make(SignalKind::interrupt()),
            term: make(SignalKind::terminate()),
            hup: make(SignalKind::hangup()),
            usr1: make(SignalKind::user_defined1()),
            usr2: make(SignalKind::user_defined2()),
        }
    }

    /// Waits for a signal that ends the process, handling the others (reopen, reload, lame
    /// duck) in place, as Go's `handleSignal` does. SIGTERM is ignored during lame duck mode,
    /// like Go.
    async fn handle(mut self, running: &mut Running) {
        let server = running.server.clone();
        loop {
            tokio::select! {
                () = recv(&mut self.int) => {
                    tracing::info!("Trapped \"interrupt\" signal");
                    return;
                }
                () = recv(&mut self.term) => {
                    tracing::info!("Trapped \"terminated\" signal");
                    if !server.is_lame_duck() {
                        return;
                    }
                }
                () = recv(&mut self.hup) => {
                    tracing::info!("Trapped \"hangup\" signal");
                    // Reading files and checking every client's credentials (bcrypt is slow
                    // by design) blocks: let the runtime move other tasks off this thread.
                    tokio::task::block_in_place(|| running.reload());
                }
                () = recv(&mut self.usr1) => {
                    tracing::info!("Trapped \"user defined signal 1\" signal");
                    reopen_log(&running.sink);
                }
                () = recv(&mut self.usr2) => {
                    tracing::info!("Trapped \"user defined signal 2\" signal");
                    let ldm = server.clone();
                    tokio::spawn(async move { ldm.lame_duck().await });
                }
                () = server.shutdown_requested() => return,
            }
        }
    }
}
