//! What JetStream reports to monitoring, without either knowing the other: JetStream registers
//! a [`JetStreamReport`] on the server when it starts (`Server::set_jetstream_report`), and
//! `/varz`, `/jsz`, `/healthz` and the system requests read it (`Server::jetstream_report`).
//! No reporter means JetStream is off, and monitoring answers exactly as Go does without it.
//!
//! The data is plain numbers and names; the documents' Go key names and omission rules belong
//! to monitoring. A stream's configuration and state travel as JSON text, as JetStream's own
//! API encodes them, so that the two answers never drift apart.

use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::value::RawValue;

use crate::server::Server;

/// The server's JetStream settings in force (Go's `JetStreamConfig`).
#[derive(Debug, Clone, Default)]
pub struct JsConfigReport {
    pub max_memory: i64,
    pub max_storage: i64,
    pub store_dir: String,
    pub sync_interval_ns: u64,
    pub sync_always: bool,
    pub domain: String,
    pub compress_ok: bool,
    pub unique_tag: String,
    pub strict: bool,
}

/// `jetstream { limits { … } }`; zero is unset.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsLimitsReport {
    pub max_request_batch: i64,
    pub max_ack_pending: i64,
    pub max_ha_assets: i64,
    pub max_duplicate_window_ns: u64,
    /// `limits { batch { max_inflight_per_stream, max_inflight_total, max_msgs, timeout } }`.
    pub max_batch_inflight_per_stream: i64,
    pub max_batch_inflight_total: i64,
    pub max_batch_size: i64,
    pub max_batch_timeout_ns: u64,
}

/// Usage and API counters of the server or of one account.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsUsage {
    pub memory: u64,
    pub storage: u64,
    pub reserved_memory: u64,
    pub reserved_storage: u64,
    pub api_total: u64,
    pub api_errors: u64,
}

/// How much of each stream an account report carries.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsDetail {
    pub streams: bool,
    pub config: bool,
    /// Each stream's consumers' info (Go's `consumer_detail`), and its internal direct
    /// consumers' (`direct_consumer_detail`, only with `consumers`).
    pub consumers: bool,
    pub direct_consumers: bool,
}

/// One stream.
#[derive(Debug, Clone)]
pub struct JsStreamReport {
    pub name: String,
    /// Unix nanoseconds.
    pub created_ns: i64,
    pub messages: u64,
    pub bytes: u64,
    pub consumers: u64,
    /// Go's `StreamState` document, as encoded (its key order kept).
    pub state: Box<RawValue>,
    /// Go's `StreamConfig` document as stored, when asked for.
    pub config: Option<Box<RawValue>>,
    /// Go's `StreamSourceInfo` of a mirror, and the list of a stream's sources (absent when
    /// it has none).
    pub mirror: Option<Box<RawValue>>,
    pub sources: Option<Box<RawValue>>,
    /// Go's `ConsumerInfo` documents of its consumers and of its direct ones, when asked for.
    pub consumer_detail: Vec<Box<RawValue>>,
    pub direct_consumer_detail: Vec<Box<RawValue>>,
}

/// One JetStream-enabled account.
#[derive(Debug, Clone)]
pub struct JsAccountReport {
    pub name: String,
    pub usage: JsUsage,
    /// Every stream, by name; empty unless asked for.
    pub streams: Vec<JsStreamReport>,
}

/// Something the health check found wrong (or worth knowing) in the store directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsHealthProblem {
    /// A directory under the store names no known account.
    AccountUnresolved { account: String },
    /// A stream directory without a running stream.
    StreamNotRecovered { account: String, stream: String },
    /// A running stream whose store failed a write.
    StreamWriteError {
        account: String,
        stream: String,
        error: String,
    },
    /// A running stream whose recovery dropped damaged records (not a failure: it serves
    /// what survived).
    StreamLostData {
        account: String,
        stream: String,
        msgs: u64,
        bytes: u64,
    },
}

/// What a health scan looked at and found, with the filters' hits.
#[derive(Debug, Clone, Default)]
pub struct JsHealthScan {
    pub problems: Vec<JsHealthProblem>,
    pub account_found: bool,
    pub stream_found: bool,
    pub consumer_found: bool,
}

/// Which assets a health scan covers; empty strings are no filter.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsHealthFilter<'a> {
    pub account: &'a str,
    pub stream: &'a str,
    pub consumer: &'a str,
}

/// JetStream as monitoring sees it. Calls are short and may take JetStream's locks; they
/// must not be made while holding the server's.
pub trait JetStreamReport: Send + Sync {
    /// The API level this server implements.
    fn api_level(&self) -> u32;
    fn config(&self) -> JsConfigReport;
    fn limits(&self) -> JsLimitsReport;
    /// Server-wide usage and API counters.
    fn usage(&self) -> JsUsage;
    /// The JetStream-enabled accounts, sorted by name.
    fn account_names(&self) -> Vec<String>;
    /// One enabled account; `None` when JetStream is not enabled there.
    fn account(&self, name: &str, detail: JsDetail) -> Option<JsAccountReport>;
    /// Scans the store directory and the running streams (Go's single-server healthz).
    fn health(&self, filter: JsHealthFilter<'_>) -> JsHealthScan;
}

/// The server's slot for the reporter.
#[derive(Default)]
pub struct ReportSlot {
    jetstream: RwLock<Option<Arc<dyn JetStreamReport>>>,
}

impl Server {
    /// Registers JetStream's reporter (at its start); replaces an earlier one.
    pub fn set_jetstream_report(&self, report: Arc<dyn JetStreamReport>) {
        *self.shared.reports.jetstream.write() = Some(report);
    }

    /// Forgets JetStream's reporter (a reload turned JetStream off).
    pub fn clear_jetstream_report(&self) {
        *self.shared.reports.jetstream.write() = None;
    }

    /// JetStream's reporter, if JetStream runs.
    pub fn jetstream_report(&self) -> Option<Arc<dyn JetStreamReport>> {
        self.shared.reports.jetstream.read().clone()
    }
}
