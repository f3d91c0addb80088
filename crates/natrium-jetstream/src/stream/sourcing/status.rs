//! What stream info shows of a mirror or a source: Go's `StreamSourceInfo` (name, external
//! prefixes, lag, the last origin sequence stored, time since the origin was last heard from,
//! the last setup error, the filter and transforms), kept up to date by the origin's task.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use parking_lot::Mutex;
use serde::Serialize;

use crate::clock::now_ns;
use crate::config::stream::{ExternalStream, StreamSource, SubjectTransform};
use crate::errors::ApiError;

/// One origin's state as the task last saw it.
pub struct Status {
    pub name: String,
    /// The source's index name (Go's `iname`); the mirror's is unused.
    pub index_name: String,
    external: Option<ExternalStream>,
    filter_subject: String,
    /// A mirror shows its filter once its first consumer was asked for (Go sets it then).
    filter_shown: AtomicBool,
    transforms: Vec<SubjectTransform>,
    /// Unix nanoseconds the origin was last heard from; 0 never.
    last_heard_ns: AtomicI64,
    shown: Mutex<Shown>,
}

#[derive(Default)]
struct Shown {
    lag: u64,
    /// The last origin sequence stored (sources only show it).
    stored_seq: u64,
    error: Option<ApiError>,
}

/// Go's `StreamSourceInfo` JSON.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SourceInfoJson {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalStream>,
    pub lag: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub seq: u64,
    /// Nanoseconds since the origin was last heard from; -1 never.
    pub active: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub filter_subject: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subject_transforms: Vec<SubjectTransform>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Status {
    /// The status of `src` before anything was heard. Go shows a source's filter only when
    /// it has no transforms, a mirror's once its first consumer was asked for.
    pub fn new(src: &StreamSource, index_name: String, mirror: bool) -> Self {
        let filter_subject = if src.subject_transforms.is_empty() {
            src.filter_subject.clone()
        } else {
            String::new()
        };
        Self {
            name: src.name.clone(),
            index_name,
            external: src.external.clone(),
            filter_subject,
            filter_shown: AtomicBool::new(!mirror),
            transforms: src.subject_transforms.clone(),
            last_heard_ns: AtomicI64::new(0),
            shown: Mutex::new(Shown::default()),
        }
    }

    /// A consumer was asked for.
    pub fn asked(&self) {
        self.filter_shown.store(true, Ordering::Relaxed);
    }

    pub fn heard(&self) {
        self.last_heard_ns.store(now_ns(), Ordering::Relaxed);
    }

    /// Unix nanoseconds the origin was last heard from (0 never).
    pub fn last_heard_ns(&self) -> i64 {
        self.last_heard_ns.load(Ordering::Relaxed)
    }

    pub fn set_lag(&self, pending: u64) {
        self.shown.lock().lag = pending.saturating_sub(1);
    }

    pub fn set_stored(&self, seq: u64) {
        self.shown.lock().stored_seq = seq;
    }

    pub fn set_error(&self, error: Option<ApiError>) {
        self.shown.lock().error = error;
    }

    /// Whether the error shown is `err_code`.
    pub fn error_is(&self, err_code: u16) -> bool {
        self.shown
            .lock()
            .error
            .as_ref()
            .is_some_and(|e| e.err_code == err_code)
    }

    /// The JSON stream info shows; `with_seq` for a source.
    pub fn json(&self, with_seq: bool) -> SourceInfoJson {
        let shown = self.shown.lock();
        let last = self.last_heard_ns();
        SourceInfoJson {
            name: self.name.clone(),
            external: self.external.clone(),
            lag: shown.lag,
            seq: if with_seq { shown.stored_seq } else { 0 },
            active: if last == 0 {
                -1
            } else {
                now_ns().saturating_sub(last).max(0)
            },
            error: shown.error.clone(),
            filter_subject: if self.filter_shown.load(Ordering::Relaxed) {
                self.filter_subject.clone()
            } else {
                String::new()
            },
            subject_transforms: self.transforms.clone(),
        }
    }
}
