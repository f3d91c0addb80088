//! Streams kept offline (ADR-44): a stored stream whose config needs a higher API level than
//! this server's (`_nats.req.level`), or holds fields this server does not know (a newer
//! server wrote it), is not started, so nothing this server does not understand can touch
//! its files. It is listed, with its reason, and answered as Go's single server answers for
//! one: `STREAM.INFO`, `UPDATE` and a consumer create refused with 10194, `STREAM.LIST`
//! naming it under `offline` and `missing`, a delete removing it, `MSG.GET` and the
//! consumer `UNPIN`/`PAUSE` left unanswered.

use std::collections::BTreeMap;
use std::path::PathBuf;

use parking_lot::Mutex;
use serde::Deserialize;

use crate::config::metadata::REQUIRED_LEVEL_KEY;
use crate::config::StreamConfig;
use crate::config::API_LEVEL;

/// A stream that stays stopped, and why.
#[derive(Debug, Clone)]
pub struct OfflineStream {
    pub config: StreamConfig,
    pub created_ns: i64,
    /// Go's `offlineReason`.
    pub reason: String,
    /// Its directory (a delete removes it).
    pub dir: PathBuf,
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
    let mut unknown = None::<String>;
    let mut de = serde_json::Deserializer::from_slice(meta);
    let decoded: StoredMeta = serde_ignored::deserialize(&mut de, |path| {
        unknown.get_or_insert_with(|| last_key(&path.to_string()));
    })
    .ok()?;
    let StoredMeta { config, created_ns } = decoded;
    let level = config.metadata.get(REQUIRED_LEVEL_KEY).cloned();
    let supported = level
        .as_deref()
        .is_none_or(|l| l.parse::<u32>().is_ok_and(|l| l <= API_LEVEL));
    let (reason, warning) = match (supported, unknown) {
        (true, None) => return Some(Stored::Run(config, created_ns)),
        (false, Some(field)) => {
            let reason = format!("unsupported - config error: unknown field \"{field}\"");
            let warning = unsupported_warning(account, &config.name, &reason);
            (reason, warning)
        }
        (false, None) => {
            let level = level.unwrap_or_default();
            let reason = format!(
                "unsupported - required API level: {level}, current API level: {API_LEVEL}"
            );
            let warning = unsupported_warning(account, &config.name, &reason);
            (reason, warning)
        }
        (true, Some(field)) => {
            let error = format!("json: unknown field \"{field}\"");
            let warning = format!(
                "  Error unmarshalling stream metafile \"{}\": {error}",
                dir.join("meta.dat").display()
            );
            (format!("decoding error: {error}"), warning)
        }
    };
    let stream = OfflineStream {
        config,
        created_ns,
        reason,
        dir,
    };
    Some(Stored::Offline(stream, warning))
}

fn unsupported_warning(account: &str, stream: &str, reason: &str) -> String {
    format!("  Detected unsupported stream '{account} > {stream}': {reason}")
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
