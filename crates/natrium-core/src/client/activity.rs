//! Monitoring's view of a connection's activity: the last read batch that carried messages
//! or subscription changes, and the latest round-trip time. Plain atomics written once per
//! read batch (or per PONG) by the connection's own task, read by `/connz`.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

#[derive(Default)]
pub struct Activity {
    /// Unix nanoseconds; 0 means none yet (the connection's start time is reported).
    last_nanos: AtomicI64,
    rtt_nanos: AtomicU64,
}

impl Activity {
    pub fn touch(&self) {
        let now = chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0);
        self.last_nanos.store(now, Ordering::Relaxed);
    }

    pub fn last(&self, started: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
        match self.last_nanos.load(Ordering::Relaxed) {
            0 => started,
            nanos => chrono::DateTime::from_timestamp_nanos(nanos),
        }
    }

    pub fn set_rtt(&self, rtt: std::time::Duration) {
        let nanos = u64::try_from(rtt.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.rtt_nanos.store(nanos, Ordering::Relaxed);
    }

    pub fn rtt_nanos(&self) -> u64 {
        self.rtt_nanos.load(Ordering::Relaxed)
    }
}
