//! What a scenario run is given (its budget) and what it measured (its outcome): shared by
//! the scenario table and the modules that run the rows.

use std::time::Duration;

#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub msgs: u64,
    pub payload_bytes: u64,
    pub elapsed: Duration,
    /// Per-operation latencies, for latency-shaped rows.
    pub latencies: Vec<Duration>,
}

/// How much work one run does.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Messages per publisher for throughput rows.
    pub messages: u64,
    /// Wall time for latency-shaped rows.
    pub duration: Duration,
    /// PUB frames per socket write on publishing connections (the generator's efficiency knob:
    /// fewer frames per write cost the generator more CPU per message).
    pub frames_per_write: usize,
}
