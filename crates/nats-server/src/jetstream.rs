//! Starting JetStream: where it stores and how much it may use, resolved as Go resolves them
//! (a share of the machine's memory and of the store directory's free disk when no limit is
//! configured).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use natrium_conf::options::ServerOptions;
use natrium_core::Server;
use natrium_jetstream::service::JetStream;
use natrium_jetstream::JetStreamSettings;

/// Go's fallbacks when the machine cannot tell (`JetStreamMaxMemDefault`, `…StoreDefault`).
const MAX_MEMORY_FALLBACK: i64 = 1 << 30;
const MAX_STORE_FALLBACK: i64 = 1 << 40;

/// Go's words before the reason JetStream could not start (fatal at start, a warning on
/// reload).
pub const CANT_START: &str = "Can't start JetStream: ";

/// Starts JetStream in Go's order: `Starting JetStream`, the store directory checked (created
/// when missing), the limits resolved, then the service. The error is Go's reason, and
/// `Took … to start JetStream` is logged whatever the outcome, as Go does.
pub fn start(server: &Server, options: &ServerOptions) -> Result<Arc<JetStream>, String> {
    tracing::info!("Starting JetStream");
    let began = Instant::now();
    match settings(options) {
        Ok(settings) => natrium_jetstream::start(server, settings),
        Err(err) => {
            tracing::info!(
                "Took {} to start JetStream",
                natrium_gofmt::go_duration(began.elapsed())
            );
            Err(err)
        }
    }
}

fn settings(options: &ServerOptions) -> Result<JetStreamSettings, String> {
    let js = &options.jetstream;
    let store_dir = if options.store_dir.is_empty() {
        tracing::warn!("Temporary storage directory used, data could be lost on system reboot");
        std::env::temp_dir().join("nats").join("jetstream")
    } else {
        PathBuf::from(&options.store_dir).join("jetstream")
    };
    check_store_dir(&store_dir)?;
    let max_memory = if js.max_memory > 0 {
        js.max_memory
    } else {
        total_memory().map_or(MAX_MEMORY_FALLBACK, |m| m / 4 * 3)
    };
    let max_store = if js.max_store > 0 {
        js.max_store
    } else {
        disk_available(&store_dir).unwrap_or(MAX_STORE_FALLBACK)
    };
    Ok(JetStreamSettings {
        options: js.clone(),
        store_dir,
        domain: options.jetstream_domain.clone(),
        max_memory,
        max_store,
    })
}

/// Go's checks of the store directory: created when missing, else it must be a directory
/// where a file can be created.
fn check_store_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(dir)
            .map_err(|e| {
                let reason = crate::files::path_error("mkdir", dir, &e);
                format!("could not create storage directory - {reason}")
            }),
        Ok(meta) if meta.is_dir() => {
            let probe = dir.join(format!("_test_{}", std::process::id()));
            std::fs::write(&probe, b"")
                .map_err(|_| "storage directory is not writable".to_owned())?;
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        _ => Err("storage directory is not a directory".to_owned()),
    }
}

/// Go's node name: its `getHash` of the server name (the banner's `Node:` line; clustering
/// uses it as the node id).
pub fn node_hash(name: &str) -> String {
    natrium_jetstream::stream::sourcing::names::go_hash(name)
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn total_memory() -> Option<i64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Three quarters of the free space available to us under `dir`.
#[allow(unsafe_code)]
fn disk_available(dir: &Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `path` is a valid C string and `stat` a properly sized, writable struct.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &raw mut stat) } != 0 {
        return None;
    }
    let bytes = stat.f_bavail.saturating_mul(stat.f_frsize);
    Some(i64::try_from(bytes / 4 * 3).unwrap_or(i64::MAX))
}
