//! The parts every advisory shares: Go's `TypedEvent` header and the interest check made
//! before a document is built. A leaf: the advisories of the API and of consumers use it.

use natrium_core::account::Account;
use serde::Serialize;

/// Go's `TypedEvent` header of every advisory.
#[derive(Serialize)]
struct Typed<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    id: String,
    timestamp: String,
    #[serde(flatten)]
    body: T,
}

/// Where a stream's advisories that Go also copies to the system account go: the server's
/// JetStream domain and its system account.
pub struct EventScope {
    pub domain: String,
    pub system: std::sync::Arc<Account>,
}

/// Whether a publish on `subject` in `account` would reach a subscriber there, or in an
/// account importing it as a stream (Go counts those through the shadow subscriptions the
/// import adds to the exporter's index: a deliver subject consumed across accounts is live).
pub fn has_interest(account: &Account, subject: &str) -> bool {
    let listened = |account: &Account, subject: &[u8]| {
        let result = account.sublist.matches(subject);
        !(result.plain.is_empty() && result.queues.is_empty())
    };
    if listened(account, subject.as_bytes()) {
        return true;
    }
    let Some(links) = account.links() else {
        return false;
    };
    let mut mapped = Vec::new();
    links
        .streams
        .iter()
        .filter(|f| f.matches(subject.as_bytes()))
        .any(|forward| {
            let Some(importer) = forward.to.upgrade() else {
                return false;
            };
            let local = if forward.mapping.apply(subject.as_bytes(), &mut mapped) {
                &mapped[..]
            } else {
                subject.as_bytes()
            };
            listened(&importer, local)
        })
}

/// The accounts importing `account`'s streams: their subscription changes move its interest.
pub fn stream_importers(account: &Account) -> Vec<std::sync::Arc<Account>> {
    let Some(links) = account.links() else {
        return Vec::new();
    };
    let mut out: Vec<std::sync::Arc<Account>> = Vec::new();
    for importer in links.streams.iter().filter_map(|f| f.to.upgrade()) {
        if !out.iter().any(|a| std::sync::Arc::ptr_eq(a, &importer)) {
            out.push(importer);
        }
    }
    out
}

/// An advisory document: Go's `TypedEvent` header (type, a fresh id, now) and `body`.
pub fn typed_json<T: Serialize>(kind: &str, body: T) -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    let doc = Typed {
        kind,
        id: natrium_core::events::event_id(),
        timestamp: natrium_gofmt::time::rfc3339_nanos(now),
        body,
    };
    crate::config::to_go_json(&doc)
}

#[derive(Serialize)]
struct DataLostBody<'a> {
    stream: &'a str,
    file: &'a str,
    lost: &'a [(u64, u64)],
}

/// Records of a stream found damaged while it serves (the store's scrub of bytes `index.dat`
/// vouched for, or a load that failed its checks): Natrium's own advisory, as Go has none,
/// on `$JS.EVENT.ADVISORY.STREAM.DATA_LOST.<stream>` with the file and the lost sequence
/// ranges. Losses found while recovering come before anyone can listen: the log line, the
/// stream's `lost` state and `/healthz` report those.
pub fn data_lost(
    client: &mut natrium_core::internal::InternalClient,
    account: &std::sync::Arc<Account>,
    stream: &str,
    damaged: &natrium_store::DamagedFile,
) {
    let subject = format!("$JS.EVENT.ADVISORY.STREAM.DATA_LOST.{stream}");
    if !has_interest(account, &subject) {
        return;
    }
    let body = DataLostBody {
        stream,
        file: &damaged.file,
        lost: &damaged.lost,
    };
    let doc = typed_json("io.natrium.jetstream.advisory.v1.stream_data_lost", body);
    client.publish_in(account, &subject, None, &doc);
}
