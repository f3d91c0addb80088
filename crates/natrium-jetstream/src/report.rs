//! What JetStream tells monitoring (`natrium_core::report`): settings, usage, accounts and
//! their streams, and the health scan of the store directory.
//!
//! The reporter holds the service weakly: the server keeps the reporter, and the service keeps
//! the server, so a strong link would keep both alive for ever.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use natrium_conf::options::SyncPolicy;
use natrium_core::report::{
    JetStreamReport, JsAccountReport, JsConfigReport, JsDetail, JsHealthFilter, JsHealthProblem,
    JsHealthScan, JsLimitsReport, JsStreamReport, JsUsage,
};
use serde_json::value::RawValue;

use crate::account::JsAccount;
use crate::api::responses::StreamStateJson;
use crate::config::stream::Storage;
use crate::offline::OfflineStream;
use crate::service::{JetStream, API_LEVEL};
use crate::stream::Stream;

/// Go's `sync_interval` when none is configured (also what it reports with `always`).
const SYNC_INTERVAL_DEFAULT: Duration = Duration::from_secs(120);

/// The reporter registered on the server at start.
pub(crate) struct Reporter(pub(crate) Weak<JetStream>);

/// Registers the service's reporter on its server.
pub(crate) fn register(js: &Arc<JetStream>) {
    js.server
        .set_jetstream_report(Arc::new(Reporter(Arc::downgrade(js))));
}

/// A document as the API encodes it (Go's escapes included).
fn raw<T: serde::Serialize>(doc: &T) -> Box<RawValue> {
    let text = String::from_utf8(crate::config::to_go_json(doc)).unwrap_or_default();
    // The encoder wrote valid JSON; `null` stands in should it ever not have.
    RawValue::from_string(text).unwrap_or_default()
}

/// The `ConsumerInfo` documents of `stream`'s consumers, direct ones or not (Go's
/// `consumer_detail`), without their configs unless `with_config`.
fn consumer_details(
    jsa: &JsAccount,
    stream: &Stream,
    direct: bool,
    with_config: bool,
) -> Vec<Box<RawValue>> {
    let consumers: Vec<_> = stream.consumers.lock().values().cloned().collect();
    consumers
        .iter()
        .filter(|c| c.is_direct() == direct)
        .map(|c| {
            let mut info = crate::api::consumer_json::consumer_info(&jsa.account, stream, c, false);
            if !with_config {
                info.config = None;
            }
            raw(&info)
        })
        .collect()
}

fn stream_report(jsa: &JsAccount, stream: &Stream, detail: JsDetail) -> JsStreamReport {
    let with_config = detail.config;
    let sourcing = jsa.sourcing(&stream.name);
    let mirror = sourcing.as_ref().and_then(|s| s.mirror_info());
    let sources = sourcing.map(|s| s.sources_info()).filter(|s| !s.is_empty());
    let core = stream.core.lock();
    let state = core.ingest.store.fast_state();
    let config = with_config.then(|| raw(&core.config));
    drop(core);
    let doc = StreamStateJson {
        consumer_count: stream.public_consumer_count(),
        ..StreamStateJson::of(&state)
    };
    JsStreamReport {
        name: stream.name.clone(),
        created_ns: stream.created_ns,
        messages: state.msgs,
        bytes: state.bytes,
        consumers: doc.consumer_count,
        state: raw(&doc),
        config,
        mirror: mirror.as_ref().map(raw),
        sources: sources.as_ref().map(raw),
        consumer_detail: if detail.consumers {
            consumer_details(jsa, stream, false, with_config)
        } else {
            Vec::new()
        },
        direct_consumer_detail: if detail.direct_consumers {
            consumer_details(jsa, stream, true, with_config)
        } else {
            Vec::new()
        },
    }
}

/// An offline stream (`crate::offline`) as Go reports its stand-in: its stored config, the
/// state its store had when it stopped (none if it never started), no consumers.
fn offline_report(stream: &OfflineStream, detail: JsDetail) -> JsStreamReport {
    let state = &stream.state;
    JsStreamReport {
        name: stream.config.name.clone(),
        created_ns: stream.created_ns,
        messages: state.msgs,
        bytes: state.bytes,
        consumers: 0,
        state: raw(&StreamStateJson::of(state)),
        config: detail.config.then(|| raw(&stream.config)),
        mirror: None,
        sources: None,
        consumer_detail: Vec::new(),
        direct_consumer_detail: Vec::new(),
    }
}

fn account_report(jsa: &JsAccount, detail: JsDetail) -> JsAccountReport {
    // Go reports the account's limits as its reservation, -1 (unlimited) as an unsigned
    // number.
    let as_unsigned = |n: i64| n as u64;
    let streams = if detail.streams {
        let mut streams: Vec<JsStreamReport> = jsa
            .streams()
            .iter()
            .map(|s| stream_report(jsa, s, detail))
            .collect();
        let offline = jsa.offline.all();
        streams.extend(offline.iter().map(|s| offline_report(s, detail)));
        streams.sort_by(|a, b| a.name.cmp(&b.name));
        streams
    } else {
        Vec::new()
    };
    JsAccountReport {
        name: jsa.name().to_owned(),
        usage: JsUsage {
            memory: jsa.usage.used(Storage::Memory),
            storage: jsa.usage.used(Storage::File),
            reserved_memory: as_unsigned(jsa.limits().max_memory),
            reserved_storage: as_unsigned(jsa.limits().max_store),
            api_total: jsa.api_total.load(Ordering::Relaxed),
            api_errors: jsa.api_errors.load(Ordering::Relaxed),
        },
        streams,
    }
}

