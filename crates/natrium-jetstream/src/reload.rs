//! What a configuration reload changes in a running JetStream, as Go applies it: raised
//! `max_memory_store` / `max_file_store` (read by every check from then on, running streams'
//! included), and the server-wide `limits { … }` that are read when a stream or consumer is
//! created or updated (assets keep the values their configs took).

use natrium_conf::options::JetStreamLimits;

use crate::config::stream::Storage;
use crate::service::{friendly_bytes, JetStream};

impl JetStream {
    /// The server-wide `jetstream { limits { … } }` in force.
    pub fn server_limits(&self) -> JetStreamLimits {
        self.server_limits.read().clone()
    }

    /// Raises the server's limits to `memory` and `store` bytes (0 keeps one), with Go's
    /// `Reloaded: JetStream max_mem_store = …` / `max_file_store = …` lines.
    pub fn reload_max(&self, memory: i64, store: i64) {
        self.raise_max(memory, store);
        if memory > 0 {
            tracing::info!(
                "Reloaded: JetStream max_mem_store = {}",
                friendly_bytes(memory)
            );
        }
        if store > 0 {
            tracing::info!(
                "Reloaded: JetStream max_file_store = {}",
                friendly_bytes(store)
            );
        }
    }

    /// Raises the server's limits without a word (0 keeps one): before accounts a reload
    /// adds are checked against them, as Go applies its options before its accounts.
    pub fn raise_max(&self, memory: i64, store: i64) {
        if memory > 0 {
            self.usage.set_limit(Storage::Memory, memory);
        }
        if store > 0 {
            self.usage.set_limit(Storage::File, store);
        }
    }

    /// Go's shutdown of JetStream by a reload that turns it off: the API stops answering
    /// (its subscriptions go), every account's streams and consumers stop with their files
    /// kept, and monitoring no longer reports JetStream.
    pub fn shut_down(&self) {
        tracing::info!("Initiating JetStream Shutdown...");
        // Cancelled first: an account a concurrent reload event would enable is refused
        // from now on (`enable_account` checks under the lock the accounts are taken with).
        self.stopped.cancel();
        self.server.clear_jetstream_report();
        for jsa in self.take_accounts().into_values() {
            self.stop_account(&jsa);
        }
        tracing::info!("JetStream Shutdown");
    }

    /// Takes the new server-wide limits (the batch limits included).
    pub fn reload_limits(&self, limits: &JetStreamLimits) {
        crate::stream::batch::limits::set(&limits.batch);
        *self.server_limits.write() = limits.clone();
    }
}
