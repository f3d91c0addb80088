//! `MemConsumerStore`: consumer state kept in memory, with Go's bookkeeping rules for
//! deliveries and acknowledgements.

use crate::consumer::{AckPolicy, ConsumerState, ConsumerStore, ConsumerStoreConfig, Pending};
use crate::error::StoreError;

/// A consumer's state in memory.
#[derive(Debug, Default)]
pub struct MemConsumerStore {
    config: ConsumerStoreConfig,
    state: ConsumerState,
    closed: bool,
}

impl MemConsumerStore {
    pub fn new(config: ConsumerStoreConfig) -> Self {
        MemConsumerStore {
            config,
            state: ConsumerState::default(),
            closed: false,
        }
    }

    /// A store holding `state` as read back from disk. Not validated: every state the
    /// bookkeeping rules below can reach must load again, odd ones included.
    pub(crate) fn with_state(config: ConsumerStoreConfig, state: ConsumerState) -> Self {
        MemConsumerStore {
            config,
            state,
            closed: false,
        }
    }

    fn open(&self) -> Result<(), StoreError> {
        if self.closed {
            return Err(StoreError::Closed);
        }
        Ok(())
    }

    /// Ack-all (and flow-control) acks: everything up to `stream_seq` is acknowledged.
    fn ack_all(&mut self, consumer_seq: u64, stream_seq: u64) {
        self.state.ack_floor.consumer = consumer_seq;
        self.state.ack_floor.stream = stream_seq;
        let kept = self.state.pending.split_off(&(stream_seq + 1));
        self.state.pending = kept;
        let kept = self.state.redelivered.split_off(&(stream_seq + 1));
        self.state.redelivered = kept;
    }

    /// Explicit acks: the floor moves only when the ack was the next one above it, and then up
    /// to just below the oldest message still pending.
    fn ack_explicit(&mut self, mut consumer_seq: u64, stream_seq: u64) {
        if let Some(p) = self.state.pending.remove(&stream_seq) {
            if consumer_seq > p.consumer_seq && p.consumer_seq > 0 {
                consumer_seq = p.consumer_seq;
            }
        }
        let s = &mut self.state;
        if s.pending.is_empty() {
            s.ack_floor = s.delivered;
        } else if consumer_seq == s.ack_floor.consumer + 1 {
            s.ack_floor.consumer = consumer_seq;
            s.ack_floor.stream = stream_seq;
            if s.delivered.consumer > consumer_seq {
                if let Some((next, p)) = s.pending.range(stream_seq + 1..).next() {
                    if p.consumer_seq > 0 {
                        s.ack_floor.consumer = p.consumer_seq - 1;
                        s.ack_floor.stream = next - 1;
                    }
                }
            }
        }
    }
}

impl ConsumerStore for MemConsumerStore {
    fn set_starting(&mut self, stream_seq: u64) -> Result<(), StoreError> {
        self.open()?;
        self.state.delivered.stream = stream_seq;
        self.state.ack_floor.stream = stream_seq;
        Ok(())
    }

    fn reset(&mut self, stream_seq: u64) -> Result<(), StoreError> {
        self.open()?;
        self.state = ConsumerState::default();
        self.set_starting(stream_seq)
    }

    fn has_state(&self) -> bool {
        self.state.delivered.consumer != 0 || self.state.delivered.stream != 0
    }

    fn update_delivered(
        &mut self,
        consumer_seq: u64,
        stream_seq: u64,
        delivery_count: u64,
        timestamp_ns: i64,
    ) -> Result<(), StoreError> {
        self.open()?;
        let ack_none = self.config.ack_policy == AckPolicy::None;
        if delivery_count != 1 && ack_none {
            return Err(StoreError::NoAckPolicy);
        }
        // A replay of an old delivery (after a restart) changes nothing.
        if consumer_seq <= self.state.ack_floor.consumer {
            return Ok(());
        }
        let s = &mut self.state;
        if ack_none {
            if consumer_seq > s.delivered.consumer {
                s.delivered.consumer = consumer_seq;
                s.ack_floor.consumer = consumer_seq;
            }
            if stream_seq > s.delivered.stream {
                s.delivered.stream = stream_seq;
                s.ack_floor.stream = stream_seq;
            }
            return Ok(());
        }
        if stream_seq <= s.delivered.stream {
            // A redelivery keeps the first delivery's consumer sequence.
            if let Some(p) = s.pending.get_mut(&stream_seq) {
                p.timestamp_ns = timestamp_ns;
            }
        } else {
            s.pending.insert(
                stream_seq,
                Pending {
                    consumer_seq,
                    timestamp_ns,
                },
            );
        }
        s.delivered.consumer = s.delivered.consumer.max(consumer_seq);
        s.delivered.stream = s.delivered.stream.max(stream_seq);
        if delivery_count > 1 {
            if self
                .config
                .max_deliver
                .is_some_and(|max| delivery_count > max)
            {
                s.pending.remove(&stream_seq);
            }
            let count = s.redelivered.entry(stream_seq).or_insert(0);
            *count = (*count).max(delivery_count - 1);
        }
        Ok(())
    }

