//! `$JS.API.INFO`: the account's usage, limits and API counters.

use std::sync::atomic::Ordering;

use super::request::Request;
use super::responses::{encode, AccountInfoResponse, AccountLimitsJson, ApiStatsJson};
use crate::config::stream::Storage;
use crate::service::API_LEVEL;

pub fn info(req: &Request<'_>) -> Vec<u8> {
    let (mut memory, mut storage) = (0, 0);
    let streams = req.jsa.streams();
    for stream in &streams {
        let core = stream.core.lock();
        let bytes = core.ingest.store.fast_state().bytes;
        match core.config.storage {
            Storage::Memory => memory += bytes,
            Storage::File => storage += bytes,
        }
    }
    // As in Go, this request is not counted yet.
    let total = req.js.api_total.load(Ordering::Relaxed);
    encode(
        "account_info_response",
        None,
        AccountInfoResponse {
            memory,
            storage,
            reserved_memory: 0,
            reserved_storage: 0,
            streams: streams.len(),
            consumers: 0,
            limits: AccountLimitsJson::from(&req.jsa.limits),
            domain: req.js.settings.domain.clone(),
            api: ApiStatsJson {
                level: API_LEVEL,
                total,
                errors: req.js.api_errors.load(Ordering::Relaxed),
            },
        },
    )
}
