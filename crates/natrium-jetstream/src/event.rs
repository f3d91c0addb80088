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

/// Whether a publish on `subject` in `account` would reach a subscriber there.
pub fn has_interest(account: &Account, subject: &str) -> bool {
    let result = account.sublist.matches(subject.as_bytes());
    !(result.plain.is_empty() && result.queues.is_empty())
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
