//! Streams kept offline (ADR-44): a stored stream whose config needs a higher API level than
//! this server's (`_nats.req.level`), or holds fields this server does not know (a newer
//! server wrote it), is not started, so nothing this server does not understand can touch
//! its files; nor is a stream one of whose stored consumers is such a config. It is listed,
//! with its reason, and answered as Go's single server answers for one (`api::offline_gate`).
//! Its unsupported consumers are kept with their own reasons; its other consumers are not
//! recovered, as Go's stopped stream drops them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::Deserialize;

use crate::config::metadata::REQUIRED_LEVEL_KEY;
use crate::config::StreamConfig;
use crate::config::API_LEVEL;
use crate::consumer::lifecycle::ConsumerFiles;

/// A stream that stays stopped, and why.
#[derive(Debug, Clone)]
pub struct OfflineStream {
    pub config: StreamConfig,
    pub created_ns: i64,
    /// Go's `offlineReason`.
    pub reason: String,
    /// Its directory (a delete removes it).
    pub dir: PathBuf,
    /// Its stored consumers this server can not run, by name, with Go's `offlineReason`.
    pub consumers: BTreeMap<String, String>,
    /// What monitoring shows of its messages: those its store held when it was stopped for
    /// an unsupported consumer, none for a config this server does not run (Go's stand-in).
    pub state: Box<natrium_store::StreamState>,
}

/// An account's offline streams, by name.
#[derive(Debug, Default)]
pub struct OfflineStreams(Mutex<BTreeMap<String, OfflineStream>>);

impl OfflineStreams {
    pub fn insert(&self, stream: OfflineStream) {
        self.0.lock().insert(stream.config.name.clone(), stream);
    }

    /// Why stream `name` is offline, if it is.
    pub fn reason(&self, name: &str) -> Option<String> {
        self.0.lock().get(name).map(|s| s.reason.clone())
    }

    /// Offline stream `name`, if it is one.
    pub fn get(&self, name: &str) -> Option<OfflineStream> {
        self.0.lock().get(name).cloned()
    }

    pub fn remove(&self, name: &str) -> Option<OfflineStream> {
        self.0.lock().remove(name)
    }

    /// Every offline stream, by name.
    pub fn all(&self) -> Vec<OfflineStream> {
        self.0.lock().values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.0.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().is_empty()
    }
}

/// A stored stream's `meta.dat` body, as this server reads it.
#[derive(Deserialize)]
struct StoredMeta {
    config: StreamConfig,
    created_ns: i64,
}

/// What a stored stream's metadata says.
pub enum Stored {
    /// A config this server runs, and the creation time.
    Run(StreamConfig, i64),
    /// A config it keeps offline: the stream, and the warning Go logs for it.
    Offline(OfflineStream, String),
}

/// Reads `meta` (a `meta.dat` body) of the stream in `dir` of `account`; `None` when it is
/// not a stream's metadata at all. Fields this server does not know are noted, not refused,
/// as Go's strict decode followed by its lenient one.
pub fn classify(meta: &[u8], account: &str, dir: PathBuf) -> Option<Stored> {
    let (decoded, unknown) = decode_noting_unknown::<StoredMeta>(meta)?;
    let StoredMeta { config, created_ns } = decoded;
    let Some(offline) = offline_reason(&config.metadata, unknown) else {
        return Some(Stored::Run(config, created_ns));
    };
    let warning = match &offline {
        Offline::Unsupported(reason) => format!(
            "  Detected unsupported stream '{account} > {}': {reason}",
            config.name
        ),
        Offline::Undecodable(error) => format!(
            "  Error unmarshalling stream metafile \"{}\": {error}",
            dir.join("meta.dat").display()
        ),
    };
    let stream = OfflineStream {
        config,
        created_ns,
        reason: offline.reason(),
        dir,
        consumers: BTreeMap::new(),
        state: Box::default(),
    };
    Some(Stored::Offline(stream, warning))
}

