//! `$JS.API.INFO`: the account's usage, limits and API counters.

use std::sync::atomic::Ordering;

use super::request::Request;
use super::responses::{encode, AccountInfoResponse, AccountLimitsJson, ApiStatsJson};
use crate::config::stream::Storage;
use crate::service::API_LEVEL;

pub fn info(req: &Request<'_>) -> Vec<u8> {
    let usage = &req.jsa.usage;
    let (reserved_memory, reserved_storage) = req.jsa.reserved("");
    let streams = req.jsa.streams().len() + req.jsa.offline.len();
    // As in Go, this request is not counted yet.
    let total = req.jsa.api_total.load(Ordering::Relaxed);
    encode(
        "account_info_response",
        None,
        AccountInfoResponse {
            memory: usage.used(Storage::Memory),
            storage: usage.used(Storage::File),
            reserved_memory: u64::try_from(reserved_memory).unwrap_or(0),
            reserved_storage: u64::try_from(reserved_storage).unwrap_or(0),
            streams,
            consumers: req.jsa.consumer_count(),
            limits: AccountLimitsJson::from(&req.jsa.limits()),
            domain: req.js.settings.domain.clone(),
            api: ApiStatsJson {
                level: API_LEVEL,
                total,
                errors: req.jsa.api_errors.load(Ordering::Relaxed),
            },
        },
    )
}