/// Checks one account's stream directories against its running streams.
fn scan_account(
    js: &JetStream,
    account: &str,
    filter: JsHealthFilter<'_>,
    scan: &mut JsHealthScan,
) {
    let jsa = js.account(account);
    for stream in crate::dirs::sorted_dirs(&js.streams_dir(account)) {
        if !filter.stream.is_empty() {
            if stream != filter.stream {
                continue;
            }
            scan.stream_found = true;
        }
        let Some(running) = jsa.as_ref().and_then(|a| a.stream(&stream)) else {
            scan.problems.push(JsHealthProblem::StreamNotRecovered {
                account: account.to_owned(),
                stream,
            });
            continue;
        };
        let lost = running.core.lock().ingest.store.fast_state().lost;
        if let Some(lost) = lost {
            let msgs = lost
                .ranges
                .iter()
                .map(|&(a, b)| b.saturating_sub(a) + 1)
                .sum();
            scan.problems.push(JsHealthProblem::StreamLostData {
                account: account.to_owned(),
                stream: stream.clone(),
                msgs,
                bytes: lost.bytes,
            });
        }
        if scan.stream_found {
            if !filter.consumer.is_empty() {
                scan.consumer_found = running.consumers.lock().contains_key(filter.consumer);
            }
            break;
        }
    }
}

impl Reporter {
    fn health_scan(js: &JetStream, filter: JsHealthFilter<'_>) -> JsHealthScan {
        let mut scan = JsHealthScan::default();
        for account in crate::dirs::sorted_dirs(&js.settings.store_dir) {
            if !filter.account.is_empty() {
                if account != filter.account {
                    continue;
                }
                scan.account_found = true;
            }
            if js.server.account(&account).is_none() {
                scan.problems
                    .push(JsHealthProblem::AccountUnresolved { account });
                continue;
            }
            scan_account(js, &account, filter, &mut scan);
            if scan.account_found {
                break;
            }
        }
        scan
    }
}

impl JetStreamReport for Reporter {
    fn api_level(&self) -> u32 {
        API_LEVEL
    }

    fn config(&self) -> JsConfigReport {
        let Some(js) = self.0.upgrade() else {
            return JsConfigReport::default();
        };
        let s = &js.settings;
        let (interval, always) = match s.options.sync {
            SyncPolicy::Durable => (SYNC_INTERVAL_DEFAULT, false),
            SyncPolicy::Always => (SYNC_INTERVAL_DEFAULT, true),
            SyncPolicy::Interval(every) => (every, false),
        };
        JsConfigReport {
            max_memory: js.limit(Storage::Memory),
            max_storage: js.limit(Storage::File),
            store_dir: s.store_dir.display().to_string(),
            sync_interval_ns: u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX),
            sync_always: always,
            domain: s.domain.clone(),
            compress_ok: false,
            unique_tag: s.options.unique_tag.clone(),
            strict: s.options.strict,
        }
    }

    fn limits(&self) -> JsLimitsReport {
        let Some(js) = self.0.upgrade() else {
            return JsLimitsReport::default();
        };
        let l = &js.server_limits();
        let nanos = |d: Option<std::time::Duration>| {
            d.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        };
        JsLimitsReport {
            max_request_batch: l.max_request_batch,
            max_ack_pending: l.max_ack_pending,
            max_ha_assets: l.max_ha_assets,
            max_duplicate_window_ns: nanos(l.duplicate_window),
            max_batch_inflight_per_stream: l.batch.max_inflight_per_stream,
            max_batch_inflight_total: l.batch.max_inflight_total,
            max_batch_size: l.batch.max_msgs,
            max_batch_timeout_ns: nanos(l.batch.timeout),
        }
    }

    fn usage(&self) -> JsUsage {
        let Some(js) = self.0.upgrade() else {
            return JsUsage::default();
        };
        let reserved = |storage| u64::try_from(js.reserved.get(storage)).unwrap_or(0);
        JsUsage {
            memory: js.usage.used(Storage::Memory),
            storage: js.usage.used(Storage::File),
            reserved_memory: reserved(Storage::Memory),
            reserved_storage: reserved(Storage::File),
            api_total: js.api_total.load(Ordering::Relaxed),
            api_errors: js.api_errors.load(Ordering::Relaxed),
        }
    }

    fn account_names(&self) -> Vec<String> {
        self.0.upgrade().map_or_else(Vec::new, |js| {
            js.accounts().iter().map(|a| a.name().to_owned()).collect()
        })
    }

    fn account(&self, name: &str, detail: JsDetail) -> Option<JsAccountReport> {
        let jsa = self.0.upgrade()?.account(name)?;
        Some(account_report(&jsa, detail))
    }

    fn health(&self, filter: JsHealthFilter<'_>) -> JsHealthScan {
        self.0
            .upgrade()
            .map(|js| Self::health_scan(&js, filter))
            .unwrap_or_default()
    }
}