/// The config and creation time of the stored stream in `dir` (its `meta` body) when it
/// can run here; `None` when it can not (kept offline, as Go keeps it, with the consumers
/// it can not run) or is not a stream's metadata.
pub(crate) fn runnable(
    (consumer_files, stopped_state): (
        impl Fn(&str) -> ConsumerFiles,
        impl Fn(&StreamConfig) -> natrium_store::StreamState,
    ),
    (account, offline): (&str, &OfflineStreams),
    meta: &[u8],
    dir: &Path,
) -> Option<(StreamConfig, i64)> {
    let stream = match classify(meta, account, dir.to_path_buf()) {
        Some(Stored::Run(config, created_ns)) => {
            let scanned = scan_consumers(&consumer_files(&config.name), dir);
            if !any_offline(&scanned.0) {
                return Some((config, created_ns));
            }
            // Go starts the stream, then stops it at the consumer it can not run.
            let state = Box::new(stopped_state(&config));
            let offline = offline_consumers(&scanned, (account, &config.name), true);
            let first = offline.first().map_or("", |(name, _)| name.as_str());
            OfflineStream {
                reason: format!("stopped - unsupported consumer \"{first}\""),
                state,
                config,
                created_ns,
                dir: dir.to_path_buf(),
                consumers: offline.into_iter().collect(),
            }
        }
        Some(Stored::Offline(mut stream, warning)) => {
            tracing::warn!("{warning}");
            let scanned = scan_consumers(&consumer_files(&stream.config.name), dir);
            let names = (account, stream.config.name.as_str());
            stream.consumers = offline_consumers(&scanned, names, false)
                .into_iter()
                .collect();
            stream
        }
        None => {
            tracing::warn!(
                "  Error unmarshalling stream metafile for '{} > {}'",
                account,
                dir.file_name().unwrap_or_default().to_string_lossy()
            );
            return None;
        }
    };
    offline.insert(stream);
    None
}

/// Why a stored config can not run here.
enum Offline {
    /// It needs a higher API level (Go's "unsupported - …" reasons).
    Unsupported(String),
    /// A field this server does not know, at a level it supports: the decode error.
    Undecodable(String),
}

impl Offline {
    fn reason(&self) -> String {
        match self {
            Offline::Unsupported(reason) => reason.clone(),
            Offline::Undecodable(error) => format!("decoding error: {error}"),
        }
    }
}

/// Decodes `bytes` as `T`, noting the first field `T` does not know.
fn decode_noting_unknown<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> Option<(T, Option<String>)> {
    let mut unknown = None::<String>;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let decoded: T = serde_ignored::deserialize(&mut de, |path| {
        unknown.get_or_insert_with(|| last_key(&path.to_string()));
    })
    .ok()?;
    Some((decoded, unknown))
}

/// Go's verdict on a stored config with `metadata` and maybe an `unknown` field: `None` when
/// this server runs it.
fn offline_reason(metadata: &BTreeMap<String, String>, unknown: Option<String>) -> Option<Offline> {
    let level = metadata.get(REQUIRED_LEVEL_KEY);
    let supported = level.is_none_or(|l| l.parse::<u32>().is_ok_and(|l| l <= API_LEVEL));
    match (supported, unknown) {
        (true, None) => None,
        (false, Some(field)) => Some(Offline::Unsupported(format!(
            "unsupported - config error: unknown field \"{field}\""
        ))),
        (false, None) => Some(Offline::Unsupported(format!(
            "unsupported - required API level: {}, current API level: {API_LEVEL}",
            level.map_or("", String::as_str)
        ))),
        (true, Some(field)) => Some(Offline::Undecodable(format!(
            "json: unknown field \"{field}\""
        ))),
    }
}

/// A stored consumer of a stream, and why this server can not run it (if it can not).
pub struct StoredConsumer {
    name: String,
    dir: PathBuf,
    offline: Option<Offline>,
}

