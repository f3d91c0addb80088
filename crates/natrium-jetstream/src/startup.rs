//! Starting JetStream: the service, its accounts, the API, the drain at shutdown.

use std::sync::Arc;
use std::time::Instant;

use natrium_core::Server;
use natrium_store::io::{StdFs, StorageIo};

use natrium_auth::account::JsAccountLimits;

use crate::api;
use crate::errors::ApiError;
use crate::service::{banner, JetStream, JetStreamSettings};

/// As Go: with no accounts configured the global account runs JetStream without limits;
/// otherwise each account whose configuration turns it on, with its limits, each refused when
/// its limits do not fit the server beside those enabled before it.
/// Accounts a reload adds are handled as they come (`api::account_watch`).
fn enable_configured_accounts(server: &Server, js: &JetStream) -> Result<(), ApiError> {
    let config = server.config();
    if crate::service::global_only(server) {
        if let Some(global) = server.account(natrium_core::account::GLOBAL_ACCOUNT) {
            js.enable_account(&global, JsAccountLimits::default());
        }
        return Ok(());
    }
    for spec in &config.accounts {
        if let (Some(limits), Some(account)) = (spec.jetstream, server.account(&spec.name)) {
            js.check_account_fits(&limits)?;
            js.enable_account(&account, limits);
        }
    }
    Ok(())
}

/// Starts JetStream: logs Go's banner, enables the global account, recovers its streams and
/// starts answering `$JS.API`. The caller has logged `Starting JetStream` and checked the
/// store directory (Go's order). The error is Go's, without its `Can't start JetStream: `.
pub fn start(server: &Server, settings: JetStreamSettings) -> Result<Arc<JetStream>, String> {
    let began = Instant::now();
    banner(&settings);
    let io: Arc<dyn StorageIo> = Arc::new(StdFs);
    io.create_dir_all(&settings.store_dir).map_err(|e| {
        format!(
            "could not create storage directory - {}: {e}",
            settings.store_dir.display()
        )
    })?;
    crate::stream::batch::limits::set(&settings.options.limits.batch);
    let js = Arc::new(JetStream::new(server.clone(), settings, io));
    if let Err(err) = enable_configured_accounts(server, &js) {
        // Go has logged its start-up time by then.
        log_took(began);
        js.stop_all();
        return Err(format!(
            "Error enabling jetstream on configured accounts: {} ({})",
            err.description, err.err_code
        ));
    }
    api::start(&js);
    crate::report::register(&js);
    let drain = Arc::clone(&js);
    server.on_drain("jetstream", move || async move {
        // Turned off by a reload: already stopped.
        if drain.stopped.is_cancelled() {
            return;
        }
        tracing::info!("Initiating JetStream Shutdown...");
        let _ = tokio::task::spawn_blocking(move || drain.stop_all()).await;
        tracing::info!("JetStream Shutdown");
    });
    log_took(began);
    Ok(js)
}

fn log_took(began: Instant) {
    tracing::info!(
        "Took {} to start JetStream",
        natrium_gofmt::go_duration(began.elapsed())
    );
}
