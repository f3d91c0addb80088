//! A consumer of a stream: its configuration, its state in a store, where it starts, and its
//! delivery bookkeeping (served by the stream's consumer engine, `super::engine`).
//!
//! Locking: a consumer's `core` is taken after the stream's consumer map and before the
//! stream's `core` (which is held only to read the stream's store).

use std::path::PathBuf;

use natrium_store::{ConsumerState, ConsumerStore, Filter, StreamStore};
use parking_lot::Mutex;

use super::config::{ConsumerConfig, DeliverPolicy};
use super::state::DeliveryState;

/// A consumer.
pub struct Consumer {
    pub name: String,
    pub stream: String,
    /// Unix nanoseconds of creation (`created`).
    pub created_ns: i64,
    pub(crate) core: Mutex<ConsumerCore>,
}

/// What `core` guards.
pub struct ConsumerCore {
    pub config: ConsumerConfig,
    /// The state store (Go keeps none for a stream's internal direct consumers).
    pub store: Option<Box<dyn ConsumerStore>>,
    /// The next stream sequence to deliver (Go's `sseq`).
    pub next_seq: u64,
    /// The consumer's directory (`obs/<name>/`) when its config and state are on disk.
    pub dir: Option<PathBuf>,
    /// Delivery bookkeeping (pending acks, redeliveries, waiting requests).
    pub delivery: DeliveryState,
}

/// Counters of a consumer's info, as of now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumerSnapshot {
    pub config: ConsumerConfig,
    pub state: ConsumerState,
    pub num_pending: u64,
    pub num_waiting: usize,
}

impl Consumer {
    pub fn new(stream: &str, name: &str, created_ns: i64, core: ConsumerCore) -> Self {
        Self {
            name: name.to_owned(),
            stream: stream.to_owned(),
            created_ns,
            core: Mutex::new(core),
        }
    }

    /// The current configuration.
    pub fn config(&self) -> ConsumerConfig {
        self.core.lock().config.clone()
    }

    /// Whether this consumer sources the stream for another (not counted against limits).
    pub fn is_sourcing(&self) -> bool {
        self.core.lock().config.sourcing
    }

    /// Whether this is one of a stream's internal consumers (not listed, not limited).
    pub fn is_direct(&self) -> bool {
        self.core.lock().config.direct
    }

    /// The consumer's configuration, state and pending count; `pending` counts from the next
    /// sequence in the stream's store (called with the consumer locked, so it may take the
    /// stream's `core`).
    pub fn snapshot(&self, pending: impl FnOnce(&ConsumerConfig, u64) -> u64) -> ConsumerSnapshot {
        let core = self.core.lock();
        let next = core.next_seq;
        let mut state = core
            .store
            .as_ref()
            .and_then(|s| s.state().ok())
            .unwrap_or_default();
        let stored = core.store.as_ref().is_some_and(|s| s.has_state());
        if !stored {
            state.delivered.consumer = 0;
            state.delivered.stream = next.saturating_sub(1);
        }
        if core.config.max_deliver == 1 {
            // Redeliveries are off: Go does not report the counts it still keeps.
            state.redelivered.clear();
        }
        ConsumerSnapshot {
            num_pending: pending(&core.config, next),
            num_waiting: core.delivery.waiting.len(),
            config: core.config.clone(),
            state,
        }
    }
}

/// The consumer's filter for the store.
pub fn store_filter(config: &ConsumerConfig) -> Filter {
    Filter::many(config.filters().into_iter().map(str::as_bytes)).unwrap_or_else(|_| Filter::all())
}

/// Messages left to deliver from `next` (Go clamps the store's count by the stream's
/// messages and by the sequences left).
pub fn num_pending(config: &ConsumerConfig, next: u64, store: &dyn StreamStore) -> u64 {
    let state = store.fast_state();
    if next > state.last_seq {
        return 0;
    }
    let last_per_subject = config.deliver_policy == DeliverPolicy::LastPerSubject;
    let (count, _) = store.num_pending(next, &store_filter(config), last_per_subject);
    count
        .min(state.msgs)
        .min(state.last_seq.saturating_sub(next).saturating_add(1))
}

/// Go's choice of the first sequence to deliver (`selectStartingSeqNo`) against the stream's
/// store as it is now; `last_msgs_per_subject_one` is the stream's `max_msgs_per_subject == 1`.
pub fn starting_seq(
    config: &ConsumerConfig,
    store: &dyn StreamStore,
    per_subject_one: bool,
) -> u64 {
    let state = store.fast_state();
    let filters = config.filters();
    let mut seq = if config.opt_start_seq > 0 {
        config.opt_start_seq
    } else {
        match config.deliver_policy {
            DeliverPolicy::All => state.first_seq,
            DeliverPolicy::Last if filters.is_empty() => state.last_seq,
            DeliverPolicy::Last => filters
                .iter()
                .filter_map(|f| Filter::new(f.as_bytes()).ok())
                .map(|f| store.filtered_state(1, &f).last)
                .max()
                .unwrap_or(0),
            DeliverPolicy::LastPerSubject if per_subject_one => state.first_seq,
            DeliverPolicy::LastPerSubject => {
                first_of_last_per_subject(config, store).unwrap_or(state.last_seq)
            }
            DeliverPolicy::ByStartTime => config.opt_start_time.map_or(state.last_seq + 1, |t| {
                skip_to_filtered(&filters, store.seq_from_time(t.unix_nanos()), store)
            }),
            DeliverPolicy::New | DeliverPolicy::ByStartSequence => state.last_seq + 1,
        }
    };
    if state.first_seq == 0 && config.opt_start_seq == 0 {
        seq = 1;
    } else if seq > state.last_seq && config.opt_start_seq == 0 {
        seq = state.last_seq + 1;
    } else if seq < state.first_seq {
        seq = state.first_seq;
    }
    seq
}

/// From a start found by time, Go skips ahead to the first message a filter matches (when
/// that is before the stream's last).
fn skip_to_filtered(filters: &[&str], seq: u64, store: &dyn StreamStore) -> u64 {
    if filters.is_empty() {
        return seq;
    }
    let state = store.fast_state();
    let mut next = state.last_seq;
    for filter in filters {
        let Ok(filter) = Filter::new(filter.as_bytes()) else {
            continue;
        };
        let first = store.filtered_state(state.first_seq, &filter).first;
        if first >= seq && first < next {
            next = first;
        }
    }
    if next > seq && next < state.last_seq {
        next
    } else {
        seq
    }
}

/// The lowest of the last sequences of each subject the filters match.
fn first_of_last_per_subject(config: &ConsumerConfig, store: &dyn StreamStore) -> Option<u64> {
    let filter = store_filter(config);
    store
        .subjects_state(&filter)
        .iter()
        .map(|(_, s)| s.last)
        .min()
}
