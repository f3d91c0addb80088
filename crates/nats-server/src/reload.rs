//! Configuration reload (SIGHUP, `--signal reload`), as Go's `Server.Reload`: read the file
//! again, lay the same command-line flags over it, compare with the options in force
//! ([`natrium_conf::reload::diff`], which words the lines and refusals as Go does), and either
//! apply every change or none. Applying is: install the new runtime settings (built whole from
//! the options, authorization included), act on the changes that need it (max_connections, pid
//! file, ports file, JetStream's limits), reconfigure logging, re-check every client, start or
//! stop JetStream when it was turned on or off, and log `Reloaded server configuration
//! (sha256:…)`.

use std::path::PathBuf;
use std::sync::Arc;

use natrium_conf::cli::Flags;
use natrium_conf::reload::{diff, Action};
use natrium_conf::ServerOptions;
use natrium_core::Server;
use natrium_jetstream::service::JetStream;

use crate::files;
use crate::logging::LogSink;
use crate::settings;

/// Go's answer to a reload without a configuration file.
const NO_CONFIG_FILE: &str = "can only reload config when a file is provided using -c or --config";

/// A started server and what reloading it needs.
pub struct Running {
    pub flags: Flags,
    /// The merged options in force.
    pub options: ServerOptions,
    pub server: Server,
    pub sink: LogSink,
    pub listeners: files::Listeners,
    /// The ports file written, removed at shutdown.
    pub ports_file: Option<PathBuf>,
    /// JetStream, when it runs.
    pub jetstream: Option<Arc<JetStream>>,
}

impl Running {
    /// SIGHUP: reloads, or logs Go's `Failed to reload server configuration: …` and keeps the
    /// configuration in force entirely.
    pub fn reload(&mut self) {
        if let Err(err) = self.try_reload() {
            tracing::error!("Failed to reload server configuration: {err}");
        }
    }

    fn try_reload(&mut self) -> Result<(), String> {
        if self
            .flags
            .config_file
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            return Err(NO_CONFIG_FILE.to_owned());
        }
        let (new, digest) = settings::load_options(&self.flags).map_err(|e| e.to_string())?;
        let read_file = |path: &str| std::fs::read(path).unwrap_or_default();
        let diff = diff(
            &self.options,
            &new,
            self.listeners.client.port(),
            &read_file,
        )?;
        // Built in full (TLS files read) before anything changes, so that a bad certificate
        // leaves the old configuration in force.
        let core = settings::core_config(&new).map_err(|e| e.to_string())?;
        let before = self.raise_jetstream_max(&diff);
        if let Err(err) = self.server.install_config(core) {
            if let (Some(js), Some((memory, store))) = (&self.jetstream, before) {
                js.raise_max(memory, store);
            }
            return Err(err.to_string());
        }
        for change in &diff.changes {
            if let Some(line) = &change.line {
                tracing::info!("{line}");
            }
            self.act(&change.action, &new);
        }
        if diff.logging {
            if let Err(err) = self.sink.reconfigure(&settings::log_settings(&new)) {
                tracing::error!("Failed to reconfigure logging: {err}");
            }
        }
        self.server.reload_authorization();
        match jetstream_turned(&diff) {
            Some(true) => self.start_jetstream(&new),
            Some(false) => {
                if let Some(js) = self.jetstream.take() {
                    js.shut_down();
                }
            }
            None => {}
        }
        let digest = digest.unwrap_or_default();
        self.server.set_config_loaded(&digest);
        self.options = new;
        // JetStream counts as on only while it runs (Go compares with its running state): a
        // start that failed is tried again by the next reload that keeps it enabled.
        if self.jetstream.is_none() {
            self.options.jetstream.enabled = false;
        }
        if digest.is_empty() {
            tracing::info!("Reloaded server configuration");
        } else {
            tracing::info!("Reloaded server configuration ({digest})");
        }
        Ok(())
    }

    /// Go's start of JetStream by a reload that turns it on: after authorization was
    /// reloaded, with its start-up lines; a failure is logged and the reload stands.
    fn start_jetstream(&mut self, new: &ServerOptions) {
        tracing::info!("Restarting JetStream");
        match crate::jetstream::start(&self.server, new) {
            Ok(js) => self.jetstream = Some(js),
            Err(err) => {
                // Go has set up its JetStream by then, and shuts it down again.
                tracing::warn!("{}{err}", crate::jetstream::CANT_START);
                tracing::info!("Initiating JetStream Shutdown...");
                tracing::info!("JetStream Shutdown");
                // INFO does not announce a JetStream that did not start.
                let mut off = new.clone();
                off.jetstream.enabled = false;
                if let Ok(core) = settings::core_config(&off) {
                    let _ = self.server.install_config(core);
                }
            }
        }
    }

    /// Raised JetStream limits take effect before the accounts are rebuilt, so that an account
    /// the same reload adds is checked against them (Go applies its options first); each is
    /// logged in its turn among the changes. Returns the limits before, for a reload that
    /// fails after all.
    fn raise_jetstream_max(&self, diff: &natrium_conf::reload::Diff) -> Option<(i64, i64)> {
        use natrium_jetstream::config::stream::Storage;
        let js = self.jetstream.as_ref()?;
        let before = (js.limit(Storage::Memory), js.limit(Storage::File));
        for change in &diff.changes {
            if let Action::JetStreamMax { memory, store } = change.action {
                js.raise_max(memory, store);
            }
        }
        Some(before)
    }

    fn act(&mut self, action: &Action, new: &ServerOptions) {
        match action {
            // Started or stopped once every change is in (`try_reload`).
            Action::None | Action::JetStream(_) => {}
            Action::MaxConnections => {
                let closed = self.server.enforce_max_connections();
                if closed > 0 {
                    tracing::info!("Closed {closed} connections to fall within max_connections");
                }
            }
            Action::WarnBlockProfiling(rate) => warn_block_profiling(*rate),
            Action::JetStreamMax { memory, store } => {
                if let Some(js) = &self.jetstream {
                    js.reload_max(*memory, *store);
                }
            }
            Action::JetStreamLimits => {
                if let Some(js) = &self.jetstream {
                    js.reload_limits(&new.jetstream.limits);
                }
            }
            Action::PidFile => {
                if let Some(path) = settings::non_empty_path(&new.pidfile) {
                    if let Err(err) = files::write_pid_file(&path) {
                        tracing::error!("Failed to write pidfile: {err}");
                    }
                }
            }
            Action::PortsFileDir => {
                if let Some(old) = self.ports_file.take() {
                    let _ = std::fs::remove_file(old);
                }
                if let Some(dir) = settings::non_empty_path(&new.ports_file_dir) {
                    let path = files::ports_file_path(&dir);
                    match files::write_ports_file(&path, &self.listeners) {
                        Ok(()) => self.ports_file = Some(path),
                        Err(err) => {
                            tracing::error!("Error writing ports file ({}): {err}", path.display());
                        }
                    }
                }
            }
        }
    }
}

/// Go's warning when `prof_block_rate` is positive, at start and on reload.
pub fn warn_block_profiling(rate: i64) {
    tracing::warn!("Block profiling is enabled (rate {rate}), this may have a performance impact");
}

/// Whether the reload turns JetStream on or off.
fn jetstream_turned(diff: &natrium_conf::reload::Diff) -> Option<bool> {
    diff.changes.iter().find_map(|c| match c.action {
        Action::JetStream(on) => Some(on),
        _ => None,
    })
}