/// The stored consumers of the stream in `stream_dir`, in the order Go recovers them, and how
/// many directories there are (Go counts them all).
pub fn scan_consumers(files: &ConsumerFiles, stream_dir: &Path) -> (Vec<StoredConsumer>, usize) {
    use crate::consumer::persist::{ConsumerMeta, CONSUMERS_DIR};
    use natrium_store::filestore::{envelope::Kind, meta};
    let obs = stream_dir.join(CONSUMERS_DIR);
    let names = crate::dirs::sorted_dirs(&obs);
    let count = names.len();
    let scanned = names
        .into_iter()
        .filter_map(|name| {
            let dir = obs.join(&name);
            let io = files.io.as_ref();
            let (body, _) = meta::load(io, &dir, Kind::ConsumerMeta, files.at_rest.as_ref())
                .ok()
                .flatten()?;
            let (decoded, unknown) = decode_noting_unknown::<ConsumerMeta>(&body)?;
            let offline = offline_reason(&decoded.config.metadata, unknown);
            Some(StoredConsumer {
                name: decoded.name,
                dir,
                offline,
            })
        })
        .collect();
    (scanned, count)
}

/// Whether any of `scanned` can not run here.
pub fn any_offline(scanned: &[StoredConsumer]) -> bool {
    scanned.iter().any(|c| c.offline.is_some())
}

/// The consumers of `scanned` this server can not run, each with its `offlineReason`, with
/// Go's log lines for the recovery of them all. `running` says whether the stream itself runs:
/// Go stops it at its first unsupported consumer (the caller keeps it offline with `stopped -
/// unsupported consumer "<name>"`), and a consumer it can run of a stream already stopped is
/// not added.
pub fn offline_consumers(
    (scanned, count): &(Vec<StoredConsumer>, usize),
    (account, stream): (&str, &str),
    mut running: bool,
) -> Vec<(String, String)> {
    if *count > 0 {
        tracing::info!("  Recovering {count} consumers for stream - '{account} > {stream}'");
    }
    let mut out = Vec::new();
    for consumer in scanned {
        let name = &consumer.name;
        let Some(offline) = &consumer.offline else {
            if !running {
                tracing::warn!(
                    "    Error adding consumer '{account} > {stream} > {name}': stream not valid (10096)"
                );
            }
            continue;
        };
        match offline {
            Offline::Unsupported(reason) => tracing::warn!(
                "  Detected unsupported consumer '{account} > {stream} > {name}': {reason}"
            ),
            Offline::Undecodable(error) => tracing::warn!(
                "  Error unmarshalling consumer metafile \"{}\": {error}",
                consumer.dir.join("meta.dat").display()
            ),
        }
        if running {
            tracing::warn!("  Stopping unsupported stream '{account} > {stream}'");
            running = false;
        }
        out.push((name.clone(), offline.reason()));
    }
    out
}

/// The last key of a `serde_ignored` path (`config.future.x` → `x`), as Go names an unknown
/// field by its own name.
fn last_key(path: &str) -> String {
    path.rsplit('.').next().unwrap_or(path).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(config: &str) -> Vec<u8> {
        format!(r#"{{"config":{config},"created_ns":5}}"#).into_bytes()
    }

    fn reason(config: &str) -> Option<String> {
        match classify(&meta(config), "A", PathBuf::from("/s/X"))? {
            Stored::Run(..) => None,
            Stored::Offline(s, _) => Some(s.reason),
        }
    }

    #[test]
    fn offline_streams_by_level_and_unknown_fields() {
        let base = r#""name":"X","retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":1,"duplicate_window":0"#;
        assert_eq!(reason(&format!("{{{base}}}")), None);
        let ok = format!(r#"{{{base},"metadata":{{"_nats.req.level":"1"}}}}"#);
        assert_eq!(reason(&ok), None);
        let high = format!(r#"{{{base},"metadata":{{"_nats.req.level":"99"}}}}"#);
        assert_eq!(
            reason(&high).as_deref(),
            Some("unsupported - required API level: 99, current API level: 5")
        );
        let both = format!(r#"{{{base},"future":1,"metadata":{{"_nats.req.level":"99"}}}}"#);
        assert_eq!(
            reason(&both).as_deref(),
            Some("unsupported - config error: unknown field \"future\"")
        );
        let unknown = format!(r#"{{{base},"future":{{"x":1}}}}"#);
        assert_eq!(
            reason(&unknown).as_deref(),
            Some("decoding error: json: unknown field \"future\"")
        );
        assert!(classify(b"not json", "A", PathBuf::new()).is_none());
    }
}
