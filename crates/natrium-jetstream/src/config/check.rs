//! Stand-in until the stream configuration checks land: Go's main defaults only.

use super::context::CheckContext;
use super::StreamConfig;
use crate::errors::{table, ApiError};

impl StreamConfig {
    pub fn checked_for_create(mut self, _ctx: &CheckContext) -> Result<StreamConfig, ApiError> {
        if self.subjects.is_empty() {
            self.subjects = vec![self.name.clone()];
        }
        for limit in [
            &mut self.max_msgs,
            &mut self.max_bytes,
            &mut self.max_msgs_per_subject,
            &mut self.max_consumers,
        ] {
            if *limit == 0 {
                *limit = -1;
            }
        }
        if self.max_msg_size == 0 {
            self.max_msg_size = -1;
        }
        if self.num_replicas == 0 {
            self.num_replicas = 1;
        }
        if self.duplicate_window == 0 {
            self.duplicate_window = 120_000_000_000;
            if self.max_age > 0 && self.max_age < self.duplicate_window {
                self.duplicate_window = self.max_age;
            }
        }
        self.metadata
            .insert("_nats.req.level".to_owned(), "0".to_owned());
        Ok(self)
    }

    pub fn checked_for_update(
        self,
        old: &StreamConfig,
        ctx: &CheckContext,
    ) -> Result<StreamConfig, ApiError> {
        if self.storage != old.storage {
            return Err(table::STREAM_INVALID_CONFIG_F.with(&[(
                "err",
                &"stream configuration update can not change storage type",
            )]));
        }
        self.checked_for_create(ctx)
    }
}

/// Decodes a request body.
pub fn decode_request<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| table::INVALID_JSON.with(&[("err", &e)]))
}
