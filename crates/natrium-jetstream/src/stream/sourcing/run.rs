//! A stream's origins started and stopped together: its mirror, or each of its sources (each
//! with its own task, after one backward scan found where the sources resume), and what
//! stream info shows of them.

use std::collections::BTreeMap;
use std::sync::Arc;

use natrium_core::internal::InternalClient;
use natrium_core::Server;
use tokio_util::sync::CancellationToken;

use super::names;
use super::origin::{MirrorDirect, Origin, OriginParts};
use super::resume::last_source_seqs;
use super::status::{SourceInfoJson, Status};
use crate::stream::Stream;

/// The origins of one stream.
pub struct Sourcing {
    mirror: Option<Arc<Status>>,
    sources: Vec<Arc<Status>>,
    origins: Vec<Arc<Origin>>,
    stop: CancellationToken,
}

impl Sourcing {
    /// Starts copying from the stream's mirror or sources; `None` when it has neither.
    /// `direct` is the stream's direct-get service (a mirror with `mirror_direct` adds its
    /// origin's subjects once it caught up).
    pub fn start(
        server: &Server,
        domain: &str,
        stream: &Arc<Stream>,
        direct: Option<Arc<dyn MirrorDirect>>,
    ) -> Option<Arc<Sourcing>> {
        let config = stream.core.lock().config.clone();
        if config.mirror.is_none() && config.sources.is_empty() {
            return None;
        }
        let stop = CancellationToken::new();
        let stable = names::stable_hash(&config.name, &stream.account.name, domain);
        let client = || jetstream_client(server, &stream.account);
        if let Some(src) = &config.mirror {
            if let Some(direct) = &direct {
                // A new mirror takes the origin's direct gets once it caught up again.
                direct.set_mirror(None);
            }
            let status = Arc::new(Status::new(src, String::new(), true));
            let mut metadata = BTreeMap::new();
            metadata.insert("_nats.mirror.stream".to_owned(), config.name.clone());
            metadata.insert("_nats.mirror.acc".to_owned(), stream.account.name.clone());
            if !domain.is_empty() {
                metadata.insert("_nats.mirror.domain".to_owned(), domain.to_owned());
            }
            let origin = Origin::start(OriginParts {
                stream: Arc::clone(stream),
                src: src.clone(),
                mirror: true,
                direct,
                consumer_name: format!("JS_MIRROR_{stable}"),
                metadata,
                status: Arc::clone(&status),
                resumed_seq: 0,
                resumed_ident: String::new(),
                client: client(),
                stop: stop.clone(),
            });
            return Some(Arc::new(Sourcing {
                mirror: Some(status),
                sources: Vec::new(),
                origins: vec![origin],
                stop,
            }));
        }
        let statuses: Vec<Arc<Status>> = config
            .sources
            .iter()
            .map(|src| Arc::new(Status::new(src, names::index_name(src), false)))
            .collect();
        let inames: Vec<String> = statuses.iter().map(|s| s.index_name.clone()).collect();
        let mut origins = Vec::with_capacity(statuses.len());
        let found = last_source_seqs(stream.core.lock().ingest.store.as_ref(), &inames);
        for (src, status) in config.sources.iter().zip(&statuses) {
            let (resumed_seq, resumed_ident) =
                found.get(&status.index_name).cloned().unwrap_or_default();
            status.set_stored(resumed_seq);
            let mut metadata = BTreeMap::new();
            metadata.insert("_nats.src.stream".to_owned(), config.name.clone());
            metadata.insert("_nats.src.acc".to_owned(), stream.account.name.clone());
            if !domain.is_empty() {
                metadata.insert("_nats.src.domain".to_owned(), domain.to_owned());
            }
            let hash = names::sourcing_hash(&stable, src, &config.sources);
            origins.push(Origin::start(OriginParts {
                stream: Arc::clone(stream),
                src: src.clone(),
                mirror: false,
                direct: None,
                consumer_name: format!("JS_SRC_{hash}"),
                metadata,
                status: Arc::clone(status),
                resumed_seq,
                resumed_ident,
                client: client(),
                stop: stop.clone(),
            }));
        }
        Some(Arc::new(Sourcing {
            mirror: None,
            sources: statuses,
            origins,
            stop,
        }))
    }

    /// Stops every origin's task (their subscriptions go with them).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// The stream was deleted: each origin is asked, once and at best, to delete the consumer
    /// it named (Go's `tryDeleteSourcingConsumer`; a limits origin's consumers carry a suffix,
    /// so there only an interest or work-queue origin's durable one is found).
    pub fn delete_consumers(&self) {
        for origin in &self.origins {
            tokio::spawn(Arc::clone(origin).delete_consumer());
        }
    }

    /// After an update: each origin the new configuration (`new`, `None` when it copies from
    /// nothing) no longer asks for asks its origin, once and at best, to delete the consumer
    /// it named (Go's clean-up of removed sources and of a promoted mirror).
    pub fn retire(&self, new: Option<&Sourcing>) {
        let kept: Vec<_> = new
            .map(|n| n.origins.iter().map(|o| o.key()).collect())
            .unwrap_or_default();
        for origin in &self.origins {
            if !kept.contains(&origin.key()) {
                tokio::spawn(Arc::clone(origin).delete_consumer());
            }
        }
    }

    /// Stream info's `mirror`.
    pub fn mirror_info(&self) -> Option<SourceInfoJson> {
        self.mirror.as_ref().map(|s| s.json(false))
    }

    /// Stream info's `sources`.
    pub fn sources_info(&self) -> Vec<SourceInfoJson> {
        self.sources.iter().map(|s| s.json(true)).collect()
    }
}

/// An internal client of the stream's account that describes itself to the API as Go's
/// stream client does (`kind` `JetStream`), so that the audit advisory of its requests (its
/// origin's consumer created or deleted) names it as Go's does.
fn jetstream_client(
    server: &Server,
    account: &Arc<natrium_core::account::Account>,
) -> InternalClient {
    /// Go's `ClientInfo` of an internal client, fields in Go's order.
    #[derive(serde::Serialize)]
    struct Identity<'a> {
        start: String,
        id: u64,
        acc: &'a str,
        server: &'a str,
        kind: &'static str,
    }
    let (mut client, _inbox) = InternalClient::start(server, Arc::clone(account));
    let start = chrono::Utc::now().fixed_offset();
    let identity = Identity {
        start: crate::config::gotime::GoTime(start).to_go_string(),
        id: client.cid(),
        acc: &account.name,
        server: server.name(),
        kind: "JetStream",
    };
    if let Ok(json) = serde_json::to_vec(&identity) {
        client.set_request_info(&json);
    }
    client
}
