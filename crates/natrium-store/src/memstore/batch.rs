//! Atomic batches ([`crate::StreamStore::store_batch`]): every check a batch must pass is made
//! before its first message is stored, so a refused batch changes nothing.

use std::collections::HashMap;

use super::body::MsgBody;
use super::state::MemState;
use super::store::MemStore;
use crate::error::StoreError;
use crate::stream::StreamStore;
use crate::types::{DiscardPolicy, NewMsg, Stored};

impl<B: MsgBody> MemState<B> {
    /// The checks of a whole batch: each message's size, and under `discard: new` the
    /// stream's totals with the whole batch added (Go's batch check counts what the batch
    /// adds, without the room a message at its subject limit would free).
    pub(super) fn check_batch(&self, msgs: &[NewMsg<'_>]) -> Result<(), StoreError> {
        for msg in msgs {
            self.check_size(msg)?;
        }
        if self.config.discard != DiscardPolicy::New {
            return Ok(());
        }
        let mut per_subject: HashMap<&[u8], u64> = HashMap::new();
        let mut bytes = self.bytes;
        for (i, msg) in msgs.iter().enumerate() {
            let count = i as u64 + 1;
            if self
                .config
                .max_msgs
                .is_some_and(|max| self.msgs.len() as u64 + count > max)
            {
                return Err(StoreError::MaxMsgs);
            }
            let size = self
                .sizing
                .size(msg.subject.len(), msg.headers.len(), msg.payload.len());
            bytes = bytes.saturating_add(size);
            if self.config.max_bytes.is_some_and(|max| bytes > max) {
                return Err(StoreError::MaxBytes);
            }
            let seen = per_subject.entry(msg.subject).or_default();
            *seen += 1;
            if let (true, false, Some(max)) = (
                self.config.discard_new_per_subject,
                msg.rollup,
                self.config.max_msgs_per_subject,
            ) {
                let held = self.subjects.get(msg.subject).map_or(0, |s| s.msgs);
                if held + *seen > max {
                    return Err(StoreError::MaxMsgsPerSubject);
                }
            }
        }
        Ok(())
    }
}

impl<B: MsgBody> MemStore<B> {
    /// Checks a whole batch before any of it is stored (see [`MemState::check_batch`]).
    pub(crate) fn check_batch(&self, msgs: &[NewMsg<'_>]) -> Result<(), StoreError> {
        self.state.check_batch(msgs)
    }

    /// Stores a batch checked by [`MemStore::check_batch`]: nothing can refuse a message
    /// any more, so it is stored whole.
    pub(crate) fn store_checked_batch(
        &mut self,
        msgs: &[NewMsg<'_>],
    ) -> Result<Vec<Stored>, StoreError> {
        let mut stored = Vec::with_capacity(msgs.len());
        for msg in msgs {
            stored.push(self.store_raw_msg(msg.clone(), 0, false)?);
        }
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use crate::types::{DiscardPolicy, StoreConfig};
    use crate::{MemStore, NewMsg, StoreError, StreamStore};

    fn msg(subject: &'static [u8]) -> NewMsg<'static> {
        NewMsg::new(subject, Bytes::new(), Bytes::from_static(b"x"), 1)
    }

    #[test]
    fn store_batch_memory_all_or_nothing_under_discard_new() {
        let config = StoreConfig {
            max_msgs: Some(3),
            discard: DiscardPolicy::New,
            ..StoreConfig::default()
        };
        let mut store = MemStore::new(config);
        store.store_msg(msg(b"a")).unwrap();
        let batch = [msg(b"b"), msg(b"c"), msg(b"d")];
        assert!(matches!(
            store.store_batch(&batch),
            Err(StoreError::MaxMsgs)
        ));
        assert_eq!(store.fast_state().msgs, 1);
        let stored = store.store_batch(&batch[..2]).unwrap();
        assert_eq!(stored.iter().map(|s| s.seq).collect::<Vec<_>>(), [2, 3]);
    }

    #[test]
    fn store_batch_memory_per_subject_limit_counts_the_batch() {
        let config = StoreConfig {
            max_msgs_per_subject: Some(2),
            discard: DiscardPolicy::New,
            discard_new_per_subject: true,
            ..StoreConfig::default()
        };
        let mut store = MemStore::new(config);
        store.store_msg(msg(b"a")).unwrap();
        let batch = [msg(b"a"), msg(b"b"), msg(b"a")];
        assert!(matches!(
            store.store_batch(&batch),
            Err(StoreError::MaxMsgsPerSubject)
        ));
        assert_eq!(store.fast_state().msgs, 1);
    }
}
