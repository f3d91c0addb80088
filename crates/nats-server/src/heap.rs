//! Gives freed heap memory back to the operating system after many connections close.
//!
//! glibc's allocator keeps one arena per thread that allocated, and memory freed in the middle
//! of an arena stays resident until something asks for it back. After thousands of connections
//! come and go, the resident size would stay a fifth or more above what the server uses. When
//! `TRIM_AFTER_CLOSED_CLIENTS` connections have closed since the last look, one `malloc_trim` on
//! a blocking thread returns the free pages of every arena. A service that just freed much
//! memory (JetStream after a purge or a stream delete) bumps
//! `ServerStats::heap_release_requests`, which triggers a trim at the next look.
//!
//! The arenas are capped at one per core ([`cap_arenas`]): glibc's default of eight per core
//! lets every blocking thread keep its own arena, and memory freed on another thread stays in
//! them. A mirror catching up on a million messages peaked at about 240 MB with the default
//! and about 188 MB with two arenas on a 2-core machine, at the same rate.

use std::sync::atomic::Ordering;
use std::time::Duration;

use natrium_core::Server;

/// How often the client count is looked at.
const CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// This many connections closed since the last trim trigger a trim.
const TRIM_AFTER_CLOSED_CLIENTS: usize = 256;
/// Quiet looks after a trim before the settling trim.
const SETTLE_TICKS: u32 = 3;

/// Runs until shutdown, trimming the heap when many clients have gone.
pub fn spawn_trimmer(server: Server) {
    tokio::spawn(async move {
        let mut closed_at_last_trim = 0;
        let mut releases_seen = 0;
        let mut settle_in: Option<u32> = None;
        let mut ticks = tokio::time::interval(CHECK_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = server.shutdown_requested() => return,
                _ = ticks.tick() => {}
            }
            // Accepted minus still connected: every connection that has closed so far.
            let accepted = server.stats().total_connections.load(Ordering::Relaxed);
            let closed = usize::try_from(accepted)
                .unwrap_or(usize::MAX)
                .saturating_sub(server.num_clients());
            let releases = server.stats().heap_release_requests.load(Ordering::Relaxed);
            let released = releases != releases_seen;
            releases_seen = releases;
            if released || closed.saturating_sub(closed_at_last_trim) >= TRIM_AFTER_CLOSED_CLIENTS {
                closed_at_last_trim = closed;
                settle_in = Some(SETTLE_TICKS);
                let _ = tokio::task::spawn_blocking(trim).await;
            } else if let Some(ticks) = settle_in {
                settle_in = ticks.checked_sub(1).filter(|t| *t > 0);
                if settle_in.is_none() {
                    let _ = tokio::task::spawn_blocking(trim).await;
                }
            }
        }
    });
}

/// Caps glibc's arenas at one per core, before any thread starts. An operator's
/// `MALLOC_ARENA_MAX` is left to rule.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn cap_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let arenas = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
    // SAFETY: mallopt only sets an allocator parameter; it takes no pointers.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn cap_arenas() {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() {
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
