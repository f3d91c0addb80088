//! Running the server: start-up in Go's order and with Go's log lines, then the signal loop.

use std::process::ExitCode;

use natrium_conf::cli::Flags;
use natrium_core::Server;
use tokio::signal::unix::{signal, SignalKind};

use crate::files;
use crate::logging::{self, LogSink};
use crate::settings::{self, Settings};

pub fn run(flags: &Flags) -> ExitCode {
    let settings = match settings::load(flags) {
        Ok(settings) => settings,
        Err(err) => {
            // Go reports configuration problems as `nats-server: …`, before logging starts.
            eprint!("{}", err.go_report());
            return ExitCode::from(1);
        }
    };
    let sink = match logging::init(&settings.log) {
        Ok(sink) => sink,
        Err(err) => {
            logging::fatal(
                &format!("error opening log file: {err}"),
                None,
                settings.log.timestamps,
            );
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            logging::fatal(
                &format!("unable to start the runtime: {err}"),
                Some(&sink),
                true,
            );
            return ExitCode::from(1);
        }
    };
    let timestamps = settings.log.timestamps;
    match runtime.block_on(serve(settings, sink.clone())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            logging::fatal(&message, Some(&sink), timestamps);
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
    tracing::info!("  ID:       {}", server.id());
    if let Some(file) = &settings.config_file {
        tracing::info!("Using configuration file: {file}");
    }
}

async fn serve(settings: Settings, sink: LogSink) -> Result<(), String> {
    let server = Server::new(settings.core.clone()).map_err(|e| e.to_string())?;
    banner(&server, &settings);
    let monitor = match &settings.http {
        Some(http) => Some(
            natrium_monitor::start_monitor(server.clone(), http.clone())
                .await
                .map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    let client_addr = server.listen().await.map_err(|e| e.to_string())?;
    if let Some(path) = &settings.pid_file {
        files::write_pid_file(path).map_err(|e| format!("Could not write pidfile: {e}"))?;
    }
    let ports_file = match &settings.ports_file_dir {
        Some(dir) => {
            let monitor = monitor
                .zip(settings.http.as_ref())
                .map(|(a, h)| (h.host.as_str(), a));
            let path = files::write_ports_file(dir, (&settings.core.host, client_addr), monitor)
                .map_err(|e| format!("Error writing ports file: {e}"))?;
            Some(path)
        }
        None => None,
    };
    tracing::info!("Server is ready");
    handle_signals(&server, &sink).await;
    tracing::info!("Initiating Shutdown...");
    server.shutdown().await;
    if let Some(path) = ports_file {
        let _ = std::fs::remove_file(path);
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

/// Waits for a signal that ends the process, handling the others (reopen, reload) in place.
async fn handle_signals(server: &Server, sink: &LogSink) {
    let make = |kind: SignalKind| signal(kind).ok();
    let (mut int, mut term, mut hup, mut usr1, mut usr2) = (
        make(SignalKind::interrupt()),
        make(SignalKind::terminate()),
        make(SignalKind::hangup()),
        make(SignalKind::user_defined1()),
        make(SignalKind::user_defined2()),
    );
    loop {
        tokio::select! {
            () = recv(&mut int) => {
                tracing::info!("Trapped \"interrupt\" signal");
                return;
            }
            () = recv(&mut term) => {
                tracing::info!("Trapped \"terminated\" signal");
                return;
            }
            () = recv(&mut hup) => {
                tracing::info!("Trapped \"hangup\" signal");
                tracing::error!("Failed to reload server configuration: config reload not supported yet");
            }
            () = recv(&mut usr1) => {
                tracing::info!("Trapped \"user defined signal 1\" signal");
                if let Err(err) = sink.reopen() {
                    tracing::error!("Failed to reopen log file: {err}");
                } else {
                    tracing::info!("File log re-opened");
                }
            }
            () = recv(&mut usr2) => {
                tracing::info!("Trapped \"user defined signal 2\" signal");
                let ldm = server.clone();
                tokio::spawn(async move { ldm.lame_duck().await });
            }
            () = server.shutdown_requested() => return,
        }
    }
}
