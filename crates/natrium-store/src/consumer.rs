//! The `ConsumerStore` trait and consumer state: what a consumer has delivered and had
//! acknowledged, kept so a restart resumes where it stopped.

use std::collections::BTreeMap;

use crate::error::StoreError;

/// A consumer sequence and the stream sequence of the same message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SequencePair {
    pub consumer: u64,
    pub stream: u64,
}

/// One delivered, unacknowledged message: its first delivery's consumer sequence and the
/// time of its last delivery (Unix nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    pub consumer_seq: u64,
    pub timestamp_ns: i64,
}

/// A consumer's durable state (Go's `ConsumerState`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumerState {
    /// The last delivered message.
    pub delivered: SequencePair,
    /// Everything at or below this is acknowledged.
    pub ack_floor: SequencePair,
    /// Delivered, unacknowledged messages by stream sequence (ack policies other than none).
    pub pending: BTreeMap<u64, Pending>,
    /// Redelivery counts by stream sequence (deliveries beyond the first).
    pub redelivered: BTreeMap<u64, u64>,
}

impl ConsumerState {
    /// How many times the message at `stream_seq` has been delivered (1 unless redelivered).
    pub fn delivery_count(&self, stream_seq: u64) -> u64 {
        self.redelivered
            .get(&stream_seq)
            .map_or(1, |extra| extra + 1)
    }

    /// Checks the relations a state must keep before it is stored: floors under delivered,
    /// pending entries between the floor and delivered.
    pub fn validate(&self) -> Result<(), StoreError> {
        if self.ack_floor.consumer > self.delivered.consumer {
            return Err(StoreError::BadConsumerState(
                "ack floor above delivered (consumer)",
            ));
        }
        if self.ack_floor.stream > self.delivered.stream {
            return Err(StoreError::BadConsumerState(
                "ack floor above delivered (stream)",
            ));
        }
        let in_range = |seq: &u64| *seq > self.ack_floor.stream && *seq <= self.delivered.stream;
        if !self.pending.keys().all(in_range) {
            return Err(StoreError::BadConsumerState(
                "pending sequence out of range",
            ));
        }
        Ok(())
    }
}

/// How a consumer's messages are acknowledged (the parts the store's bookkeeping needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckPolicy {
    /// No acks: delivered is also the ack floor.
    None,
    /// An ack acknowledges everything up to it.
    All,
    /// Each message is acknowledged on its own.
    #[default]
    Explicit,
    /// Acks from flow control, counted as `All` (Go's `AckFlowControl`).
    FlowControl,
}

/// What a consumer store needs of the consumer's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConsumerStoreConfig {
    pub ack_policy: AckPolicy,
    /// Deliveries after which a message leaves the pending map.
    pub max_deliver: Option<u64>,
}

/// A consumer's state storage. Same threading rules as [`crate::StreamStore`].
pub trait ConsumerStore: Send {
    /// Starts from stream sequence `stream_seq` (both delivered and ack floor).
    fn set_starting(&mut self, stream_seq: u64) -> Result<(), StoreError>;

    /// Clears the state and starts from `stream_seq`.
    fn reset(&mut self, stream_seq: u64) -> Result<(), StoreError>;

    /// Whether anything was ever delivered or a start was set.
    fn has_state(&self) -> bool;

    /// Records a delivery: consumer sequence, stream sequence, delivery count, time.
    fn update_delivered(
        &mut self,
        consumer_seq: u64,
        stream_seq: u64,
        delivery_count: u64,
        timestamp_ns: i64,
    ) -> Result<(), StoreError>;

    /// Records an acknowledgement.
    fn update_acks(&mut self, consumer_seq: u64, stream_seq: u64) -> Result<(), StoreError>;

    /// Drops redelivery counts below `stream_seq`.
    fn remove_redelivered_below(&mut self, stream_seq: u64);

    /// Replaces the state, refusing one older than the state held (`OldUpdate`).
    fn update(&mut self, state: &ConsumerState) -> Result<(), StoreError>;

    /// Replaces the state unconditionally (after validation).
    fn force_update(&mut self, state: &ConsumerState) -> Result<(), StoreError>;

    /// A copy of the state.
    fn state(&self) -> Result<ConsumerState, StoreError>;

    /// Writes the state where a restart after a process crash finds it, without waiting for
    /// the disk (no-op for memory): a power loss may take back what was written since the
    /// last `sync`, and the consumer then resumes from that sync.
    fn write(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Makes the state durable (no-op for memory).
    fn sync(&mut self) -> Result<(), StoreError>;

    /// Flushes and closes; later calls fail with `Closed`.
    fn stop(&mut self) -> Result<(), StoreError>;
}