    fn update_acks(&mut self, consumer_seq: u64, stream_seq: u64) -> Result<(), StoreError> {
        self.open()?;
        if self.config.ack_policy == AckPolicy::None {
            return Err(StoreError::NoAckPolicy);
        }
        self.state.redelivered.remove(&stream_seq);
        if consumer_seq <= self.state.ack_floor.consumer {
            return Ok(());
        }
        if !self.state.pending.contains_key(&stream_seq) {
            return Err(StoreError::NotFound);
        }
        match self.config.ack_policy {
            AckPolicy::All | AckPolicy::FlowControl => self.ack_all(consumer_seq, stream_seq),
            AckPolicy::Explicit | AckPolicy::None => self.ack_explicit(consumer_seq, stream_seq),
        }
        Ok(())
    }

    fn remove_redelivered_below(&mut self, stream_seq: u64) {
        let kept = self.state.redelivered.split_off(&stream_seq);
        self.state.redelivered = kept;
    }

    fn update(&mut self, state: &ConsumerState) -> Result<(), StoreError> {
        self.open()?;
        state.validate()?;
        if state.delivered.consumer < self.state.delivered.consumer
            || state.ack_floor.stream < self.state.ack_floor.stream
        {
            return Err(StoreError::OldUpdate);
        }
        self.state.clone_from(state);
        Ok(())
    }

    fn force_update(&mut self, state: &ConsumerState) -> Result<(), StoreError> {
        self.open()?;
        state.validate()?;
        self.state.clone_from(state);
        Ok(())
    }

    fn state(&self) -> Result<ConsumerState, StoreError> {
        self.open()?;
        Ok(self.state.clone())
    }

    fn write(&mut self) -> Result<(), StoreError> {
        self.open()
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        self.open()
    }

    fn stop(&mut self) -> Result<(), StoreError> {
        self.closed = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explicit() -> MemConsumerStore {
        MemConsumerStore::new(ConsumerStoreConfig {
            ack_policy: AckPolicy::Explicit,
            max_deliver: None,
        })
    }

    #[test]
    fn store_consumer_explicit_acks_move_floor() {
        let mut c = explicit();
        for i in 1..=3 {
            c.update_delivered(i, i + 10, 1, 100).unwrap();
        }
        c.update_acks(2, 12).unwrap();
        let s = c.state().unwrap();
        assert_eq!((s.ack_floor.consumer, s.ack_floor.stream), (0, 0));
        c.update_acks(1, 11).unwrap();
        let s = c.state().unwrap();
        assert_eq!((s.ack_floor.consumer, s.ack_floor.stream), (2, 12));
        c.update_acks(3, 13).unwrap();
        let s = c.state().unwrap();
        assert_eq!(s.ack_floor, s.delivered);
        assert!(s.pending.is_empty());
    }

    #[test]
    fn store_consumer_redelivery_counts() {
        let mut c = explicit();
        c.update_delivered(1, 5, 1, 100).unwrap();
        c.update_delivered(2, 5, 2, 200).unwrap();
        let s = c.state().unwrap();
        assert_eq!(s.delivery_count(5), 2);
        assert_eq!(
            s.pending[&5],
            Pending {
                consumer_seq: 1,
                timestamp_ns: 200
            }
        );
        c.update_acks(2, 5).unwrap();
        assert_eq!(c.state().unwrap().delivery_count(5), 1);
    }

    #[test]
    fn store_consumer_ack_all_clears_below() {
        let mut c = MemConsumerStore::new(ConsumerStoreConfig {
            ack_policy: AckPolicy::All,
            max_deliver: None,
        });
        for i in 1..=4 {
            c.update_delivered(i, i, 1, 0).unwrap();
        }
        c.update_acks(3, 3).unwrap();
        let s = c.state().unwrap();
        assert_eq!(s.pending.keys().copied().collect::<Vec<_>>(), vec![4]);
        assert_eq!(s.ack_floor.stream, 3);
    }

    #[test]
    fn store_consumer_ack_none_and_validation() {
        let mut c = MemConsumerStore::new(ConsumerStoreConfig {
            ack_policy: AckPolicy::None,
            max_deliver: None,
        });
        c.update_delivered(1, 7, 1, 0).unwrap();
        assert_eq!(c.state().unwrap().ack_floor.stream, 7);
        assert!(matches!(c.update_acks(1, 7), Err(StoreError::NoAckPolicy)));
        let mut bad = ConsumerState::default();
        bad.ack_floor.stream = 3;
        assert!(c.force_update(&bad).is_err());
        c.stop().unwrap();
        assert!(matches!(c.state(), Err(StoreError::Closed)));
    }
}
